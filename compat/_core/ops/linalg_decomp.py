"""``torch.linalg`` decompositions and solvers: rows of the op table (issue 15).

QR, SVD, ``eigh``, LU, least squares, the ``*_ex`` variants, ``matrix_exp`` and the
small helpers (``cross``, ``cond``, ``vander``, ``tensorsolve``, ...). The kernels are
funcgrad's ``numpy.linalg``/``scipy.linalg`` functions, so the gradients are funcgrad's
rules for the decompositions (PyTorch's backward node names are not matched).

Decompositions that are unique only up to signs/phases (Q/R, U/V, eigenvectors) come
from the same LAPACK routines PyTorch uses, so they agree on the op table's small
samples; ``tests/compat/test_compat_linalg_decomp.py`` compares them up to that gauge.
``eig``/``eigvals`` and the Householder functions are in ``linalg_eig.py``, the LDL
factorisation (``ldl_factor``, ``ldl_factor_ex``, ``ldl_solve``) in ``linalg_ldl.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.ops._common import warn_once
from compat._core.ops.array_rows import cat as _cat
from compat._core.ops.linalg import matmul as _matmul
from compat._core.ops.linalg_info import (
    LinAlgError,
    _check_info,
    _inv_ex_f,
    _lu_msg,
    _not_pd_msg,
    _singular_info,
    _singular_msg,
    _solve_msg,
    cholesky_info,
)
from compat._core.ops.linalg_ns import _float, _square
from compat._core.ops.selecting import diagonal as _diagonal
from compat._core.optable import LINALG_ROW, SPD, Sample, T, defop, no_bf16_kernel
from compat._core.return_types import return_type
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import numpy as fnp
from funcgrad import stop_gradient
from funcgrad.numpy import linalg as fla
from funcgrad.scipy import linalg as fsl


def _nt(name: str, fields: str) -> type:
    return return_type(name, fields)


QR = _nt("linalg_qr", "Q R")
SVD = _nt("linalg_svd", "U S Vh")
EIGH = _nt("linalg_eigh", "eigenvalues eigenvectors")
LSTSQ = _nt("linalg_lstsq", "solution residuals rank singular_values")
LU = _nt("linalg_lu", "P L U")
LU_FACTOR = _nt("linalg_lu_factor", "LU pivots")
LU_FACTOR_EX = _nt("linalg_lu_factor_ex", "LU pivots info")
CHOLESKY_EX = _nt("linalg_cholesky_ex", "L info")
INV_EX = _nt("linalg_inv_ex", "inverse info")
SOLVE_EX = _nt("linalg_solve_ex", "result info")
OLD_SVD = _nt("svd", "U S V")
OLD_QR = _nt("qr", "Q R")


def _mT(x: Any) -> Any:
    return fnp.swapaxes(x, -1, -2)


def _mH(x: Any) -> Any:
    return fnp.conj(_mT(x))


# ------------------------------------------------------------------ QR


def _qr_f(a: Any, *, mode: str) -> Any:
    m, n = a.shape[-2:]
    if mode == "r":
        return fnp.zeros((0,), a.dtype), fla.qr(a, mode="r")
    if m < n:  # wide: QR of the leading square block, R's rest is Q^H times the rest
        q, r = fla.qr(a[..., :m], mode="reduced")
        return q, fnp.concatenate([r, fnp.matmul(_mH(q), a[..., m:])], axis=-1)
    return fla.qr(a, mode=mode)


@defop(
    samples=(
        Sample(((4, 3),)),
        Sample(((2, 3, 3),)),
        Sample(((3, 4),), kwargs=(("mode", "complete"),)),
        Sample(((4, 3),), kwargs=(("mode", "r"),), grad=False),
    ),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("geqrf_cpu"),
)
def qr(A: Tensor, mode: str = "reduced") -> tuple:
    """``(Q, R)`` with ``A = Q R`` (``mode``: ``'reduced'``, ``'complete'`` or ``'r'``)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
            "(default), 'r', or 'complete'"
        )
    _float(A)
    _matrix(A, "qr")
    m, n = A.shape[-2:]
    if mode == "complete" and m > n and A.requires_grad:
        # funcgrad differentiates only the reduced factors: Q's completion (from the
        # complete QR of the detached input) and R's zero rows carry no gradient
        q, r = apply(_qr_f, "LinalgQrBackward0", (A,), (("mode", "reduced"),))
        qf = apply(_qr_f, "LinalgQrBackward0", (A.detach(),), (("mode", "complete"),))[0]
        rest = r.new_zeros((*r.shape[:-2], m - n, n))
        return QR(_cat([q, qf[..., n:]], -1), _cat([r, rest], -2))
    return QR(*apply(_qr_f, "LinalgQrBackward0", (A,), (("mode", mode),)))


