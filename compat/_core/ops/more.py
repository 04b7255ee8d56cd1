"""More daily ops as op-table rows: shifts, integer number theory, ``diff``/``tile``/
``ravel``/``unflatten``, flips, splits by direction, ``inner``/``vdot``, ``aminmax``,
``cov``/``corrcoef``, ``renorm``, ``polygamma``/``mvlgamma``, ``ldexp``/``nextafter``,
predicates (``isposinf``, ``isreal``, ...), ``unfold`` windows and ``fill_diagonal_``.
"""

from __future__ import annotations

import builtins
import math
from collections import namedtuple
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.mutation import inplace_result
from compat._core.ops._common import _c, coerce
from compat._core.optable import Sample, T, defop
from compat._core.shape_ops import reshape, split
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import numpy as fnp
from funcgrad.scipy import special as fsp

ValuesMinMax = namedtuple("aminmax", ["min", "max"])


def _shift_f(x: Any, y: Any, *, left: bool, dtype: np.dtype) -> Any:
    x, y = _c(x, dtype), _c(y, dtype)
    return fnp.left_shift(x, y) if left else fnp.right_shift(x, y)


def _shift(left: bool, input: Any, other: Any) -> Tensor:
    a, b = coerce(input), coerce(other)
    dt = _dt.result_type(a, b)
    if _dt.kind(dt) not in "iu":
        raise RuntimeError(
            f"\"{'lshift' if left else 'rshift'}_cpu\" not implemented for '{_dt.scalar_type_name(dt)}'"
        )
    name = "bitwise_left_shift" if left else "bitwise_right_shift"
    return apply(_shift_f, name, (a, b), (("left", left), ("dtype", dt)))


@defop(inplace=True, samples=Sample(((4,), (4,)), dtype="int64", domain=(0, 3), grad=False))
def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    return _shift(True, input, other)


@defop(inplace=True, samples=Sample(((4,), (4,)), dtype="int64", domain=(0, 3), grad=False))
def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    return _shift(False, input, other)


def _gcd_f(x: Any, y: Any, *, op: str, dtype: np.dtype) -> Any:
    return (fnp.gcd if op == "gcd" else fnp.lcm)(_c(x, dtype), _c(y, dtype))


def _int_pair(op: str) -> Any:
    def f(input: Tensor, other: Tensor) -> Tensor:
        dt = _dt.result_type(input, other)
        if _dt.kind(dt) not in "iu":
            raise RuntimeError(f"\"{op}_cpu\" not implemented for '{_dt.scalar_type_name(dt)}'")
        return apply(_gcd_f, op, (input, other), (("op", op), ("dtype", dt)))

    f.__name__ = op
    samples = Sample(((5,), (5,)), dtype="int64", domain=(1, 12), grad=False)
    return defop(op, inplace=True, samples=samples)(f)


gcd = _int_pair("gcd")
lcm = _int_pair("lcm")


def _ldexp_f(x: Any, e: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) * fnp.exp2(_c(e, dtype))


@defop(inplace=True, samples=Sample(((3,), (3,))), node_name=False)
def ldexp(input: Tensor, other: Any = None) -> Tensor:
    """``input * 2**other``."""
    other = coerce(other if other is not None else 1)
    dt = _dt.float_type(_dt.result_type(input, other))
    return apply(_ldexp_f, "MulBackward0", (input, other), (("dtype", dt),))


def _nextafter_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.nextafter(_c(x, dtype), _c(y, dtype))


@defop(inplace=True, samples=Sample(((3,), (3,)), grad=False))
def nextafter(input: Tensor, other: Tensor) -> Tensor:
    dt = _dt.result_type(input, other)
    return apply(_nextafter_f, "nextafter", (input, other), (("dtype", dt),))


def _polygamma_f(x: Any, *, n: int, dtype: np.dtype) -> Any:
    return fsp.polygamma(n, _c(x, dtype))


