"""Reductions and cumulative reductions: sum, max, min, prod, and, or, argmax, cumsum, ...

``axes`` parameters are sorted tuples of non-negative ints (the wrappers
normalise negative axes). Derivative conventions follow JAX:

* ``reduce_max``/``reduce_min`` split the gradient evenly among tied elements
  (``ct * (x == max) / count``).
* ``reduce_prod`` differentiates through exclusive products
  (``prod_{j != i} x_j`` as forward × reverse exclusive ``cumprod``), with no
  division, so it is exact where ``x`` has zeros.
* ``cumprod`` differentiates through its linear recurrence
  ``dy_i = x_i dy_{i-1} + y_{i-1} dx_i``, solved by a log-depth parallel scan of
  ``pad``/``mul``/``add`` (no division: exact with zeros).
* ``cummax``/``cummin`` send the gradient of each output to the position that
  attained the running extremum; on ties, to the latest such position in scan
  order (PyTorch's ``cummax`` index; JAX splits ties along its scan tree).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes, sharding_types
from funcgrad.core.axes import normalize_axis, sorted_axes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.reduction_row import Reduction, TorchReduction
from funcgrad.core.zeros import Zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.rules import rand

FAMILY = "reductions"


# --------------------------------------------------------------------------- helpers


_check_dtype = rules.check_dtype  # (the one dtype check; categories in primitives/rules.py)


def _check_axes(name: str, x: Aval, axes: tuple[int, ...]) -> None:
    if any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: axes {axes} out of range for an operand of type {x}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes {axes} contain duplicates (operand {x})")


def _kept(ndim: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


def _unreduce(y: Any, aval: Aval, axes: tuple[int, ...]) -> Any:
    """Broadcast a reduced ``y`` back to ``aval``'s shape."""
    return sh.broadcast_in_dim(y, aval.shape, _kept(aval.ndim, axes))


def _as_float(mask: Any, like: Aval) -> Any:
    return ew.convert_element_type(mask, like.dtype)


def _batch_axes(axes: tuple[int, ...], d: int) -> tuple[tuple[int, ...], int]:
    """Physical axes for an operand batched at ``d``, and the batch dim of the result."""
    phys = tuple(a + (a >= d) for a in axes)
    return phys, d - sum(a < d for a in phys)


def _reduce_examples(
    rng: np.random.Generator, smooth: bool = True, lo: float = -2.0, hi: float = 2.0
) -> list[Example]:
    return [
        Example([rand(rng, (4,), lo=lo, hi=hi)], {"axes": (0,)}, smooth=smooth),
        Example([rand(rng, (2, 3), lo=lo, hi=hi)], {"axes": (1,)}, smooth=smooth),
        Example([rand(rng, (2, 3, 4), lo=lo, hi=hi)], {"axes": (0, 2)}, smooth=smooth),
        Example([rand(rng, (2, 3), lo=lo, hi=hi)], {"axes": (0, 1)}, smooth=smooth),
    ]


def _reduction(name: str, lower: Callable, allowed: str, differentiable: bool = True) -> Primitive:
    p = Primitive(name, family=FAMILY, differentiable=differentiable)

    def abstract_eval(x: Aval, *, axes: tuple[int, ...]) -> Aval:
        _check_dtype(name, x, allowed)
        _check_axes(name, x, axes)
        return Aval(tuple(s for i, s in enumerate(x.shape) if i not in axes), x.dtype, x.weak_type)

    def batch(args: list, dims: list, *, axes: tuple[int, ...]) -> tuple:
        phys, out_dim = _batch_axes(axes, dims[0])
        return p.bind(args[0], axes=phys), out_dim

    p.abstract_eval = abstract_eval
    p.lower = lambda x, *, axes: lower(x, axes)
    p.batch = batch
    return p


# --------------------------------------------------------------------------- reduce_sum

