"""Ops PyTorch code uses daily that are compositions or small kernels: fused
multiply-adds (``addmm``, ``baddbmm``, ...), ``tensordot``/``cross``,
distances (``cdist``, ``dist``), moments (``var_mean``, ``std_mean``), comparisons
(``equal``), NaN-aware reductions, ``logit``, ``frac`` and index grids.
"""

from __future__ import annotations

import builtins
import itertools
from typing import Any

import numpy as np

import funcgrad as fg
from compat._core import dtypes as _dt
from compat._core.creation import tensor
from compat._core.mutation import apply_inplace
from compat._core.ops._common import _c, acc, coerce, tensor_list, warn_once
from compat._core.ops.array_rows import stack
from compat._core.ops.binary import POW_NODES
from compat._core.ops.linalg_decomp import _check_dim_arg, cross_checked
from compat._core.ops.reductions import _moment_f, _moment_static
from compat._core.ops.unary import sign
from compat._core.optable import Sample, defop, no_bf16_kernel
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp

# ------------------------------------------------------------------ fused products


def _addmm_f(c: Any, a: Any, b: Any, beta: Any, alpha: Any, *, dtype: np.dtype) -> Any:
    f = acc(dtype)  # float16/bfloat16 computed in float32, rounded once
    prod = fnp.matmul(_c(a, f), _c(b, f))
    return (_c(beta, f) * _c(c, f) + _c(alpha, f) * prod).astype(dtype)


def _fused(
    name: str, input: Tensor, a: Tensor, b: Tensor, beta: Any, alpha: Any, node: str
) -> Tensor:
    dt = _dt.result_type(input, a, b)
    if beta == 0:  # PyTorch ignores input (even NaN) when beta is 0
        input = input * 0
        input = apply(_zero_nan_f, "MulBackward0", (input,))
    return apply(_addmm_f, node, (input, a, b, beta, alpha), (("dtype", dt),))


def _zero_nan_f(x: Any) -> Any:
    return fnp.where(fnp.isnan(x), fnp.zeros_like(x), x)


@defop(
    inplace=True,
    samples=(
        Sample(((2, 4), (2, 3), (3, 4))),
        Sample(((4,), (2, 3), (3, 4)), kwargs=(("beta", 0.5), ("alpha", 2.0))),
    ),
)
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``."""
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("mat1 must be a matrix" if mat1.ndim != 2 else "mat2 must be a matrix")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
            f"{mat2.shape[0]}x{mat2.shape[1]})"
        )
    return _fused("addmm", input, mat1, mat2, beta, alpha, "AddmmBackward0")


@defop(
    inplace=True,
    inplace_function=True,
    samples=Sample(((2,), (2, 3), (3,)), kwargs=(("beta", 0.5),)),
)
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}"
        )
    return _fused("addmv", input, mat, vec, beta, alpha, "AddmvBackward0")


@defop(inplace=True, samples=Sample(((2, 2, 4), (2, 2, 3), (2, 3, 4)), kwargs=(("alpha", 0.5),)))
def baddbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(
            "batch1 must be a 3D tensor" if batch1.ndim != 3 else "batch2 must be a 3D tensor"
        )
    return _fused("baddbmm", input, batch1, batch2, beta, alpha, "BaddbmmBackward0")


def _addbmm_f(c: Any, a: Any, b: Any, beta: Any, alpha: Any, *, dtype: np.dtype) -> Any:
    f = acc(dtype)  # float16/bfloat16 accumulate over the batch in float32, round once
    prod = fnp.sum(fnp.matmul(_c(a, f), _c(b, f)), axis=0)
    return (_c(beta, f) * _c(c, f) + _c(alpha, f) * prod).astype(dtype)


@defop(inplace=True, samples=Sample(((2, 4), (3, 2, 3), (3, 3, 4))))
def addbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]``."""
    dt = _dt.result_type(input, batch1, batch2)
    return apply(
        _addbmm_f, "AddbmmBackward0", (input, batch1, batch2, beta, alpha), (("dtype", dt),)
    )


