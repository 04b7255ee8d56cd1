"""``torch.linalg``: rows of the op table in that namespace.

The kernels are funcgrad's ``numpy.linalg``/``scipy`` functions, so their gradients are
funcgrad's rules for the decompositions; PyTorch's backward nodes for these are
implementation details (``LinalgInvExBackward0``, ...) and are not matched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.ops._common import _c, _vector_norm_f
from compat._core.ops.linalg_info import (
    _check_info,
    _inv_ex_f,
    _not_pd_msg,
    _singular_info,
    _singular_msg,
    _solve_msg,
    cholesky_info,
)
from compat._core.optable import LINALG_ROW, SPD, Sample, T, defop, no_bf16_kernel
from compat._core.return_types import return_type
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import numpy as fnp
from funcgrad import stop_gradient
from funcgrad.numpy import linalg as fla
from funcgrad.scipy import linalg as fsl


def _float(*ts: Tensor) -> np.dtype:
    dt = _dt.result_type(*ts)
    if _dt.kind(dt) not in "fc":
        raise RuntimeError(
            f"linalg: Expected a floating point or complex tensor as input. Got "
            f"{_dt.scalar_type_name(dt)}"
        )
    return dt


def norm_dtype(name: str, x: Tensor, dtype: Any) -> np.dtype:
    """The dtype ``linalg.vector_norm`` (and ``torch.norm``) computes ``x``'s norm in,
    checked as PyTorch's: ``x`` floating or complex, then ``dtype`` floating or complex, of
    ``x``'s kind (real for real, complex for complex), not narrowing ``x``'s dtype."""
    xd = x._npdtype
    if _dt.kind(xd) not in "fc":
        raise RuntimeError(
            f"{name}: Expected a floating point or complex tensor as input. Got "
            f"{_dt.scalar_type_name(xd)}"
        )
    if dtype is None:
        return xd
    want = _dt.np_dtype(dtype)
    st = _dt.scalar_type_name
    if _dt.kind(want) not in "fc":
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got {st(want)}")
    if _dt.kind(xd) == "c" and _dt.kind(want) != "c":
        raise RuntimeError(
            f"{name}: dtype should be complex for complex inputs, but got {st(want)}"
        )
    if _dt.kind(xd) != "c" and _dt.kind(want) == "c":
        raise RuntimeError(f"{name}: dtype should be real for real inputs, but got {st(want)}")
    if _dt.promote(xd, want) != want:
        raise RuntimeError(
            f"{name}: the dtype of the input ({st(xd)}) should be convertible without "
            f"narrowing to the specified dtype ({st(want)})"
        )
    return want


def _square(a: Tensor, name: str) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"linalg.{name}: A must be batches of square matrices, but they are "
            f"{a.shape[-2] if a.ndim >= 2 else 1} by {a.shape[-1] if a.ndim else 1} matrices"
        )


def _unary_f(a: Any, *, op: str) -> Any:
    return {
        "inv": fla.inv,
        "det": fla.det,
        "cholesky": fla.cholesky,
        "pinv": fla.pinv,
        "svdvals": fla.svdvals,
        "eigvalsh": fla.eigvalsh,
    }[op](a)


def _unary(op: str, a: Tensor, square: bool = True) -> Tensor:
    _float(a)
    if square:
        _square(a, op)
    return apply(_unary_f, f"Linalg{op.capitalize()}Backward0", (a,), (("op", op),))


@defop(
    samples=Sample(((3, 3),), domain=(-1, 1)),
    **LINALG_ROW,
    bf16_error=(RuntimeError, "linalg.inv: Low precision dtypes not supported. Got BFloat16"),
)
def inv(A: Tensor) -> Tensor:
    """The inverse of (batches of) square matrices (``LinAlgError`` if singular)."""
    _float(A)
    _square(A, "inv")
    x, info = apply(_inv_ex_f, "LinalgInvExBackward0", (A,))
    _check_info(info, "linalg.inv", _singular_msg)
    return x


@defop(
    samples=(Sample(((3, 3),)), Sample(((2, 3, 3),))),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("lu_cpu"),
)
def det(A: Tensor) -> Tensor:
    return _unary("det", A)


@defop(
    samples=Sample((SPD(3),)),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("cholesky_cpu"),
)
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The lower Cholesky factor of a Hermitian positive-definite matrix (``upper``: its
    conjugate transpose); ``LinAlgError`` if it is not positive-definite."""
    _float(A)
    _square(A, "cholesky")
    L, info = cholesky_info(A)
    _check_info(info, "linalg.cholesky", _not_pd_msg)
    return L.mT.conj() if upper else L


