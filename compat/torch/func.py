"""``torch.func``: function transforms of compat code, run as funcgrad's transforms.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``,
``hessian``, ``vmap``, ``functionalize``, ``functional_call``, ``stack_module_state``,
``replace_all_batch_norm_modules_``, ``rearrange``, with ``torch.func``'s signatures
and results.

How: a compat tensor is a wrapper around an array, and every compat op is a
funcgrad program applied to the arrays; while a funcgrad builder traces, the
op's program is inlined (:meth:`funcgrad._compat_contract.OpProgram.run`) and nothing is
recorded for autograd. So ``torch.func.vmap(f)`` is ``funcgrad.vmap`` of ``f``
with the tracers wrapped as compat tensors (one batched program, not a loop),
``grad`` is ``funcgrad.value_and_grad``, ``jvp`` is forward mode, and so on;
the transforms nest like funcgrad's (``vmap(grad(f))``: per-sample gradients).

At top level (no trace active) the whole transformed call is traced once into a
program of the input tensors' arrays (:func:`_top`) and run compiled (cached by
structure); when an input or a tensor the function reads from outside
requires grad, that program is recorded as one autograd op, so ``backward``
through a transform works as in PyTorch.

Differences from PyTorch: data-dependent operations (``.item()``, ``nonzero``,
boolean masks...) on batched values raise ``RuntimeError`` inside ``vmap`` (as
``torch.func``); random operations inside ``vmap`` draw one NumPy value for the
whole batch (``randomness='same'``); ``'different'`` then maps element by element.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.tree_util as tu
from compat._core import creation as _creation
from compat._core import function as _function
from compat._core import grad_mode as _gm
from compat._core import tensor as _tensor
from compat._core.accumulate import flip
from compat._core.tensor import Tensor, _new_tensor
from compat.torch._func_modules import (
    functional_call,
    replace_all_batch_norm_modules_,
    stack_module_state,
)
from compat.torch._rearrange import rearrange
from funcgrad._compat_contract import (
    Aval,
    ConcretizationError,
    Tracer,
    compile_cache,
    is_tracing,
    new_builder,
    op_of_program,
    x64,
)

__all__ = [
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "rearrange",
    "replace_all_batch_norm_modules_",
    "stack_module_state",
    "vjp",
    "vmap",
]


# ---------------------------------------------------------------- tensors <-> arrays
def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def _flatten(tree: Any) -> tuple[list, Any]:
    return tu.tree_flatten(tree, is_leaf=_is_tensor)


def _wrap(a: Any) -> Tensor:
    return _new_tensor(Tensor, a)


def _arr(tree: Any) -> Any:
    """``tree`` with each tensor replaced by its array."""
    return tu.tree_map(lambda t: t._st.array if _is_tensor(t) else t, tree, is_leaf=_is_tensor)


def _is_array(x: Any) -> bool:
    return type(x) is Tracer or (hasattr(x, "shape") and hasattr(x, "dtype"))


def _flip(tree: Any) -> Any:
    """Cotangents between funcgrad's convention and PyTorch's (complex conjugates)."""
    return tu.tree_map(flip, tree)


def _ten(tree: Any) -> Any:
    """``tree`` with each array replaced by a compat tensor wrapping it."""
    return tu.tree_map(lambda a: _wrap(a) if _is_array(a) else a, tree)


# ---------------------------------------------------------------- top level
def _op_name(tb: Any) -> str:
    """The innermost compat function on the traceback (the op that read a value)."""
    name = "?"
    for fr in traceback.extract_tb(tb):
        f = fr.filename.replace("\\", "/")
        private = fr.name.startswith("_") and not fr.name.endswith("__")
        if "/compat/" in f and not f.endswith("/compat/torch/func.py") and not private:
            name = fr.name
    return name


@contextmanager
def _errors() -> Any:
    """funcgrad's concretization errors as ``torch.func``'s ``RuntimeError``."""
    try:
        yield
    except ConcretizationError as e:
        op = _op_name(e.__traceback__)
        raise RuntimeError(
            f"vmap: data-dependent operation `{op}` is not supported inside torch.func.vmap: "
            "its result (a Python value or an output shape) depends on the values of the "
            "batched tensors. Move it out of the vmapped function."
        ) from e


@x64
def _top(who: str, body: Callable, args: tuple, kwargs: dict) -> Any:
    """``body(args, kwargs)`` (tensors in, tensors out) as one program of the tensors' arrays.

    Under a trace (a transform nested in another) the body just runs on the traced
    tensors. At top level it is traced with the inputs' values known (so data-dependent
    code outside ``vmap`` works), then run compiled, or recorded as one autograd op when
    an input, or an outside tensor it reads, requires grad.
    """
    if is_tracing():
        return body(args, kwargs)
    leaves, tree = _flatten((args, kwargs))
    pos = [i for i, x in enumerate(leaves) if _is_tensor(x)]
    tensors = [leaves[i] for i in pos]
    arrays = [t._st.array for t in tensors]
    spec: list = []

    def pure(*xs: Any) -> list:
        new = list(leaves)
        for i, x in zip(pos, xs, strict=True):
            new[i] = _wrap(x)
        a, k = tu.tree_unflatten(tree, new)
        with _gm.enable_grad():
            out = body(a, k)
        out_leaves, out_tree = _flatten(out)
        spec.append((out_tree, [None if _is_tensor(o) else o for o in out_leaves]))
        return [o._st.array for o in out_leaves if _is_tensor(o)]

    prev, _tensor.captured = _tensor.captured, {}
    cap = _tensor.captured
    try:
        with _errors(), new_builder("torch.func." + who) as b:
            ins = [b.new_arg(Aval(x.shape, np.dtype(x.dtype)), x) for x in arrays]
            prog = b.build(pure(*ins))
    finally:
        _tensor.captured = prev
    out_tree, statics = spec[-1]
    extra = [(v, cap[id(c)]) for v, c in zip(prog.constvars, prog.consts) if id(c) in cap]
    if _gm._state.record and (extra or any(t._requires_grad for t in tensors)):
        moved = {v for v, _ in extra}
        kept = [(v, c) for v, c in zip(prog.constvars, prog.consts) if v not in moved]
        prog = prog.replace(
            invars=tuple(prog.invars) + tuple(v for v, _ in extra),
            constvars=tuple(v for v, _ in kept),
            consts=tuple(c for _, c in kept),
        )
        op = op_of_program(prog, who.capitalize() + "Backward0")
        srcs = tensors + [t for _, t in extra]
        outs = _tensor._record(op, srcs, [t._st.array for t in srcs])
    else:
        outs = [_wrap(o) for o in compile_cache.run(prog, *arrays)]
    it = iter(outs)
    return tu.tree_unflatten(out_tree, [next(it) if s is None else s for s in statics])


def _entry(who: str, body: Callable, func: Callable) -> Callable:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _top(who, body, args, kwargs)

    return wrapper


# ---------------------------------------------------------------- checks
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


def _check_diff(tree: Any) -> None:
    for x in _flatten(tree)[0]:
        if not _is_tensor(x):
            raise ValueError(
                f"Expected tensors as the inputs to differentiate, got {type(x).__name__}"
            )
        if not x.is_floating_point() and not x.is_complex():
            raise RuntimeError("only Tensors of floating point dtype can require gradients")


def _split_aux(out: Any, has_aux: bool, who: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{who}(f, ...)(*args): output of function f should be a tuple: (output, aux) "
            "if has_aux is True"
        )
    return out


def _only_tensors(tree: Any, who: str) -> None:
    for o in _flatten(tree)[0]:
        if not _is_tensor(o):
            raise RuntimeError(
                f"{who}(f, *primals): Expected f to be a function that has only Tensors as "
                f"outputs, got {type(o)}"
            )


# ---------------------------------------------------------------- reverse mode
def grad_and_value(
    func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False
) -> Callable:
    """``f -> (x -> (df/dx, f(x)))`` for a scalar-valued ``f`` (``((g), (value, aux))`` with aux)."""

    def body(args: tuple, kwargs: dict) -> Any:
        nums = _argnums(argnums, len(args), "grad_and_value")
        for i in nums:
            _check_diff(args[i])

        def f(*diff: Any) -> Any:
            a = list(args)
            for i, d in zip(nums, diff, strict=True):
                a[i] = _ten(d)
            out, aux = _split_aux(func(*a, **kwargs), has_aux, "grad_and_value")
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
            return out._st.array, _arr(aux)

        vg = fg.value_and_grad(f, argnums=tuple(range(len(nums))), has_aux=True)
        (value, aux), g = vg(*[_arr(args[i]) for i in nums])
        g = _ten(_flip(g[0] if isinstance(argnums, int) else g))
        value = _wrap(value)
        return (g, (value, _ten(aux))) if has_aux else (g, value)

    return _entry("grad", body, func)


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """``f -> (x -> df/dx)`` for a scalar-valued ``f``; ``(df/dx, aux)`` with ``has_aux``."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def _vjp_parts(func: Callable, primals: tuple, has_aux: bool) -> tuple:
    """funcgrad's ``vjp`` of ``func`` at ``primals`` (tensors): ``(out, fn, aux)``, tensors."""

    def f(*ps: Any) -> Any:
        out, aux = _split_aux(func(*_ten(ps)), has_aux, "vjp")
        _only_tensors(out, "vjp")
        return (_arr(out), _arr(aux)) if has_aux else _arr(out)

    res = fg.vjp(f, *_arr(primals), has_aux=has_aux)
    return (_ten(res[0]), res[1], _ten(res[2]) if has_aux else None)


