"""``funcgrad.numpy.linalg``: ``jax.numpy.linalg`` over funcgrad's primitives.

Decompositions bind the ``decomp`` primitives (``funcgrad.primitives.decomp``); the
rest (``solve``, ``inv``, ``det``, ``slogdet``, ``lstsq``, ``pinv``, ...) are composites
of them, so every function differentiates, batches and compiles. ``det`` and ``pinv``
carry JAX's custom JVPs (``det``: ``det(a) tr(a^{-1} da)``; ``pinv``: Golub and
Pereyra's formula), which stay finite where the LU or SVD rules would not.

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0]))
    Array([1. , 0.5], dtype=float32)
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from funcgrad.custom import custom_jvp
from funcgrad.lax import _householder
from funcgrad.lax import linalg as lax_linalg
from funcgrad.numpy import _creation, _indexing, _reductions, _shape, _sorting, _ufuncs
from funcgrad.numpy._core import ArrayLike, as_array, aval, check_arraylike, fmt, here, promote
from funcgrad.numpy._linalg import (
    cross,
    matmul,
    matrix_norm,
    norm,
    outer,
    tensordot,
    vecdot,
    vector_norm,
)
from funcgrad.numpy._linalg import trace as _trace
from funcgrad.numpy._shape import diagonal as _diagonal
from funcgrad.numpy._shape import matrix_transpose
from funcgrad.primitives import decomp

__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]


class EigResult(NamedTuple):
    """``linalg.eig``'s result: ``(eigenvalues, eigenvectors)``, as in NumPy 2."""

    eigenvalues: Any
    eigenvectors: Any


class EighResult(NamedTuple):
    """``linalg.eigh``'s result: ascending ``eigenvalues`` and the ``eigenvectors`` as columns."""

    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """``linalg.qr``'s result: ``(Q, R)``."""

    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    """``linalg.slogdet``'s result: ``(sign, logabsdet)``, with ``det == sign * exp(logabsdet)``."""

    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    """``linalg.svd``'s result: ``(U, S, Vh)`` with ``a == U @ diag(S) @ Vh``."""

    U: Any
    S: Any
    Vh: Any


def _inexact(name: str, *xs: Any) -> list[Any]:
    """Operands promoted to one inexact dtype, as arrays (``jnp``'s
    ``promote_dtypes_inexact``)."""
    return [as_array(x, name) for x in promote(name, *xs, to="inexact")]


def _square(name: str, a: Any) -> None:
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(
            f"{name}: expected square matrices (shape [..., n, n]), got {fmt(a)}{here()}"
        )


def _matrix(name: str, a: Any) -> None:
    if aval(a).ndim < 2:
        raise ValueError(f"{name}: expected a matrix (or a stack of them), got {fmt(a)}{here()}")


def _H(x: Any) -> Any:
    return _ufuncs.conj(_shape.swapaxes(x, -1, -2))


def _broadcast_batch(name: str, a: Any, b: Any, b_core: int) -> tuple[Any, Any]:
    """``a`` (``[..., n, n]``) and ``b`` (``b_core`` core dims) with one batch shape."""
    sa, sb = aval(a).shape, aval(b).shape
    try:
        batch = tuple(np.broadcast_shapes(sa[:-2], sb[: len(sb) - b_core]))
    except ValueError:
        raise ValueError(
            f"{name}: batch dimensions do not broadcast: {fmt(a, b)}{here()}"
        ) from None
    return _shape.broadcast_to(a, batch + sa[-2:]), _shape.broadcast_to(
        b, batch + sb[len(sb) - b_core :]
    )


# --------------------------------------------------------------------------- LU-based