# (``out_sharding``, bound only when given: JAX's, a ``NamedSharding`` over explicit axes
# whose unreduced axes leave the sum partial over them, no all-reduce: partial sums in
# types, ``core/partial_sums.py``)
reduce_sum_p = _reduction("reduce_sum", lax.reduce_sum, "num")
_sum_abstract_eval = reduce_sum_p.abstract_eval
reduce_sum_p.abstract_eval = lambda x, *, axes, out_sharding=None: _sum_abstract_eval(x, axes=axes)
reduce_sum_p.lower = lambda x, *, axes, out_sharding=None: (
    lax.reduce_sum(x, axes)
    if out_sharding is None
    else lax.reduce_sum(x, axes, out_sharding=out_sharding)
)
rules.def_linear(reduce_sum_p)
reduce_sum_p.vjp = lambda ct, x, *, out, axes, out_sharding=None: (_unreduce(ct, to_aval(x), axes),)
reduce_sum_p.examples = _reduce_examples


@reduce_sum_p.def_batch
def _reduce_sum_batch(args: list, dims: list, *, axes: tuple, out_sharding: Any = None) -> tuple:
    (x,), (d,) = args, dims
    phys, out_dim = _batch_axes(axes, d)
    if out_sharding is None:
        return bind(reduce_sum_p, x, axes=phys), out_dim
    # the batch dimension keeps the operand's split
    part = sharding_types.spec_of(to_aval(x))[d]
    parts = list(out_sharding.spec.partitions)
    parts += [None] * (to_aval(x).ndim - 1 - len(axes) - len(parts))
    parts.insert(out_dim, part)
    s = type(out_sharding)(out_sharding.mesh, out_sharding.spec.update(partitions=tuple(parts)))
    return bind(reduce_sum_p, x, axes=phys, out_sharding=s), out_dim


def _reduce_sum_sharding(avals: list, outs: list, *, axes: tuple, out_sharding: Any = None):
    """The operand's splits of the kept dimensions, or ``out_sharding``'s (its unreduced
    axes checked against the operand's by ``partial_sums``)."""
    x, out = avals[0], outs[0]
    if out_sharding is None:
        if x.sharding is None:
            return outs
        kept = [e for i, e in enumerate(sharding_types.spec_of(x)) if i not in axes]
        return [sharding_types.typed(out, kept, x.sharding.mesh)]
    spec = out_sharding.spec
    parts = [*spec.partitions, *[None] * (out.ndim - len(spec.partitions))]
    return [sharding_types.typed(out, parts, out_sharding.mesh, spec.unreduced, spec.reduced)]


reduce_sum_p.sharding_rule = _reduce_sum_sharding


def reduce_sum(x: Any, axes: Sequence[int] | int | None = None, out_sharding: Any = None) -> Any:
    """Sum over ``axes`` (all axes when ``None``); ``out_sharding`` (a ``NamedSharding``)
    types the result, JAX's (its unreduced axes: a partial sum left unreduced)."""
    axes = sorted_axes(axes, to_aval(x).ndim, "reduce_sum")
    if out_sharding is not None:
        return bind(reduce_sum_p, x, axes=axes, out_sharding=out_sharding)
    if not axes:
        return x
    return bind(reduce_sum_p, x, axes=axes)


# --------------------------------------------------------------------------- reduce_max / min


def _chooser_ad(p: Primitive) -> None:
    """JVP/VJP of max/min reductions: ties share the derivative evenly (JAX's rule)."""

    def locations(x: Any, ans: Any, axes: tuple) -> tuple[Any, Any]:
        xa = to_aval(x).strip_weak()
        loc = _as_float(ew.eq(x, _unreduce(ans, xa, axes)), xa)
        return loc, reduce_sum(loc, axes)

    def jvp(primals: list, tangents: list, *, axes: tuple) -> tuple:
        (x,), (t,) = primals, tangents
        ans = p.bind(x, axes=axes)
        if not dtypes.is_inexact(to_aval(x).dtype):
            return ans, Zero(to_aval(ans).strip_weak())
        loc, counts = locations(x, ans, axes)
        return ans, ew.div(reduce_sum(ew.mul(t, loc), axes), counts)

    def vjp(ct: Any, x: Any, *, out: Any, axes: tuple) -> tuple:
        if not dtypes.is_inexact(to_aval(x).dtype):
            return (None,)
        xa = to_aval(x).strip_weak()
        loc, counts = locations(x, out, axes)
        return (ew.mul(loc, _unreduce(ew.div(ct, counts), xa, axes)),)

    p.jvp = jvp
    p.vjp = vjp


