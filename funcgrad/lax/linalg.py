"""``funcgrad.lax.linalg``: ``jax.lax.linalg``'s decompositions with its signatures.

Each function binds one of funcgrad's ``decomp`` primitives (so ``grad``, ``vmap``,
``jit`` and higher derivatives apply); leading dimensions are batch dimensions.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
    Array([[2., 0.],
           [1., 2.]], dtype=float32)
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from funcgrad.control_flow import scan
from funcgrad.core import dtypes
from funcgrad.lax import _householder
from funcgrad.numpy._core import (
    as_array,
    aval,
    broadcast_to_shape,
    fmt,
    here,
    promote,
    unsupported,
)
from funcgrad.primitives import decomp, decomp_condensed
from funcgrad.primitives import eig as _eig
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as rd
from funcgrad.primitives import shape as sh

__all__ = [
    "EighImplementation",
    "cholesky",
    "eig",
    "eigh",
    "hessenberg",
    "householder_product",
    "lu",
    "lu_pivots_to_permutation",
    "ormqr",
    "qr",
    "schur",
    "svd",
    "triangular_solve",
    "tridiagonal",
    "tridiagonal_solve",
]


def _matrix(x: Any, name: str, square: bool = False) -> Any:
    x = as_array(x, name)
    if aval(x).ndim < 2:
        raise ValueError(f"{name}: expected a matrix (or a stack of them), got {fmt(x)}{here()}")
    if square and aval(x).shape[-1] != aval(x).shape[-2]:
        raise ValueError(f"{name}: expected square matrices, got {fmt(x)}{here()}")
    return x


def symmetrize(x: Any) -> Any:
    """``(x + x^H) / 2``, the Hermitian part of ``x``."""
    x = as_array(x, "symmetrize")
    nd = aval(x).ndim
    xt = sh.transpose(x, (*range(nd - 2), nd - 1, nd - 2)) if nd >= 2 else x
    if dtypes.kind(aval(x).dtype) == 3:
        xt = ew.conj(xt)
    return (x + xt) / 2


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """Lower Cholesky factor ``L`` with ``x = L @ L^H``.

    With ``symmetrize_input`` the factor is of ``(x + x^H) / 2`` (so the gradient is
    symmetric, as in JAX); otherwise only ``x``'s lower triangle is read. A matrix that
    is not positive definite gives NaNs, as in JAX.
    """
    x = _matrix(x, "cholesky", square=True)
    if symmetrize_input:
        x = symmetrize(x)
    return decomp.cholesky(x)


def eig(
    x: Any,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation: Any = None,
    use_magma: bool | None = None,
) -> list[Any]:
    """Eigendecomposition of a general square matrix: ``[w, vl, vr]`` (``vl``/``vr`` only
    when asked for), all complex. CPU only, as in JAX. Eigenvalue derivatives assume
    distinct eigenvalues; eigenvector derivatives need ``enable_eigvec_derivs=True``
    (``geev``'s normalisation: unit norm, real largest-magnitude component)."""
    del implementation, use_magma
    x = _matrix(x, "eig", square=True)
    return _eig.eig(
        x,
        compute_left_eigenvectors=compute_left_eigenvectors,
        compute_right_eigenvectors=compute_right_eigenvectors,
        enable_eigvec_derivs=enable_eigvec_derivs,
    )


class EighImplementation(enum.Enum):
    """The algorithm of :func:`eigh` (``jax.lax.linalg.EighImplementation``): on a CPU
    only ``QR`` (LAPACK's ``syevd``/``heevd``), the default."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def eigh(
    x: Any,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index: tuple[int, int] | None = None,
    implementation: EighImplementation | None = None,
) -> tuple[Any, Any]:
    """Eigendecomposition ``(v, w)`` of a Hermitian matrix: ascending eigenvalues ``w``,
    eigenvectors in ``v``'s columns (LAPACK sorts them, so ``sort_eigenvalues=False``
    gives them sorted too, as JAX on a CPU). Derivatives assume distinct eigenvalues."""
    x = _matrix(x, "eigh", square=True)
    if implementation not in (None, EighImplementation.QR):
        raise NotImplementedError(
            f"lax.linalg.eigh: implementation={implementation} is not available on a CPU; "
            "use EighImplementation.QR (the default){here()}"
        )
    if subset_by_index is not None:
        raise unsupported("lax.linalg.eigh with subset_by_index")
    if symmetrize_input:
        x = symmetrize(x)
    return decomp.eigh(x, lower=lower)


def schur(
    x: Any,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable: Any = None,
) -> list[Any]:
    """Schur decomposition ``x = Q T Q^H``: ``[T, Q]`` (``[T]`` without
    ``compute_schur_vectors``). ``T`` is upper triangular for a complex ``x`` and quasi
    upper triangular (2 x 2 blocks for conjugate pairs) for a real one. CPU only and not
    differentiable, as in JAX; ``select_callable`` is unused and sorting is refused, as
    LAPACK's sorting is not available through JAX either."""
    del select_callable
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    x = as_array(x, "schur")
    shape = aval(x).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {shape}.{here()}")
    return decomp_condensed.schur(x, compute_schur_vectors=compute_schur_vectors)