def _addr_f(c: Any, a: Any, b: Any, beta: Any, alpha: Any, *, dtype: np.dtype) -> Any:
    return _c(beta, dtype) * _c(c, dtype) + _c(alpha, dtype) * fnp.outer(_c(a, dtype), _c(b, dtype))


@defop(inplace=True, samples=Sample(((2, 3), (2,), (3,)), kwargs=(("beta", 2.0),)))
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    dt = _dt.result_type(input, vec1, vec2)
    return apply(_addr_f, "AddrBackward0", (input, vec1, vec2, beta, alpha), (("dtype", dt),))


def _tensordot_f(a: Any, b: Any, *, axes: Any, dtype: np.dtype) -> Any:
    return fnp.tensordot(_c(a, dtype), _c(b, dtype), axes=axes)


@defop(
    method=False,
    node_name=False,
    samples=(
        Sample(((2, 3, 4), (3, 4, 2)), method=False),
        Sample(((2, 3), (3, 2)), args=(1,), method=False),
        Sample(((2, 3), (2, 3)), kwargs=(("dims", ([0, 1], [0, 1])),), method=False),
    ),
)
def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    axes = int(dims) if isinstance(dims, int) else (tuple(dims[0]), tuple(dims[1]))
    dt = _dt.result_type(a, b)
    return apply(_tensordot_f, "TensordotBackward0", (a, b), (("axes", axes), ("dtype", dt)))


