"""``scipy.linalg``'s functions built on the Schur and Hessenberg forms: ``schur``,
``rsf2csf``, ``sqrtm``, ``funm``, ``solve_sylvester`` and ``hessenberg``, over
funcgrad's ``schur``/``hessenberg`` primitives (LAPACK's ``gees``/``gehrd``: CPU only,
as in JAX).

The triangular recurrences (Björck and Hammarling's square root, Parlett's recurrence
for ``funm``, Bartels and Stewart's back substitution for Sylvester's equation) fill
one superdiagonal (or anti-diagonal) per step: every entry of a step depends only on
entries of earlier steps, so a step is a pair of matrix products and a masked update,
and the loop is a ``fori_loop`` whose body does not grow with the matrix. The Schur
form itself has no derivative (as in JAX), so neither have these functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.control_flow import fori_loop
from funcgrad.lax import _structural as lax_structural
from funcgrad.lax import linalg as lax_linalg
from funcgrad.numpy import linalg as np_linalg
from funcgrad.numpy._core import ArrayLike, aval, fmt, here
from funcgrad.scipy._special_matrices import _inexact

_HIGHEST = "highest"


def _square2d(name: str, a: Any) -> None:
    shape = aval(a).shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name}: expected a square matrix, got {fmt(a)}{here()}")


def _square_stack(name: str, what: str, a: Any) -> None:
    shape = aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Input '{what}' must be square.")


def _complex(x: Any) -> Any:
    dt = aval(x).dtype
    return x if dt.kind == "c" else x.astype(np.result_type(dt, np.complex64))


def _H(x: Any) -> Any:
    return fnp.conj(fnp.swapaxes(x, -1, -2))


def _mm(a: Any, b: Any) -> Any:
    return fnp.matmul(a, b, precision=_HIGHEST)


def _offsets(n: int) -> Any:
    """``j - i`` for each entry ``(i, j)`` of an ``n x n`` matrix."""
    return np.arange(n)[None, :] - np.arange(n)[:, None]


def schur(a: ArrayLike, output: str = "real") -> tuple[Any, Any]:
    """Schur decomposition ``a = Z T Z^H``: ``(T, Z)``, ``T`` upper triangular
    (``output="complex"``) or quasi upper triangular with 2 x 2 blocks for conjugate
    pairs (``"real"``, for a real ``a``)."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    (a,) = _inexact("schur", a)
    if output == "complex":
        a = _complex(a)
    t, z = lax_linalg.schur(a)
    return t, z


def _rsf2csf_2d(t: Any, z: Any) -> tuple[Any, Any]:
    """SciPy's rsf2csf on one pair: from the bottom, each nonnegligible subdiagonal entry
    ``T[m, m-1]`` is rotated away by the Givens rotation built from the first eigenvalue
    (LAPACK's order) of the 2 x 2 block it sits in."""
    n = aval(t).shape[-1]
    if n == 1:
        return t, z
    eps = float(np.finfo(aval(t).dtype).eps)
    cols = np.arange(n)
    rows = np.arange(n)[:, None]

    def step(i: Any, tz: tuple) -> tuple:
        t, z = tz
        m = n - i
        blk = lax_structural.dynamic_slice(t, (m - 1, m - 1), (2, 2))
        sub = blk[1, 0]
        rotate = fnp.abs(sub) > eps * (fnp.abs(blk[0, 0]) + fnp.abs(blk[1, 1]))
        mu = np_linalg.eigvals(blk)[0] - blk[1, 1]
        r = fnp.sqrt(fnp.abs(mu) ** 2 + fnp.abs(sub) ** 2).astype(aval(t).dtype)
        c = fnp.where(rotate, mu / r, 1.0)
        s = fnp.where(rotate, sub / r, 0.0)
        g = fnp.stack([fnp.stack([fnp.conj(c), s]), fnp.stack([-s, c])])
        # rows m-1, m from column m-1 on
        t_rows = lax_structural.dynamic_slice(t, (m - 1, 0), (2, n))
        t_rows = fnp.where(cols >= m - 1, _mm(g, t_rows), t_rows)
        t = lax_structural.dynamic_update_slice(t, t_rows, (m - 1, 0))
        # columns m-1, m down to row m
        t_cols = lax_structural.dynamic_slice(t, (0, m - 1), (n, 2))
        t_cols = fnp.where(rows <= m, _mm(t_cols, _H(g)), t_cols)
        t = lax_structural.dynamic_update_slice(t, t_cols, (0, m - 1))
        z_cols = _mm(lax_structural.dynamic_slice(z, (0, m - 1), (n, 2)), _H(g))
        z = lax_structural.dynamic_update_slice(z, z_cols, (0, m - 1))
        t = fnp.where((rows == m) & (cols == m - 1), 0.0, t)
        return t, z

    return fori_loop(1, n, step, (t, z))