def _check_cotangents(out: Any, cotangents: Any) -> None:
    o_leaves, o_tree = _flatten(out)
    c_leaves, c_tree = _flatten(cotangents)
    if c_tree != o_tree:
        raise RuntimeError(
            "Expected pytree structure of cotangents to be the same as pytree structure "
            f"of outputs to the function. cotangents: {c_tree}, primal output: {o_tree}"
        )
    for o, c in zip(o_leaves, c_leaves, strict=True):
        if tuple(o.shape) != tuple(c.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[0] has a shape of {tuple(c.shape)} and "
                f"output[0] has a shape of {tuple(o.shape)}."
            )


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(func(*primals), vjp_fn[, aux])``; ``vjp_fn(cotangents)`` is a tuple, one per primal.

    Nested in a transform, funcgrad's ``vjp`` directly; at top level ``vjp_fn`` recomputes
    the forward inside its own traced program (its tensors outlive the trace).
    """
    for p in primals:
        _check_diff(p)

    def finish(ps: tuple, cts: Any, fn: Any = None) -> tuple:
        if fn is None:
            out, fn, _ = _vjp_parts(func, ps, has_aux)
            _check_cotangents(out, cts)
        return tuple(_ten(_flip(fn(_flip(_arr(cts))))))

    if is_tracing():
        out, fn, aux = _vjp_parts(func, primals, has_aux)

        def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: Any = None):
            _check_cotangents(out, cotangents)
            return finish(primals, cotangents, fn)

    else:

        def fwd(a: tuple, _k: dict) -> Any:
            out, aux = _split_aux(func(*a), has_aux, "vjp")
            _only_tensors(out, "vjp")
            return (out, aux) if has_aux else out

        res = _top("vjp", fwd, primals, {})
        out, aux = res if has_aux else (res, None)

        def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: Any = None):
            _check_cotangents(out, cotangents)
            return _top("vjp", lambda a, _k: finish(a[0], a[1]), (primals, cotangents), {})

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# ---------------------------------------------------------------- forward mode
def jvp(
    func: Callable,
    primals: Any,
    tangents: Any,
    *,
    strict: bool = False,
    has_aux: bool = False,
) -> tuple:
    """``(func(*primals), J @ tangents)`` by funcgrad's forward mode."""
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
    _check_diff(tuple(primals))

    def body(a: tuple, _k: dict) -> Any:
        ps, ts = a

        def f(*xs: Any) -> Any:
            out, aux = _split_aux(func(*_ten(xs)), has_aux, "jvp")
            _only_tensors(out, "jvp")
            return (_arr(out), _arr(aux)) if has_aux else _arr(out)

        res = fg.jvp(f, tuple(_arr(ps)), tuple(_arr(ts)), has_aux=has_aux)
        return tuple(_ten(r) for r in res)

    return _top("jvp", body, (tuple(primals), tuple(tangents)), {})