#: the dtypes PyTorch's LAPACK-based kernels take
_LAPACK = ("float32", "float64", "complex64", "complex128")


def _tolerances(A: Tensor, name: str, atol: Any, rtol: Any) -> tuple:
    """PyTorch's ``(atol, rtol)`` of ``pinv``/``matrix_rank``: ``atol`` 0 when not given,
    ``rtol`` ``max(m, n) * eps`` when not given (0 where a given ``atol`` is positive).
    Floats or tensors (broadcast against the batch dimensions), not one of each."""
    mixed = (isinstance(atol, Tensor) and isinstance(rtol, (int, float))) or (
        isinstance(rtol, Tensor) and isinstance(atol, (int, float))
    )
    if mixed and all(t.ndim == 0 for t in (atol, rtol) if isinstance(t, Tensor)):
        # PyTorch's argument parser reads a 0-d tensor as a float
        atol, rtol = (float(t) if isinstance(t, Tensor) else t for t in (atol, rtol))
    elif mixed:
        raise TypeError(
            f"linalg_{name}() received an invalid combination of arguments - got a Tensor "
            "and a float for atol and rtol: pass both as floats or both as Tensors"
        )
    m, n = A.shape[-2:]
    default = max(m, n) * float(np.finfo(A._npdtype).eps)
    if rtol is None:
        if atol is None:
            rtol = default
        elif isinstance(atol, Tensor):
            rtol = (atol > 0).logical_not().to(atol.dtype) * default
        else:
            rtol = 0.0 if atol > 0 else default
    return (0.0 if atol is None else atol), rtol


def _cutoff(s: Any, atol: Any, rtol: Any) -> Any:
    """``max(atol, rtol * s_max)`` per matrix (``s``: singular values, descending)."""
    return fnp.maximum(fnp.asarray(atol), fnp.asarray(rtol) * s[..., 0])


def _pinv_tol_f(a: Any, atol: Any, rtol: Any) -> Any:
    s = fla.svdvals(stop_gradient(a))
    smax = s[..., 0]
    ok = smax > 0
    # the threshold as a relative tolerance for funcgrad's pinv (its Golub-Pereyra rule)
    rel = fnp.where(ok, _cutoff(s, atol, rtol) / fnp.where(ok, smax, 1.0), fnp.asarray(rtol))
    return fla.pinv(a, rtol=stop_gradient(rel))


@defop(
    samples=(
        Sample(((3, 4),)),
        Sample(((2, 4, 3),), kwargs=(("atol", 0.5),), fd=False),
        Sample(((3, 3),), kwargs=(("atol", 0.1), ("rtol", 0.4)), fd=False),
        Sample(((3, 4),), args=(0.3,)),
    ),
    **LINALG_ROW,
    bf16_error=(
        RuntimeError,
        "linalg.pinv(BFloat16{{{shape}}}): expected a tensor with 2 or more dimensions "
        "of float, double, cfloat or cdouble types",
    ),
)
def pinv(
    A: Tensor,
    rcond: Any = None,
    hermitian: bool = False,
    *,
    atol: Any = None,
    rtol: Any = None,
) -> Tensor:
    """The pseudo-inverse: singular values at or below ``max(atol, rtol * s_max)`` are
    dropped (``rcond``, positional: NumPy's name for ``rtol``)."""
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError(
                "linalg_pinv() received an invalid combination of arguments - rcond cannot "
                "be passed together with atol or rtol"
            )
        atol, rtol = 0.0, rcond
    if A.ndim < 2 or A._npdtype.name not in _LAPACK:
        raise RuntimeError(
            f"linalg.pinv({_dt.scalar_type_name(A._npdtype)}{{{list(A.shape)}}}): expected a "
            "tensor with 2 or more dimensions of float, double, cfloat or cdouble types"
        )
    atol, rtol = _tolerances(A, "pinv", atol, rtol)
    return apply(_pinv_tol_f, "LinalgPinvBackward0", (A, *_batch_tols(A, atol, rtol)))


def _batch_tols(A: Tensor, atol: Any, rtol: Any) -> tuple:
    """Tensor tolerances as arrays of ``A``'s real dtype; floats pass as Python floats."""
    real = _dt.from_np(np.finfo(A._npdtype).dtype)
    return tuple(t.to(real) if isinstance(t, Tensor) else float(t) for t in (atol, rtol))


@defop(
    samples=Sample(((3, 4),)),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("linalg_svd_cpu"),
)
def svdvals(A: Tensor, *, driver: Any = None) -> Tensor:
    return _unary("svdvals", A, square=False)