def rsf2csf(T: ArrayLike, Z: ArrayLike, check_finite: bool = True) -> tuple[Any, Any]:
    """The complex Schur form ``(T, Z)`` from a real one (SciPy's Givens sweep); batch
    dimensions of ``T`` and ``Z`` broadcast."""
    del check_finite
    t, z = _inexact("rsf2csf", T, Z)
    _square_stack("rsf2csf", "T", t)
    _square_stack("rsf2csf", "Z", z)
    if aval(t).shape[-1] != aval(z).shape[-1]:
        raise ValueError(
            f"Input array shapes must match: Z: {aval(z).shape} vs. T: {aval(t).shape}"
        )
    t, z = _complex(t), _complex(z)
    return fnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


def _sqrtm_triu(t: Any) -> Any:
    """The upper triangular square root of an upper triangular ``t`` (Björck and
    Hammarling), one superdiagonal per step; ``0`` where the numerator is exactly zero."""
    n = aval(t).shape[-1]
    d = fnp.sqrt(fnp.diagonal(t))
    u0 = fnp.diag(d)
    denom = d[:, None] + d[None, :]
    off = _offsets(n)

    def step(k: Any, u: Any) -> Any:
        strict = fnp.where(off > 0, u, 0.0)
        s = _mm(strict, strict)
        val = fnp.where(t == s, 0.0, (t - s) / denom)
        return fnp.where(off == k, val, u)

    return fori_loop(1, n, step, u0)