def _matrix(a: Tensor, name: str) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")


# ------------------------------------------------------------------ SVD


def _sq(x: Any) -> Any:
    return x * x.conj()


def svd_gauge(out: Any) -> tuple:
    """Sign/phase-invariant functions of ``(U, S, Vh)``: ``S``, the squared moduli of
    the leading ``k`` singular vectors and the reconstruction ``U_k diag(S) Vh_k``."""
    u, s, vh = out
    k = s.shape[-1]
    uk, vhk = u[..., :k], vh[..., :k, :]
    return s, _sq(uk), _sq(vhk), (uk * s.unsqueeze(-2)) @ vhk


def _old_svd_gauge(out: Any) -> tuple:
    u, s, v = out
    return svd_gauge((u, s, v.mT.conj()))


def eigh_gauge(out: Any) -> tuple:
    """The eigenvalues and the squared moduli of the eigenvectors."""
    w, v = out
    return w, _sq(v)


def _svd_f(a: Any, *, full: bool) -> Any:
    m, n = a.shape[-2:]
    return fla.svd(a, full_matrices=full and m != n)  # square: the same, differentiable


def _svd(A: Tensor, full: bool, name: str) -> tuple:
    _float(A)
    _matrix(A, name)
    m, n = A.shape[-2:]
    if full and m != n and A.requires_grad:
        # funcgrad differentiates the reduced factors only: the completions of U and Vh
        # (from the full SVD of the detached input) carry no gradient, as in PyTorch
        u, s, vh = apply(_svd_f, "LinalgSvdBackward0", (A,), (("full", False),))
        uf, _, vhf = apply(_svd_f, "LinalgSvdBackward0", (A.detach(),), (("full", True),))
        k = min(m, n)
        return _cat([u, uf[..., k:]], -1), s, _cat([vh, vhf[..., k:, :]], -2)
    return apply(_svd_f, "LinalgSvdBackward0", (A,), (("full", bool(full)),))