def hessenberg(a: Any) -> tuple[Any, Any]:
    """Reduction to upper Hessenberg form: ``(a, taus)`` in LAPACK's packed form (the
    Hessenberg matrix in the upper triangle and first subdiagonal, Householder vectors
    below, their factors in ``taus``). CPU only and not differentiable, as in JAX."""
    a = as_array(a, "hessenberg")
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(
            f"Argument to Hessenberg reduction must have shape [..., n, n], got shape {shape}"
            f"{here()}"
        )
    return tuple(decomp_condensed.hessenberg(a))


def tridiagonal(a: Any, *, lower: bool = True) -> tuple[Any, Any, Any, Any]:
    """Reduction of the Hermitian matrix in ``a``'s ``lower`` (or upper) triangle to real
    tridiagonal form: ``(a, d, e, taus)`` (packed reflectors, diagonal, off-diagonal,
    factors), LAPACK's ``sytrd``/``hetrd``. Not differentiable, as in JAX."""
    a = as_array(a, "tridiagonal")
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {shape}.")
    return tuple(decomp_condensed.tridiagonal(a, lower=lower))


def householder_product(a: Any, taus: Any) -> Any:
    """The first ``n`` columns of the product of the Householder reflectors stored in
    ``a`` (``[..., m, n]``, below the diagonal) and ``taus`` (``[..., k]``), as LAPACK's
    ``orgqr``. A composite (one step per reflector), so it differentiates."""
    a = _matrix(a, "householder_product")
    taus = as_array(taus, "householder_product")
    m, n = aval(a).shape[-2:]
    k = aval(taus).shape[-1] if aval(taus).ndim else -1
    if not (m >= n >= k >= 0) or aval(taus).shape[:-1] != aval(a).shape[:-2]:
        raise ValueError(
            "householder_product: expected a of shape [..., m, n] with m >= n and taus of "
            f"shape [..., k] with k <= n, got a {fmt(a)} and taus {fmt(taus)}{here()}"
        )
    return _householder.householder_product(a, taus)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``Q @ c`` (``left``; ``c @ Q`` otherwise) for the ``Q`` of the Householder
    reflectors in ``(a, taus)``, without forming ``Q``; ``transpose`` uses ``Q^H``.
    A composite (one step per reflector), so it differentiates."""
    a = _matrix(a, "ormqr")
    taus, c = as_array(taus, "ormqr"), _matrix(c, "ormqr")
    if not aval(a).dtype == aval(taus).dtype == aval(c).dtype:
        raise TypeError(
            "ormqr requires arguments to have the same dtypes, got "
            f"{aval(a).dtype}, {aval(taus).dtype}, {aval(c).dtype}{here()}"
        )
    m = aval(a).shape[-2]
    side = aval(c).shape[-2] if left else aval(c).shape[-1]
    if side != m or aval(taus).ndim < 1 or aval(taus).shape[-1] > m:
        raise ValueError(
            f"ormqr: c's {'rows' if left else 'columns'} must match a's {m} rows, got a "
            f"{fmt(a)}, taus {fmt(taus)} and c {fmt(c)}{here()}"
        )
    return _householder.ormqr(a, taus, c, left=left, transpose=transpose)


def lu(x: Any) -> tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting: ``(lu, pivots, permutation)`` with
    ``x[permutation] == L @ U`` (``L`` unit lower, below ``lu``'s diagonal; ``U`` upper)."""
    return decomp.lu(_matrix(x, "lu"))


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation that the row swaps ``pivots`` (as ``lu`` returns them) apply."""
    return decomp.lu_pivots_to_permutation(as_array(pivots, "lu_pivots_to_permutation"),
                                           permutation_size)  # fmt: skip


def qr(
    x: Any, *, pivoting: bool = False, full_matrices: bool = True, use_magma: bool | None = None
) -> tuple[Any, Any]:
    """QR decomposition ``(q, r)``; ``full_matrices=False`` gives the reduced one.
    Differentiable for ``m >= n`` reduced (or square) inputs, as in JAX."""
    del use_magma
    if pivoting:
        raise unsupported("lax.linalg.qr(pivoting=True)")
    return decomp.qr(_matrix(x, "qr"), full_matrices=full_matrices)


def svd(
    x: Any,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index: tuple[int, int] | None = None,
    algorithm: Any = None,
) -> Any:
    """Singular value decomposition: ``(u, s, vh)``, or the descending singular values
    ``s`` alone without ``compute_uv``. Derivatives of ``u``/``vh`` need
    ``full_matrices=False`` and distinct singular values."""
    del algorithm
    if subset_by_index is not None:
        raise unsupported("lax.linalg.svd(subset_by_index=...)")
    outs = decomp.svd(_matrix(x, "svd"), full_matrices=full_matrices, compute_uv=compute_uv)
    if not compute_uv:
        return outs[0]
    s, u, vh = outs
    return u, s, vh


def triangular_solve(
    a: Any,
    b: Any,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Any:
    """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for triangular ``a``,
    ``op`` transposing and/or conjugating as asked. Operands are promoted to one
    inexact dtype; ``a``'s batch dimensions are broadcast against ``b``'s."""
    a, b = promote("triangular_solve", a, b, to="inexact")
    a, b = _matrix(a, "triangular_solve"), _matrix(b, "triangular_solve")
    sa, sb = aval(a).shape, aval(b).shape
    if sa[:-2] != sb[:-2]:
        try:
            batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
        except ValueError:
            raise ValueError(
                f"triangular_solve: batch dimensions of a and b do not broadcast: "
                f"{fmt(a, b)}{here()}"
            ) from None
        a = broadcast_to_shape(a, batch + sa[-2:], "triangular_solve")
        b = broadcast_to_shape(b, batch + sb[-2:], "triangular_solve")
    return decomp.triangular_solve(
        a,
        b,
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )


def _rows_first(v: Any) -> Any:
    """``(..., m, n)`` as ``(m, ..., n)``."""
    nd = aval(v).ndim
    return sh.transpose(v, (nd - 2, *range(nd - 2), nd - 1))


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False) -> Any:
    """Solve the tridiagonal systems ``A x = b``: ``d`` the diagonal, ``dl`` the
    subdiagonal (``dl[..., 0]`` ignored), ``du`` the superdiagonal (``du[..., -1]``
    ignored), all ``(..., m)``; ``b`` is ``(..., m, n)``.

    Gaussian elimination with partial pivoting (LAPACK's ``gtsv`` scheme: the larger of
    the pivot and the entry below it leads, so ``U`` gains a second superdiagonal), as
    two ``scan``s, so it differentiates and batches. A singular matrix gives ``inf``/
    ``nan``; with ``perturb_singular`` each pivot smaller than ``eps * max|U|`` (at least
    the dtype's smallest normal number) is replaced by that amount, giving a large finite
    solution, as inverse iteration for eigenvectors wants (JAX's option)."""
    dl, d, du, b = promote("tridiagonal_solve", dl, d, du, b)
    dl, d, du, b = (as_array(v, "tridiagonal_solve") for v in (dl, d, du, b))
    m = aval(d).shape[-1] if aval(d).ndim else 0
    for name, v in (("dl", dl), ("du", du)):
        if aval(v).shape != aval(d).shape:
            raise ValueError(
                f"tridiagonal_solve: {name} must have the shape of d, got {fmt(v)} and "
                f"{fmt(d)}{here()}"
            )
    if aval(b).ndim != aval(d).ndim + 1 or aval(b).shape[:-1] != aval(d).shape:
        raise ValueError(
            f"tridiagonal_solve: b must have shape (..., m, n) for d of shape (..., m), got "
            f"{fmt(b)} and {fmt(d)}{here()}"
        )
    if m == 0:
        return b
    # the rows along a leading axis; the diagonals' entries broadcast against b's columns
    dl_, d_, du_, b_ = (
        _rows_first(v if v is b else sh.reshape(v, (*aval(v).shape, 1))) for v in (dl, d, du, b)
    )
    u0, u1, u2, y = _eliminate(dl_, d_, du_, b_)
    if perturb_singular:
        u0 = _perturbed_pivots(u0, u1, u2)
    zero = ew.mul(b_[0], 0)

    def substitute(carry: Any, row: Any) -> Any:
        x1, x2 = carry  # x[i + 1], x[i + 2]
        p, q, r, yi = row
        x = (yi - q * x1 - r * x2) / p
        return (x, x1), x

    _, x = scan(substitute, (zero, zero), (u0, u1, u2, y), reverse=True)
    nd = aval(x).ndim
    return sh.transpose(x, (*range(1, nd - 1), 0, nd - 1))


def _pick(pred: Any, if_true: Any, if_false: Any) -> Any:
    """``where(pred, if_true, if_false)`` with ``pred`` (``(..., 1)``) broadcast."""
    shape = (
        aval(if_true).shape if aval(if_true).ndim >= aval(if_false).ndim else aval(if_false).shape
    )
    return ew.select_n(
        broadcast_to_shape(pred, shape),
        broadcast_to_shape(if_false, shape),
        broadcast_to_shape(if_true, shape),
    )


def _eliminate(dl: Any, d: Any, du: Any, b: Any) -> tuple:
    """Rows ``(m, ..., 1)`` of the three diagonals and ``(m, ..., n)`` of ``b`` to ``U``'s
    three diagonals (the pivot, the first and the second superdiagonal) and the
    transformed right-hand sides, each ``(m, ...)`` row-major as given.

    The carry is the working row ``i``: its entries in columns ``i`` and ``i + 1`` and
    its right-hand side; row ``i + 1`` of ``A`` is met with entries in columns ``i``,
    ``i + 1``, ``i + 2``. The one of the two with the larger entry in column ``i``
    becomes row ``i`` of ``U``; the other, less a multiple of it, is the next working row
    (entries in columns ``i + 1`` and ``i + 2``)."""
    m = aval(d).shape[0]
    first = (d[0], du[0] if m > 1 else ew.mul(du[0], 0), b[0])
    if m == 1:
        z = ew.mul(d[:1], 0)
        return d[:1], z, z, b[:1]
    last = sh.concatenate(du[1:-1], ew.mul(du[-1:], 0), dimension=0)  # du[m - 1] ignored

    def step(carry: Any, row: Any) -> Any:
        p, q, r = carry
        lo, di, up, bi = row
        swap = ew.lt(ew.abs(p), ew.abs(lo))
        both_zero = ew.bitwise_and(ew.eq(p, 0), ew.eq(lo, 0))
        lead, other = _pick(swap, lo, p), _pick(swap, p, lo)
        mult = _pick(both_zero, ew.mul(p, 0), other / _pick(both_zero, ew.mul(p, 0) + 1, lead))
        out = (lead, _pick(swap, di, q), _pick(swap, up, ew.mul(up, 0)), _pick(swap, bi, r))
        nxt = (
            _pick(swap, q - mult * di, di - mult * q),
            _pick(swap, -(mult * up), up),
            _pick(swap, r - mult * bi, bi - mult * r),
        )
        return nxt, out

    (p, _, r), (u0, u1, u2, y) = scan(step, first, (dl[1:], d[1:], last, b[1:]))
    zero = ew.mul(p, 0)
    return tuple(
        sh.concatenate(rows, lastrow[None], dimension=0)
        for rows, lastrow in ((u0, p), (u1, zero), (u2, zero), (y, r))
    )


def _perturbed_pivots(u0: Any, u1: Any, u2: Any) -> Any:
    """``u0`` with each pivot under ``eps * max|U|`` (per system; at least the smallest
    normal number) replaced by that amount, keeping a negative real pivot's sign."""
    size = ew.max(ew.max(ew.abs(u0), ew.abs(u1)), ew.abs(u2))  # (m, ..., 1), real
    info = np.finfo(aval(size).dtype)
    scale = sh.broadcast_in_dim(
        rd.reduce_max(size, axes=(0,)), aval(size).shape, tuple(range(1, aval(size).ndim))
    )
    tol = ew.max(scale * float(info.eps), ew.mul(scale, 0) + float(info.tiny))
    small = ew.lt(ew.abs(u0), tol)
    if dtypes.kind(aval(u0).dtype) == 3:  # complex: the (real) amount
        replacement = ew.convert_element_type(tol, aval(u0).dtype)
    else:
        replacement = ew.select_n(ew.lt(u0, 0), tol, -tol)
    return ew.select_n(small, u0, replacement)