# ---------------------------------------------------------------- linearize, functionalize
# ``linearize`` returns ``func(*primals)`` and a ``jvp_fn`` that checks each call's
# tangents against the primals (structure, shape, dtype: PyTorch's errors) and runs
# ``jvp`` (whose traced program is compiled once per structure, so calls reuse it).
# ``functionalize`` is the function itself: compat ops are already pure funcgrad
# programs on immutable arrays (an in-place op makes a new array and rebinds the
# tensor), so there are no mutations to remove, and an input mutated inside is updated
# as PyTorch's functionalize copies back; with ``remove='mutations_and_views'`` an
# output that is a view is returned as a copy, so it aliases nothing, as PyTorch's.
def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian of ``func`` at
    ``primals`` applied to ``tangents`` (the primals' structure, shapes and dtypes)."""
    output = func(*primals)
    flat, spec = _flatten(primals)
    for p in flat:
        if not isinstance(p, Tensor):
            raise AttributeError(f"'{type(p).__name__}' object has no attribute 'new_empty'")
    meta = [(p.shape, p.dtype) for p in flat]

    def jvp_fn(*tangents: Any) -> Any:
        t_flat, t_spec = _flatten(tangents)
        if t_spec != spec:
            raise RuntimeError(
                f"Expected the tangents {t_spec} to have the same argspec as the primals {spec}"
            )
        for i, (t, (shape, dtype)) in enumerate(zip(t_flat, meta)):
            if not isinstance(t, Tensor):
                raise RuntimeError(f"tangent:{i} is a {type(t).__name__}, not a Tensor")
            if t.shape != shape:
                raise RuntimeError(
                    f"tangent:{i} with shape {t.shape} in flattened pytree doesn't match the "
                    f"shape {shape} of the corresponding primal."
                )
            if t.dtype != dtype:
                raise RuntimeError(
                    f"tangent:{i} with dtype {t.dtype} in flattened pytree doesn't match the "
                    f"dtype {dtype} of the corresponding primal."
                )
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``func`` with its in-place operations (and, with ``remove='mutations_and_views'``,
    its views) replaced by out-of-place ones: compat's ops already are (see the module
    docstring), so the same values and the same updates of mutated inputs."""
    if remove not in _REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n     remove='mutations': all inplace and "
            "out= operators will be removed from the program, and replaced with their "
            "out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing "
            "counterparts, {view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        out = func(*args, **kwargs)
        if remove == "mutations":
            return out
        # no aliasing: an output that is a view (of an input, say) becomes a copy
        return tu.tree_map(
            lambda t: t.clone() if _is_tensor(t) and t._base is not None else t,
            out,
            is_leaf=_is_tensor,
        )

    return wrapped


# ---------------------------------------------------------------- Jacobians
def _no_complex(who: str, tree: Any, what: str) -> None:
    """``torch.func``'s refusal of complex Jacobians."""
    for i, t in enumerate(_flatten(tree)[0]):
        if _is_tensor(t) and t.is_complex():
            raise RuntimeError(
                f"{who}: Expected all {what} to be real but received complex tensor at "
                f"flattened input idx: {i}"
            )