@defop(
    samples=Sample((SPD(3),)),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("linalg_eigh_cpu"),
)
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """Eigenvalues (ascending) of a symmetric matrix, read from its ``UPLO`` triangle."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _unary("eigvalsh", A if UPLO == "L" else A.mT)


SLOGDET = return_type("linalg_slogdet", "sign logabsdet")


def _slogdet_f(a: Any) -> Any:
    sign, logabs = fla.slogdet(a)
    return sign, logabs


@defop(
    samples=Sample(((3, 3),)),
    **LINALG_ROW,
    bf16_error=(RuntimeError, "linalg.slogdet: Low precision dtypes not supported. Got BFloat16"),
)
def slogdet(A: Tensor) -> tuple:
    """``(sign, log|det|)``."""
    _float(A)
    _square(A, "slogdet")
    return SLOGDET(*apply(_slogdet_f, "LinalgSlogdetBackward0", (A,)))


def _solve_f(a: Any, b: Any, *, left: bool, vec: bool) -> Any:
    info = _singular_info(fsl.lu_factor(stop_gradient(a))[0])
    if not left:
        x = fnp.swapaxes(fla.solve(fnp.swapaxes(a, -1, -2), fnp.swapaxes(b, -1, -2)), -1, -2)
    elif vec:
        x = fla.solve(a, b[..., None])[..., 0]
    else:
        x = fla.solve(a, b)
    return x, info


@defop(
    samples=(Sample(((3, 3), (3, 2))), Sample(((3, 3), (3,)))),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("lu_cpu"),
)
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A @ X = B`` (``left=False``: ``X @ A = B``)."""
    _float(A, B)
    _square(A, "solve")
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    st = (("left", bool(left)), ("vec", bool(vec and left)))
    x, info = apply(_solve_f, "LinalgSolveExBackward0", (A, B), st)
    _check_info(info, "torch.linalg.solve", _solve_msg)
    return x


def _solve_tri_f(a: Any, b: Any, *, upper: bool, left: bool, unit: bool) -> Any:
    if left:
        return fsl.solve_triangular(a, b, lower=not upper, unit_diagonal=unit)
    at, bt = fnp.swapaxes(a, -1, -2), fnp.swapaxes(b, -1, -2)
    x = fsl.solve_triangular(at, bt, lower=upper, unit_diagonal=unit)
    return fnp.swapaxes(x, -1, -2)