@defop(
    samples=(
        Sample(((3, 3),)),
        Sample(((4, 3),), kwargs=(("full_matrices", False),)),
        Sample(((2, 3, 4),), kwargs=(("full_matrices", False),)),
        Sample(((4, 2),), grad=False),
    ),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("linalg_svd_cpu"),
    gauge=svd_gauge,
)
def svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None) -> tuple:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh`` (``driver`` is CUDA-only and ignored)."""
    return SVD(*_svd(A, full_matrices, "svd"))


def _svd_old(input: Tensor, some: bool = True, compute_uv: bool = True) -> tuple:
    """``torch.svd``: ``(U, S, V)`` (``V``, not ``Vh``); without ``compute_uv`` zero
    ``U`` (m x m) and ``V`` (n x n)."""
    u, s, vh = _svd(input, not some, "svd")
    if not compute_uv:
        m, n = input.shape[-2:]
        u = u.new_zeros((*input.shape[:-2], m, m))
        return OLD_SVD(u, s, u.new_zeros((*input.shape[:-2], n, n)))
    return OLD_SVD(u, s, vh.mT.conj())


defop(
    "svd",
    samples=(
        Sample(((4, 3),)),
        Sample(((3, 3),), kwargs=(("some", False),)),
        Sample(((2, 4),), kwargs=(("compute_uv", False),)),
    ),
    bf16_error=no_bf16_kernel("linalg_svd_cpu"),
    node_name=False,
    gauge=_old_svd_gauge,
)(_svd_old)


# ------------------------------------------------------------------ eigh


def _eigh_f(a: Any, *, lower: bool, vectors: bool) -> Any:
    tri = fnp.tril(a) if lower else fnp.triu(a)
    strict = fnp.tril(a, -1) if lower else fnp.triu(a, 1)
    d = fnp.real(fnp.diagonal(a, axis1=-2, axis2=-1))
    herm = tri - fnp.diagonal(a, axis1=-2, axis2=-1)[..., None] * fnp.eye(
        a.shape[-1], dtype=a.dtype
    )
    herm = herm + _mH(strict) + d[..., None] * fnp.eye(a.shape[-1], dtype=a.dtype)
    # values from the UPLO triangle, gradient as PyTorch's (of the symmetric part)
    sym = (a + _mH(a)) / 2
    h = sym + stop_gradient(herm - sym)
    w, v = fla.eigh(h)
    return (w, v) if vectors else w


def _uplo(UPLO: str) -> bool:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "L"


@defop(
    samples=(
        Sample((SPD(3),), fd=False),
        Sample((SPD(3),), args=("U",), fd=False),
        Sample(((2, 3, 3),), fd=False),
    ),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("linalg_eigh_cpu"),
    gauge=eigh_gauge,
)
def eigh(A: Tensor, UPLO: str = "L") -> tuple:
    """``(eigenvalues, eigenvectors)`` of a Hermitian matrix read from its ``UPLO``
    triangle, eigenvalues ascending."""
    lower = _uplo(UPLO)
    _float(A)
    _square(A, "eigh")
    st = (("lower", lower), ("vectors", True))
    return EIGH(*apply(_eigh_f, "LinalgEighBackward0", (A,), st))


# ------------------------------------------------------------------ least squares

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_f(a: Any, b: Any, *, driver: str, vec: bool, rcond: float) -> Any:
    m, n = a.shape[-2:]
    bb = b[..., None] if vec else b
    x = fnp.matmul(fla.pinv(a, rtol=rcond), bb)
    empty = fnp.zeros((0,), x.dtype)
    real = fnp.real(empty)
    if driver != "gelsy" and m > n:
        r = fnp.matmul(a, x) - bb
        res = fnp.sum(fnp.real(r * fnp.conj(r)), axis=-2)
        res = res[..., 0] if vec else res
    else:
        res = real
    rank = fnp.zeros((0,), np.int64)
    sv = real
    if driver != "gels":
        s = fla.svdvals(stop_gradient(a))
        rank = fnp.sum(s > rcond * s[..., :1], axis=-1).astype(np.int64)
    if driver in ("gelsd", "gelss"):
        sv = fla.svdvals(stop_gradient(a))
    return (x[..., 0] if vec else x), res, rank, sv


@defop(
    samples=(
        Sample(((4, 3), (4, 2))),
        Sample(((4, 3), (4, 2)), kwargs=(("driver", "gelsd"),), fd=False),
        Sample(((2, 3, 3), (2, 3, 1)), kwargs=(("driver", "gels"),)),
        Sample(((4, 3), (4, 2)), args=(0.3,), kwargs=(("driver", "gelss"),), fd=False),
    ),
    **LINALG_ROW,
    bf16_error=(RuntimeError, "This function doesn't handle types other than float and double"),
)
def lstsq(A: Tensor, B: Tensor, rcond: Any = None, *, driver: str | None = None) -> tuple:
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||`` (full-rank
    ``A``); which of the last three are filled depends on ``driver`` as in PyTorch.
    Singular values at or below ``rcond * s_max`` count as zero (default ``max(m, n)``
    times the dtype's epsilon; ``gels`` assumes full rank and ignores it)."""
    driver = driver or "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of "
            f"(gels, gelsy, gelsd, gelss), but got {driver}"
        )
    _float(A, B)
    _matrix(A, "lstsq")
    if rcond is None or driver == "gels":
        rcond = max(A.shape[-2:]) * float(np.finfo(A._npdtype).eps)
    vec = B.ndim == A.ndim - 1
    st = (("driver", driver), ("vec", bool(vec)), ("rcond", float(rcond)))
    return LSTSQ(*apply(_lstsq_f, "LinalgLstsqBackward0", (A, B), st))


# ------------------------------------------------------------------ LU


def _lu_factor_f(a: Any, *, ex: bool) -> Any:
    lu, piv = fsl.lu_factor(a)
    piv = (piv + 1).astype(np.int32)
    if not ex:
        return lu, piv
    return lu, piv, _singular_info(lu)


def _no_pivot(pivot: bool, name: str) -> None:
    if not pivot:
        raise RuntimeError(f"linalg.{name}: LU without pivoting is not implemented on the CPU")


@defop(
    samples=(Sample(((3, 3),)), Sample(((2, 3, 3),))),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("lu_cpu"),
)
def lu_factor(A: Tensor, *, pivot: bool = True) -> tuple:
    """``(LU, pivots)``: LAPACK's packed LU factors and 1-based int32 row swaps."""
    _float(A)
    _matrix(A, "lu_factor")
    _no_pivot(pivot, "lu_factor")
    return LU_FACTOR(*apply(_lu_factor_f, "LinalgLuFactorExBackward0", (A,), (("ex", False),)))


