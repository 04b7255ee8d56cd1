"""Linear algebra primitives: ``dot_general``.

``dot_general(x, y, dimension_numbers=((lhs_contract, rhs_contract), (lhs_batch,
rhs_batch)))`` follows ``jax.lax``: the result's dimensions are the batch
dimensions (in ``lhs_batch`` order), then ``x``'s free dimensions, then ``y``'s
free dimensions (each in operand order). Its VJP is again a ``dot_general``
(contracting the cotangent with the other operand) followed by a transpose
back into the operand's layout; its batching rule turns a batch axis on both
operands into one more dot batch dimension and a batch axis on one operand
into a free dimension, so a batched dot is always one ``dot_general``.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import Any

import jax
import ml_dtypes
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

from funcgrad import taylor
from funcgrad.core import compile_cache, dtypes, sharding_types
from funcgrad.core.errors import ShardingTypeError
from funcgrad.core.explicit_sharding import dot_out_sharding
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.rules import rand
from funcgrad.primitives.sharding import batched_sharding

FAMILY = "linalg"

DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], ...]]


# --------------------------------------------------------------------------- helpers


def _free(ndim: int, contract: Sequence[int], batch: Sequence[int]) -> list[int]:
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _precision_key(dt: np.dtype) -> tuple:
    """How XLA (and JAX's ``dot_general``) ranks operand types of a mixed-type dot:
    complex first, then exponent range, mantissa, bit width, signedness."""
    real = np.dtype(ml_dtypes.finfo(dt).dtype) if dtypes.kind(dt) == 3 else dt
    floating = dtypes.kind(real) == 2
    return (
        dtypes.kind(dt) == 3,
        ml_dtypes.finfo(real).maxexp if floating else -1,
        ml_dtypes.finfo(real).nmant if floating else -1,
        1 if real == np.bool_ else real.itemsize * 8,
        real.kind != "u",
    )


def _mixed(x: Aval, y: Aval) -> bool:
    """Operands of two strong dtypes: JAX multiplies them as they are."""
    return x.dtype != y.dtype and not x.weak_type and not y.weak_type


def _join_dtype(x: Aval, y: Aval, dn: Any) -> tuple[np.dtype, bool]:
    if _mixed(x, y):
        # JAX's rule (XLA's HigherPrecisionType): the operand type ranked higher
        kx, ky = _precision_key(x.dtype), _precision_key(y.dtype)
        if kx == ky:
            raise TypeError(f"lax.dot_general argument type error: {x.dtype}, {y.dtype}")
        return (x.dtype if kx > ky else y.dtype), False
    return rules.join_dtypes(
        "dot_general", x, y, described=lambda: f"{x} and {y} (dimension_numbers={dn})"
    )


class _Described:
    """``dot_general``'s operands and dimension numbers, formatted when shown."""

    __slots__ = ("dn", "x", "y")

    def __init__(self, x: Aval, y: Aval, dn: Any) -> None:
        self.x, self.y, self.dn = x, y, dn

    def __str__(self) -> str:
        return f"{self.x} and {self.y} with dimension_numbers={self.dn}"


def _as_dtype(v: Any, dtype: np.dtype) -> Any:
    if isinstance(v, (bool, int, float, complex)):
        return np.asarray(v, dtype)
    return v if v.dtype == dtype else lax.convert_element_type(v, dtype)


# --------------------------------------------------------------------------- dot_general

dot_general_p = Primitive("dot_general", family=FAMILY)


@dot_general_p.def_abstract_eval
def _dot_general_abstract_eval(
    x: Aval,
    y: Aval,
    *,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Aval:
    dn = dimension_numbers
    (lc, rc), (lb, rb) = dn
    desc = _Described(x, y, dn)  # formatted only in an error message
    if len(lc) != len(rc):
        raise TypeError(f"dot_general: contracting dimensions differ in number, got {desc}")
    if len(lb) != len(rb):
        raise TypeError(f"dot_general: batch dimensions differ in number, got {desc}")
    for dims, a, side in ((lc + lb, x, "lhs"), (rc + rb, y, "rhs")):
        if any(not 0 <= d < a.ndim for d in dims):
            raise ValueError(f"dot_general: {side} dimensions out of range, got {desc}")
        if len(set(dims)) != len(dims):
            raise ValueError(f"dot_general: {side} dimensions repeated, got {desc}")
    if any(x.shape[i] != y.shape[j] for i, j in zip(lc, rc)):
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{tuple(x.shape[i] for i in lc)} and {tuple(y.shape[j] for j in rc)}. ({desc})"
        )
    if any(x.shape[i] != y.shape[j] for i, j in zip(lb, rb)):
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
            f"same shape, got {tuple(x.shape[i] for i in lb)} and "
            f"{tuple(y.shape[j] for j in rb)}. ({desc})"
        )
    dtype, weak = _join_dtype(x, y, dn)
    if preferred_element_type is not None:
        dtype, weak = preferred_element_type, False
    shape = (
        *(x.shape[i] for i in lb),
        *(x.shape[i] for i in _free(x.ndim, lc, lb)),
        *(y.shape[i] for i in _free(y.ndim, rc, rb)),
    )
    return Aval(shape, dtype, weak)