@defop(
    node_name=False,
    samples=(Sample(((2, 3), (2, 3))), Sample(((3, 2), (3, 2)), kwargs=(("dim", 0),))),
)
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The 3-vector cross product along ``dim`` (default, deprecated: the first dimension of
    ``input`` of size 3), with ``linalg.cross``'s checks: one rank, one dtype."""
    if dim is None:
        warn_once(
            "cross",
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim "
            "will change to agree with that of linalg.cross in a future release.",
        )
        dims = [d for d, s in enumerate(input.shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    _check_dim_arg(dim, "cross")
    return cross_checked(input, other, dim)


# ----------------------------------------------------------------- distances


def _inf_norm(ad: Any, axis: Any) -> Any:
    """``max(ad)`` over ``axis`` (``ad >= 0``) whose gradient reaches every element equal
    to the max in full, as PyTorch's ``inf``-norm backward (funcgrad's ``max`` shares it
    among ties): the max plus the ties' ``ad - stop_gradient(ad)``, exactly zero."""
    m = fg.stop_gradient(fnp.max(ad, axis=axis, keepdims=True))
    ties = fnp.where(ad == m, ad - fg.stop_gradient(ad), fnp.zeros_like(ad))
    return fnp.squeeze(m, axis) + fnp.sum(ties, axis=axis)


def _pow_abs(diff: Any, p: float) -> Any:
    """``|diff| ** p`` with derivative 0 where ``diff == 0`` (PyTorch's, for ``p < 1``
    too, where the power's own derivative is infinite and the chain rule gives NaN)."""
    ad = fnp.abs(diff)
    safe = fnp.where(ad == 0, fnp.ones_like(ad), ad)
    return fnp.where(ad == 0, fnp.zeros_like(ad), safe**p)


def _cdist_f(a: Any, b: Any, *, p: float) -> Any:
    diff = fnp.expand_dims(a, -2) - fnp.expand_dims(b, -3)
    if p == 2.0:
        sq = fnp.sum(diff * diff, axis=-1)
        # no NaN gradient at zero distance (PyTorch's gradient there is 0)
        safe = fnp.where(sq == 0, fnp.ones_like(sq), sq)
        return fnp.where(sq == 0, fnp.zeros_like(sq), fnp.sqrt(safe))
    if p == float("inf"):
        return _inf_norm(fnp.abs(diff), -1)
    if p == 0:
        return fnp.sum((diff != 0).astype(a.dtype), axis=-1)
    if p == 1:
        return fnp.sum(fnp.abs(diff), axis=-1)
    s = fnp.sum(_pow_abs(diff, p), axis=-1)
    safe = fnp.where(s == 0, fnp.ones_like(s), s)
    return fnp.where(s == 0, fnp.zeros_like(s), safe ** (1.0 / p))


@defop(
    out=False,
    method=False,
    node_name=False,
    samples=(
        Sample(((3, 2), (4, 2)), method=False),
        Sample(((2, 3, 2), (2, 4, 2)), args=(1.0,), method=False),
        Sample(((3, 2), (4, 2)), kwargs=(("p", 3.0),), method=False),
    ),
    bf16_error=no_bf16_kernel("cdist"),
)
def cdist(
    x1: Tensor,
    x2: Tensor,
    p: float = 2.0,
    compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
) -> Tensor:
    """Pairwise ``p``-norm distances between the rows of ``x1`` and ``x2`` (batched)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return apply(_cdist_f, "CdistBackward0", (x1, x2), (("p", float(p)),))


def _dist_f(a: Any, b: Any, *, p: float, dtype: np.dtype) -> Any:
    d = fnp.reshape(_c(a, dtype) - _c(b, dtype), (-1,))
    if p == float("inf"):
        return fnp.max(fnp.abs(d))
    if p == float("-inf"):
        return fnp.min(fnp.abs(d))
    if p == 0:
        return fnp.sum((d != 0).astype(dtype))
    if p < 0:  # a zero difference makes the sum infinite and the distance 0
        ad = fnp.abs(d)
        zero = fnp.any(ad == 0)
        safe = fnp.where(ad == 0, fnp.ones_like(ad), ad)
        return fnp.where(zero, fnp.zeros((), ad.dtype), fnp.sum(safe**p) ** (1.0 / p))
    # PyTorch's gradient is 0 at a zero difference (the norm's own is NaN there)
    s = fnp.sum(_pow_abs(d, p))
    safe = fnp.where(s == 0, fnp.ones_like(s), s)
    return fnp.where(s == 0, fnp.zeros_like(s), safe ** (1.0 / p))


@defop(
    out=False, node_name=False, samples=(Sample(((2, 3), (3,))), Sample(((4,), (4,)), args=(1,)))
)
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """``norm(input - other, p)``."""
    st = (("p", float(p)), ("dtype", _dt.result_type(input, other)))
    return apply(_dist_f, "DistBackward0", (input, other), st)


# ----------------------------------------------------------------- moments


@defop(
    out=False,
    overloads=True,
    method=False,
    node_name=False,
    samples=(
        Sample(((3, 4),), method=False),
        Sample(((3, 4),), args=(1,), kwargs=(("keepdim", True),), method=False),
    ),
)
def var_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> tuple:
    """``(var, mean)`` over ``dim``: one node of two outputs, as PyTorch's."""
    return _moments(input, dim, unbiased, keepdim, correction, std=False)


@defop(
    out=False,
    overloads=True,
    method=False,
    node_name=False,
    samples=Sample(((3, 4),), args=(0,), kwargs=(("correction", 0),), method=False),
)
def std_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: Any = None,
    keepdim: bool = False,
    *,
    correction: Any = None,
) -> tuple:
    """``(std, mean)`` over ``dim``: one node of two outputs, as PyTorch's."""
    return _moments(input, dim, unbiased, keepdim, correction, std=True)


def _moments_f(x: Any, *, op: str, axes: Any, keepdims: bool, correction: float) -> tuple:
    v = _moment_f(x, op=op, axes=axes, keepdims=keepdims, correction=correction)
    return v, fnp.mean(x, axis=axes, keepdims=keepdims)


def _moments(
    input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any, std: bool
) -> tuple:
    op = "std" if std else "var"
    axes, corr = _moment_static(input, f"{op}_mean", dim, unbiased, correction)
    static = (("op", op), ("axes", axes), ("keepdims", bool(keepdim)), ("correction", corr))
    return apply(_moments_f, "StdMeanBackward0" if std else "VarMeanBackward0", (input,), static)


# ----------------------------------------------------------------- comparisons


@defop(
    samples=(
        Sample(((2, 3), (2, 3)), grad=False),
        Sample(((3,), (3,)), dtype="int64", domain=(0, 0), grad=False),
    )
)
def equal(input: Tensor, other: Tensor) -> bool:
    """Same shape and same values (a Python bool)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(np.array_equal(np.asarray(input._st.array), np.asarray(other._st.array)))


# ----------------------------------------------------------------- elementwise extras


def _frac_f(x: Any) -> Any:
    return x - fnp.trunc(x)


@defop(inplace=True, inplace_function=True, samples=Sample(((2, 3),)))
def frac(input: Tensor) -> Tensor:
    if _dt.kind(input._npdtype) != "f":  # (a kernel's refusal: NotImplementedError)
        raise NotImplementedError(
            f"\"frac_cpu\" not implemented for '{_dt.scalar_type_name(input._npdtype)}'"
        )
    return apply(_frac_f, "FracBackward0", (input,))


def _logit_f(x: Any, *, eps: Any, dtype: np.dtype) -> Any:
    x = _c(x, dtype)
    if eps is not None:
        x = fnp.clip(x, eps, 1 - eps)
    return fnp.log(x / (1 - x))


@defop(
    inplace=True,
    inplace_function=True,
    samples=(
        Sample(((2, 3),), domain=(0.1, 0.9)),
        Sample(((4,),), args=(0.2,), domain=(0.05, 0.95)),
    ),
)
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    dt = _dt.float_type(input._npdtype)
    return apply(
        _logit_f,
        "LogitBackward0",
        (input,),
        (("eps", None if eps is None else float(eps)), ("dtype", dt)),
    )


def _sgn_f(x: Any) -> Any:
    zero = x == 0
    return fnp.where(zero, fnp.zeros_like(x), x / fnp.where(zero, 1, fnp.abs(x)))


@defop(inplace=True, node_name=False, samples=Sample(((2, 3),)))
def sgn(input: Tensor) -> Tensor:
    """:func:`sign` for real tensors; ``z / |z|`` (0 at 0) for complex ones, with its
    gradient (PyTorch's ``SgnBackward0``)."""
    if _dt.kind(input._npdtype) == "c":
        return apply(_sgn_f, "SgnBackward0", (input,))
    return sign(input)


def _float_power_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.power(_c(x, dtype), _c(y, dtype))


def _float_power_dtype(input: Any, exponent: Any) -> np.dtype:
    """``float_power``'s result dtype: complex128 for a complex operand, else float64."""
    for v in (input, exponent):
        if (_dt.kind(v._npdtype) if isinstance(v, Tensor) else type(v).__name__[0]) == "c":
            return np.dtype(np.complex128)
    return np.dtype(np.float64)


def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    """``Tensor.float_power_``: ``self`` must already have the result's dtype (PyTorch's
    ``RuntimeError``, not a cast)."""
    want = _float_power_dtype(self, exponent)
    if self._npdtype != want:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_dt.scalar_type_name(self._npdtype)} "
            f"but the operation's result requires dtype {_dt.scalar_type_name(want)}"
        )
    exponent = coerce(exponent)
    name = POW_NODES[0] if isinstance(exponent, Tensor) else POW_NODES[1]
    return apply_inplace(self, _float_power_f, name, (exponent,), (("dtype", want),))