def _examples_with_ties(rng: np.random.Generator) -> list[Example]:
    ties = np.array([[1.0, 3.0, 3.0], [-2.0, -2.0, 0.5]])
    return [
        *_reduce_examples(rng, smooth=False),
        Example([ties], {"axes": (1,)}, smooth=False),
        # an empty axis gives the identity (-inf for max, +inf for min)
        Example([np.zeros((2, 0))], {"axes": (1,)}, diff_argnums=()),
    ]


reduce_max_p = _reduction("reduce_max", lax.reduce_max, "num")
reduce_min_p = _reduction("reduce_min", lax.reduce_min, "num")
_chooser_ad(reduce_max_p)
_chooser_ad(reduce_min_p)
reduce_max_p.examples = _examples_with_ties
reduce_min_p.examples = _examples_with_ties


def reduce_max(x: Any, axes: Sequence[int] | int | None = None) -> Any:
    """Maximum over ``axes``; ties share the gradient evenly."""
    axes = sorted_axes(axes, to_aval(x).ndim, "reduce_max")
    return bind(reduce_max_p, x, axes=axes) if axes else x


def reduce_min(x: Any, axes: Sequence[int] | int | None = None) -> Any:
    """Minimum over ``axes``; ties share the gradient evenly."""
    axes = sorted_axes(axes, to_aval(x).ndim, "reduce_min")
    return bind(reduce_min_p, x, axes=axes) if axes else x


# --------------------------------------------------------------------------- reduce_prod

reduce_prod_p = _reduction("reduce_prod", lax.reduce_prod, "num")


def _prod_others(x: Any, axes: tuple[int, ...]) -> Any:
    """``prod_{j != i} x_j`` over the reduced ``axes``, for every element ``i`` (no division)."""
    xa = to_aval(x)
    keep = _kept(xa.ndim, axes)
    perm = keep + axes
    kshape = tuple(xa.shape[i] for i in keep)
    n = int(np.prod([xa.shape[a] for a in axes], dtype=np.int64))
    xr = sh.reshape(sh.transpose(x, perm), (*kshape, n))
    last = len(kshape)
    one = np.asarray(1, xa.dtype)
    before = _shift(cumprod(xr, axis=last), 1, last, one, reverse=False)
    after = _shift(cumprod(xr, axis=last, reverse=True), 1, last, one, reverse=True)
    f = sh.reshape(ew.mul(before, after), tuple(xa.shape[i] for i in perm))
    return sh.transpose(f, tuple(int(i) for i in np.argsort(perm)))


@reduce_prod_p.def_jvp
def _reduce_prod_jvp(primals: list, tangents: list, *, axes: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    return reduce_prod(x, axes), reduce_sum(ew.mul(t, _prod_others(x, axes)), axes)


@reduce_prod_p.def_vjp
def _reduce_prod_vjp(ct: Any, x: Any, *, out: Any, axes: tuple) -> tuple:
    return (ew.mul(_unreduce(ct, to_aval(x), axes), _prod_others(x, axes)),)


@reduce_prod_p.def_examples
def _reduce_prod_examples(rng: np.random.Generator) -> list[Example]:
    with_zeros = np.array([[0.0, 2.0, -1.5], [0.0, 0.0, 3.0], [1.5, -0.5, 2.0]])
    return [
        *_reduce_examples(rng, lo=0.5, hi=1.5),
        Example([rand(rng, (2, 3), lo=-2.0, hi=2.0)], {"axes": (1,)}),
        Example([with_zeros], {"axes": (1,)}),
        Example([with_zeros], {"axes": (0, 1)}),
    ]


def reduce_prod(x: Any, axes: Sequence[int] | int | None = None) -> Any:
    """Product over ``axes``; differentiable through zeros."""
    axes = sorted_axes(axes, to_aval(x).ndim, "reduce_prod")
    return bind(reduce_prod_p, x, axes=axes) if axes else x


# --------------------------------------------------------------------------- reduce_and / or

reduce_and_p = _reduction("reduce_and", lax.reduce_and, "intbool", differentiable=False)
reduce_or_p = _reduction("reduce_or", lax.reduce_or, "intbool", differentiable=False)


def _bool_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (4,), "bool")], {"axes": (0,)}),
        Example([rand(rng, (2, 3), "bool")], {"axes": (1,)}),
        Example([rand(rng, (2, 3, 2), "bool")], {"axes": (0, 2)}),
        Example([np.array([[5, 3, 7], [12, -10, 6]], np.int32)], {"axes": (1,)}),  # bitwise
        Example([np.zeros((2, 0), np.uint8)], {"axes": (1,)}),  # empty: all ones / zeros
    ]