def sqrtm(A: ArrayLike, blocksize: int = 1) -> Any:
    """The principal square root of a square matrix (complex Schur method, Björck and
    Hammarling 1983); complex, as in JAX. ``blocksize > 1`` is not implemented."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    (a,) = _inexact("sqrtm", A)
    _square2d("sqrtm", a)
    t, z = schur(a, output="complex")
    return _mm(_mm(z, _sqrtm_triu(t)), _H(z))


def _parlett(f: Any, t: Any) -> tuple[Any, Any]:
    """Parlett's recurrence (Golub and Van Loan, Algorithm 11.1.1): the upper triangle of
    ``f(T)`` from its diagonal ``f``, one superdiagonal per step; and the smallest
    eigenvalue gap met (``|T[0, 0]|`` at most), for the error estimate."""
    n = aval(t).shape[-1]
    off = _offsets(n)
    tdiag = fnp.diagonal(t)
    den = tdiag[None, :] - tdiag[:, None]
    t_strict = fnp.where(off > 0, t, 0.0)

    def step(k: Any, carry: tuple) -> tuple:
        f, minden = carry
        f_strict = fnp.where(off > 0, f, 0.0)
        fd = fnp.diagonal(f)
        s = t * (fd[None, :] - fd[:, None]) + _mm(t_strict, f_strict) - _mm(f_strict, t_strict)
        val = fnp.where(den != 0, s / den, s)
        on = off == k
        gap = fnp.min(fnp.where(on, fnp.abs(den), fnp.inf))
        return fnp.where(on, val, f), fnp.minimum(minden, gap)

    return fori_loop(1, n, step, (f, fnp.abs(t[0, 0])))


def funm(A: ArrayLike, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """``func`` applied to a square matrix through its complex Schur form (Parlett's
    recurrence); complex, as in JAX. With ``disp=False``, ``(F, err)``: SciPy's estimate
    of the relative error."""
    a = fnp.asarray(A)
    if aval(a).ndim != 2 or aval(a).shape[0] != aval(a).shape[1]:
        raise ValueError("expected square array_like input")
    t, z = rsf2csf(*schur(a))
    f = fnp.diag(func(fnp.diagonal(t))).astype(aval(t).dtype)
    f, minden = _parlett(f, t)
    f = _mm(_mm(z, f), _H(z))
    if disp:
        return f
    tol = float(np.finfo(np.float32 if aval(f).dtype == np.complex64 else np.float64).eps)
    minden = fnp.where(minden == 0.0, tol, minden)
    spread = np_linalg.norm(fnp.triu(t, 1), 1)
    err = fnp.minimum(1, fnp.maximum(tol, (tol / minden) * spread))
    return f, fnp.where(fnp.any(fnp.isinf(f)), np.inf, err)


def _triangular_sylvester(r: Any, l_: Any, f: Any) -> Any:
    """``Y`` with ``R Y + Y L = F`` for upper triangular ``R`` (``m x m``) and lower
    triangular ``L`` (``n x n``), by anti-diagonals from the bottom-right corner (each
    entry needs only those below it and to its right)."""
    m, n = aval(f).shape[-2:]
    level = (m - 1 - np.arange(m))[:, None] + (n - 1 - np.arange(n))[None, :]
    r_strict = fnp.triu(r, 1)
    l_strict = fnp.tril(l_, -1)
    den = fnp.diagonal(r, axis1=-2, axis2=-1)[..., :, None]
    den = den + fnp.diagonal(l_, axis1=-2, axis2=-1)[..., None, :]

    def step(k: Any, y: Any) -> Any:
        val = (f - _mm(r_strict, y) - _mm(y, l_strict)) / den
        return fnp.where(level == k, val, y)

    return fori_loop(0, m + n - 1, step, fnp.zeros_like(f))


def solve_sylvester(
    A: ArrayLike, B: ArrayLike, C: ArrayLike, *, method: str = "schur", tol: float = 1e-8
) -> Any:
    """``X`` with ``A X + X B = C`` (batch dimensions broadcast): Bartels and Stewart's
    Schur method (default) or an eigendecomposition (``"eigen"``); NaN where an
    eigenvalue of ``A`` plus one of ``B`` is within ``tol`` of zero."""
    if method not in ("schur", "eigen"):
        raise ValueError(
            f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".'
        )
    a, b, c = _inexact("solve_sylvester", A, B, C)
    for name, x in (("A", a), ("B", b)):
        _square_stack("solve_sylvester", name, x)
    m, n = aval(a).shape[-1], aval(b).shape[-1]
    if aval(c).ndim < 2 or aval(c).shape[-2:] != (m, n):
        raise ValueError(
            f"solve_sylvester: C must have shape (..., {m}, {n}) for A {fmt(a)} and "
            f"B {fmt(b)}, got {fmt(c)}{here()}"
        )
    batch = np.broadcast_shapes(aval(a).shape[:-2], aval(b).shape[:-2], aval(c).shape[:-2])
    a = fnp.broadcast_to(a, (*batch, m, m))
    b = fnp.broadcast_to(b, (*batch, n, n))
    c = fnp.broadcast_to(c, (*batch, m, n))
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(_H(b), output="complex")
        y = _triangular_sylvester(r, _H(s), _mm(_mm(_H(u), _complex(c)), v))
        x = _mm(_mm(u, y), _H(v))
        wa = fnp.diagonal(r, axis1=-2, axis2=-1)
        wb = fnp.conj(fnp.diagonal(s, axis1=-2, axis2=-1))
    else:
        wa, ua = np_linalg.eig(a)
        wb, ub = np_linalg.eig(b)
        f = np_linalg.solve(ua, _mm(_complex(c), ub))
        y = f / (wa[..., :, None] + wb[..., None, :])
        x = _mm(_mm(ua, y), np_linalg.inv(ub))
    if aval(c).dtype.kind != "c":
        x = fnp.real(x)
    close = fnp.any(fnp.abs(wa[..., :, None] + wb[..., None, :]) < tol, axis=(-2, -1))
    return fnp.where(close[..., None, None], np.nan, x)


def hessenberg(
    a: ArrayLike, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """The upper Hessenberg form ``H`` of ``a`` (``a = Q H Q^H``), and ``Q`` with
    ``calc_q=True``."""
    del overwrite_a, check_finite
    (a,) = _inexact("hessenberg", a)
    _square_stack("hessenberg", "a", a)
    n = aval(a).shape[-1]
    if n == 0:
        return (fnp.zeros_like(a), fnp.zeros_like(a)) if calc_q else fnp.zeros_like(a)
    packed, taus = lax_linalg.hessenberg(a)
    h = fnp.triu(packed, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(packed[..., 1:, :-1], taus)
    batch = aval(a).shape[:-2]
    pad = [(0, 0)] * len(batch) + [(1, 0), (1, 0)]
    q = fnp.pad(q, pad)
    corner = np.zeros((n, n), dtype=bool)
    corner[0, 0] = True
    return h, fnp.where(corner, 1.0, q).astype(aval(a).dtype)
