"""``funcgrad.scipy.linalg``: ``jax.scipy.linalg`` over funcgrad's ``decomp`` primitives.

Every function is differentiable, batchable and compiles under ``jit``. ``expm`` is
a composite (Padé approximant of degree 13 with scaling and squaring, after Higham
2005), so its derivatives come from its parts.

    >>> import numpy as np
    >>> from funcgrad.scipy import linalg
    >>> linalg.expm(np.zeros((2, 2)))
    Array([[1., 0.],
           [0., 1.]], dtype=float32)
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.control_flow import scan
from funcgrad.core.zeros import is_zero
from funcgrad.custom import custom_jvp
from funcgrad.lax import linalg as lax_linalg
from funcgrad.numpy import linalg as np_linalg
from funcgrad.numpy._core import ArrayLike, aval, fmt, here, promote
from funcgrad.numpy._linalg import matmul
from funcgrad.primitives import decomp
from funcgrad.primitives.calls import stop_gradient
from funcgrad.scipy._schur_forms import (
    funm,
    hessenberg,
    rsf2csf,
    schur,
    solve_sylvester,
    sqrtm,
)
from funcgrad.scipy._special_matrices import _inexact

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "circulant",
    "companion",
    "convolution_matrix",
    "det",
    "dft",
    "eigh",
    "eigh_tridiagonal",
    "expm",
    "expm_frechet",
    "fiedler",
    "fiedler_companion",
    "funm",
    "hadamard",
    "hankel",
    "helmert",
    "hessenberg",
    "hilbert",
    "inv",
    "invhilbert",
    "invpascal",
    "leslie",
    "lu",
    "lu_factor",
    "lu_solve",
    "pascal",
    "polar",
    "qr",
    "qr_multiply",
    "rsf2csf",
    "schur",
    "solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
    "svd",
    "toeplitz",
]


def _square(name: str, a: Any) -> None:
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(
            f"{name}: expected square matrices (shape [..., n, n]), got {fmt(a)}{here()}"
        )


def _H(x: Any) -> Any:
    return fnp.conj(fnp.swapaxes(x, -1, -2))


def _rhs(name: str, a: Any, b: Any) -> tuple[Any, Any, bool]:
    """``a`` and ``b`` with one batch shape, ``b`` as ``[..., n, k]`` (third result: ``b``
    was a vector)."""
    n = aval(a).shape[-1]
    vec = aval(b).ndim == 1
    if vec:
        b = b[:, None]
    if aval(b).ndim < 2 or aval(b).shape[-2] != n:
        raise ValueError(f"{name}: incompatible shapes {fmt(a, b)}{here()}")
    sa, sb = aval(a).shape, aval(b).shape
    try:
        batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    except ValueError:
        raise ValueError(
            f"{name}: batch dimensions do not broadcast: {fmt(a, b)}{here()}"
        ) from None
    return fnp.broadcast_to(a, batch + sa[-2:]), fnp.broadcast_to(b, batch + sb[-2:]), vec


# --------------------------------------------------------------------------- Cholesky


def _cholesky(a: Any, lower: bool) -> Any:
    lo = decomp.cholesky(a if lower else _H(a))
    return lo if lower else _H(lo)


def cholesky(
    a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """Cholesky factor of a Hermitian positive-definite matrix, read from its lower
    (``lower=True``) or upper triangle: ``L`` with ``a = L L^H`` or ``U`` with
    ``a = U^H U`` (SciPy's default, ``lower=False``)."""
    del overwrite_a, check_finite
    (a,) = _inexact("cholesky", a)
    _square("cholesky", a)
    return _cholesky(a, lower)


def cho_factor(
    a: ArrayLike, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, bool]:
    """``(c, lower)`` for :func:`cho_solve`: the Cholesky factor and its triangle."""
    return cholesky(a, lower, overwrite_a, check_finite), lower


def _cho_solve(c: Any, b: Any, lower: bool) -> Any:
    # L L^H x = b: solve with L then L^H (or U^H then U)
    ts = decomp.triangular_solve
    b = ts(c, b, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    return ts(c, b, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)


def cho_solve(
    c_and_lower: tuple[ArrayLike, bool],
    b: ArrayLike,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """Solve ``a x = b`` from ``cho_factor(a)``; ``b`` is ``(n,)`` or ``(..., n, k)``."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    c, b = _inexact("cho_solve", c, b)
    _square("cho_solve", c)
    c, b, vec = _rhs("cho_solve", c, b)
    x = _cho_solve(c, b, lower)
    return x[..., 0] if vec else x


# --------------------------------------------------------------------------- triangular, LU


def solve_triangular(
    a: ArrayLike,
    b: ArrayLike,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug: Any = None,
    check_finite: bool = True,
) -> Any:
    """Solve ``op(a) x = b`` for triangular ``a``; ``trans`` is ``0``/``'N'`` (``a``),
    ``1``/``'T'`` (``a^T``) or ``2``/``'C'`` (``a^H``)."""
    del overwrite_b, debug, check_finite
    a, b = _inexact("solve_triangular", a, b)
    _square("solve_triangular", a)
    modes = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False)}
    modes.update({2: (True, True), "C": (True, True)})
    if trans not in modes:
        raise ValueError(f"solve_triangular: invalid 'trans' value {trans!r}{here()}")
    transpose_a, conjugate_a = modes[trans]
    a, b, vec = _rhs("solve_triangular", a, b)
    x = decomp.triangular_solve(
        a,
        b,
        left_side=True,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return x[..., 0] if vec else x


def lu(
    a: ArrayLike, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, ...]:
    """LU decomposition ``a = p @ l @ u``: ``(p, l, u)``, or ``(p @ l, u)`` with
    ``permute_l``; ``l`` is unit lower ``m x k`` and ``u`` upper ``k x n``."""
    del overwrite_a, check_finite
    (a,) = _inexact("lu", a)
    if aval(a).ndim < 2:
        raise ValueError(f"lu: expected a matrix, got {fmt(a)}{here()}")
    lu_, _, perm = decomp.lu(a)
    dt = aval(a).dtype
    m, n = aval(a).shape[-2:]
    k = min(m, n)
    p = fnp.equal(perm[..., None, :], fnp.arange(m, dtype=perm.dtype)[:, None]).astype(dt)
    lo = fnp.tril(lu_, -1)[..., :, :k] + fnp.eye(m, k, dtype=dt)
    up = fnp.triu(lu_)[..., :k, :]
    if permute_l:
        return matmul(p, lo), up
    return p, lo, up


def lu_factor(
    a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, Any]:
    """``(lu, piv)`` for :func:`lu_solve`: packed factors and LAPACK-style row swaps."""
    del overwrite_a, check_finite
    (a,) = _inexact("lu_factor", a)
    if aval(a).ndim < 2:
        raise ValueError(f"lu_factor: expected a matrix, got {fmt(a)}{here()}")
    lu_, piv, _ = decomp.lu(a)
    return lu_, piv


def lu_solve(
    lu_and_piv: tuple[Any, ArrayLike],
    b: ArrayLike,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """Solve ``a x = b`` (``trans`` 0), ``a^T x = b`` (1) or ``a^H x = b`` (2) from
    ``lu_factor(a)``."""
    del overwrite_b, check_finite
    lu_, piv = lu_and_piv
    lu_, b = _inexact("lu_solve", lu_, b)
    _square("lu_solve", lu_)
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: 'trans' value must be 0, 1, or 2, got {trans!r}{here()}")
    perm = decomp.lu_pivots_to_permutation(piv, aval(lu_).shape[-1])
    lu_, b, vec = _rhs("lu_solve", lu_, b)
    perm = fnp.broadcast_to(perm, aval(lu_).shape[:-1])
    x = np_linalg._lu_solve(lu_, perm, b, trans)
    return x[..., 0] if vec else x


@functools.cache
def _pos_solve_fn() -> Any:
    def pos_solve(lower: bool, a: Any, b: Any) -> Any:
        return _cho_solve(_cholesky(a, lower), b, lower)

    f = custom_jvp(pos_solve, nondiff_argnums=(0,))

    def jvp(lower: bool, primals: tuple, tangents: tuple) -> tuple:
        # as a symmetric custom linear solve: dx = a^{-1} (db - da x)

        (a, b), (da, db) = primals, tangents
        x = f(lower, a, b)
        rhs = fnp.zeros_like(x) if is_zero(db) else db
        if not is_zero(da):
            rhs = rhs - matmul(da, x)
        return x, f(lower, a, rhs)

    f.defjvp(jvp)
    return f


def solve(
    a: ArrayLike,
    b: ArrayLike,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
) -> Any:
    """Solve ``a x = b``; ``assume_a='pos'`` uses a Cholesky factorisation (of the
    ``lower`` or upper triangle), anything else LU (as JAX)."""
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    a, b = _inexact("solve", a, b)
    _square("solve", a)
    a, b, vec = _rhs("solve", a, b)
    x = _pos_solve_fn()(lower, a, b)
    return x[..., 0] if vec else x


def inv(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Inverse of a (stack of) square matrices."""
    del overwrite_a, check_finite
    return np_linalg.inv(a)


def det(a: ArrayLike, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Determinant of a (stack of) square matrices."""
    del overwrite_a, check_finite
    return np_linalg.det(a)


# --------------------------------------------------------------------------- QR, SVD, eigh


def qr(
    a: ArrayLike,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> tuple[Any, ...]:
    """QR decomposition: ``(q, r)`` for ``mode`` ``'full'``/``'economic'``, ``(r,)`` for
    ``'r'``."""
    del overwrite_a, lwork, check_finite
    if pivoting:
        raise NotImplementedError(f"qr: pivoting=True is not supported{here()}")
    if mode in ("full", "r"):
        full = True
    elif mode == "economic":
        full = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode {mode!r}{here()}")
    (a,) = _inexact("qr", a)
    q, r = lax_linalg.qr(a, full_matrices=full)
    return (r,) if mode == "r" else (q, r)


def qr_multiply(
    a: ArrayLike,
    c: ArrayLike,
    mode: str = "right",
    pivoting: bool = False,
    conjugate: bool = False,
    overwrite_a: bool = False,
    overwrite_c: bool = False,
) -> tuple[Any, Any]:
    """``(Q c, R)`` (``mode="left"``) or ``(c Q, R)`` (``"right"``) with the economic QR
    factors of ``a`` (``conj(Q)`` with ``conjugate``); a 1-D ``c`` is a column (left) or
    a row (right) and the product is raveled. Batch dimensions broadcast."""
    del overwrite_a, overwrite_c
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError(f"qr_multiply: pivoting=True is not supported{here()}")
    a, c = _inexact("qr_multiply", a, c)
    onedim = aval(c).ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = aval(a).shape[-2:]
    k = min(m, n)
    if mode == "left" and aval(c).shape[-2] != k:
        raise ValueError(
            f"Array shapes are not compatible for Q @ c operation: a has shape "
            f"{tuple(aval(a).shape)} so Q has {k} columns, but c has {aval(c).shape[-2]} rows "
            f"(expected {k})."
        )
    if mode == "right" and aval(c).shape[-1] != m:
        raise ValueError(
            f"Array shapes are not compatible for c @ Q operation: a has shape "
            f"{tuple(aval(a).shape)} so Q has {m} rows, but c has {aval(c).shape[-1]} columns "
            f"(expected {m})."
        )
    q, r = lax_linalg.qr(a, full_matrices=False)
    if conjugate:
        q = fnp.conj(q)
    out = matmul(q, c, precision="highest") if mode == "left" else matmul(c, q, precision="highest")
    return (fnp.ravel(out) if onedim else out), r


def eigh_tridiagonal(
    d: ArrayLike,
    e: ArrayLike,
    *,
    eigvals_only: bool = False,
    select: str = "a",
    select_range: tuple[float, float] | None = None,
    tol: float | None = None,
    key: Any = None,
) -> Any:
    """Eigenvalues (ascending) and, without ``eigvals_only``, eigenvectors of the
    Hermitian tridiagonal matrix with diagonal ``real(d)``, superdiagonal ``e`` and
    subdiagonal ``conj(e)``; ``select="i"`` keeps the indices ``select_range[0]`` to
    ``select_range[1]``. Computed through the dense matrix's ``eigh`` (LAPACK), so the
    values are exact to ``eigh``'s accuracy and differentiable."""
    del tol, key
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented yet.")
    if select not in ("a", "i"):
        raise ValueError(f"Unsupported select value {select!r}")
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
    d, e = _inexact("eigh_tridiagonal", d, e)
    if aval(d).ndim != 1 or aval(e).ndim != 1 or aval(e).shape[0] != max(aval(d).shape[0] - 1, 0):
        raise ValueError(
            f"eigh_tridiagonal: d must be 1-D and e one shorter, got {fmt(d)} and {fmt(e)}{here()}"
        )
    n = aval(d).shape[0]
    t = fnp.diag(fnp.real(d)).astype(aval(d).dtype)
    if n > 1:
        t = t + fnp.diag(e, 1) + fnp.diag(fnp.conj(e), -1)
    w, v = np_linalg.eigh(t)
    if select == "i":
        lo, hi = int(select_range[0]), int(select_range[1]) + 1
        w, v = w[lo:hi], v[:, lo:hi]
    return w if eigvals_only else (w, v)


def svd(
    a: ArrayLike,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    """Singular value decomposition: ``(u, s, vh)``, or ``s`` without ``compute_uv``."""
    del overwrite_a, check_finite, lapack_driver
    (a,) = _inexact("svd", a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(
    a: ArrayLike,
    b: ArrayLike | None = None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    turbo: bool = True,
    eigvals: None = None,
    type: int = 1,
    check_finite: bool = True,
) -> Any:
    """Eigenvalues (ascending) and eigenvectors ``(w, v)`` of a Hermitian matrix (``w``
    alone with ``eigvals_only``). Only the standard problem (``b=None``) is supported."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError(f"eigh: only the b=None case is implemented{here()}")
    if type != 1:
        raise NotImplementedError(f"eigh: only the type=1 case is implemented{here()}")
    if eigvals is not None:
        raise NotImplementedError(f"eigh: only the eigvals=None case is implemented{here()}")
    (a,) = _inexact("eigh", a)
    _square("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


# --------------------------------------------------------------------------- expm

# Padé approximant of degree 13 (Higham, "The scaling and squaring method for the
# matrix exponential revisited", 2005): coefficients b_0..b_13 and its norm bound
_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


def expm(A: ArrayLike, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """Matrix exponential by scaling and squaring with a degree-13 Padé approximant.

    ``A`` is scaled by ``2**-s`` so its 1-norm is at most Higham's bound, the
    approximant ``q(A)^{-1} p(A)`` is squared back ``s`` times; ``s > max_squarings``
    gives NaNs, as in JAX. The number of squarings is chosen from ``A``'s value (not
    differentiated); everything else is differentiable.
    """
    (A,) = _inexact("expm", A)
    if aval(A).ndim < 2 or aval(A).shape[-1] != aval(A).shape[-2]:
        raise ValueError(f"expm: expected A to be a (batched) square matrix, got {fmt(A)}{here()}")
    dt = aval(A).dtype
    n = aval(A).shape[-1]
    norm1 = fnp.max(fnp.sum(fnp.abs(stop_gradient(A)), axis=-2), axis=-1)
    s = fnp.maximum(0.0, fnp.ceil(fnp.log2(norm1 / _THETA13)))
    s = fnp.where(norm1 == 0, 0.0, s)
    A = A / (2.0**s).astype(dt)[..., None, None]
    b = _PADE13
    eye = fnp.broadcast_to(fnp.eye(n, dtype=dt), aval(A).shape)
    a2 = matmul(A, A)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    u = matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
    u = matmul(A, u + b[3] * a2 + b[1] * eye)
    v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4
    v = v + b[2] * a2 + b[0] * eye
    p, q = v + u, v - u
    r = solve_triangular(q, p) if upper_triangular else np_linalg.solve(q, p)

    def square(r: Any, i: Any) -> tuple[Any, None]:
        keep = (i < s)[..., None, None]
        return fnp.where(keep, matmul(r, r), r), None

    r, _ = scan(square, r, fnp.arange(max_squarings, dtype=s.dtype))
    return fnp.where((s > max_squarings)[..., None, None], np.nan, r).astype(dt)


def block_diag(*arrs: ArrayLike) -> Any:
    """Block-diagonal matrix of the given arrays (0-d and 1-d arrays are 1 x n blocks)."""
    if not arrs:
        return fnp.zeros((1, 0))
    arrs = tuple(promote("block_diag", *arrs))
    blocks = [fnp.atleast_2d(x) for x in arrs]
    for x in blocks:
        if aval(x).ndim != 2:
            raise ValueError(
                f"block_diag: arguments must have dimension <= 2, got {fmt(x)}{here()}"
            )
    cols = sum(aval(x).shape[1] for x in blocks)
    rows, acc = [], 0
    for x in blocks:
        _, c = aval(x).shape
        rows.append(fnp.pad(x, ((0, 0), (acc, cols - acc - c))))
        acc += c
    return fnp.concatenate(rows, axis=0)


# ------------------------------------------------------------- polar, expm_frechet


def polar(
    a: ArrayLike,
    side: str = "right",
    *,
    method: str = "qdwh",
    eps: float | None = None,
    max_iterations: int | None = None,
) -> tuple[Any, Any]:
    """Polar decomposition ``a = u @ p`` (``side='right'``) or ``a = p @ u`` (``'left'``).

    ``u`` has orthonormal columns and ``p`` is Hermitian positive semi-definite. Both
    methods are computed from the thin SVD ``a = w s vh`` (``u = w vh``), so every
    ``method`` gives the same values up to rounding.
    """
    del eps, max_iterations
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}{here()}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}{here()}")
    (a,) = _inexact("polar", a)
    if aval(a).ndim < 2:
        raise ValueError(f"polar: a must be a (batched) matrix, got {fmt(a)}{here()}")
    w, s, vh = lax_linalg.svd(a, full_matrices=False, compute_uv=True)
    u = matmul(w, vh)
    s = s.astype(aval(a).dtype)
    if side == "right":
        p = matmul(_H(vh) * s[..., None, :], vh)
    else:
        p = matmul(w * s[..., None, :], _H(w))
    return u, p


def expm_frechet(
    A: ArrayLike, E: ArrayLike, *, method: str | None = None, compute_expm: bool = True
) -> Any:
    """Fréchet derivative of ``expm`` at ``A`` in direction ``E`` (with ``expm(A)`` first
    when ``compute_expm``), read off the exponential of the block matrix
    ``[[A, E], [0, A]]``."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: unknown method {method!r}{here()}")
    A, E = _inexact("expm_frechet", A, E)
    if aval(A).ndim != 2 or aval(A).shape[0] != aval(A).shape[1]:
        raise ValueError(f"expm_frechet: expected A to be a square matrix, got {fmt(A)}{here()}")
    if aval(E).shape != aval(A).shape:
        raise ValueError(
            f"expm_frechet: expected E to have A's shape, got {fmt(A)} and {fmt(E)}{here()}"
        )
    n = aval(A).shape[0]
    top = fnp.concatenate([A, E], axis=1)
    bottom = fnp.concatenate([fnp.zeros_like(A), A], axis=1)
    big = expm(fnp.concatenate([top, bottom], axis=0))
    frechet = big[:n, n:]
    return (big[:n, :n], frechet) if compute_expm else frechet


from funcgrad.scipy._special_matrices import (  # noqa: E402  (SciPy's constructors)
    circulant,
    companion,
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    hankel,
    helmert,
    hilbert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
    toeplitz,
)
