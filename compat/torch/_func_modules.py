"""``torch.func``'s module helpers: ``functional_call``, ``stack_module_state`` and
``replace_all_batch_norm_modules_``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import compat.torch as torch

__all__ = ["functional_call", "replace_all_batch_norm_modules_", "stack_module_state"]


# ---------------------------------------------------------------- modules
def _named_tensors(module: Any) -> dict[str, Any]:
    out = dict(module.named_parameters(remove_duplicate=False))
    out.update(module.named_buffers(remove_duplicate=False))
    return out


def _set(module: Any, name: str, value: Any) -> tuple[Any, str, str, Any]:
    """Put ``value`` at dotted ``name`` without the usual type checks; returns how to undo it."""
    path, _, leaf = name.rpartition(".")
    mod = module.get_submodule(path)
    for store in ("_parameters", "_buffers"):
        d = getattr(mod, store)
        if leaf in d:
            old = d[leaf]
            d[leaf] = value
            return mod, store, leaf, old
    old = mod.__dict__.get(leaf, _MISSING)
    object.__setattr__(mod, leaf, value)
    return mod, "__dict__", leaf, old


_MISSING = object()


def functional_call(
    module: Any,
    parameter_and_buffer_dicts: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """Call ``module`` with some parameters and buffers replaced by the given tensors.

    The module's own tensors are put back afterwards (also when the call raises).
    With ``tie_weights``, a replaced tensor also replaces every name sharing it.
    """
    if isinstance(parameter_and_buffer_dicts, Mapping):
        values = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        values = {}
        seen: set[str] = set()
        for d in parameter_and_buffer_dicts:
            if not isinstance(d, Mapping):
                raise ValueError(
                    "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
                )
            dup = sorted(seen & set(d))
            if dup:
                raise ValueError(
                    f"{dup} appeared in multiple dictionaries; behavior of functional call is "
                    "ambiguous"
                )
            seen |= set(d)
            values.update(d)
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}"
        )
    current = _named_tensors(module)
    if tie_weights:
        groups: dict[int, list[str]] = {}
        for name, t in current.items():
            groups.setdefault(id(t), []).append(name)
        for names in groups.values():
            given = [n for n in names if n in values]
            if not given:
                continue
            first = values[given[0]]
            for n in given[1:]:
                if values[n] is not first:
                    raise ValueError(
                        f"functional_call got multiple values for keys {given}, which are tied. "
                        "Consider using tie_weights=False"
                    )
            for n in names:
                values.setdefault(n, first)
    if strict:
        missing = [k for k in current if k not in values]
        unexpected = [k for k in values if k not in current]
        if missing or unexpected:
            msgs = []
            if unexpected:
                msgs.append("Unexpected key(s): {}.".format(", ".join(map(repr, unexpected))))
            if missing:
                msgs.append("Missing key(s): {}.".format(", ".join(map(repr, missing))))
            raise RuntimeError(
                "Error(s) in reparametrizing for {}:\n\t{}".format(
                    type(module).__name__, "\n\t".join(msgs)
                )
            )
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    undo = []
    try:
        for name, value in values.items():
            undo.append(_set(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for mod, store, leaf, old in reversed(undo):
            if store == "__dict__":
                if old is _MISSING:
                    mod.__dict__.pop(leaf, None)
                else:
                    object.__setattr__(mod, leaf, old)
            else:
                getattr(mod, store)[leaf] = old


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(params, buffers)``: each parameter/buffer of the same-structured ``models`` stacked on dim 0.

    Stacked parameters are new leaves that require grad (as PyTorch's).
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    first = type(models[0])
    if not all(type(m) is first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stack(named: list[dict[str, Any]]) -> dict[str, Any]:
        out = {}
        for name in named[0]:
            t = torch.stack([d[name].detach() for d in named])
            if named[0][name].requires_grad:
                t = t.requires_grad_(True)
            out[name] = t
        return out

    params = stack([dict(m.named_parameters()) for m in models])
    buffers = stack([dict(m.named_buffers()) for m in models])
    return params, buffers


def replace_all_batch_norm_modules_(root: Any) -> Any:
    """Stop every batch-norm module in ``root`` (``root`` included) tracking running
    statistics, in place: ``running_mean``/``running_var``/``num_batches_tracked`` become
    ``None``, so ``vmap`` over a batch-norm model normalises by each call's batch
    statistics instead of updating shared buffers. Returns ``root``."""
    if not isinstance(root, torch.nn.Module):
        raise AttributeError(f"'{type(root).__name__}' object has no attribute 'modules'")
    for m in root.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
