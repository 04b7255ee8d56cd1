"""``torch.func``: function transforms over compat tensors, built on compat's autograd.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``,
``hessian``, ``vmap``, ``functional_call``, ``stack_module_state``, with
``torch.func``'s signatures and results.

How: these are NOT funcgrad's transforms applied to traced tensors (compat ops
run eagerly on concrete arrays; tracing them would need every op, including the
ones that read values such as boolean indexing, to accept funcgrad tracers).
Instead each transform runs the user's function eagerly on fresh tensors and
differentiates the recorded graph with ``torch.autograd.grad``:

* ``grad``/``vjp``: reverse mode on the recorded graph (``create_graph`` inside
  another transform, so transforms nest: ``grad(grad(f))``, ``hessian``).
* ``jvp``: the double-VJP identity (the VJP is linear in the cotangent ``u``;
  its VJP with respect to ``u`` is the JVP), so one extra backward pass.
* ``jacrev``: one batched backward (``is_grads_batched``) with the identity
  cotangents; ``jacfwd`` computes the same Jacobian the same way (reverse mode).
* ``vmap``: calls the function once per batch element and stacks the results
  (a Python loop: correct, not vectorised). ``chunk_size`` is accepted and has
  no effect on results. ``randomness='error'`` raises when the global generator
  advanced during a call; ``'same'`` replays the generator state for every element.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import compat.torch as torch
import funcgrad.tree_util as tu
from compat._core import creation as _creation

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "stack_module_state",
    "vjp",
    "vmap",
]

_depth = [0]  # how many differentiating transforms are running (they nest)


@contextmanager
def _transform() -> Any:
    _depth[0] += 1
    try:
        with torch.enable_grad():
            yield
    finally:
        _depth[0] -= 1


def _is_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def _flatten(tree: Any) -> tuple[list, Any]:
    return tu.tree_flatten(tree, is_leaf=_is_tensor)


def _fresh(x: Any) -> Any:
    """A tensor to differentiate with respect to: attached to ``x``'s graph if it has one."""
    if not _is_tensor(x):
        raise ValueError(f"Expected tensors as the inputs to differentiate, got {type(x).__name__}")
    if not x.is_floating_point() and not x.is_complex():
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if x.requires_grad:
        return x.view_as(x)
    return x.detach().requires_grad_(True)


def _create_graph(inputs: Sequence[Any]) -> bool:
    return _depth[0] > 1 or any(getattr(x, "requires_grad", False) for x in inputs)


def _grads(outputs: list, inputs: list, cotangents: list | None, create: bool) -> list:
    """``d(outputs)/d(inputs)`` contracted with ``cotangents``; zeros where unused."""
    pairs = [
        (o, c)
        for o, c in zip(outputs, cotangents or [None] * len(outputs), strict=True)
        if o.requires_grad
    ]
    if not pairs or not inputs:
        return [torch.zeros_like(x) for x in inputs]
    res = torch.autograd.grad(
        [o for o, _ in pairs],
        inputs,
        grad_outputs=[c for _, c in pairs] if cotangents is not None else None,
        retain_graph=True,
        create_graph=create,
        allow_unused=True,
    )
    return [torch.zeros_like(x) if g is None else g for g, x in zip(res, inputs, strict=True)]


def _maybe_detach(tree: Any, keep: bool) -> Any:
    if keep:
        return tree
    return tu.tree_map(lambda t: t.detach() if _is_tensor(t) else t, tree, is_leaf=_is_tensor)


