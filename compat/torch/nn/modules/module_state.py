"""``nn.Module``'s state dict: ``state_dict``, ``load_state_dict`` and their hooks.

Follows ``torch/nn/modules/module.py``: ``state_dict()`` returns an ``OrderedDict``
whose ``_metadata`` maps each module's dotted prefix (``""`` for the root) to
``{"version": module._version}``, so a module whose layout changed between versions
(``BatchNorm``'s ``num_batches_tracked``, the old ``spectral_norm`` hook) can migrate an
older checkpoint in its ``_load_from_state_dict(state_dict, prefix, local_metadata,
strict, missing_keys, unexpected_keys, error_msgs)`` (PyTorch's signature, which user
modules override). Hooks: ``register_state_dict_pre_hook`` (``hook(module, prefix,
keep_vars)``), ``register_state_dict_post_hook`` (``hook(module, state_dict, prefix,
local_metadata)``, must return ``None``) and the older ``_register_state_dict_hook``
(whose result replaces the dict), ``register_load_state_dict_pre_hook`` (``hook(module,
state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
error_msgs)``) and ``register_load_state_dict_post_hook`` (``hook(module,
incompatible_keys)``). A module defining ``get_extra_state``/``set_extra_state`` saves
and loads one more entry, ``<prefix>_extra_state``.

Unlike PyTorch, loading also takes NumPy arrays and real ``torch.Tensor``s (converted
through NumPy, cast to the parameter's dtype), so weights move between compat and
PyTorch.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import compat.torch as torch
from compat._core.tensor_swap import swap_tensors
from compat.torch import __future__ as _future
from compat.torch.nn.modules.module_hooks import RemovableHandle
from compat.torch.nn.parameter import UNINITIALIZED_SHAPE, Parameter, is_lazy

__all__ = ["ModuleStateMixin"]

#: the key suffix of a module's ``get_extra_state()`` entry
EXTRA_STATE_KEY_SUFFIX = "_extra_state"

#: the per-module hook registries this mixin keeps (filled in by ``__setstate__`` for
#: modules pickled before they existed)
_STATE_HOOK_DICTS = (
    "_state_dict_hooks",
    "_state_dict_pre_hooks",
    "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """``load_state_dict``'s result: the keys that were missing and unexpected."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _as_tensor_like(value: Any, like: Any) -> Any:
    """``value`` (a compat Tensor, NumPy array, real torch tensor, ...) as a compat Tensor.

    Foreign tensors go through NumPy: ``np.asarray`` for anything that supports
    the array protocol, ``.detach().cpu().numpy()`` for torch-like tensors.
    """
    if isinstance(value, torch.Tensor):
        return value
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # e.g. a real torch.Tensor
        value = value.detach()
        if hasattr(value, "cpu"):
            value = value.cpu()
        value = value.numpy()
    return torch.tensor(np.asarray(value), dtype=like.dtype)


def _shape_str(t: Any) -> str:
    return f"torch.Size({list(t.shape)})"


def _load_tree(
    module: Any,
    local: Mapping[str, Any],
    prefix: str,
    metadata: Mapping[str, Any] | None,
    assign: bool,
    keys: tuple[list[str], list[str], list[str]],
) -> None:
    """``load_state_dict``'s walk: ``module`` loads its entries of ``local`` (the entries
    under ``prefix``), then each child its own, then ``module``'s post-hooks run. A
    module-level function, not a closure: a recursive closure is a reference cycle."""
    missing_keys, unexpected_keys, error_msgs = keys
    local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    module._load_from_state_dict(
        local, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs
    )
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            child_local = {k: v for k, v in local.items() if k.startswith(child_prefix)}
            _load_tree(child, child_local, child_prefix, metadata, assign, keys)
    incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
    for hook in module._load_state_dict_post_hooks.values():
        if hook(module, incompatible) is not None:
            raise AssertionError(
                "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                "expected to return new values, if incompatible_keys need to be "
                "modified, it should be done inplace."
            )


def _overrides(module: Any, name: str) -> bool:
    """Whether ``module``'s class defines its own ``get_extra_state``/``set_extra_state``."""
    return getattr(type(module), name) is not getattr(ModuleStateMixin, name)