def _lu_solve(lu: Any, perm: Any, b: Any, trans: int = 0) -> Any:
    """Solve ``a x = b`` (``trans=0``), ``a^T x = b`` (1) or ``a^H x = b`` (2) from
    ``lu``/``perm`` of ``a`` (``a[perm] = L U``); ``b`` is ``[..., n, k]``."""
    p = decomp._perm_matrix(perm, aval(lu).dtype)
    if trans == 0:
        x = matmul(p, b)
        x = decomp.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return decomp.triangular_solve(lu, x, left_side=True, lower=False)
    conj = trans == 2
    x = decomp.triangular_solve(
        lu, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj
    )
    x = decomp.triangular_solve(
        lu, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=conj
    )
    return matmul(matrix_transpose(p), x)


def solve(a: ArrayLike, b: ArrayLike) -> Any:
    """Solve ``a @ x = b``: ``b`` of shape ``(n,)`` or ``(..., n, k)``, batch dimensions
    broadcast (JAX's convention). Singular ``a`` gives ``inf``/``nan``."""
    check_arraylike("jnp.linalg.solve", a, b)
    a, b = _inexact("solve", a, b)
    if aval(a).ndim < 2:
        raise ValueError(
            f"solve: left hand array must be at least two dimensional; got {fmt(a)}{here()}"
        )
    _square("solve", a)
    n = aval(a).shape[-1]
    vec = aval(b).ndim == 1
    if vec:
        b = b[:, None]
    if aval(b).shape[-2] != n:
        raise ValueError(f"solve: incompatible shapes {fmt(a, b)}{here()}")
    a, b = _broadcast_batch("solve", a, b, 2)
    lu, _, perm = decomp.lu(a)
    x = _lu_solve(lu, perm, b)
    return x[..., 0] if vec else x


def inv(a: ArrayLike) -> Any:
    """Inverse of a (stack of) square matrices; singular matrices give ``inf``/``nan``."""
    check_arraylike("jnp.linalg.inv", a)
    (a,) = _inexact("inv", a)
    _square("inv", a)
    n = aval(a).shape[-1]
    return solve(a, _shape.broadcast_to(_creation.eye(n, dtype=aval(a).dtype), aval(a).shape))


def _pivot_parity(piv: Any, dtype: Any) -> Any:
    """The sign (as ``dtype``) of the permutation LU's row swaps ``piv`` make."""
    k = aval(piv).shape[-1]
    swaps = _reductions.sum(_ufuncs.not_equal(piv, _creation.arange(k, dtype=piv.dtype)), axis=-1)
    return _ufuncs.where(swaps % 2 == 1, -1, 1).astype(dtype)


def _lu_sign_diag(a: Any) -> tuple[Any, Any]:
    """The LU factorisation's permutation sign (as ``a``'s dtype) and ``U``'s diagonal."""
    lu, piv, _ = decomp.lu(a)
    return _pivot_parity(piv, aval(a).dtype), _shape.diagonal(lu, 0, -2, -1)


def _det_tangent(a: Any, da: Any) -> Any:
    """``trace(adj(a) @ da)``, the derivative of ``det`` at ``a`` along ``da``, also where
    LU meets an exactly zero pivot (``det(a) * trace(solve(a, da))`` is ``0 * inf`` there).

    With ``P a = L U``, ``adj(a) = sign(P) adj(U) L^-1 P``. Let ``U'`` be ``U`` with its zero
    pivots set to one and ``q`` the product of its pivots. No zero pivot:
    ``adj(U) = q U'^-1``; one, at ``k``: ``adj(U) = q (U'^-1 e_k)(e_k^T U'^-1)`` (the limit of
    ``det U U^-1`` as that pivot goes to zero, by Sherman-Morrison); more: ``adj(U) = 0``.
    """
    lu, piv, perm = decomp.lu(a)
    dtype = aval(a).dtype
    d = _shape.diagonal(lu, 0, -2, -1)
    zero = _ufuncs.equal(d, 0)
    n_zero = _reductions.sum(zero, axis=-1)
    q = _reductions.prod(_ufuncs.where(zero, 1, d), axis=-1)
    eye = _creation.eye(aval(a).shape[-1], dtype=dtype)
    u1 = lu + _ufuncs.where(zero, 1, 0).astype(dtype)[..., None, :] * eye
    x = matmul(decomp._perm_matrix(perm, dtype), da)
    x = decomp.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    y = decomp.triangular_solve(u1, x, left_side=True, lower=False)  # U'^-1 L^-1 P da
    k = _reductions.argmax(zero, axis=-1)
    e_k = _ufuncs.equal(_creation.arange(aval(a).shape[-1]), k[..., None]).astype(dtype)
    c = decomp.triangular_solve(u1, e_k[..., :, None], left_side=True, lower=False)[..., 0]
    row_k = _indexing.take_along_axis(y, k[..., None, None], axis=-2)[..., 0, :]
    one_zero = _reductions.sum(row_k * c, axis=-1)
    traced = _ufuncs.where(n_zero == 0, _trace(y, axis1=-2, axis2=-1), one_zero)
    return _pivot_parity(piv, dtype) * q * _ufuncs.where(n_zero > 1, 0, traced)