reduce_and_p.examples = _bool_examples
reduce_or_p.examples = _bool_examples


def reduce_and(x: Any, axes: Sequence[int] | int | None = None) -> Any:
    """Logical (bitwise for ints) AND over ``axes``."""
    axes = sorted_axes(axes, to_aval(x).ndim, "reduce_and")
    return bind(reduce_and_p, x, axes=axes) if axes else x


def reduce_or(x: Any, axes: Sequence[int] | int | None = None) -> Any:
    """Logical (bitwise for ints) OR over ``axes``."""
    axes = sorted_axes(axes, to_aval(x).ndim, "reduce_or")
    return bind(reduce_or_p, x, axes=axes) if axes else x


# --------------------------------------------------------------------------- argmax / argmin


def _arg_reduction(name: str, lower: Callable) -> Primitive:
    p = Primitive(name, family=FAMILY, differentiable=False)

    def abstract_eval(x: Aval, *, axis: int, index_dtype: np.dtype) -> Aval:
        _check_dtype(name, x, "noncomplex")
        _check_axes(name, x, (axis,))
        if x.shape[axis] == 0:  # (JAX's words)
            raise ValueError(
                f"{name}: argmin and argmax require non-empty reduced dimension, got the "
                f"empty axis {axis} of an operand {x}"
            )
        if dtypes.kind(index_dtype) != 1:
            raise TypeError(f"{name}: index_dtype must be an integer type, but got {index_dtype}")
        shape = tuple(s for i, s in enumerate(x.shape) if i != axis)
        return Aval(shape, index_dtype)

    def batch(args: list, dims: list, *, axis: int, index_dtype: np.dtype) -> tuple:
        (phys,), out_dim = _batch_axes((axis,), dims[0])
        return p.bind(args[0], axis=phys, index_dtype=index_dtype), out_dim

    p.abstract_eval = abstract_eval
    p.lower = lambda x, *, axis, index_dtype: lower(x, axis, index_dtype)
    p.sharding_rule = sharding_types.drop_axis_rule
    p.batch = batch
    p.examples = lambda rng: [
        Example([rand(rng, (5,))], {"axis": 0, "index_dtype": np.dtype("int32")}),
        Example([rand(rng, (3, 4))], {"axis": 1, "index_dtype": np.dtype("int32")}),
        Example([rand(rng, (3, 4, 2))], {"axis": 0, "index_dtype": np.dtype("int64")}),
        # the first NaN wins (as the first of tied extrema)
        Example(
            [np.array([[1.0, np.nan, 3.0, np.nan], [2.0, -1.0, 2.0, -1.0]])],
            {"axis": 1, "index_dtype": np.dtype("int32")},
        ),
    ]
    return p


argmax_p = _arg_reduction("argmax", lax.argmax)
argmin_p = _arg_reduction("argmin", lax.argmin)


def argmax(x: Any, *, axis: int, index_dtype: Any = "int32") -> Any:
    """Index of the (first) maximum along ``axis``."""
    axis = normalize_axis(axis, to_aval(x).ndim, "argmax")
    return bind(argmax_p, x, axis=axis, index_dtype=dtypes.canonicalize(index_dtype))


def argmin(x: Any, *, axis: int, index_dtype: Any = "int32") -> Any:
    """Index of the (first) minimum along ``axis``."""
    axis = normalize_axis(axis, to_aval(x).ndim, "argmin")
    return bind(argmin_p, x, axis=axis, index_dtype=dtypes.canonicalize(index_dtype))


# --------------------------------------------------------------------------- cumulative


def _shift(x: Any, k: int, axis: int, fill: Any, reverse: bool) -> Any:
    """Shift ``x`` by ``k`` along ``axis`` in scan order, filling with ``fill`` (one ``pad``).

    Forward: ``out[i] = x[i - k]``; reverse: ``out[i] = x[i + k]``.
    """
    nd = to_aval(x).ndim
    config = [(0, 0, 0)] * nd
    config[axis] = (-k, k, 0) if reverse else (k, -k, 0)
    return sh.pad(x, fill, config)


