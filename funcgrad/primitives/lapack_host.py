"""The host tier's decompositions (:mod:`funcgrad.core.host`): the LAPACK routines the
compiled tier calls on a CPU (XLA's CPU kernels take them from SciPy), one matrix at a
time over the batch dimensions, with the same conventions: the same routine and
workspace query, NaN results where LAPACK reports a failure, LU pivots 0-based. The
primitives (:mod:`funcgrad.primitives.decomp`) register these as their host rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.finfo(dtype).dtype)


def _lapack(name: str, dtype: np.dtype) -> Any:
    """SciPy's wrapper of LAPACK's ``?name`` for ``dtype`` (SciPy imported on first use)."""
    from scipy.linalg import get_lapack_funcs

    return get_lapack_funcs(name, dtype=dtype)


def _lwork(name: str, dtype: np.dtype, *args: Any, **kw: Any) -> int:
    """The optimal workspace size of ``?name`` (LAPACK's query, as XLA's kernels make)."""
    work = _lapack(name + "_lwork", dtype)(*args, **kw)[0]
    return max(1, int(np.real(work)))


def _matrices(x: np.ndarray) -> Any:
    """The batch indices of a stack of matrices (one empty index for a single matrix)."""
    return np.ndindex(x.shape[:-2])


def _cholesky_host(a: Any) -> np.ndarray:
    """``potrf`` on the lower triangle (the upper is not read), the upper triangle zero;
    a matrix that is not positive definite gives NaN in its lower triangle."""
    a = np.asarray(a)
    out = np.zeros_like(a)
    if a.size == 0:
        return out
    potrf = _lapack("potrf", a.dtype)
    nan_lower = np.tril(np.full(a.shape[-2:], np.nan, a.dtype))
    for i in _matrices(a):
        c, info = potrf(a[i], lower=1, clean=1)
        out[i] = c if info == 0 else nan_lower
    return out


def _triangular_solve_host(a: Any, b: Any, **p: Any) -> np.ndarray:
    """BLAS ``trsm`` per matrix (XLA's CPU kernel): ``conjugate_a`` without
    ``transpose_a`` solves with ``conj(a)``; a zero diagonal gives infinities, not an error."""
    from scipy.linalg import get_blas_funcs

    a, b = np.asarray(a), np.asarray(b)
    if b.size == 0:
        return b.copy()
    if p["conjugate_a"] and not p["transpose_a"] and a.dtype.kind == "c":
        a = np.conjugate(a)
    trans = (2 if p["conjugate_a"] else 1) if p["transpose_a"] else 0
    trsm = get_blas_funcs("trsm", dtype=b.dtype)
    out = np.empty_like(b)
    kw = dict(
        side=0 if p["left_side"] else 1,
        lower=int(p["lower"]),
        trans_a=trans,
        diag=int(p["unit_diagonal"]),
    )
    for i in _matrices(b):
        out[i] = trsm(1.0, a[i], b[i], **kw)
    return out


def _pivots_host(pivots: Any, *, permutation_size: int) -> np.ndarray:
    """The row swaps applied in order to ``arange(permutation_size)``, vectorised over
    the batch: as the compiled loop, a negative pivot counts from the end, a pivot out of
    range reads the nearest row and writes nowhere."""
    piv = np.asarray(pivots)
    m, k = permutation_size, piv.shape[-1]
    batch = piv.shape[:-1]
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), (*batch, m)).copy()
    if m == 0 or k == 0:
        return perm
    flat = perm.reshape(-1, m)
    swaps = piv.reshape(-1, k).astype(np.int64)
    rows = np.arange(flat.shape[0])
    for i in range(k):
        j = swaps[:, i]
        j = np.where(j < 0, j + m, j)
        here = flat[:, i].copy()
        flat[:, i] = flat[rows, np.clip(j, 0, m - 1)]
        inside = (j >= 0) & (j < m)
        flat[rows[inside], j[inside]] = here[inside]
    return perm


def _lu_host(a: Any) -> list:
    """``getrf`` per matrix: the packed factors, 0-based pivots and the permutation."""
    a = np.asarray(a)
    *batch, m, n = a.shape
    k = min(m, n)
    lu = a.copy()
    piv = np.zeros((*batch, k), np.int32)
    if a.size:
        getrf = _lapack("getrf", a.dtype)
        for i in _matrices(a):
            f, p, info = getrf(a[i])
            lu[i] = f if info >= 0 else np.nan
            piv[i] = p
    return [lu, piv, _pivots_host(piv, permutation_size=m)]


def _qr_host(a: Any, *, full_matrices: bool) -> list:
    """``geqrf`` then ``orgqr``/``ungqr`` per matrix, as XLA's lowering: for ``m < n`` the
    first ``m`` columns make ``q``; a full ``q`` of a tall matrix is the reflectors
    padded with zero columns to ``m x m``; ``r`` is the upper triangle."""
    a = np.asarray(a)
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    q = np.zeros((*batch, m, k), a.dtype)
    r = np.zeros((*batch, k, n), a.dtype)
    if m == 0 or n == 0:
        q[...] = np.eye(m, k, dtype=a.dtype)
        return [q, r]
    geqrf = _lapack("geqrf", a.dtype)
    orgqr = _lapack("ungqr" if a.dtype.kind == "c" else "orgqr", a.dtype)
    lw = _lwork("geqrf", a.dtype, m, n)
    for i in _matrices(a):
        f, tau, _, _ = geqrf(a[i], lwork=lw)
        if m < n:
            reflectors = f[:, :m]
        elif full_matrices and m > n:
            reflectors = np.concatenate([f, np.zeros((m, m - n), a.dtype)], axis=1)
        else:
            reflectors = f
        width = reflectors.shape[1]
        q[i] = orgqr(reflectors, tau, lwork=max(1, width * 64))[0]
        r[i] = np.triu(f[:k] if k < m else f)
    return [q, r]


def _eigh_host(a: Any, *, lower: bool) -> list:
    """``syevd``/``heevd`` per matrix on the ``lower`` (or upper) triangle: eigenvectors
    as columns, eigenvalues ascending; NaN for a matrix LAPACK fails on."""
    a = np.asarray(a)
    v = np.empty_like(a)
    w = np.empty(a.shape[:-1], _real_dtype(a.dtype))
    if a.size == 0:
        return [v, w]
    evd = _lapack("heevd" if a.dtype.kind == "c" else "syevd", a.dtype)
    for i in _matrices(a):
        wi, vi, info = evd(a[i], compute_v=1, lower=int(lower))
        if info != 0:
            wi, vi = np.nan, np.nan
        v[i], w[i] = vi, wi
    return [v, w]


def _svd_host(a: Any, *, full_matrices: bool, compute_uv: bool) -> list:
    """``gesdd`` per matrix, with LAPACK's optimal workspace (which picks its path);
    ``[s, u, vt]``, NaN for a matrix LAPACK fails on; empty matrices as XLA's lowering
    (``u``/``vt`` identities when full, zeros otherwise)."""
    a = np.asarray(a)
    *batch, m, n = a.shape
    k = min(m, n)
    s = np.empty((*batch, k), _real_dtype(a.dtype))
    ku, kv = (m, n) if full_matrices else (k, k)
    u = np.zeros((*batch, m, ku), a.dtype)
    vt = np.zeros((*batch, kv, n), a.dtype)
    if m == 0 or n == 0:
        if full_matrices:
            u[...] = np.eye(m, dtype=a.dtype)
            vt[...] = np.eye(n, dtype=a.dtype)
        return [s, u, vt] if compute_uv else [s]
    gesdd = _lapack("gesdd", a.dtype)
    kw = dict(compute_uv=int(compute_uv), full_matrices=int(full_matrices))
    lw = _lwork("gesdd", a.dtype, m, n, **kw)
    for i in _matrices(a):
        ui, si, vti, info = gesdd(a[i], lwork=lw, **kw)
        if info != 0:
            s[i] = u[i] = vt[i] = np.nan
            continue
        s[i] = si
        if compute_uv:
            u[i], vt[i] = ui, vti
    return [s, u, vt] if compute_uv else [s]