@defop(samples=Sample(((3, 3),)), **LINALG_ROW, bf16_error=no_bf16_kernel("lu_cpu"))
def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> tuple:
    """``(LU, pivots, info)`` (``info``: 1 + the first zero pivot, 0 for none)."""
    _float(A)
    _matrix(A, "lu_factor_ex")
    _no_pivot(pivot, "lu_factor_ex")
    out = LU_FACTOR_EX(*apply(_lu_factor_f, "LinalgLuFactorExBackward0", (A,), (("ex", True),)))
    if check_errors:
        _check_info(out.info, "torch.linalg.lu_factor_ex", _lu_msg, RuntimeError)
    return out


def _lu_f(a: Any) -> Any:
    p, lo, up = fsl.lu(a)
    return p.astype(a.dtype), lo, up


@defop(
    samples=(Sample(((3, 3),)), Sample(((4, 3),)), Sample(((2, 3, 4),))),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("lu_cpu"),
)
def lu(A: Tensor, *, pivot: bool = True) -> tuple:
    """``(P, L, U)`` with ``A = P L U``."""
    _float(A)
    _matrix(A, "lu")
    _no_pivot(pivot, "lu")
    p, lo, up = apply(_lu_f, "LinalgLuBackward0", (A,))
    return LU(p.detach(), lo, up)


def _lu_solve_f(lu: Any, piv: Any, b: Any, *, left: bool, adjoint: bool) -> Any:
    p = piv.astype(np.int32) - 1
    if left:
        return fsl.lu_solve((lu, p), b, trans=2 if adjoint else 0)
    if adjoint:  # X A^H = B  <=>  A X^H = B^H
        return _mH(fsl.lu_solve((lu, p), _mH(b), trans=0))
    return _mT(fsl.lu_solve((lu, p), _mT(b), trans=1))  # X A = B  <=>  A^T X^T = B^T


def lu_solve(
    LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False
) -> Tensor:
    """``X`` with ``A X = B`` from ``lu_factor``'s ``(LU, pivots)`` (``left=False``:
    ``X A = B``; ``adjoint``: ``A^H`` for ``A``)."""
    _float(LU, B)
    _square(LU, "lu_solve")
    st = (("left", bool(left)), ("adjoint", bool(adjoint)))
    return apply(_lu_solve_f, "LinalgLuSolveBackward0", (LU, pivots, B), st)


# ------------------------------------------------------------------ *_ex variants


@defop(
    samples=(Sample((SPD(3),)), Sample((SPD(3),), kwargs=(("upper", True),))),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("cholesky_cpu"),
)
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> tuple:
    """``(L, info)``: ``info`` is the order of the first leading minor that is not
    positive-definite (0 on success)."""
    _float(A)
    _square(A, "cholesky")
    lo, bad = cholesky_info(A)
    if check_errors:
        _check_info(bad, "linalg.cholesky_ex", _not_pd_msg)
    return CHOLESKY_EX(lo.mT.conj() if upper else lo, bad)


@defop(
    samples=(Sample(((3, 3),)), Sample(((2, 3, 3),))),
    **LINALG_ROW,
    bf16_error=(RuntimeError, "linalg.inv: Low precision dtypes not supported. Got BFloat16"),
)
def inv_ex(A: Tensor, *, check_errors: bool = False) -> tuple:
    """``(inverse, info)`` (``info``: 1 + the first zero pivot of LU, 0 on success)."""
    _float(A)
    _square(A, "inv_ex")
    out = INV_EX(*apply(_inv_ex_f, "LinalgInvExBackward0", (A,)))
    if check_errors:
        _check_info(out.info, "linalg.inv_ex", _singular_msg)
    return out


def _solve_ex_f(a: Any, b: Any, *, left: bool, vec: bool) -> Any:
    if not left:
        x = _mT(fla.solve(_mT(a), _mT(b)))
    elif vec:
        x = fla.solve(a, b[..., None])[..., 0]
    else:
        x = fla.solve(a, b)
    return x, _singular_info(fsl.lu_factor(stop_gradient(a))[0])


@defop(
    samples=(Sample(((3, 3), (3, 2))), Sample(((3, 3), (3,)))),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("lu_cpu"),
)
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> tuple:
    """``(result, info)`` of ``linalg.solve``."""
    _float(A, B)
    _square(A, "solve_ex")
    vec = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    st = (("left", bool(left)), ("vec", bool(vec and left)))
    out = SOLVE_EX(*apply(_solve_ex_f, "LinalgSolveExBackward0", (A, B), st))
    if check_errors:
        _check_info(out.info, "torch.linalg.solve_ex", _solve_msg)
    return out