@defop(
    method=lambda self, n: polygamma(n, self),
    samples=Sample(((3,),), prefix=(1,), domain=(0.5, 3), method=False),
    node_name=False,
)
def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of the digamma function."""
    dt = _dt.float_type(input._npdtype)
    return apply(_polygamma_f, "PolygammaBackward0", (input,), (("n", int(n)), ("dtype", dt)))


def _mvlgamma_f(x: Any, *, p: int, dtype: np.dtype) -> Any:
    x = _c(x, dtype)
    out = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        out = out + fsp.gammaln(x - j / 2)
    return out


@defop(inplace=True, samples=Sample(((3,),), args=(2,), domain=(1.5, 3)), node_name=False)
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = np.asarray(input._st.array)
    if np.any(x <= (p - 1) / 2):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    dt = _dt.float_type(input._npdtype)
    return apply(_mvlgamma_f, "MvlgammaBackward0", (input,), (("p", int(p)), ("dtype", dt)))


def _pred_f(x: Any, *, op: str) -> Any:
    if op == "isposinf":
        return fnp.isposinf(x)
    if op == "isneginf":
        return fnp.isneginf(x)
    return fnp.isreal(x)


def _predicate(op: str) -> Any:
    def f(input: Tensor) -> Tensor:
        return apply(_pred_f, op, (input,), (("op", op),))

    f.__name__ = op
    return defop(op, samples=Sample(((4,),), grad=False))(f)


isposinf = _predicate("isposinf")
isneginf = _predicate("isneginf")
isreal = _predicate("isreal")


def _diff_f(x: Any, *extra: Any, n: int, axis: int, pre: bool, app: bool) -> Any:
    parts = list(extra)
    prepend = parts.pop(0) if pre else None
    append = parts.pop(0) if app else None
    return fnp.diff(x, n=n, axis=axis, prepend=prepend, append=append)


@defop(
    node_name=False,
    samples=(
        Sample(((3, 4),)),
        Sample(((3, 4),), args=(2, 0)),
        Sample(((4,),), kwargs=(("prepend", T((2,))),)),
    ),
)
def diff(
    input: Tensor, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None
) -> Tensor:
    """The ``n``-th forward difference along ``dim``."""
    axis = _wrap_dim(dim, input.ndim)
    args = [input] + [t for t in (prepend, append) if t is not None]
    st = (("n", int(n)), ("axis", axis), ("pre", prepend is not None), ("app", append is not None))
    return apply(_diff_f, "DiffBackward0", args, st)


def _tile_f(x: Any, *, reps: tuple) -> Any:
    return fnp.tile(x, reps)


@defop(
    node_name=False, samples=(Sample(((2, 3),), args=((2, 1),)), Sample(((3,),), args=((2, 2),)))
)
def tile(input: Tensor, dims: Any) -> Tensor:
    reps = tuple(dims) if isinstance(dims, (tuple, list)) else (int(dims),)
    return apply(_tile_f, "RepeatBackward0", (input,), (("reps", reps),))


@defop(node_name=False, samples=Sample(((2, 3),)))
def ravel(input: Tensor) -> Tensor:
    return reshape(input, -1)


@defop(node_name=False, samples=Sample(((2, 6),), args=(1, (2, 3))))
def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    axis = _wrap_dim(dim, input.ndim)
    sizes = list(sizes)
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = input.shape[axis] // known
    if math.prod(sizes) != input.shape[axis]:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim "
            f"{dim} ({input.shape[axis]}) in the input tensor"
        )
    shape = (*input.shape[:axis], *sizes, *input.shape[axis + 1 :])
    return reshape(input, *shape)


@defop(node_name=False, samples=Sample(((2, 3),)))
def fliplr(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


@defop(node_name=False, samples=Sample(((2, 3),)))
def flipud(input: Tensor) -> Tensor:
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


def _dir_split(input: Tensor, sections: Any, dim: int, name: str, min_dim: int) -> tuple:
    from compat._core.ops.selecting import tensor_split

    if input.ndim < min_dim:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a "
            f"tensor with {input.ndim} dimensions!"
        )
    if isinstance(sections, int) and input.shape[dim] % sections:
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of the "
            f"dimension {input.shape[dim]} is not divisible by the split_size {sections}!"
        )
    return tensor_split(input, sections, dim)


@defop(node_name=False, samples=Sample(((4, 2),), args=(2,)))
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    return _dir_split(input, indices_or_sections, 0, "vsplit", 2)


@defop(node_name=False, samples=(Sample(((2, 4),), args=(2,)), Sample(((6,),), args=([1, 4],))))
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    return _dir_split(input, indices_or_sections, 1 if input.ndim > 1 else 0, "hsplit", 1)


@defop(node_name=False, samples=Sample(((2, 2, 4),), args=(2,)))
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple:
    return _dir_split(input, indices_or_sections, 2, "dsplit", 3)


@defop(function=False, node_name=False, samples=Sample(((5, 2),), args=([2, 3],)))
def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    return split(input, list(split_sizes), dim)


def _inner_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.inner(_c(x, dtype), _c(y, dtype))


@defop(node_name=False, samples=(Sample(((2, 3), (4, 3))), Sample(((3,), (3,)))))
def inner(input: Tensor, other: Tensor) -> Tensor:
    dt = _dt.result_type(input, other)
    return apply(_inner_f, "InnerBackward0", (input, other), (("dtype", dt),))


def _vdot_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.vdot(_c(x, dtype), _c(y, dtype))


@defop(node_name=False, samples=Sample(((3,), (3,))))
def vdot(input: Tensor, other: Tensor) -> Tensor:
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    dt = _dt.result_type(input, other)
    return apply(_vdot_f, "VdotBackward0", (input, other), (("dtype", dt),))


@defop(node_name=False, samples=Sample(((3,),)))
def positive(input: Tensor) -> Tensor:
    if input._npdtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@defop(
    node_name=False,
    samples=(Sample(((3, 4),), grad=False), Sample(((3, 4),), kwargs=(("dim", 1),), grad=False)),
)
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> ValuesMinMax:
    """``(min, max)`` over ``dim`` (all elements by default)."""
    d = () if dim is None else dim
    return ValuesMinMax(input.amin(d, keepdim), input.amax(d, keepdim))


def _cov_f(x: Any, *w: Any, correction: int, fw: bool, aw: bool) -> Any:
    ws = list(w)
    fweights = ws.pop(0) if fw else None
    aweights = ws.pop(0) if aw else None
    return fnp.cov(x, ddof=correction, fweights=fweights, aweights=aweights)


@defop(node_name=False, samples=(Sample(((3, 5),)), Sample(((3, 5),), kwargs=(("correction", 0),))))
def cov(
    input: Tensor, *, correction: int = 1, fweights: Any = None, aweights: Any = None
) -> Tensor:
    if input.ndim > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} dimensions"
        )
    args = [input] + [t for t in (fweights, aweights) if t is not None]
    st = (
        ("correction", int(correction)),
        ("fw", fweights is not None),
        ("aw", aweights is not None),
    )
    return apply(_cov_f, "CovBackward0", args, st)


def _corrcoef_f(x: Any) -> Any:
    return fnp.corrcoef(x)


@defop(node_name=False, samples=Sample(((3, 5),)))
def corrcoef(input: Tensor) -> Tensor:
    return apply(_corrcoef_f, "CorrcoefBackward0", (input,))


def _renorm_f(x: Any, *, p: float, axis: int, maxnorm: float) -> Any:
    axes = tuple(a for a in range(x.ndim) if a != axis)
    norms = fnp.sum(fnp.abs(x) ** p, axis=axes, keepdims=True) ** (1.0 / p)
    scale = fnp.where(norms > maxnorm, maxnorm / (norms + 1e-7), fnp.ones_like(norms))
    return x * scale


@defop(inplace=True, node_name=False, samples=Sample(((3, 4),), args=(2, 0, 1.0)))
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` rescaled to ``p``-norm at most ``maxnorm``."""
    axis = _wrap_dim(dim, input.ndim)
    st = (("p", float(p)), ("axis", axis), ("maxnorm", float(maxnorm)))
    return apply(_renorm_f, "RenormBackward0", (input,), st)