def _linear_recurrence(a: Any, b: Any, axis: int, reverse: bool) -> Any:
    """Solve ``h_i = a_i * h_{i-1} + b_i`` (``h_{-1} = 0``) along ``axis`` in scan order.

    Hillis–Steele doubling on the affine maps ``h -> a h + b``: ``ceil(log2 n)``
    rounds of shift / multiply / add, so the result is again differentiable.
    """
    aval = to_aval(b)
    n = aval.shape[axis]
    one, zero = np.asarray(1, aval.dtype), np.asarray(0, aval.dtype)
    k = 1
    while k < n:
        b = ew.add(ew.mul(a, _shift(b, k, axis, zero, reverse)), b)
        if 2 * k < n:
            a = ew.mul(a, _shift(a, k, axis, one, reverse))
        k *= 2
    return b


def _cumulative(name: str, lower: Callable, allowed: str) -> Primitive:
    p = Primitive(name, family=FAMILY)

    def abstract_eval(x: Aval, *, axis: int, reverse: bool) -> Aval:
        _check_dtype(name, x, allowed)
        _check_axes(name, x, (axis,))
        return x

    def batch(args: list, dims: list, *, axis: int, reverse: bool) -> tuple:
        d = dims[0]
        return p.bind(args[0], axis=axis + (axis >= d), reverse=reverse), d

    p.abstract_eval = abstract_eval
    p.lower = lambda x, *, axis, reverse: lower(x, axis, reverse)
    p.batch = batch
    return p


def _cum_examples(smooth: bool = True, lo: float = -2.0, hi: float = 2.0) -> Callable:
    def examples(rng: np.random.Generator) -> list[Example]:
        return [
            Example([rand(rng, (5,), lo=lo, hi=hi)], {"axis": 0, "reverse": False}, smooth=smooth),
            Example(
                [rand(rng, (3, 4), lo=lo, hi=hi)], {"axis": 1, "reverse": False}, smooth=smooth
            ),
            Example([rand(rng, (3, 4), lo=lo, hi=hi)], {"axis": 0, "reverse": True}, smooth=smooth),
            Example([rand(rng, (2, 7), lo=lo, hi=hi)], {"axis": 1, "reverse": True}, smooth=smooth),
        ]

    return examples


cumsum_p = _cumulative("cumsum", lax.cumsum, "num")
rules.def_linear(cumsum_p)
cumsum_p.vjp = lambda ct, x, *, out, axis, reverse: (cumsum(ct, axis=axis, reverse=not reverse),)
cumsum_p.examples = _cum_examples()

cumprod_p = _cumulative("cumprod", lax.cumprod, "num")


@cumprod_p.def_jvp
def _cumprod_jvp(primals: list, tangents: list, *, axis: int, reverse: bool) -> tuple:
    # dy_i = x_i dy_{i-1} + y_{i-1} dx_i
    (x,), (t,) = primals, tangents
    y = cumprod(x, axis=axis, reverse=reverse)
    before = _shift(y, 1, axis, np.asarray(1, to_aval(y).dtype), reverse)
    return y, _linear_recurrence(x, ew.mul(t, before), axis, reverse)


@cumprod_p.def_vjp
def _cumprod_vjp(ct: Any, x: Any, *, out: Any, axis: int, reverse: bool) -> tuple:
    # transpose of the recurrence: v_j = ct_j + x_{j+1} v_{j+1}, then dx_j = y_{j-1} v_j
    dt = to_aval(out).dtype
    before = _shift(out, 1, axis, np.asarray(1, dt), reverse)
    a = _shift(x, 1, axis, np.asarray(0, dt), not reverse)
    v = _linear_recurrence(a, ct, axis, not reverse)
    return (ew.mul(before, v),)


@cumprod_p.def_examples
def _cumprod_examples(rng: np.random.Generator) -> list[Example]:
    with_zeros = np.array([[1.5, 0.0, -2.0, 0.5, 1.2], [0.0, 0.7, 0.0, 1.3, -0.8]])
    return [
        *_cum_examples()(rng),
        Example([with_zeros], {"axis": 1, "reverse": False}),
        Example([with_zeros], {"axis": 1, "reverse": True}),
    ]