def _argnums(argnums: int | tuple[int, ...], n: int, who: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{who}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{who}: argnums must be int or Tuple[int, ...], got: {argnums}")
        if not -n <= a < n:
            raise RuntimeError(
                f"Got argnum={a}, but only {n} positional inputs. Expected argnum < {n}"
            )
    return tuple(a % n for a in nums)


def _prepare(args: tuple, argnums: Any, who: str) -> tuple[list, list, list, Any]:
    """Replace the differentiated arguments by fresh tensors; returns them flat too."""
    nums = _argnums(argnums, len(args), who)
    new_args = list(args)
    flat_fresh, flat_orig, trees = [], [], []
    for a in nums:
        leaves, tree = _flatten(args[a])
        fresh = [_fresh(x) for x in leaves]
        new_args[a] = tu.tree_unflatten(tree, fresh)
        flat_fresh.extend(fresh)
        flat_orig.extend(leaves)
        trees.append((tree, len(leaves)))
    return new_args, flat_fresh, flat_orig, (nums, trees, isinstance(argnums, int))


def _regroup(flat: list, spec: Any) -> Any:
    _nums, trees, single = spec
    out, i = [], 0
    for tree, n in trees:
        out.append(tu.tree_unflatten(tree, flat[i : i + n]))
        i += n
    return out[0] if single else tuple(out)


def _split_aux(out: Any, has_aux: bool, who: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{who}(f, ...)(*args): output of function f should be a tuple: (output, aux) "
            "if has_aux is True"
        )
    return out


# ---------------------------------------------------------------- reverse mode
def grad_and_value(
    func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable:
    """``f -> (x -> (df/dx, f(x)))`` for a scalar-valued ``f`` (``((g), (value, aux))`` with aux)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _transform():
            new_args, fresh, orig, spec = _prepare(args, argnums, "grad_and_value")
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, "grad_and_value")
            if not _is_tensor(out):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(out)}"
                )
            if out.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {out.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?"
                )
            keep = _create_graph(orig)
            g = _regroup(_grads([out], fresh, None, keep), spec)
        value = _maybe_detach(out, keep)
        if has_aux:
            return _maybe_detach(g, keep), (value, _maybe_detach(aux, keep))
        return _maybe_detach(g, keep), value

    return wrapper


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """``f -> (x -> df/dx)`` for a scalar-valued ``f``; ``(df/dx, aux)`` with ``has_aux``."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn[, aux])``; ``vjp_fn(cotangents)`` is a tuple, one per primal."""
    with _transform():
        new_args, fresh, orig, spec = _prepare(primals, tuple(range(len(primals))), "vjp")
        out, aux = _split_aux(func(*new_args), has_aux, "vjp")
        out_leaves, out_tree = _flatten(out)
        for o in out_leaves:
            if not _is_tensor(o):
                raise RuntimeError(
                    f"vjp(f, *primals): Expected f to be a function that has only Tensors as "
                    f"outputs, got {type(o)}"
                )
        keep = _create_graph(orig)  # inside: nested in another transform counts

    def vjp_fn(
        cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None
    ) -> tuple:
        ct_leaves, ct_tree = _flatten(cotangents)
        if ct_tree != out_tree:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {ct_tree}, primal output: {out_tree}"
            )
        for o, c in zip(out_leaves, ct_leaves, strict=True):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[0] has a shape of {tuple(c.shape)} and "
                    f"output[0] has a shape of {tuple(o.shape)}."
                )
        with _transform():
            create = keep or _create_graph(ct_leaves) if create_graph is None else create_graph
            flat = _grads(out_leaves, fresh, ct_leaves, create)
        res = _regroup(flat, spec)
        return _maybe_detach(res, create)

    result = (_maybe_detach(out, keep), vjp_fn)
    return (*result, _maybe_detach(aux, keep)) if has_aux else result


def _jacobian(out_leaves: list, fresh: list, create: bool) -> list[list]:
    """``jac[i][j]``: d out_i / d input_j with shape ``out_i.shape + input_j.shape``."""
    rows = []
    for o in out_leaves:
        n = o.numel()
        if not o.requires_grad or n == 0:
            rows.append(
                [torch.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype) for x in fresh]
            )
            continue
        basis = torch.eye(n, dtype=o.dtype).reshape((n, *tuple(o.shape)))
        try:
            gs = torch.autograd.grad(
                [o],
                fresh,
                grad_outputs=[basis],
                retain_graph=True,
                create_graph=create,
                allow_unused=True,
                is_grads_batched=True,
            )
        except (TypeError, ValueError):
            # compat's batched backward can fail on graphs holding recorded backward ops
            # (a Jacobian of a gradient): one backward pass per output element instead
            gs = _jacobian_rows(o, fresh, basis, create)
        rows.append(
            [
                torch.zeros((n, *tuple(x.shape)), dtype=x.dtype) if g is None else g
                for g, x in zip(gs, fresh, strict=True)
            ]
        )
        rows[-1] = [
            g.reshape(tuple(o.shape) + tuple(x.shape)) for g, x in zip(rows[-1], fresh, strict=True)
        ]
    return rows