@defop(
    samples=(
        Sample(((3, 3), (3, 2)), kwargs=(("upper", True),), domain=(0.5, 2)),
        Sample(((3, 3), (2, 3)), kwargs=(("upper", False), ("left", False)), domain=(0.5, 2)),
    ),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("triangular_solve_cpu"),
)
def solve_triangular(
    A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    _float(A, B)
    A = A.triu() if upper else A.tril()
    st = (("upper", bool(upper)), ("left", bool(left)), ("unit", bool(unitriangular)))
    return apply(_solve_tri_f, "LinalgSolveTriangularBackward0", (A, B), st)


@defop(
    samples=(
        Sample(((2, 3),)),
        Sample(((2, 3),), args=(1,), kwargs=(("dim", 1),)),
        Sample(((2, 3),), kwargs=(("ord", float("inf")), ("dim", (0, 1)), ("keepdim", True))),
        Sample(((4,),), args=(3.0,)),
    ),
    **LINALG_ROW,
)
def vector_norm(
    x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """The ``ord``-norm of ``x`` over ``dim`` (all elements by default) as a vector."""
    dt = norm_dtype("linalg.vector_norm", x, dtype)
    if dim is None:
        axes = None
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        axes = tuple(sorted(_wrap_dim(d, x.ndim) for d in dims))
    st = (("ord", float(ord)), ("axes", axes), ("keepdims", bool(keepdim)), ("dtype", dt))
    return apply(_vector_norm_f, "LinalgVectorNormBackward0", (x,), st)


def _matrix_norm_f(a: Any, *, ord: Any, axes: tuple, keepdims: bool) -> Any:
    return (
        fla.matrix_norm(fnp.moveaxis(a, axes, (-2, -1)), ord=ord, keepdims=False)
        if not keepdims
        else fnp.expand_dims(fla.matrix_norm(fnp.moveaxis(a, axes, (-2, -1)), ord=ord), axes)
    )


@defop(
    samples=(
        Sample(((3, 4),)),
        Sample(((2, 3, 3),), args=(1,)),
        Sample(((3, 4),), args=(float("inf"),)),
        Sample(((3, 4),), kwargs=(("ord", "nuc"),)),
    ),
    dtype_out="linalg.matrix_norm expected out tensor dtype {want} but got: {got}",
    **LINALG_ROW,
)
def matrix_norm(
    A: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    _float(A)
    if A.ndim < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        got = " ".join(str(d) for d in dims)
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
    axes = tuple(_wrap_dim(d, A.ndim) for d in dims)
    if dtype is not None:  # computed in ``dtype``, which must not narrow A's
        want = _dt.np_dtype(dtype)
        if np.promote_types(A._npdtype, want) != want:
            raise RuntimeError(
                "linalg.matrix_norm: the dtype of the input "
                f"({_dt.scalar_type_name(A._npdtype)}) should be convertible without narrowing "
                f"to the specified dtype ({_dt.scalar_type_name(want)})"
            )
        A = A.to(dtype)
    if not isinstance(ord, str):
        ord = float(ord)
    st = (("ord", ord), ("axes", axes), ("keepdims", bool(keepdim)))
    return apply(_matrix_norm_f, "LinalgMatrixNormBackward0", (A,), st)


@defop(
    samples=(Sample(((2, 3),)), Sample(((4,),), args=(1,)), Sample(((3, 3),), args=("nuc",))),
    dtype_out="linalg.norm expected out tensor dtype {want} but got: {got}",
    **LINALG_ROW,
)
def norm(
    A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """``vector_norm`` for 1-D inputs or a single ``dim``, ``matrix_norm`` for 2-D inputs
    or two dims; with neither ``ord`` nor ``dim`` the 2-norm of the flattened input."""
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if isinstance(dim, int) or (dim is None and A.ndim == 1):
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, ord, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)


def _matrix_power_f(a: Any, *, n: int) -> Any:
    return fla.matrix_power(a, n)


@defop(
    samples=(Sample(((3, 3),), args=(3,)), Sample(((3, 3),), args=(-2,), domain=(-1, 1))),
    **LINALG_ROW,
)
def matrix_power(A: Tensor, n: int) -> Tensor:
    _square(A, "matrix_power")
    return apply(_matrix_power_f, "LinalgMatrixPowerBackward0", (A,), (("n", int(n)),))


def _multi_dot_f(*xs: Any) -> Any:
    return fla.multi_dot(list(xs))


@defop(samples=Sample((), args=([T((2, 3)), T((3, 4)), T((4,))],)), **LINALG_ROW)
def multi_dot(tensors: Any) -> Tensor:
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    return apply(_multi_dot_f, "LinalgMultiDotBackward0", tensors)


def _matrix_rank_f(a: Any, atol: Any, rtol: Any) -> Any:
    s = fla.svdvals(a)
    return fnp.sum(s > _cutoff(s, atol, rtol)[..., None], axis=-1).astype(np.int64)


@defop(
    samples=(
        Sample(((3, 4),), grad=False),
        Sample(((2, 3, 3),), kwargs=(("atol", 0.8),), grad=False),
        Sample(((3, 4),), kwargs=(("rtol", 0.5),), grad=False),
        Sample(((3, 4),), args=(0.8,), grad=False),
    ),
    **LINALG_ROW,
    bf16_error=(RuntimeError, "This function doesn't handle types other than float and double"),
)
def matrix_rank(
    A: Tensor,
    tol: Any = None,
    hermitian: bool = False,
    *,
    atol: Any = None,
    rtol: Any = None,
) -> Tensor:
    """The number of singular values above ``max(atol, rtol * s_max)`` (``tol``,
    positional: NumPy's name for ``atol``)."""
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError(
                "linalg_matrix_rank() received an invalid combination of arguments - tol "
                "cannot be passed together with atol or rtol"
            )
        atol = tol
    if A.ndim < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."
        )
    if A._npdtype.name not in _LAPACK:
        raise RuntimeError("This function doesn't handle types other than float and double")
    atol, rtol = _tolerances(A, "matrix_rank", atol, rtol)
    return apply(_matrix_rank_f, "linalg_matrix_rank", (A.detach(), *_batch_tols(A, atol, rtol)))


def _vecdot_f(x: Any, y: Any, *, axis: int, dtype: np.dtype) -> Any:
    return fnp.sum(fnp.conj(_c(x, dtype)) * _c(y, dtype), axis=axis)


@defop(samples=Sample(((2, 3), (3,))), **LINALG_ROW)
def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    dt = _dt.result_type(x, y)
    return apply(_vecdot_f, "LinalgVecdotBackward0", (x, y), (("axis", int(dim)), ("dtype", dt)))
