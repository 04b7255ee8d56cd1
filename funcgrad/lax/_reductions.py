"""Reductions, cumulative reductions and sorting of ``jax.lax``."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import lax as _jl

from funcgrad.api import make_ir
from funcgrad.core import dtypes, sharding_types
from funcgrad.core.axes import normalize_axis, sorted_axes
from funcgrad.core.interp import Tracer, to_aval
from funcgrad.core.ir import Program
from funcgrad.core.reduction_row import Reduction, form_doc, reduction_forms
from funcgrad.lax import _elementwise as E
from funcgrad.lax._control import associative_scan
from funcgrad.numpy._core import here, prep
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as _rd
from funcgrad.primitives import scatter as _sc
from funcgrad.primitives import shape as sh
from funcgrad.primitives import sort as _srt
from funcgrad.primitives.reduce_general import reduce_general
from funcgrad.primitives.rules import moveaxis
from funcgrad.sharding import reshard, takes_out_sharding

__all__ = [
    "approx_max_k",
    "approx_min_k",
    "cumlogsumexp",
    "reduce",
    "reduce_xor",
    "sort",
    "sort_key_val",
    "top_k",
]


def _axes(name: str, x: Any, axes: Sequence[int]) -> tuple[int, ...]:
    """lax's ``axes``: a sequence (not ``None``, not one int) of distinct axes, sorted."""
    if axes is None or isinstance(axes, (int, np.integer)):
        raise TypeError(f"{name}: axes must be a sequence of ints, got {axes!r}{here()}")
    return sorted_axes(axes, to_aval(x).ndim, name)