def _jac(who: str, transform: Callable, func: Callable, argnums: Any, has_aux: bool) -> Callable:
    def body(args: tuple, kwargs: dict) -> Any:
        nums = _argnums(argnums, len(args), who)
        for i in nums:
            _check_diff(args[i])
        _no_complex(who, [args[i] for i in nums], "inputs")

        def f(*diff: Any) -> Any:
            a = list(args)
            for i, d in zip(nums, diff, strict=True):
                a[i] = _ten(d)
            out, aux = _split_aux(func(*a, **kwargs), has_aux, who)
            _no_complex(who, out, "outputs")
            return (_arr(out), _arr(aux)) if has_aux else _arr(out)

        nums_arg = 0 if isinstance(argnums, int) else tuple(range(len(nums)))
        res = transform(f, argnums=nums_arg, has_aux=has_aux)(*[_arr(args[i]) for i in nums])
        return (_ten(res[0]), _ten(res[1])) if has_aux else _ten(res)

    return _entry(who, body, func)


def jacrev(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
    _preallocate_and_copy: bool = False,
) -> Callable:
    """The Jacobian of ``func`` by reverse mode (funcgrad's ``jacrev``: one batched VJP;
    with ``chunk_size``, one compiled loop pulling back ``chunk_size`` rows at a time)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    transform = functools.partial(fg.jacrev, chunk_size=chunk_size)
    return _jac("jacrev", transform, func, argnums, has_aux)


def jacfwd(
    func: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """The Jacobian of ``func`` by forward mode (funcgrad's ``jacfwd``: one batched JVP)."""
    _check_randomness(randomness)
    return _jac("jacfwd", fg.jacfwd, func, argnums, has_aux)


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """``jacfwd(jacrev(func, argnums), argnums)``: the Hessian of a scalar function."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- vmap
def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. Got "
            f"{randomness}"
        )


def _broadcast_dims(dims: Any, tree: Any, who: str) -> list:
    """``dims`` (a prefix of ``tree``'s structure) expanded to one entry per leaf."""
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


def _in_dims(in_dims: Any, args: tuple, func: Callable) -> tuple[list, list, int]:
    """The flat leaves of ``args``, the mapped dim of each (``None``: unmapped), the size."""
    if not args:
        raise ValueError(
            f"vmap({getattr(func, '__name__', 'f')})(<inputs>): got no inputs. Maybe "
            "you forgot to add inputs, or you are trying to vmap over a function with no "
            "inputs. The latter is unsupported."
        )
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        raise ValueError(
            f"vmap(f, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure with {len(in_dims)} "
            f"elements but inputs has {len(args)} elements"
        )
    dims_in = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
    leaves, _ = _flatten(list(args))
    dims = _broadcast_dims(list(dims_in), list(args), "vmap")
    sizes, norm = [], []
    for x, d in zip(leaves, dims, strict=True):
        if d is not None and _is_tensor(x):
            if x.dim() == 0 or not -x.dim() <= d < x.dim():
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
        norm.append(d)
    if not sizes:
        raise ValueError(
            "vmap: at least one input must be mapped over (in_dims of all inputs are None)"
        )
    if len(set(sizes)) != 1:
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, "
            f"got sizes {sizes} for the mapped dimension"
        )
    return leaves, norm, sizes[0]


class _PerElement(Exception):
    """Internal: ``randomness='different'`` met a random op; map element by element."""


class _SameByChunk(Exception):
    """Internal: ``randomness='same'`` met a random op in a chunked ``vmap``; map chunk by
    chunk, every chunk drawing from the same generator state."""


def _size(leaves: list, dims: list) -> int:
    return next(x.shape[d] for x, d in zip(leaves, dims, strict=True) if d is not None)


def _chunk(x: Any, d: int | None, lo: int, hi: int) -> Any:
    if d is None or not _is_tensor(x):
        return x
    return _wrap(x._st.array[(slice(None),) * d + (slice(lo, hi),)])


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """``func`` mapped over a dimension of its inputs: one ``funcgrad.vmap`` (with
    ``chunk_size``, funcgrad's chunked ``vmap``: one compiled loop over the chunks, so
    ``func`` is traced once rather than called per chunk), outputs' batch dim at
    ``out_dims``. A random op under ``randomness="same"`` with chunks maps chunk by chunk
    (each chunk redraws the same values, as PyTorch)."""
    _check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def mapped(
        args: tuple, kwargs: dict, leaves: list, dims: list, chunk: int | None = None
    ) -> Any:
        _, tree = _flatten(list(args))
        pos = [i for i, (x, d) in enumerate(zip(leaves, dims)) if _is_tensor(x)]

        def f(*xs: Any) -> Any:
            new = list(leaves)
            for i, x in zip(pos, xs, strict=True):
                new[i] = _wrap(x)
            out = func(*tu.tree_unflatten(tree, new), **kwargs)
            for o in _flatten(out)[0]:
                if not _is_tensor(o):
                    raise ValueError(
                        f"vmap: `{getattr(func, '__name__', 'f')}` must only return Tensors, "
                        f"got type {type(o)}. Did you mean to set out_dims= to None for output?"
                    )
            return _arr(out)

        gen = _creation.default_generator
        before = gen._state_bytes()
        axes = tuple(dims[i] for i in pos)
        with _function.vmapping():  # autograd.Function needs a vmap rule, as in PyTorch
            out = fg.vmap(f, in_axes=axes, out_axes=out_dims, chunk_size=chunk)(
                *[leaves[i]._st.array for i in pos]
            )
        if gen._state_bytes() != before:
            if chunk is not None and randomness == "same":
                gen._set_state_bytes(before)
                raise _SameByChunk
            if randomness == "error":
                raise RuntimeError(
                    "vmap: called random operation while in randomness error mode. Please "
                    "either use the 'same' or 'different' randomness flags on vmap or perform "
                    "the randomness operation out of vmap"
                )
            if randomness == "different" and len(pos) and _size(leaves, dims) > 1:
                raise _PerElement
        return out

    def body(args: tuple, kwargs: dict) -> Any:
        leaves, dims, size = _in_dims(in_dims, args, func)
        chunk = None if chunk_size is None or chunk_size >= size else chunk_size
        try:
            return _ten(mapped(args, kwargs, leaves, dims, chunk))
        except _PerElement:
            return _ten(chunked(args, kwargs, leaves, dims, size, 1))
        except _SameByChunk:
            return _ten(chunked(args, kwargs, leaves, dims, size, chunk_size))

    def chunked(args: tuple, kwargs: dict, leaves: list, dims: list, size: int, n: int) -> Any:
        parts = []
        gen = _creation.default_generator
        start = gen._state_bytes()
        for lo in range(0, size, n):
            hi = min(lo + n, size)
            if randomness == "same":  # every chunk draws the same values
                gen._set_state_bytes(start)
            part = [_chunk(x, d, lo, hi) for x, d in zip(leaves, dims, strict=True)]
            parts.append(mapped(args, kwargs, part, dims))
        flat = [_flatten(p)[0] for p in parts]
        out_tree = tu.tree_structure(parts[0])
        o_dims = _broadcast_dims(out_dims, tu.tree_unflatten(out_tree, flat[0]), "vmap")
        joined = [
            fnp.concatenate([f[j] for f in flat], axis=d) if d is not None else flat[0][j]
            for j, d in enumerate(o_dims)
        ]
        return tu.tree_unflatten(out_tree, joined)

    return _entry("vmap", body, func)