# ------------------------------------------------------------------ the rest


def _matrix_exp_f(a: Any) -> Any:
    if a.dtype == _dt.bfloat16.np:  # computed in float32 and rounded
        return fsl.expm(a.astype(np.float32)).astype(a.dtype)
    return fsl.expm(a)


def matrix_exp(A: Tensor) -> Tensor:
    """``exp(A)`` of (batches of) square matrices."""
    _float(A)
    _square(A, "matrix_exp")
    return apply(_matrix_exp_f, "LinalgMatrixExpBackward0", (A,))


defop(
    "matrix_exp",
    out=False,
    samples=(Sample(((3, 3),), domain=(-1, 1)), Sample(((2, 3, 3),), domain=(-1, 1))),
    **LINALG_ROW,
    bf16_error=None,
)(matrix_exp)
defop("matrix_exp", out=False, samples=Sample(((3, 3),), domain=(-1, 1)), node_name=False)(
    matrix_exp
)


@defop(
    out=False,
    samples=(Sample(((3, 4),)), Sample(((2, 3, 3),), kwargs=(("offset", 1),))),
    **LINALG_ROW,
)
def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.diagonal`` over the last two dimensions by default."""
    return _diagonal(A, offset, dim1, dim2)


def _vander_f(x: Any, *, n: int) -> Any:
    ones = fnp.ones(x.shape + (1,), x.dtype)
    if n == 1:
        return ones
    powers = fnp.cumprod(fnp.broadcast_to(x[..., None], x.shape + (n - 1,)), axis=-1)
    return fnp.concatenate([ones, powers], axis=-1)


_VANDER_BF16 = (
    RuntimeError,
    "linalg.vander supports floating point, complex, and integer tensors, but got BFloat16",
)


@defop(
    out=False,
    samples=(
        Sample(((3,),)),
        Sample(((2, 3),), kwargs=(("N", 4),)),
        Sample(((3,),), dtype="int64", grad=False),
    ),
    **LINALG_ROW,
    bf16_error=_VANDER_BF16,
)
def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix ``[x**0, x**1, ..., x**(N-1)]`` (increasing powers)."""
    n = (x.shape[-1] if x.ndim else 1) if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    return apply(_vander_f, "LinalgVanderBackward0", (x,), (("n", n),))


def _cross_f(a: Any, b: Any, *, axis: int) -> Any:
    return fla.cross(a, b, axis=axis)


def _check_dim_arg(dim: Any, name: str) -> None:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")


def cross_checked(input: Tensor, other: Tensor, dim: int) -> Tensor:
    """``linalg.cross`` after PyTorch's checks, in its order: equal ranks, ``dim`` in range
    (a 0-d operand has none), length 3 along ``dim`` in both, broadcastable other sizes, one
    dtype (no promotion), not bool. Shared by ``torch.cross``."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    ax = _wrap_dim(dim, input.ndim)
    if input.shape[ax] != 3 or other.shape[ax] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{input.shape[ax]} and {other.shape[ax]}"
        )
    for i, (a, b) in enumerate(zip(input.shape, other.shape)):
        if a != b and a != 1 and b != 1:
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                f"non-singleton dimension {i}"
            )
    da, db = input._npdtype, other._npdtype
    if da != db:
        raise RuntimeError(
            f"expected scalar type {_dt.scalar_type_name(da)} but found {_dt.scalar_type_name(db)}"
        )
    if da == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    return apply(_cross_f, "LinalgCrossBackward0", (input, other), (("axis", ax - input.ndim),))


@defop(
    samples=(Sample(((2, 3), (2, 3))), Sample(((3, 2), (3, 1)), kwargs=(("dim", 0),))), **LINALG_ROW
)
def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim``: operands of one rank and one dtype,
    their other dimensions broadcast (PyTorch's checks)."""
    _check_dim_arg(dim, "linalg_cross")
    return cross_checked(input, other, dim)


def _cond_f(a: Any, *, p: Any) -> Any:
    return fla.cond(a, p)