def _det_impl(a: Any) -> Any:
    parity, d = _lu_sign_diag(a)
    return parity * _reductions.prod(d, axis=-1)


@functools.cache
def _det_fn() -> Any:
    f = custom_jvp(_det_impl)

    def jvp(primals: tuple, tangents: tuple) -> tuple:
        (a,), (da,) = primals, tangents
        return f(a), _det_tangent(a, da)

    f.defjvp(jvp)
    return f


def det(a: ArrayLike) -> Any:
    """Determinant of a (stack of) square matrices, via LU; its JVP is
    ``trace(adj(a) @ da)``, finite at singular matrices (as JAX's)."""
    check_arraylike("jnp.linalg.det", a)
    (a,) = _inexact("det", a)
    _square("det", a)
    n = aval(a).shape[-1]
    if n in (2, 3):  # closed forms, as JAX (exact for small integer matrices)
        return _det_small(a, n)
    return _det_fn()(a)


def _det_small(a: Any, n: int) -> Any:
    """Determinant of 2x2 / 3x3 matrices by their polynomial (Leibniz) formulas."""

    def e(i: int, j: int) -> Any:
        return a[..., i, j]

    if n == 2:
        return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0)
    plus = sum(e(0, k) * e(1, (k + 1) % 3) * e(2, (k + 2) % 3) for k in range(3))
    minus = sum(e(0, k) * e(1, (k + 2) % 3) * e(2, (k + 1) % 3) for k in range(3))
    return plus - minus


def slogdet(a: ArrayLike, *, method: str | None = None) -> SlogdetResult:
    """``(sign, logabsdet)`` of the determinant, via LU (``method='lu'``, the default) or
    QR (``'qr'``); a singular matrix gives sign 0 and ``-inf``."""
    check_arraylike("jnp.linalg.slogdet", a)
    (a,) = _inexact("slogdet", a)
    _square("slogdet", a)
    if (method is None or method == "lu") and aval(a).shape[-1] in (1, 2):
        # analytic, as JAX: the determinant itself (no factorisation)
        det1 = a[..., 0, 0] if aval(a).shape[-1] == 1 else _det_small(a, 2)
        absd = _ufuncs.abs(det1)
        if _ufuncs.iscomplexobj(det1):  # det / |det|, whose derivative is i Im(d det / det) sign
            sign = det1 / _ufuncs.where(absd == 0, 1, absd).astype(aval(det1).dtype)
        else:
            sign = _ufuncs.sign(det1)
        return SlogdetResult(sign, _ufuncs.log(absd))
    if method is None or method == "lu":
        parity, d = _lu_sign_diag(a)
    elif method == "qr":
        q, r = decomp.qr(a, full_matrices=True)
        parity, d = det(q), _shape.diagonal(r, 0, -2, -1)
    else:
        raise ValueError(
            f"slogdet: unknown method {method!r}; supported methods are 'lu' (None) and "
            f"'qr'{here()}"
        )
    absd = _ufuncs.abs(d)
    logabs = _reductions.sum(_ufuncs.log(absd), axis=-1)
    zero = _reductions.any(_ufuncs.equal(d, 0), axis=-1)
    unit = d / _ufuncs.where(absd == 0, 1, absd).astype(aval(d).dtype)
    sign = parity * _reductions.prod(unit, axis=-1)
    sign = _ufuncs.where(zero, _creation.zeros_like(sign), sign)
    logabs = _ufuncs.where(zero, -np.inf, logabs).astype(aval(logabs).dtype)
    return SlogdetResult(sign, logabs)