def _jacobian_rows(o: Any, fresh: list, basis: Any, create: bool) -> list:
    per_row = [_grads([o], fresh, [basis[k]], create) for k in range(basis.shape[0])]
    return [torch.stack([row[j] for row in per_row]) for j in range(len(fresh))]


def _jac_transform(who: str, func: Callable, argnums: Any, has_aux: bool) -> Callable:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _transform():
            new_args, fresh, orig, spec = _prepare(args, argnums, who)
            out, aux = _split_aux(func(*new_args, **kwargs), has_aux, who)
            out_leaves, out_tree = _flatten(out)
            keep = _create_graph(orig)
            rows = _jacobian(out_leaves, fresh, keep)
        per_out = [_maybe_detach(_regroup(r, spec), keep) for r in rows]
        jac = tu.tree_unflatten(out_tree, per_out)
        return (jac, _maybe_detach(aux, keep)) if has_aux else jac

    return wrapper


def jacrev(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """The Jacobian of ``func`` by reverse mode: one batched backward per output."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jac_transform("jacrev", func, argnums, has_aux)


def jacfwd(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """The Jacobian of ``func`` (same values as ``torch.func.jacfwd``; computed by reverse mode)."""
    _check_randomness(randomness)
    return _jac_transform("jacfwd", func, argnums, has_aux)


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``jacfwd(jacrev(func, argnums), argnums)``: the Hessian of a scalar function."""
    return jacfwd(jacrev(func, argnums), argnums)


def jvp(
    func: Callable,
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """``(func(*primals), J @ tangents)``, by the double-VJP identity on the recorded graph."""
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. "
            "jvp(f, (x,), (t,))"
        )
    if strict:
        raise RuntimeError(
            "torch.func.jvp(f, primals, tangents, strict=True): strict=True is not yet implemented"
        )
    p_leaves, p_tree = _flatten(tuple(primals))
    t_leaves, t_tree = _flatten(tuple(tangents))
    if p_tree != t_tree:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            f"structure. For example, if primals is a tuple of 3 tensors, tangents also must "
            f"be. Got primals with structure {p_tree} and tangents with structure {t_tree}"
        )
    for p, t in zip(p_leaves, t_leaves, strict=True):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                "jvp(f, primals, tangents): Expected primals and tangents to have the same "
                f"shape, got {tuple(p.shape)} and {tuple(t.shape)}"
            )
    with _transform():
        new_args, fresh, orig, _spec = _prepare(tuple(primals), tuple(range(len(primals))), "jvp")
        out, aux = _split_aux(func(*new_args), has_aux, "jvp")
        out_leaves, out_tree = _flatten(out)
        keep = _create_graph([*orig, *t_leaves])
        us = [torch.zeros_like(o).requires_grad_(True) for o in out_leaves]
        vj = _grads(out_leaves, fresh, us, True)
        tans = _grads(vj, us, list(t_leaves), keep)
    res = (_maybe_detach(out, keep), _maybe_detach(tu.tree_unflatten(out_tree, tans), keep))
    return (*res, _maybe_detach(aux, keep)) if has_aux else res


# ---------------------------------------------------------------- vmap
def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )


def _broadcast_dims(dims: Any, tree: Any, who: str) -> list:
    """``dims`` (a prefix of ``tree``'s structure) expanded to one entry per tensor leaf."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_flatten(tree)[0])
    if isinstance(tree, tuple | list) and isinstance(dims, tuple | list):
        if len(dims) != len(tree):
            raise ValueError(
                f"{who}: in_dims is not compatible with the structure of `inputs`. in_dims has "
                f"structure {dims} but inputs has {len(tree)} elements"
            )
        return [
            d
            for sub_d, sub_t in zip(dims, tree, strict=True)
            for d in _broadcast_dims(sub_d, sub_t, who)
        ]
    if isinstance(tree, Mapping) and isinstance(dims, Mapping):
        if set(dims) != set(tree):
            raise ValueError(f"{who}: in_dims is not compatible with the structure of `inputs`")
        out = []
        for k in sorted(tree):  # the tree's flattening order for dicts
            out.extend(_broadcast_dims(dims[k], tree[k], who))
        return out
    raise ValueError(
        f"{who}: Expected in_dims to be int or a (potentially nested) tuple matching the "
        f"structure of inputs, got: {type(dims)}."
    )


def _take(x: Any, dim: int | None, i: int) -> Any:
    if dim is None or not _is_tensor(x):
        return x
    return x[(slice(None),) * dim + (i,)]


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """``func`` mapped over a dimension of its inputs; results stacked along ``out_dims``.

    A loop over the batch that calls ``func`` per element (see the module docstring).
    """
    _check_randomness(randomness)
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not args:
            raise ValueError(
                f"vmap({getattr(func, '__name__', 'f')})(<inputs>): got no inputs. Maybe "
                "you forgot to add inputs, or you are trying to vmap over a function with no "
                "inputs. The latter is unsupported."
            )
        dims_in = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(
                f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
                f"the structure of `inputs`. in_dims has structure with {len(in_dims)} "
                f"elements but inputs has {len(args)} elements"
            )
        leaves, tree = _flatten(list(args))
        dims = _broadcast_dims(list(dims_in), list(args), "vmap")
        sizes = []
        norm_dims = []
        for x, d in zip(leaves, dims, strict=True):
            if d is not None and _is_tensor(x):
                if not -x.dim() <= d < max(x.dim(), 1) or x.dim() == 0:
                    raise ValueError(
                        f"vmap: Tried to map over dim {d} for a tensor of {x.dim()} dims; "
                        "the dim must be in [-ndim, ndim)"
                    )
                d = d % x.dim()
                sizes.append(x.shape[d])
            elif d is not None:
                raise ValueError(
                    f"vmap: Got in_dim={d} for an input but the input is of type {type(x)}. We "
                    "cannot vmap over non-Tensor arguments, please use None as the respective "
                    "in_dim"
                )
            norm_dims.append(d)
        if not sizes:
            raise ValueError(
                "vmap: at least one input must be mapped over (in_dims of all inputs are None)"
            )
        if len(set(sizes)) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, "
                f"got sizes {sizes} for the mapped dimension"
            )
        size = sizes[0]
        gen = _creation.default_generator
        start = gen.get_state()
        results = []
        for i in range(size):
            if randomness == "same":
                gen.set_state(start)
            before = gen.get_state()
            step_args = tu.tree_unflatten(
                tree, [_take(x, d, i) for x, d in zip(leaves, norm_dims, strict=True)]
            )
            results.append(func(*step_args, **kwargs))
            if randomness == "error" and gen.get_state() != before:
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap"
                )
        return _stack_results(results, out_dims)

    return wrapper


def _stack_results(results: list, out_dims: Any) -> Any:
    flat = [_flatten(r) for r in results]
    tree = flat[0][1]
    leaves_per = [f[0] for f in flat]
    n = len(leaves_per[0])
    if isinstance(out_dims, int):
        dims = [out_dims] * n
    else:
        dims = _broadcast_dims(out_dims, results[0], "vmap")
    stacked = []
    for j in range(n):
        items = [lv[j] for lv in leaves_per]
        if not all(_is_tensor(t) for t in items):
            raise ValueError(
                "vmap: `f` must return only Tensors, got type "
                f"{type(next(t for t in items if not _is_tensor(t)))} as a return"
            )
        d = dims[j]
        if d is None:
            raise NotImplementedError("vmap: out_dims=None (compat's vmap stacks every output)")
        nd = items[0].dim() + 1
        if not -nd <= d < nd:
            raise ValueError(f"vmap: out_dim {d} is out of range for an output of {nd} dims")
        stacked.append(torch.stack(items, dim=d % nd))
    return tu.tree_unflatten(tree, stacked)


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