def _dot_general_lower(
    x: Any,
    y: Any,
    *,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    xa, ya = to_aval(x), to_aval(y)
    if out_sharding is None:
        out_sharding = dot_out_sharding(x, y, dimension_numbers)
    if _mixed(xa, ya):  # as JAX: the operands as they are (XLA's mixed-type dot)
        return lax.dot_general(
            x,
            y,
            dimension_numbers,
            preferred_element_type=preferred_element_type,
            out_sharding=out_sharding,
        )
    dtype, _ = _join_dtype(xa, ya, dimension_numbers)
    return lax.dot_general(
        _as_dtype(x, dtype),
        _as_dtype(y, dtype),
        dimension_numbers,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


dot_general_p.lower = _dot_general_lower
dot_general_p.jet = taylor.bilinear_jet(dot_general_p)
dot_general_p.sharding_rule = sharding_types.dot_general_rule


@dot_general_p.def_jvp
def _dot_general_jvp(
    primals: list,
    tangents: list,
    *,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> tuple:
    (x, y), (tx, ty) = primals, tangents
    kw = dict(
        dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )
    out = dot_general(x, y, **kw)
    t: Any = Zero(to_aval(out).strip_weak())
    if not is_zero(tx):
        t = rules.add_tangents(t, dot_general(tx, y, **kw))
    if not is_zero(ty):
        t = rules.add_tangents(t, dot_general(x, ty, **kw))
    return out, t


def _dot_transpose(
    ct: Any,
    other: Any,
    own: Aval,
    own_c: tuple[int, ...],
    other_c: tuple[int, ...],
    own_b: tuple[int, ...],
    other_b: tuple[int, ...],
    ct_other_free: tuple[int, ...],
) -> Any:
    """Cotangent of one dot operand: contract ``ct`` with ``other``, transpose to ``own``."""
    oa = to_aval(other)
    if not dtypes.is_inexact(own.dtype):
        return None
    if to_aval(ct).dtype != oa.dtype and not (
        dtypes.kind(to_aval(ct).dtype) == 3 and dtypes.kind(oa.dtype) < 3
    ):  # a complex cotangent against a real operand stays complex (a mixed dot)
        ct = ew.convert_element_type(ct, oa.dtype)
    nb = len(own_b)
    other_free = tuple(_free(oa.ndim, other_c, other_b))
    # g's dims: batch (own_b order), own free dims, then other's contracted dims in
    # other's order — each of which is own_c[k] for other_c[k]
    src = [*own_b, *_free(own.ndim, own_c, own_b), *(own_c[k] for k in np.argsort(other_c))]
    # over explicit mesh axes, split as the operand is (JAX's transpose gives the primal's)
    g_sharding = None
    mesh = sharding_types.mesh_of([own, to_aval(ct), oa])
    if mesh is not None:
        spec = sharding_types.spec_of(own)
        g_sharding = NamedSharding(mesh, PartitionSpec(*[spec[i] for i in src]))
    g = dot_general(
        ct,
        other,
        ((ct_other_free, other_free), (tuple(range(nb)), other_b)),
        out_sharding=g_sharding,
    )
    g = sh.transpose(g, tuple(int(i) for i in np.argsort(src)))
    if dtypes.kind(to_aval(g).dtype) == 3 and dtypes.kind(own.dtype) < 3:
        g = ew.real(g)  # a real operand of a complex product: the real part, no warning
    if to_aval(g).dtype != own.dtype:
        g = ew.convert_element_type(g, own.dtype)
    return g


@dot_general_p.def_vjp
def _dot_general_vjp(
    ct: Any,
    x: Any,
    y: Any,
    *,
    out: Any,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> tuple:
    (lc, rc), (lb, rb) = dimension_numbers
    xa, ya = to_aval(x), to_aval(y)
    nb = len(lb)
    nxf = len(_free(xa.ndim, lc, lb))
    nyf = len(_free(ya.ndim, rc, rb))
    x_free_ct = tuple(range(nb, nb + nxf))
    y_free_ct = tuple(range(nb + nxf, nb + nxf + nyf))
    gx = _dot_transpose(ct, y, xa.strip_weak(), lc, rc, lb, rb, y_free_ct)
    gy = _dot_transpose(ct, x, ya.strip_weak(), rc, lc, rb, lb, x_free_ct)
    return gx, gy


@dot_general_p.def_batch
def _dot_general_batch(
    args: list,
    dims: list,
    *,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> tuple:
    (x, y), (xd, yd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    # the unbatched result's rank (for out_sharding's spec)
    n_out = to_aval(x).ndim + to_aval(y).ndim - (xd is not None) - (yd is not None)
    n_out -= 2 * len(lc) + len(lb)

    def shift(ds: tuple[int, ...], d: int) -> tuple[int, ...]:
        return tuple(i + (i >= d) for i in ds)

    if xd is not None and yd is not None:
        # a new (leading) dot batch dimension: the result is batched at 0
        lc, lb = shift(lc, xd), (xd, *shift(lb, xd))
        rc, rb = shift(rc, yd), (yd, *shift(rb, yd))
        out_dim = 0
    elif xd is not None:
        # a free dimension of x
        lc, lb = shift(lc, xd), shift(lb, xd)
        out_dim = len(lb) + _free(to_aval(x).ndim, lc, lb).index(xd)
    else:
        # a free dimension of y
        rc, rb = shift(rc, yd), shift(rb, yd)
        nxf = len(_free(to_aval(x).ndim, lc, lb))
        out_dim = len(lb) + nxf + _free(to_aval(y).ndim, rc, rb).index(yd)
    if out_sharding is not None:
        out_sharding = batched_sharding(
            out_sharding,
            n_out,
            out_dim,
            sharding_types.vmap_entry(getattr(out_sharding, "mesh", None)),
        )
    out = dot_general(x, y, ((lc, rc), (lb, rb)), preferred_element_type, out_sharding=out_sharding)
    return out, out_dim


@functools.lru_cache(maxsize=64)
def host_compute_dtype(dtype: np.dtype, preferred_element_type: Any = None) -> np.dtype:
    """(host tier) The dtype a contraction (``dot_general``, a convolution) computes in on
    NumPy: the preferred element type when there is one (XLA widens the operands to it),
    and float32 for a narrower float (XLA's CPU contractions accumulate float16 and
    bfloat16 in float32; NumPy has no BLAS for them)."""
    dt = np.dtype(dtype if preferred_element_type is None else preferred_element_type)
    if dt.kind == "V" or (dt.kind == "f" and dt.itemsize < 4):  # (bfloat16's kind is "V")
        return np.dtype(np.float32)
    return dt


def host_operand(x: Any, like: Any) -> np.ndarray:
    """(host tier) ``x`` as an array: a weakly typed Python scalar takes the dtype of the
    other operand ``like`` (as the join does); arrays are returned as they are."""
    if type(x) is np.ndarray:
        return x
    if type(like) is np.ndarray:
        return np.asarray(x, like.dtype)
    return np.asarray(x)


#: (dimension numbers, shapes, dtypes, preferred type) -> what ``_dot_general_host``
#: computes from them: the dtype, the operands' permutations, the matmul shapes and the
#: result's shape (a step's few products meet the same ones every call)
_DOT_LAYOUT: dict[tuple, tuple] = {}


def _dims_nested(dn: Any) -> Any:
    return tuple(tuple(tuple(int(i) for i in ds) for ds in pair) for pair in dn)


#: (dimension numbers, ranks) -> the operands' free dimensions and permutations: what
#: :func:`_dot_layout` needs besides the shapes (a growing sequence meets a new shape
#: each step, the same ranks every time)
_DOT_PERMS: dict[tuple, tuple] = {}


def _clear_dot_layouts() -> None:
    _DOT_LAYOUT.clear()
    _DOT_PERMS.clear()


compile_cache.register("host_dot_layouts", size=lambda: len(_DOT_LAYOUT), clear=_clear_dot_layouts)


def _dot_perms(dimension_numbers: Any, nx: int, ny: int) -> tuple:
    key = (dimension_numbers, nx, ny)
    perms = _DOT_PERMS.get(key)
    if perms is None:
        (lc, rc), (lb, rb) = dimension_numbers
        xf = _free(nx, lc, lb)
        yf = _free(ny, rc, rb)
        perms = (xf, yf, (*lb, *xf, *lc), (*rb, *rc, *yf))
        if len(_DOT_PERMS) >= 1024:
            _DOT_PERMS.clear()
        _DOT_PERMS[key] = perms
    return perms


def _dot_layout(key: tuple) -> tuple:
    dimension_numbers, xs, ys, xd, preferred_element_type = key
    (lc, _), (lb, _) = dimension_numbers
    dt = host_compute_dtype(xd, preferred_element_type)
    xf, yf, xperm, yperm = _dot_perms(dimension_numbers, len(xs), len(ys))
    nb = math.prod([xs[i] for i in lb])
    m = math.prod([xs[i] for i in xf])
    k = math.prod([xs[i] for i in lc])
    n = math.prod([ys[i] for i in yf])
    out = (*(xs[i] for i in lb), *(xs[i] for i in xf), *(ys[i] for i in yf))
    xshape, yshape = ((nb, m, k), (nb, k, n)) if lb else ((m, k), (k, n))
    layout = (dt, xperm, yperm, xshape, yshape, out)
    if len(_DOT_LAYOUT) >= 1024:
        _DOT_LAYOUT.clear()
    _DOT_LAYOUT[key] = layout
    return layout


def _dot_general_host(
    x: Any,
    y: Any,
    *,
    dimension_numbers: DimensionNumbers,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> np.ndarray:
    """``dot_general`` on host arrays: the operands transposed to ``(batch, free,
    contracting)`` / ``(batch, contracting, free)``, one (stacked) ``np.matmul`` (BLAS for
    float32/float64/complex, in the operands' precision), reshaped back."""
    x, y = host_operand(x, y), host_operand(y, x)
    xd = x.dtype
    if xd != y.dtype and _precision_key(y.dtype) > _precision_key(xd):
        xd = y.dtype  # two strong dtypes: the result's (JAX's rule)
    key = (dimension_numbers, x.shape, y.shape, xd, preferred_element_type)
    try:
        layout = _DOT_LAYOUT.get(key)
    except TypeError:  # (dimension numbers given as lists: not kept)
        key = (_dims_nested(dimension_numbers), *key[1:])
        layout = None
    if layout is None:
        layout = _dot_layout(key)
    dt, xperm, yperm, xshape, yshape, out = layout
    if x.dtype != dt:
        x = x.astype(dt)
    if y.dtype != dt:
        y = y.astype(dt)
    return np.matmul(
        x.transpose(xperm).reshape(xshape), y.transpose(yperm).reshape(yshape)
    ).reshape(out)


dot_general_p.host = _dot_general_host
dot_general_p.host_join = "weak"  # two strong dtypes are multiplied as they are


@dot_general_p.def_examples
def _dot_general_examples(rng: np.random.Generator) -> list[Example]:
    def ex(xs: tuple, ys: tuple, dn: Any) -> Example:
        return Example([rand(rng, xs), rand(rng, ys)], {"dimension_numbers": dn})

    return [
        ex((2, 3), (3, 4), (((1,), (0,)), ((), ()))),  # matmul
        ex((2, 3), (3,), (((1,), (0,)), ((), ()))),  # matvec
        ex((3,), (3,), (((0,), (0,)), ((), ()))),  # inner product
        ex((2,), (3,), (((), ()), ((), ()))),  # outer product
        ex((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),  # batched matmul
        ex((3, 2, 4), (4, 5, 3), (((0, 2), (2, 0)), ((), ()))),  # permuted contraction
        ex((3, 2, 4), (4, 2), (((2,), (0,)), ((1,), (1,)))),  # batch dims not in front
        ex((2, 3, 4, 5), (4, 3, 5, 2, 6), (((2, 1), (0, 1)), ((3, 0), (2, 3)))),
        # integer operands, and int8 accumulated in int32 (preferred_element_type)
        Example(
            [rand(rng, (2, 3, 4), "int32"), rand(rng, (4, 2, 5), "int32")],
            {"dimension_numbers": (((2,), (0,)), ((0,), (1,)))},
        ),
        Example(
            [rand(rng, (3, 40), "int8", -100, 100), rand(rng, (40, 2), "int8", -100, 100)],
            {
                "dimension_numbers": (((1,), (0,)), ((), ())),
                "preferred_element_type": np.dtype("int32"),
            },
        ),
    ]


def _dims(ds: Sequence[int]) -> tuple[int, ...]:
    return tuple(operator.index(d) for d in ds)


def dot_general(
    x: Any,
    y: Any,
    dimension_numbers: Any,
    preferred_element_type: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """General tensor contraction, as ``jax.lax.dot_general``; ``out_sharding`` (a
    ``NamedSharding``, or a ``PartitionSpec`` over the current mesh) places the result over
    explicit mesh axes, as JAX's, and is required where both operands split a contracting
    dimension over the same axis (JAX's ``ShardingTypeError`` otherwise).

    Example:
        >>> dot_general(np.ones((2, 3)), np.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
        (2, 4)
    """
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((_dims(lc), _dims(rc)), (_dims(lb), _dims(rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)
    if out_sharding is None:
        if sharding_types.active():
            _check_contraction(x, y, dn)
        return bind(dot_general_p, x, y, dimension_numbers=dn, preferred_element_type=pet)
    if isinstance(out_sharding, PartitionSpec):
        out_sharding = NamedSharding(jax.sharding.get_abstract_mesh(), out_sharding)
    return bind(
        dot_general_p,
        x,
        y,
        dimension_numbers=dn,
        preferred_element_type=pet,
        out_sharding=out_sharding,
    )


def _check_contraction(x: Any, y: Any, dn: Any) -> None:
    """JAX's refusal of a dot whose result's sharding is ambiguous (both operands split
    a contracting dimension over the same explicit axis) without ``out_sharding``."""
    found = sharding_types.ambiguous_contraction(to_aval(x), to_aval(y), dn)
    if found is not None:
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. "
            f"Got lhs_contracting_spec={found[0]} and rhs_contracting_spec={found[1]}"
        )