class ModuleStateMixin:
    """``state_dict``/``load_state_dict``, their hooks and extra state (module docstring)."""

    _version: int = 1

    def _init_state_hooks(self) -> None:
        for name in _STATE_HOOK_DICTS:
            object.__setattr__(self, name, OrderedDict())

    def _fill_state_hooks(self) -> None:
        """Give a module unpickled from before these registries existed empty ones."""
        for name in _STATE_HOOK_DICTS:
            if name not in self.__dict__:
                object.__setattr__(self, name, OrderedDict())

    # ------------------------------------------------------------------ extra state
    def get_extra_state(self) -> Any:
        """Extra (picklable) state to save in ``state_dict``; define it together with
        ``set_extra_state``."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore the extra state ``get_extra_state`` saved."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called."
        )

    # ------------------------------------------------------------------ hooks
    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict``; a
        non-``None`` result replaces the dict (the older private form)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict``; it
        edits the dict in place and returns ``None``."""
        hook._from_public_api = True  # type: ignore[attr-defined]
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        """``hook([module,] state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = (
            functools.partial(hook, self) if with_module else hook
        )
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` after this module and its children loaded;
        it may edit ``incompatible_keys`` in place (``strict`` sees the edits)."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ------------------------------------------------------------------ saving
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if _overrides(self, "get_extra_state"):
            destination[prefix + EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(
        self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Any]:
        """An ``OrderedDict`` of every parameter and persistent buffer (and extra state),
        by dotted name, with ``_metadata`` holding each module's version.

        Values are detached Tensors (``.numpy()`` gives NumPy arrays that real
        PyTorch's ``load_state_dict`` accepts after ``torch.from_numpy``).
        """
        if args:  # PyTorch's deprecated positional form: (destination, prefix, keep_vars)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    # ------------------------------------------------------------------ loading
    def _load_from_state_dict(
        self,
        state_dict: Mapping[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Load this module's own entries of ``state_dict`` (PyTorch's signature; a
        subclass migrates older layouts by ``local_metadata["version"]``)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        assign = local_metadata.get("assign_to_params_buffers", False)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update(
            (k, v)
            for k, v in self._buffers.items()
            if v is not None and k not in self._non_persistent_buffers_set
        )
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            try:
                value = _as_tensor_like(state_dict[key], param)
            except Exception as exc:
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(state_dict[key])} "
                    f"({exc})"
                )
                continue
            if param.dim() == 0 and value.dim() == 1 and value.numel() == 1:
                value = value[0]  # a scalar saved as shape (1,) by old PyTorch versions
            if is_lazy(value) and not is_lazy(param):
                raise RuntimeError(UNINITIALIZED_SHAPE)  # PyTorch's, from the shape compared
            if not is_lazy(param) and tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_shape_str(value)} from checkpoint, the shape in current model is "
                    f"{_shape_str(param)}."
                )
                continue
            if param.is_meta and not value.is_meta and not assign:
                warnings.warn(
                    f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                    "parameter in the current model, which is a no-op. (Did you mean to pass "
                    "`assign=True` to assign items in the state dictionary to their "
                    "corresponding key in the module instead of copying them in place?)",
                    stacklevel=2,
                )
            try:
                if _future.get_swap_module_params_on_conversion():
                    _swap_loaded(param, value, assign)
                elif assign:
                    if isinstance(param, Parameter):
                        if not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param.requires_grad)
                        self._parameters[name] = value
                    else:
                        self._buffers[name] = value
                else:
                    with torch.no_grad():
                        param.copy_(value)
            except Exception as exc:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {_shape_str(param)} and whose dimensions in the checkpoint are "
                    f"{_shape_str(value)}, an exception occurred : {exc.args}."
                )
        extra_key = prefix + EXTRA_STATE_KEY_SUFFIX
        if _overrides(self, "set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                input_name = key[len(prefix) :].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in self._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        Values may be compat Tensors, NumPy arrays, or real ``torch.Tensor``s
        (converted through NumPy); they are cast to each parameter's dtype.
        With ``strict`` (the default) missing and unexpected keys raise
        ``RuntimeError`` with PyTorch's message; a size mismatch always raises.
        Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        keys = (missing_keys, unexpected_keys, error_msgs)
        _load_tree(self, state_dict, "", metadata, assign, keys)
        if strict:
            if unexpected_keys:
                error_msgs.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected_keys)
                    ),
                )
            if missing_keys:
                error_msgs.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing_keys)
                    ),
                )
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(error_msgs)
                )
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)


def _swap_loaded(param: Any, value: Any, assign: bool) -> None:
    """``load_state_dict`` under ``torch.__future__``'s swap switch: ``param`` takes the
    contents of ``param.module_load(value, assign=assign)`` (a Parameter stays one, with
    its ``requires_grad``), keeping its identity."""
    with torch.no_grad():
        new = param.module_load(value, assign=assign)
    if new is value or new is param:
        raise RuntimeError(
            "module_load returned one of self or other, please .detach() the result if "
            "returning one of the inputs in module_load"
        )
    if isinstance(param, Parameter):
        if isinstance(new, Parameter):
            new.requires_grad_(param.requires_grad)
        else:
            new = Parameter(new, requires_grad=param.requires_grad)
    swap_tensors(param, new)