def _unfold_f(x: Any, *, axis: int, size: int, step: int) -> Any:
    n = (x.shape[axis] - size) // step + 1
    idx = np.arange(n)[:, None] * step + np.arange(size)[None, :]
    w = fnp.take(x, fnp.asarray(idx.reshape(-1)), axis=axis)
    shape = (*x.shape[:axis], n, size, *x.shape[axis + 1 :])
    w = fnp.reshape(w, shape)
    return fnp.moveaxis(w, axis + 1, -1)


@defop(
    function=False,
    node_name=False,
    samples=(Sample(((7,),), args=(0, 2, 1)), Sample(((3, 6),), args=(1, 3, 2))),
)
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Windows of ``size`` elements every ``step`` along ``dimension``, as a new last dim."""
    axis = _wrap_dim(dimension, builtins.max(input.ndim, 1))
    if size > input.shape[axis]:
        raise RuntimeError(
            f"maximum size for tensor at dimension {axis} is {input.shape[axis]} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    st = (("axis", axis), ("size", int(size)), ("step", int(step)))
    return apply(_unfold_f, "UnfoldBackward0", (input,), st)


def _fill_diag_f(x: Any, v: Any, *, wrap: bool, dtype: np.dtype) -> Any:
    rows, cols = x.shape[0], x.shape[1]
    n = rows if wrap else builtins.min(rows, cols)
    r = np.arange(n)
    if wrap and rows > cols:
        keep = [i for i in range(rows) if (i % (cols + 1)) < cols]
        r = np.asarray(keep)
        c = r % (cols + 1)
    else:
        c = r
    return x.at[r, c].set(_c(v, dtype))


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (all dims of equal size for more than 2 dims) in place."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")

    def out_of_place(x: Tensor, v: Any) -> Tensor:
        if x.ndim > 2:
            n = x.shape[0]
            idx = tuple(np.arange(n) for _ in range(x.ndim))
            return apply(
                _fill_nd_f,
                "FillBackward0",
                (x, coerce(v), *[np.asarray(i) for i in idx]),
                (("dtype", x._npdtype),),
            )
        return apply(
            _fill_diag_f,
            "FillBackward0",
            (x, coerce(v)),
            (("wrap", bool(wrap)), ("dtype", x._npdtype)),
        )

    return inplace_result(self, out_of_place, (fill_value,), {})


def _fill_nd_f(x: Any, v: Any, *idx: Any, dtype: np.dtype) -> Any:
    return x.at[tuple(idx)].set(_c(v, dtype))