@defop(
    inplace=_float_power_,
    samples=(Sample(((3,), (3,)), domain=(0.5, 2)), Sample(((3,),), args=(2,), domain=(0.5, 2))),
    number_first=True,
    exact_out=(
        "the output given to float_power has dtype {got} but the operation's result requires "
        "dtype {want}"
    ),
)
def float_power(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` computed in float64 (``pow``'s nodes: a number ``input`` is
    ``PowBackward2``)."""
    input, exponent = coerce(input), coerce(exponent)
    name = POW_NODES[0] if isinstance(exponent, Tensor) else POW_NODES[1]
    name = name if isinstance(input, Tensor) else POW_NODES[2]
    dtype = _float_power_dtype(input, exponent)
    return apply(_float_power_f, name, (input, exponent), (("dtype", dtype),))


# ----------------------------------------------------------------- stacking and grids


def _atleast(n: int, tensors: tuple) -> Any:
    tensors = tensor_list(tensors, f"atleast_{n}d")
    out = []
    for t in tensors:
        if n >= 1 and t.ndim == 0:
            t = t.reshape(1)
        if n >= 2 and t.ndim == 1:
            t = t.unsqueeze(0)
        if n >= 3 and t.ndim == 2:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


@defop(out=False, method=False, node_name=False, samples=Sample(((),), method=False))
def atleast_1d(*tensors: Any) -> Any:
    return _atleast(1, tensors)


@defop(out=False, method=False, node_name=False, samples=Sample(((3,),), method=False))
def atleast_2d(*tensors: Any) -> Any:
    return _atleast(2, tensors)


@defop(out=False, method=False, node_name=False, samples=Sample(((2, 3),), method=False))
def atleast_3d(*tensors: Any) -> Any:
    return _atleast(3, tensors)


def _check_meshgrid(tensors: tuple, indexing: str | None) -> None:
    """PyTorch's checks of ``meshgrid``'s tensors and ``indexing``, in its order."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in itertools.pairwise(tensors):
        if a.dtype != b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in (None, "ij", "xy"):
        raise RuntimeError(
            f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"{t.dim()}-d tensor of shape {list(t.shape)}"
            )


@defop(
    out=False,
    function=True,
    method=False,
    node_name=False,
    samples=Sample(((3,), (2,)), method=False),
)
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids (``indexing='ij'`` by default, as PyTorch; ``'xy'`` swaps the
    first two)."""
    tensors = tensor_list(tensors)
    if indexing is None:
        warn_once(
            "meshgrid",
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument.",
        )
    _check_meshgrid(tensors, indexing)
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(t.reshape(*view).expand(*shape))
    if swap:  # the grids of the swapped inputs, given back in the inputs' order
        out[0], out[1] = out[1], out[0]
    return tuple(out)


@defop(out=False, method=False, node_name=False, samples=Sample(((3,), (2,)), method=False))
def cartesian_prod(*tensors: Tensor) -> Tensor:
    tensors = tensor_list(tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


@defop(out=False, samples=Sample(((2, 3),), grad=False))
def argwhere(input: Tensor) -> Tensor:
    """Indices of the non-zero elements, one row each (the same as ``nonzero``)."""
    return tensor(np.argwhere(np.asarray(input._st.array)).astype(np.int64))


def _index_grid(row: int, col: int, offset: int, lower: bool) -> np.ndarray:
    mask = (
        np.tri(row, col, offset, dtype=bool) if lower else ~np.tri(row, col, offset - 1, dtype=bool)
    )
    return np.stack(np.nonzero(mask)).astype(np.int64)


@defop(
    out=False,
    method=False,
    samples=(
        Sample((), args=(3, 4), grad=False, method=False),
        Sample((), args=(4, 3, -1), grad=False, method=False),
    ),
)
def tril_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    device: Any = None,
    layout: Any = None,
) -> Tensor:
    return tensor(_index_grid(row, col, offset, True), dtype=dtype)


@defop(
    out=False,
    method=False,
    samples=(
        Sample((), args=(3, 4), grad=False, method=False),
        Sample((), args=(4, 3, 1), grad=False, method=False),
    ),
)
def triu_indices(
    row: int,
    col: int,
    offset: int = 0,
    *,
    dtype: Any = None,
    device: Any = None,
    layout: Any = None,
) -> Tensor:
    return tensor(_index_grid(row, col, offset, False), dtype=dtype)