def _extremum_ad(p: Primitive) -> None:
    """cummax/cummin: each output's derivative comes from the position that attained it."""

    def flat_source(x: Any, y: Any, axis: int, reverse: bool) -> Any:
        # flat index (into x.reshape(-1)) of the element each output of the scan copies
        xa = to_aval(x)
        n, size = xa.shape[axis], xa.size
        dt = np.dtype("int32") if size < 2**31 else dtypes.canonicalize(np.dtype("int64"))
        pos = sh.iota(dt, xa.shape, axis)
        hit = ew.eq(x, y)
        if reverse:
            src = cummin(ew.select_n(hit, sh.full(xa.shape, n, dt), pos), axis=axis, reverse=True)
        else:
            src = cummax(ew.select_n(hit, sh.full(xa.shape, -1, dt), pos), axis=axis)
        stride = int(np.prod(xa.shape[axis + 1 :], dtype=np.int64))
        flat = sh.reshape(sh.iota(dt, (size,), 0), xa.shape)
        return ew.add(flat, ew.mul(ew.sub(src, pos), np.asarray(stride, dt)))

    def jvp(primals: list, tangents: list, *, axis: int, reverse: bool) -> tuple:
        (x,), (t,) = primals, tangents
        y = p.bind(x, axis=axis, reverse=reverse)
        if not dtypes.is_inexact(to_aval(x).dtype):
            return y, Zero(to_aval(y).strip_weak())
        src = flat_source(x, y, axis, reverse)
        return y, ix.gather(sh.reshape(t, (to_aval(x).size,)), src, axis=0)

    def vjp(ct: Any, x: Any, *, out: Any, axis: int, reverse: bool) -> tuple:
        xa = to_aval(x)
        if not dtypes.is_inexact(xa.dtype):
            return (None,)
        src = flat_source(x, out, axis, reverse)
        zeros = rules.zeros_like_aval(Aval((xa.size,), to_aval(ct).dtype))
        return (sh.reshape(ix.scatter_add(zeros, src, ct, axis=0), xa.shape),)

    p.jvp = jvp
    p.vjp = vjp


cummax_p = _cumulative("cummax", lax.cummax, "noncomplex")
cummin_p = _cumulative("cummin", lax.cummin, "noncomplex")
_extremum_ad(cummax_p)
_extremum_ad(cummin_p)
# no tie examples: at ties the finite-difference oracle averages the tied directions
cummax_p.examples = _cum_examples(smooth=False)
cummin_p.examples = _cum_examples(smooth=False)


def _cum_wrapper(p: Primitive) -> Callable:
    def wrapper(x: Any, axis: int = 0, reverse: bool = False) -> Any:
        axis = normalize_axis(axis, to_aval(x).ndim, p.name)
        return bind(p, x, axis=axis, reverse=bool(reverse))

    wrapper.__name__ = p.name
    wrapper.__doc__ = f"Cumulative ``{p.name[3:]}`` along ``axis`` (from the end if ``reverse``)."
    return wrapper


cumsum = _cum_wrapper(cumsum_p)
cumprod = _cum_wrapper(cumprod_p)
cummax = _cum_wrapper(cummax_p)
cummin = _cum_wrapper(cummin_p)


# --------------------------------------------------------------------------- rows
# (the public reductions of funcgrad.numpy, funcgrad.lax and compat, each declared once:
# funcgrad.core.reduction_row; the namespaces generate their forms from these)

Reduction(
    "sum",
    reduce_sum_p,
    reduce_sum,
    public=("numpy", "lax:reduce_sum"),
    doc="Sum over ``axis`` (all axes by default); small integers and bools sum as the "
    "default integer",
    docs={"lax": "Sum over ``axes``"},
    numpy="fold",
    identity=0,
    combine=ew.add,
    torch=TorchReduction("SumBackward0", dim_grad_fn="SumBackward1"),
)
Reduction(
    "prod",
    reduce_prod_p,
    reduce_prod,
    public=("numpy", "lax:reduce_prod"),
    doc="Product over ``axis``",
    docs={"lax": "Product over ``axes``"},
    numpy="fold",
    identity=1,
    combine=ew.mul,
    torch=TorchReduction(
        "ProdBackward0", dim_grad_fn="ProdBackward1", one_dim=True, domain=(0.5, 1.5)
    ),
)
for _name, _public, _p, _fn, _combine, _bools, _fill, _torch in (
    (
        "max",
        ("numpy", "numpy:amax", "lax:reduce_max"),
        *(reduce_max_p, reduce_max, ew.max, (reduce_or_p, ew.bitwise_or), "lowest"),
        ("amax", "AmaxBackward0", "max_values_cpu"),
    ),
    (
        "min",
        ("numpy", "numpy:amin", "lax:reduce_min"),
        *(reduce_min_p, reduce_min, ew.min, (reduce_and_p, ew.bitwise_and), "highest"),
        ("amin", "AminBackward0", "min_values_cpu"),
    ),
):
    Reduction(
        _name,
        _p,
        _fn,
        public=_public,
        doc=f"{_name.capitalize()}imum over ``axis``",
        docs={"lax": f"{_name.capitalize()}imum over ``axes``"},
        numpy="extremum",
        identity=_fill,  # (the masked elements' fill: NumPy's max has no identity)
        combine=_combine,
        on_bool=_bools,
        torch=TorchReduction(
            _torch[1],
            name=_torch[0],
            dim=(),
            dtype=False,
            promote="keep",
            no_identity=RuntimeError,
            complex_error=f"\"{_torch[2]}\" not implemented for '{{dtype}}'",
        ),
    )