@defop(
    samples=(
        Sample(((3, 3),)),
        Sample(((3, 4),)),
        Sample(((2, 3, 3),), args=("fro",), grad=False),
        Sample(((3, 3),), args=(1,), grad=False),
    ),
    **LINALG_ROW,
    bf16_error=no_bf16_kernel("linalg_svd_cpu"),
)
def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number of ``A`` in the ``p``-norm (2 by default)."""
    _float(A)
    _matrix(A, "cond")
    if p not in (None, 2, -2):
        _square(A, "cond")
    p = p if isinstance(p, str) or p is None else float(p)
    return apply(_cond_f, "LinalgCondBackward0", (A,), (("p", p),))


def _tensorsolve_f(a: Any, b: Any, *, axes: Any) -> Any:
    return fla.tensorsolve(a, b, axes)


@defop(samples=Sample(((2, 3, 6), (2, 3))), **LINALG_ROW, bf16_error=no_bf16_kernel("lu_cpu"))
def tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) = B``."""
    _float(A, B)
    axes = None if dims is None else tuple(int(d) for d in dims)
    return apply(_tensorsolve_f, "LinalgTensorsolveBackward0", (A, B), (("axes", axes),))


def _tensorinv_f(a: Any, *, ind: int) -> Any:
    return fla.tensorinv(a, ind)


@defop(
    samples=(Sample(((4, 6, 8, 3),)), Sample(((6, 2, 3),), kwargs=(("ind", 1),))),
    **LINALG_ROW,
    bf16_error=(RuntimeError, "linalg.inv: Low precision dtypes not supported. Got BFloat16"),
)
def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` for ``tensordot`` over ``ind`` dimensions."""
    _float(A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    return apply(_tensorinv_f, "LinalgTensorinvBackward0", (A,), (("ind", int(ind)),))


# ------------------------------------------------------------------ top-level torch


@defop(
    "qr",
    samples=(Sample(((4, 3),)), Sample(((3, 4),), kwargs=(("some", False),))),
    node_name=False,
    bf16_error=no_bf16_kernel("geqrf_cpu"),
)
def _qr_old(input: Tensor, some: bool = True) -> tuple:
    """``torch.qr``: ``linalg.qr`` with ``some=False`` for ``mode='complete'``."""
    warn_once(
        "torch.qr",
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
        "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
    )
    return OLD_QR(*qr(input, "reduced" if some else "complete"))


def _gram(c: Any, upper: bool) -> Any:
    """``L L^H`` (``U^H U``) of the factor's triangle; its derivative is taken at the
    whole of ``c``, as PyTorch's backward formulas use the factor argument as given."""
    tri = fnp.triu(c) if upper else fnp.tril(c)
    k = fnp.matmul(_mH(tri), tri) if upper else fnp.matmul(tri, _mH(tri))
    cs = stop_gradient(c)
    m = fnp.matmul(_mH(c), cs) if upper else fnp.matmul(c, _mH(cs))
    m = m + _mH(m)  # d(c c^H) = dc c^H + c dc^H
    return stop_gradient(k) + m - stop_gradient(m)


def _cho_solve_f(b: Any, c: Any, *, upper: bool) -> Any:
    return fla.solve(_gram(c, upper), b)


@defop(
    samples=(
        Sample(((3, 2),), args=(T((3, 3)),), domain=(0.5, 2), fd=False),
        Sample(((3, 2),), args=(T((3, 3)),), kwargs=(("upper", True),), domain=(0.5, 2), fd=False),
    ),
    node_name=False,
    bf16_error=no_bf16_kernel("cholesky_solve_cpu"),
)
def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """``X`` with ``(L L^H) X = input`` for the Cholesky factor ``input2`` (``upper``:
    ``U^H U``); only the factor's triangle is read."""
    _float(input, input2)
    st = (("upper", bool(upper)),)
    return apply(_cho_solve_f, "CholeskySolveBackward0", (input, input2), st)


def _cho_inv_f(c: Any, *, upper: bool) -> Any:
    return fla.inv(_gram(c, upper))


@defop(
    samples=(
        Sample(((3, 3),), domain=(0.5, 2), fd=False),
        Sample(((3, 3),), args=(True,), domain=(0.5, 2), fd=False),
    ),
    node_name=False,
    bf16_error=no_bf16_kernel("cholesky_inverse_cpu"),
)
def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """``(L L^H)^-1`` from the Cholesky factor ``input`` (``upper``: ``(U^H U)^-1``)."""
    _float(input)
    _square(input, "cholesky_inverse")
    st = (("upper", bool(upper)),)
    return apply(_cho_inv_f, "CholeskyInverseBackward0", (input,), st)


#: torch.linalg functions outside the op table (no generic sample: lu_solve needs
#: pivots from lu_factor); tested in tests/compat/test_compat_linalg_decomp.py
EXTRA = {"lu_solve": lu_solve, "LinAlgError": LinAlgError, "matmul": _matmul}