def _declared_form(name: str, row: Reduction) -> Callable[..., Any]:
    """The lax form of a reduction row: its primitive on the operand as given (no NumPy
    promotion, ``axes`` a sequence; bools by the row's ``on_bool``), an index row's
    ``(operand, axis, index_dtype)`` or a cumulative row's ``(operand, axis, reverse)``."""

    def f(operand: Any, axes: Sequence[int]) -> Any:
        operand = prep(operand, name)
        axes = _axes(name, operand, axes)
        bools = row.on_bool is not None and to_aval(operand).dtype == np.bool_
        prim = row.on_bool[0] if bools else row.primitive  # type: ignore[index]
        return prim.bind(operand, axes=tuple(axes))  # (no axes too: the dtype is checked, as JAX)

    def index(operand: Any, axis: int, index_dtype: Any) -> Any:
        operand = prep(operand, name)
        shape = to_aval(operand).shape
        if not 0 <= operator.index(axis) < len(shape):  # (lax's axis is XLA's, as JAX's)
            raise ValueError(f"Invalid axis {axis} for operand shape {shape}{here()}")
        return row.reduce(operand, axis=axis, index_dtype=index_dtype)

    def scan(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        if axis < 0:  # (lax's axis is XLA's: not counted from the end)
            raise ValueError(f"{name}: XLA operations do not allow negative axes{here()}")
        return row.reduce(prep(operand, name), axis, reverse)

    g = {"index": index, "cumulative": scan}.get(row.numpy, f)
    g.__name__ = g.__qualname__ = name
    g.__doc__ = f"{form_doc(row, 'lax')}."
    return g


#: ``reduce_sum``, ``reduce_prod``, ``reduce_max``, ``reduce_min``, ``reduce_and``,
#: ``reduce_or``, ``argmax``, ``argmin``, ``cumsum``, ``cumprod``, ``cummax`` and ``cummin``
#: from the reduction rows
#: (``funcgrad/primitives/reductions.py``)
DECLARED = {name: _declared_form(name, row) for name, row in reduction_forms("lax").items()}


def _reduce_sum_form(declared: Callable) -> Callable:
    """``lax.reduce_sum`` (JAX's reduction alone takes ``out_sharding=``): an
    ``out_sharding`` with unreduced or reduced axes goes to the primitive (a partial sum
    left unreduced over the axes that split the summed dimensions: no all-reduce, as
    JAX's), any other reshards the sum."""
    placed = takes_out_sharding(declared)

    def reduce_sum(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
        s = None if out_sharding is None else sharding_types.named(out_sharding)
        if s is not None and (s.spec.unreduced or s.spec.reduced):
            x = prep(operand, "reduce_sum")
            return _rd.reduce_sum(x, tuple(axes), out_sharding=s)
        return placed(operand, axes, out_sharding=out_sharding)

    reduce_sum.__signature__ = placed.__signature__  # type: ignore[attr-defined]
    reduce_sum.__doc__ = placed.__doc__
    return reduce_sum


DECLARED["reduce_sum"] = _reduce_sum_form(DECLARED["reduce_sum"])
globals().update(DECLARED)
__all__ += sorted(DECLARED)


def _fold(x: Any, axis: int, op: Callable, identity: Any) -> Any:
    """Pairwise tree reduction of one axis with ``op`` (log-depth, any dtype)."""
    while to_aval(x).shape[axis] > 1:
        n = to_aval(x).shape[axis]
        if n % 2:
            cfg = [(0, 0, 0)] * to_aval(x).ndim
            cfg[axis] = (0, 1, 0)
            x = sh.pad(x, np.asarray(identity, to_aval(x).dtype), cfg)
            n += 1
        shape = to_aval(x).shape
        lo = sh.slice(
            x, (0,) * len(shape), shape, tuple(2 if i == axis else 1 for i in range(len(shape)))
        )
        start = tuple(1 if i == axis else 0 for i in range(len(shape)))
        hi = sh.slice(x, start, shape, tuple(2 if i == axis else 1 for i in range(len(shape))))
        x = op(lo, hi)
    return sh.squeeze(x, (axis,)) if to_aval(x).shape[axis] == 1 else x


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise (logical for bool) XOR over ``axes``."""
    operand = prep(operand, "reduce_xor")
    a = to_aval(operand)
    if dtypes.kind(a.dtype) not in (0, 1):
        raise TypeError(f"reduce_xor: requires an integer or bool operand, got {a}{here()}")
    axes = _axes("reduce_xor", operand, axes)
    for ax in sorted(axes, reverse=True):
        if to_aval(operand).shape[ax] == 0:
            operand = sh.full(
                tuple(s for i, s in enumerate(to_aval(operand).shape) if i != ax), 0, a.dtype
            )
        else:
            operand = _fold(operand, ax, ew.bitwise_xor, 0)
    return operand


def _logaddexp(x: Any, y: Any) -> Any:
    """``log(exp(x) + exp(y))`` of same-shape, same-dtype operands, computed stably (``x +
    y`` where their difference is NaN: equal infinities or a NaN operand)."""
    delta = ew.sub(x, y)
    res = ew.add(ew.max(x, y), ew.log1p(ew.exp(ew.neg(ew.abs(delta)))))
    return ew.select_n(ew.ne(delta, delta), res, ew.add(x, y))


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative ``log(sum(exp(x)))`` along ``axis``, computed stably (an associative
    scan of ``logaddexp``, so its derivatives follow from the scan's)."""
    operand = prep(operand, "cumlogsumexp")
    a = to_aval(operand)
    if not dtypes.is_inexact(a.dtype) or dtypes.kind(a.dtype) == 3:
        raise TypeError(f"cumlogsumexp: requires a real floating operand, got {a}{here()}")
    axis = normalize_axis(axis, a.ndim, "cumlogsumexp")
    return associative_scan(_logaddexp, operand, reverse=reverse, axis=axis)


# --------------------------------------------------------------------------- generic reduce

_MONOIDS: dict[Any, str] = {}


def _register_monoids() -> None:
    for name, fns in {
        "add": (E.add, _jl.add, operator.add, ew.add),
        "mul": (E.mul, _jl.mul, operator.mul, ew.mul),
        "max": (E.max, _jl.max, ew.max),
        "min": (E.min, _jl.min, ew.min),
        "and": (E.bitwise_and, _jl.bitwise_and, operator.and_, ew.bitwise_and),
        "or": (E.bitwise_or, _jl.bitwise_or, operator.or_, ew.bitwise_or),
        "xor": (E.bitwise_xor, _jl.bitwise_xor, operator.xor, ew.bitwise_xor),
    }.items():
        for f in fns:
            _MONOIDS[f] = name


def monoid_of(computation: Callable) -> str | None:
    """``'add'``, ``'max'``, ... when ``computation`` is a known monoid, else ``None``."""
    if not _MONOIDS:
        _register_monoids()
    try:
        return _MONOIDS.get(computation)
    except TypeError:
        return None


_MONOID_PRIMS = {
    ew.add_p: "add",
    ew.mul_p: "mul",
    ew.max_p: "max",
    ew.min_p: "min",
    ew.and_p: "and",
    ew.or_p: "or",
    ew.xor_p: "xor",
}


def _traced_monoids(computation: Callable, xs: list, tree: Any) -> list[str] | None:
    """The monoid of each operand when ``computation``, traced on scalars, combines each
    operand with its own counterpart by one monoid operation (``lambda x, y: x + y``,
    ``lambda a, b: (a[0] + b[0], a[1] * b[1])``); ``None`` otherwise."""
    n = len(xs)
    scalars = [jax.ShapeDtypeStruct((), to_aval(x).dtype) for x in xs]

    def flat(*zs: Any) -> Any:
        a, b = (jax.tree_util.tree_unflatten(tree, list(z)) for z in (zs[:n], zs[n:]))
        return jax.tree_util.tree_leaves(computation(a, b))

    try:
        prog = make_ir(flat)(*scalars, *scalars)
    except Exception:  # not traceable on scalars: not a monoid funcgrad knows
        return None
    if len(prog.outvars) != n:
        return None
    made = {v: e for e in prog.eqns for v in e.outvars}
    out = []
    for i, v in enumerate(prog.outvars):
        e = made.get(v)
        monoid = None if e is None else _MONOID_PRIMS.get(e.prim)
        if monoid is None or set(e.inputs) != {prog.invars[i], prog.invars[n + i]}:
            return None
        if v.aval.dtype != scalars[i].dtype:
            return None
        out.append(monoid)
    return out


def identity_of(monoid: str, dtype: np.dtype) -> Any:
    """The identity of ``monoid`` in ``dtype`` (what JAX requires as ``init_value``)."""
    if monoid == "add" or monoid in ("or", "xor"):
        return np.zeros((), dtype)
    if monoid == "mul":
        return np.ones((), dtype)
    if monoid == "and":
        return np.asarray(True if dtype == np.bool_ else -1).astype(dtype)
    return dtypes.extreme(dtype, largest=monoid == "min")


def is_identity(init: Any, monoid: str, dtype: np.dtype) -> bool:
    """Whether ``init`` is concretely the identity of ``monoid``."""
    try:
        v = np.asarray(init)
    except Exception:
        return False
    if v.dtype == object or v.shape != ():
        return False
    return bool(v == identity_of(monoid, dtype))


_REDUCERS = {
    "add": DECLARED["reduce_sum"],
    "mul": DECLARED["reduce_prod"],
    "max": DECLARED["reduce_max"],
    "min": DECLARED["reduce_min"],
    "and": DECLARED["reduce_and"],
    "or": DECLARED["reduce_or"],
    "xor": reduce_xor,
}
_OPS = {
    "add": ew.add,
    "mul": ew.mul,
    "max": ew.max,
    "min": ew.min,
    "and": ew.bitwise_and,
    "or": ew.bitwise_or,
    "xor": ew.bitwise_xor,
}


def reduce(
    operands: Any,
    init_values: Any,
    computation: Callable,
    dimensions: Sequence[int],
    out_sharding: Any = None,
) -> Any:
    """Reduce ``operands`` over ``dimensions`` with ``computation``.

    ``computation`` takes two pytrees like ``operands`` (of scalars) and returns one.
    The monoids ``add``, ``mul``, ``max``, ``min``, ``bitwise_and``/``or``/``xor`` (from
    ``funcgrad.lax``, ``jax.lax`` or ``operator``, or a function applying one of them per
    operand) use their own reductions, a non-identity ``init_value`` combined once with
    the result; any other computation is traced into a program and reduced by XLA (as in
    ``jax.lax``, it should be associative with ``init_values`` its identity).
    ``out_sharding`` reshards the results over explicit mesh axes.
    """
    if out_sharding is not None:
        res = reduce(operands, init_values, computation, dimensions)
        return reshard(res, out_sharding)
    xs, tree = jax.tree_util.tree_flatten(operands)
    inits, tree2 = jax.tree_util.tree_flatten(init_values)
    # (JAX's checks and words, in JAX's order)
    if tree != tree2:
        raise ValueError(
            f"reduce: Operands must have the same tree structure as init_values: {tree} vs. "
            f"{tree2}{here()}"
        )
    shapes = [to_aval(prep(i, "reduce")).shape for i in inits]
    if any(s != () for s in shapes):
        raise ValueError(f"reduce found non-scalar initial value: {shapes}{here()}")
    dims = tuple(operator.index(d) for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"reduce: duplicate value in 'axes' of reduction: {dims}{here()}")
    xs = [prep(x, "reduce") for x in xs]
    monoid = monoid_of(computation)
    monoids = [monoid] * len(xs) if monoid else _traced_monoids(computation, xs, tree)
    if monoids is None:
        return _reduce_general(xs, inits, tree, computation, dimensions)
    outs = []
    for x, init, monoid in zip(xs, inits, monoids):
        dt = to_aval(x).dtype
        r = _REDUCERS[monoid](x, dimensions)
        if not is_identity(init, monoid, dt):
            init = prep(init, "reduce")
            if to_aval(init).shape != ():
                raise TypeError(f"reduce: init_values must be scalars, got {to_aval(init)}{here()}")
            r = _OPS[monoid](r, init)
        outs.append(r)
    return jax.tree_util.tree_unflatten(tree, outs)


def trace_computation(
    name: str, computation: Callable, dts: Sequence[Any], tree: Any
) -> tuple[Program, tuple, Any]:
    """``computation`` (two pytrees of ``tree`` in, one out) traced on scalars of ``dts``
    into a closed program (its consts first); returns (program, consts, output tree)."""
    n = len(dts)
    scalars = [jax.ShapeDtypeStruct((), np.dtype(d)) for d in dts]
    box: list = []

    def flat(*zs: Any) -> Any:
        a, b = (jax.tree_util.tree_unflatten(tree, list(z)) for z in (zs[:n], zs[n:]))
        leaves, out_tree = jax.tree_util.tree_flatten(computation(a, b))
        box.append(out_tree)
        return leaves

    prog = make_ir(flat)(*scalars, *scalars)
    if any(isinstance(c, Tracer) for c in prog.consts):
        raise NotImplementedError(
            f"{name}: the computation closes over a traced value; pass it as an operand{here()}"
        )
    consts = tuple(np.asarray(c) for c in prog.consts)
    closed = Program(prog.constvars + prog.invars, (), prog.eqns, prog.outvars, ())
    return closed, consts, box[-1]


def _reduce_general(
    xs: list, inits: list, tree: Any, computation: Callable, dimensions: Sequence[int]
) -> Any:
    """``reduce`` with a computation that is not a recognised monoid (``reduce_general``)."""
    inits = [prep(i, "reduce") for i in inits]
    ia = [to_aval(i) for i in inits]
    xa = [to_aval(x) for x in xs]
    if [a.dtype for a in xa] != [a.dtype for a in ia]:
        raise TypeError(
            f"reduce: operand dtypes should match corresponding initial value dtypes, got "
            f"operands={[str(a) for a in xa]} and initial_values={[str(a) for a in ia]}{here()}"
        )
    prog, consts, out_tree = trace_computation("reduce", computation, [a.dtype for a in xa], tree)
    outs = reduce_general(xs, inits, prog, consts, tuple(operator.index(d) for d in dimensions))
    return jax.tree_util.tree_unflatten(out_tree, outs)


# --------------------------------------------------------------------------- sorting


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort one array, or a sequence of arrays lexicographically by the first
    ``num_keys`` (the rest are permuted alongside); returns the same structure."""
    if isinstance(operand, (list, tuple)):
        ops = [prep(o, "sort") for o in operand]
        return tuple(_srt.sort(*ops, dimension=dimension, is_stable=is_stable, num_keys=num_keys))
    if num_keys != 1:
        raise ValueError(f"sort: num_keys={num_keys} needs a sequence of operands{here()}")
    return _srt.sort(prep(operand, "sort"), dimension=dimension, is_stable=is_stable)[0]


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True) -> tuple:
    """Sort ``keys`` and permute ``values`` alongside."""
    out = _srt.sort(
        prep(keys, "sort_key_val"),
        prep(values, "sort_key_val"),
        dimension=dimension,
        is_stable=is_stable,
    )
    return tuple(out)


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Any, Any]:
    """The ``k`` largest entries along ``axis`` (default last) and their int32 indices."""
    operand = prep(operand, "top_k")
    nd = to_aval(operand).ndim
    if nd == 0:
        raise TypeError(f"top_k: the operand must have at least one dimension{here()}")
    axis = normalize_axis(axis, nd, "top_k")
    if axis != nd - 1:
        v, i = _sc.top_k(moveaxis(operand, axis, nd - 1), k)
        return moveaxis(v, nd - 1, axis), moveaxis(i, nd - 1, axis)
    return _sc.top_k(operand, k)


def _approx_k(
    name: str,
    operand: Any,
    k: int,
    reduction_dimension: int,
    aggregate_to_topk: bool,
    largest: bool,
) -> list[Any]:
    x = prep(operand, name)
    xa = to_aval(x)
    if np.dtype(xa.dtype).kind != "f" and xa.dtype.name != "bfloat16":
        raise ValueError("operand must be a floating type")
    axis = normalize_axis(reduction_dimension, xa.ndim, name)
    n = xa.shape[axis]
    if k > n:  # (JAX's words)
        raise ValueError(f"k must be smaller than the size of reduction_dim {n}, got {k}")
    index = sh.iota(np.int32, xa.shape, axis)
    keys = ew.neg(x) if largest else x
    _, values, order = _srt.sort(keys, x, index, dimension=axis, is_stable=True, num_keys=1)
    if aggregate_to_topk:
        limit = tuple(k if d == axis else s for d, s in enumerate(xa.shape))
        values = sh.slice(values, (0,) * xa.ndim, limit)
        order = sh.slice(order, (0,) * xa.ndim, limit)
    return [values, order]


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> list[Any]:
    """The ``k`` largest entries along ``reduction_dimension`` and their int32 indices, as
    ``[values, indices]`` (``jax.lax.approx_max_k``). Exact: JAX's approximate algorithm
    is a TPU one, and off TPU JAX's result is exact too (``recall_target`` and
    ``reduction_input_size_override`` are accepted for that reason); among equal values
    the lowest index comes first, where JAX's CPU fallback may pick another.
    ``aggregate_to_topk=False`` returns the whole sorted dimension, as JAX's on a CPU."""
    return _approx_k("approx_max_k", operand, k, reduction_dimension, aggregate_to_topk, True)


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> list[Any]:
    """The ``k`` smallest entries along ``reduction_dimension`` and their int32 indices
    (``jax.lax.approx_min_k``; exact, as :func:`approx_max_k`)."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, aggregate_to_topk, False)