Reduction(
    "mean",
    reduce_sum_p,
    reduce_sum,
    public=("numpy",),
    doc="Arithmetic mean over ``axis``; integers average in floating point",
    numpy="average",
    identity=0,
    torch=TorchReduction("MeanBackward0", dim_grad_fn="MeanBackward1", promote="float"),
)
Reduction(
    "nansum",
    reduce_sum_p,
    reduce_sum,
    public=("numpy",),
    doc="Sum over ``axis`` treating NaNs as zero",
    numpy="fold",
    identity=0,
    combine=ew.add,
    nan=True,
    method=False,
    torch=TorchReduction(
        "NansumBackward0",
        complex_error=(RuntimeError, "nansum on CPU does not support complex inputs"),
    ),
)
Reduction(
    "nanmean",
    reduce_sum_p,
    reduce_sum,
    public=("numpy",),
    doc="Arithmetic mean over ``axis`` of the elements that are not NaN",
    numpy="average",
    identity=0,
    nan=True,
    method=False,
    # (PyTorch's nanmean divides its nansum by the count: its node is the division's)
    torch=TorchReduction(
        "DivBackward0",
        promote="float",
        int_error="nanmean(): expected input to have floating point or complex dtype but got "
        "{dtype}",
        complex_error=(RuntimeError, "nansum on CPU does not support complex inputs"),
    ),
)
for _name, _finish, _doc in (
    ("var", None, "Variance"),
    ("std", ew.sqrt, "Standard deviation (the square root of the variance)"),
):
    Reduction(
        _name,
        reduce_sum_p,
        reduce_sum,
        public=("numpy",),
        doc=f"{_doc} over ``axis``, divided by ``N - ddof``; integers in floating point",
        numpy="moment",
        identity=0,
        finish=_finish,
        torch=TorchReduction(
            f"{_name.capitalize()}Backward0",
            dtype=False,
            promote="real",
            correction=True,
            int_error="std and var only support floating point and complex dtypes",
        ),
    )
for _name, _public, _p, _fn, _identity, _doc, _torch in (
    ("cumsum", ("numpy", "lax"), cumsum_p, cumsum, 0, "sum", ("CumsumBackward0", (-2.0, 2.0))),
    (
        "cumprod",
        ("numpy", "lax"),
        cumprod_p,
        cumprod,
        1,
        "product",
        ("CumprodBackward0", (0.5, 1.5)),
    ),
    ("cummax", ("lax",), cummax_p, cummax, "lowest", "maximum", None),
    ("cummin", ("lax",), cummin_p, cummin, "highest", "minimum", None),
):
    Reduction(
        _name,
        _p,
        _fn,
        public=_public,
        doc=f"Cumulative {_doc} along ``axis`` (of the flattened array when ``None``)",
        docs={"lax": f"Cumulative {_doc} along ``axis`` (from the end if ``reverse``)"},
        numpy="cumulative",
        identity=_identity,
        torch=None
        if _torch is None
        else TorchReduction(_torch[0], dim=None, one_dim=True, inplace=True, domain=_torch[1]),
    )