# --------------------------------------------------------------------------- decompositions


def cholesky(a: ArrayLike, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """Cholesky factor of a Hermitian positive-definite matrix: lower ``L`` with
    ``a = L L^H`` (upper ``U = L^H`` with ``upper=True``). Non-PD input gives NaNs."""
    check_arraylike("jnp.linalg.cholesky", a)
    (a,) = _inexact("cholesky", a)
    _square("cholesky", a)
    lo = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(lo) if upper else lo


def qr(a: ArrayLike, mode: str = "reduced") -> Any:
    """QR decomposition: ``QRResult(Q, R)`` for ``mode`` ``'reduced'``/``'complete'``,
    ``R`` alone for ``'r'``, LAPACK's Householder form ``(h, tau)`` for ``'raw'``."""
    check_arraylike("jnp.linalg.qr", a)
    (a,) = _inexact("qr", a)
    _matrix("qr", a)
    if mode == "raw":  # LAPACK's geqrf output, transposed as NumPy's
        h, tau = _householder.geqrf(a)
        return QRResult(_shape.swapaxes(h, -1, -2), tau)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: unsupported mode {mode!r}{here()}")
    q, r = decomp.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def eig(a: ArrayLike) -> EigResult:
    """Eigenvalues and right eigenvectors (columns, unit norm) of a general square
    matrix, always complex. CPU only, as in JAX; eigenvalue derivatives only."""
    check_arraylike("jnp.linalg.eig", a)
    (a,) = _inexact("eig", a)
    _square("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: ArrayLike) -> Any:
    """Eigenvalues of a general square matrix, always complex."""
    check_arraylike("jnp.linalg.eigvals", a)
    (a,) = _inexact("eigvals", a)
    _square("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def eigh(a: ArrayLike, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix, read from its
    lower (``UPLO='L'``, default) or upper triangle."""
    check_arraylike("jnp.linalg.eigh", a)
    (a,) = _inexact("eigh", a)
    _square("eigh", a)
    if UPLO is None:
        UPLO = "L"
    if UPLO not in ("L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}{here()}")
    v, w = lax_linalg.eigh(a, lower=UPLO == "L", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: ArrayLike, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """Eigenvalues (ascending) of a Hermitian matrix."""
    check_arraylike("jnp.linalg.eigvalsh", a)
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(
    a: ArrayLike,
    full_matrices: bool = True,
    compute_uv: bool = True,
    hermitian: bool = False,
    subset_by_index: tuple[int, int] | None = None,
) -> Any:
    """Singular value decomposition ``a = U @ diag(S) @ Vh`` (``SVDResult``), or the
    descending singular values alone without ``compute_uv``. ``hermitian=True`` uses
    ``eigh``."""
    check_arraylike("jnp.linalg.svd", a)
    (a,) = _inexact("svd", a)
    _matrix("svd", a)
    if subset_by_index is not None:
        raise NotImplementedError(f"svd: subset_by_index is not supported{here()}")
    if hermitian:
        _square("svd", a)
        v, w = lax_linalg.eigh(a)
        s = _ufuncs.abs(w)
        order = _shape.flip(_sorting.argsort(s, axis=-1), axis=-1)
        s = _indexing.take_along_axis(s, order, axis=-1)
        if not compute_uv:
            return s
        sign = _indexing.take_along_axis(_ufuncs.sign(w), order, axis=-1)
        u = _indexing.take_along_axis(
            v, _shape.broadcast_to(order[..., None, :], aval(v).shape), axis=-1
        )
        vh = _H(u * sign[..., None, :].astype(aval(u).dtype))
        return SVDResult(u, s, vh)
    res = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return SVDResult(*res) if compute_uv else res


def svdvals(x: ArrayLike, /) -> Any:
    """Singular values, in descending order."""
    check_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False)


# --------------------------------------------------------------------------- composites


def lstsq(
    a: ArrayLike, b: ArrayLike, rcond: float | None = None, *, numpy_resid: bool = False
) -> tuple[Any, Any, Any, Any]:
    """Least-squares solution of ``a @ x = b`` via the SVD: ``(x, resid, rank, s)``.

    Singular values below ``rcond * s[0]`` are dropped (``rcond=None``: ``eps *
    max(m, n)``). ``resid`` is always the squared residual norm per column unless
    ``numpy_resid`` (then empty where NumPy returns empty)."""
    check_arraylike("jnp.linalg.lstsq", a, b)
    a, b = _inexact("lstsq", a, b)
    if aval(a).ndim != 2:
        raise TypeError(
            f"lstsq: {aval(a).ndim}-dimensional array given. Array must be two-dimensional{here()}"
        )
    if aval(b).ndim not in (1, 2):
        raise TypeError(
            f"lstsq: {aval(b).ndim}-dimensional array given. Array must be one or "
            f"two-dimensional{here()}"
        )
    if aval(a).shape[0] != aval(b).shape[0]:
        raise ValueError(
            f"lstsq: leading dimensions of input arrays must match: {fmt(a, b)}{here()}"
        )
    vec = aval(b).ndim == 1
    if vec:
        b = b[:, None]
    m, n = aval(a).shape
    dt = aval(a).dtype
    if rcond is None:
        rcond = float(np.finfo(dt).eps) * max(n, m)
    elif not hasattr(rcond, "shape") and rcond < 0:
        rcond = float(np.finfo(dt).eps)
    u, s, vt = lax_linalg.svd(a, full_matrices=False)
    top = s[0] if aval(s).shape[0] else _creation.zeros((), aval(s).dtype)  # (an empty a)
    mask = (s > 0) & (s >= _creation.asarray(rcond, dtype=aval(s).dtype) * top)
    rank = _reductions.sum(mask)
    safe = _ufuncs.where(mask, s, 1).astype(dt)
    s_inv = _ufuncs.where(mask, 1 / safe, 0)[:, None]
    x = matmul(_H(vt), s_inv * matmul(_H(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = _creation.asarray([], dtype=aval(s).dtype)
    else:
        resid = norm(b - matmul(a, x), axis=0) ** 2
    if vec:
        x = _shape.ravel(x)
    return x, resid, rank, s


def _pinv_impl(a: Any, rtol: Any, hermitian: bool) -> Any:
    a = _ufuncs.conj(a)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = _creation.asarray(rtol)[..., None] * s[..., 0:1]
    s = _ufuncs.where(s > cutoff, s, np.inf).astype(aval(u).dtype)
    return matmul(_shape.swapaxes(vh, -1, -2), _shape.swapaxes(u, -1, -2) / s[..., None])


@functools.cache
def _pinv_fn() -> Any:
    f = custom_jvp(_pinv_impl, nondiff_argnums=(1, 2))

    def jvp(rtol: Any, hermitian: bool, primals: tuple, tangents: tuple) -> tuple:
        # Golub & Pereyra (1973): the derivative of the pseudo-inverse
        (a,), (da,) = primals, tangents
        p = f(a, rtol, hermitian)
        m, n = aval(a).shape[-2:]
        dt = aval(a).dtype
        pa, ap = matmul(p, a), matmul(a, p)
        dp = -matmul(matmul(p, da), p)
        dp = dp + matmul(matmul(matmul(p, _H(p)), _H(da)), _creation.eye(m, dtype=dt) - ap)
        dp = dp + matmul(matmul(_creation.eye(n, dtype=dt) - pa, _H(da)), matmul(_H(p), p))
        return p, dp

    f.defjvp(jvp)
    return f


def pinv(
    a: ArrayLike, rtol: ArrayLike | None = None, hermitian: bool = False, *, rcond: Any = None
) -> Any:
    """Moore-Penrose pseudo-inverse via the SVD; singular values at or below
    ``rtol * s_max`` (default ``10 * max(m, n) * eps``) count as zero. ``rcond`` is the
    older name of ``rtol``."""
    check_arraylike("jnp.linalg.pinv", a)
    (a,) = _inexact("pinv", a)
    _matrix("pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError(f"pinv: pass only one of rtol and rcond{here()}")
        rtol = rcond
    if rtol is None:
        rtol = 10.0 * max(aval(a).shape[-2:]) * float(np.finfo(aval(a).dtype).eps)
    if not isinstance(rtol, float):
        rtol = as_array(rtol, "pinv")
    return _pinv_fn()(a, rtol, hermitian)


def matrix_power(a: ArrayLike, n: int) -> Any:
    """``a`` raised to the integer power ``n`` by repeated squaring (``n < 0`` inverts)."""
    check_arraylike("jnp.linalg.matrix_power", a)
    a = as_array(a, "matrix_power")
    if aval(a).ndim < 2:
        raise TypeError(
            f"matrix_power: {aval(a).ndim}-dimensional array given. Array must be at least "
            f"two-dimensional{here()}"
        )
    if aval(a).shape[-1] != aval(a).shape[-2]:
        raise TypeError(
            f"matrix_power: last 2 dimensions of the array must be square, got {fmt(a)}{here()}"
        )
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent must be an integer, got {n!r}{here()}") from None
    if n == 0:
        return _shape.broadcast_to(
            _creation.eye(aval(a).shape[-1], dtype=aval(a).dtype), aval(a).shape
        )
    if n < 0:
        a, n = inv(a), -n
    result, z = None, None
    while n > 0:
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def matrix_rank(
    M: ArrayLike, rtol: ArrayLike | None = None, *, hermitian: bool = False, tol: Any = None
) -> Any:
    """Number of singular values above ``rtol`` (default ``s_max * max(m, n) * eps``)."""
    check_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError(f"matrix_rank: only one of tol or rtol may be specified{here()}")
        rtol = tol
    (M,) = _inexact("matrix_rank", M)
    if aval(M).ndim < 2:
        return _reductions.any(M != 0).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = _reductions.max(s, axis=-1) * (
            max(aval(M).shape[-2:]) * float(np.finfo(aval(s).dtype).eps)
        )
    rtol = _shape.expand_dims(_creation.asarray(rtol), -1)
    return _reductions.sum(s > rtol, axis=-1)


def cond(x: ArrayLike, p: Any = None) -> Any:
    """Condition number ``norm(x, p) * norm(inv(x), p)`` (``p`` None/2: ``s_max / s_min``)."""
    (x,) = _inexact("cond", x)
    if aval(x).ndim < 2:
        raise ValueError(f"cond: input array must be at least 2D; got {fmt(x)}{here()}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        _square("cond", x)
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    nan_in = _reductions.any(_ufuncs.isnan(x), axis=(-2, -1))
    return _ufuncs.where(_ufuncs.isnan(r) & ~nan_in, np.inf, r)


def tensorinv(a: ArrayLike, ind: int = 2) -> Any:
    """The inverse of ``tensordot(a, ., ind)``: shape ``a.shape[ind:] + a.shape[:ind]``."""
    a = as_array(a, "tensorinv")
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer; got ind={ind}{here()}")
    front, back = aval(a).shape[:ind], aval(a).shape[ind:]
    if math.prod(front) != math.prod(back):
        raise ValueError(
            f"tensorinv is only possible when the product of the first {ind} dimensions "
            f"equals that of the rest, got {fmt(a)}{here()}"
        )
    return inv(a.reshape(math.prod(front), math.prod(back))).reshape(*back, *front)


def tensorsolve(a: ArrayLike, b: ArrayLike, axes: tuple[int, ...] | None = None) -> Any:
    """Solve ``tensordot(a, x, x.ndim) = b`` for ``x`` (``axes`` of ``a`` moved to the end
    first)."""
    check_arraylike("tensorsolve", a, b)
    a, b = as_array(a, "tensorsolve"), as_array(b, "tensorsolve")
    if axes is not None:  # moved to the end in their order, as NumPy's
        nd = aval(a).ndim
        a = _shape.moveaxis(a, axes, tuple(range(nd - len(axes), nd)))
    out_shape = aval(a).shape[aval(b).ndim :]
    if aval(a).shape[: aval(b).ndim] != aval(b).shape:
        raise ValueError(
            f"tensorsolve: after moving axes to end, leading shape of a must match shape of "
            f"b: {fmt(a, b)}{here()}"
        )
    if aval(b).size != math.prod(out_shape):
        raise ValueError(
            f"tensorsolve: input arrays must have prod(a.shape[:b.ndim]) == "
            f"prod(a.shape[b.ndim:]): {fmt(a, b)}{here()}"
        )
    a = a.reshape(aval(b).size, math.prod(out_shape))
    return solve(a, b.reshape(-1)).reshape(out_shape)


def multi_dot(arrays: Sequence[ArrayLike], *, precision: Any = None) -> Any:
    """Product of a chain of matrices (vectors allowed at the ends), multiplied in the
    cheapest order (dynamic programming over the chain, as NumPy's)."""
    check_arraylike("jnp.linalg.multi_dot", *arrays)
    del precision
    arrs = [as_array(x, "multi_dot") for x in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got {len(arrs)}{here()}")
    nds = [aval(x).ndim for x in arrs]
    if nds[0] not in (1, 2) or nds[-1] not in (1, 2) or any(d != 2 for d in nds[1:-1]):
        raise ValueError(
            "multi_dot: input arrays must all be two-dimensional, except for the first and "
            f"last array which may be 1 or 2 dimensional; got {fmt(*arrs)}{here()}"
        )
    first_vec, last_vec = nds[0] == 1, nds[-1] == 1
    if first_vec:
        arrs[0] = arrs[0][None, :]
    if last_vec:
        arrs[-1] = arrs[-1][:, None]
    for x, y in itertools.pairwise(arrs):
        if aval(x).shape[-1] != aval(y).shape[0]:
            raise ValueError(
                "multi_dot: last dimension of each array must match first dimension of the "
                f"next; got {fmt(*arrs)}{here()}"
            )
    dims = [aval(arrs[0]).shape[0]] + [aval(x).shape[1] for x in arrs]
    order = _chain_order(dims)

    def product(i: int, j: int) -> Any:
        if i == j:
            return arrs[i]
        k = order[i][j]
        return matmul(product(i, k), product(k + 1, j))

    res = product(0, len(arrs) - 1)
    if first_vec:
        res = res[0]
    if last_vec:
        res = res[..., 0]
    return res


def _chain_order(dims: list[int]) -> list[list[int]]:
    """Split points of the cheapest matrix-chain product (textbook dynamic programming)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Sum of the ``offset`` diagonal of the last two axes (Array API)."""

    check_arraylike("jnp.linalg.trace", x)
    return _trace(x, offset, -2, -1, dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The ``offset`` diagonal of the last two axes (Array API)."""

    check_arraylike("jnp.linalg.diagonal", x)
    return _diagonal(x, offset, -2, -1)