for _name, _lax, _p, _fn, _identity, _bitwise, _which in (
    ("any", "lax:reduce_or", reduce_or_p, reduce_or, False, "OR", "any"),
    ("all", "lax:reduce_and", reduce_and_p, reduce_and, True, "AND", "every"),
):
    Reduction(
        _name,
        _p,
        _fn,
        public=("numpy", _lax),
        doc=f"Whether {_which} element along ``axis`` is non-zero",
        docs={"lax": f"Bitwise (logical for bool) {_bitwise} over ``axes``"},
        numpy="logical",
        identity=_identity,
        torch=TorchReduction(None, dtype=False, promote="bool", empty_dim_all=False),
    )
for _name, _p, _fn, _first in (
    ("argmax", argmax_p, argmax, "maximum"),
    ("argmin", argmin_p, argmin, "minimum"),
):
    Reduction(
        _name,
        _p,
        _fn,
        public=("numpy", "lax"),
        doc=f"Index of the {_first} along ``axis`` (the first on ties; of the flattened "
        "array when ``None``)",
        docs={"lax": f"Index of the first {_first} along ``axis`` (NaN counts as one)"},
        numpy="index",
        identity=None,
        torch=TorchReduction(
            None,
            dtype=False,
            promote="index",
            one_dim=True,
            no_identity=IndexError,
            complex_error=(RuntimeError, f"{_name}(): does not support complex input"),
            bool_error=f"{_name}(): does not support bool input",
        ),
    )
del (
    _name,
    _public,
    _p,
    _fn,
    _first,
    _combine,
    _bools,
    _fill,
    _torch,
    _lax,
    _identity,
    _bitwise,
    _which,
    _finish,
    _doc,
)


# --------------------------------------------------------------------------- host rules
# (the host tier, funcgrad.core.host: NumPy's reductions; an empty max/min gives XLA's
# identity, -inf/+inf or the integer bounds; argmax/argmin and NaN as XLA: the first NaN)


def _host_bound(dtype: np.dtype, top: bool) -> Any:
    """The largest (``top``) or smallest value of ``dtype`` (infinities for floats)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if top else info.min
    return np.inf if top else -np.inf


def _host_extremum(ufunc: np.ufunc, top: bool) -> Callable:
    def rule(x: Any, *, axes: tuple[int, ...]) -> Any:
        if x.size:
            return ufunc.reduce(x, axis=axes)
        return ufunc.reduce(x, axis=axes, initial=_host_bound(x.dtype, top))

    return rule


def _host_fold(ufunc: np.ufunc) -> Callable:
    def rule(x: Any, *, axes: tuple[int, ...]) -> Any:
        if x.dtype.itemsize > 2 or x.dtype.kind not in "fV" or not x.size:
            return ufunc.reduce(x, axis=axes)
        # 8- and 16-bit floats: XLA rounds every step, in row-major order (NumPy rounds
        # float16 once, in the end, and goes in memory order)
        keep = [d for d in range(x.ndim) if d not in axes]
        y = np.transpose(x, (*keep, *axes)).reshape(*(x.shape[d] for d in keep), -1)
        return ufunc.accumulate(y, axis=-1)[..., -1]

    return rule


def _host_cumulative(ufunc: np.ufunc) -> Callable:
    def rule(x: Any, *, axis: int, reverse: bool) -> Any:
        if not reverse:
            return ufunc.accumulate(x, axis=axis)
        flip = (slice(None),) * axis + (slice(None, None, -1),)
        return ufunc.accumulate(x[flip], axis=axis)[flip]

    return rule


_sum_host = _host_fold(np.add)
reduce_sum_p.host = lambda x, *, axes, out_sharding=None: _sum_host(x, axes=axes)
reduce_prod_p.host = _host_fold(np.multiply)
reduce_max_p.host = _host_extremum(np.maximum, False)
reduce_min_p.host = _host_extremum(np.minimum, True)
reduce_and_p.host = lambda x, *, axes: np.bitwise_and.reduce(x, axis=axes)
reduce_or_p.host = lambda x, *, axes: np.bitwise_or.reduce(x, axis=axes)
argmax_p.host = lambda x, *, axis, index_dtype: x.argmax(axis)
argmin_p.host = lambda x, *, axis, index_dtype: x.argmin(axis)
cumsum_p.host = _host_cumulative(np.add)
cumprod_p.host = _host_cumulative(np.multiply)
cummax_p.host = _host_cumulative(np.maximum)
cummin_p.host = _host_cumulative(np.minimum)
