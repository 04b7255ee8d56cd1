"""Householder QR in LAPACK's compact form, as composites of ``funcgrad.numpy`` ops.

``geqrf`` (LAPACK's ``xGEQRF``: ``R`` on and above the diagonal, the reflectors'
vectors below it, and their scalar factors ``taus``), ``householder_product``
(``xORGQR``/``xUNGQR``: the first ``n`` columns of ``Q = H_1 ... H_k``) and ``ormqr``
(``xORMQR``/``xUNMQR``: ``Q`` applied to a matrix without forming it), with
``H_i = I - tau_i v_i v_i^H`` and ``v_i = (0, ..., 0, 1, a[i+1:, i])``.

They loop over the ``k`` reflectors in Python (one small traced step each), so they
batch, compile and differentiate like any composite; they are meant for the small and
medium matrices that PyTorch code passes to these functions. ``geqrf`` follows
``xLARFG``'s sign choice (``beta = -sign(Re alpha) * ||(alpha, x)||``) without its
rescaling of tiny columns.
"""

from __future__ import annotations

from typing import Any

from funcgrad.numpy import _creation, _linalg, _reductions, _shape, _ufuncs
from funcgrad.numpy._core import aval


def _is_complex(x: Any) -> bool:
    return aval(x).dtype.kind == "c"


def _conj(x: Any) -> Any:
    return _ufuncs.conj(x) if _is_complex(x) else x


def _reflector(a: Any, i: int) -> Any:
    """``v_i`` (``[..., m]``): 0 above row ``i``, 1 at it, ``a[i+1:, i]`` below."""
    m = aval(a).shape[-2]
    rows = _creation.arange(m)
    col = a[..., :, i]
    below = _ufuncs.where(rows > i, col, _creation.zeros_like(col))
    return below + (rows == i).astype(aval(a).dtype)


def _apply_left(v: Any, tau: Any, c: Any) -> Any:
    """``(I - tau v v^H) c`` for ``v`` ``[..., m]``, ``tau`` ``[...]``, ``c`` ``[..., m, p]``."""
    w = _linalg.matmul(_conj(v)[..., None, :], c)  # v^H c: [..., 1, p]
    return c - tau[..., None, None] * v[..., :, None] * w


def _apply_right(v: Any, tau: Any, c: Any) -> Any:
    """``c (I - tau v v^H)`` for ``c`` ``[..., p, m]``."""
    w = _linalg.matmul(c, v[..., :, None])  # c v: [..., p, 1]
    return c - tau[..., None, None] * w * _conj(v)[..., None, :]


def geqrf(a: Any) -> tuple[Any, Any]:
    """LAPACK's compact Householder QR of ``a`` (``[..., m, n]``): ``(a', taus)``."""
    a = _creation.asarray(a)
    m, n = aval(a).shape[-2:]
    dt = aval(a).dtype
    rows = _creation.arange(m)
    taus = []
    for i in range(min(m, n)):
        col = a[..., :, i]
        alpha = col[..., i]
        tail = _ufuncs.where(rows > i, col, _creation.zeros_like(col))
        xnorm2 = _reductions.sum(_ufuncs.real(tail * _conj(tail)), axis=-1)
        ar = _ufuncs.real(alpha)
        ai = _ufuncs.imag(alpha) if _is_complex(a) else _creation.zeros_like(ar)
        trivial = (xnorm2 == 0) & (ai == 0)
        norm = _ufuncs.sqrt(ar * ar + ai * ai + xnorm2)
        beta = _ufuncs.where(ar >= 0, -norm, norm)
        safe_beta = _ufuncs.where(trivial, _creation.ones_like(beta), beta)
        tau = ((safe_beta - ar) / safe_beta).astype(dt)
        if _is_complex(a):
            tau = tau - 1j * (ai / safe_beta).astype(dt)
        tau = _ufuncs.where(trivial, _creation.zeros_like(tau), tau)
        scale = _ufuncs.where(trivial, _creation.ones_like(alpha), alpha - safe_beta.astype(dt))
        new_col = tail / scale[..., None] + _ufuncs.where(
            rows == i, _ufuncs.where(trivial, alpha, beta.astype(dt))[..., None], 0
        ).astype(dt)
        new_col = new_col + _ufuncs.where(rows < i, col, _creation.zeros_like(col))
        a = a.at[..., :, i].set(new_col)
        if i + 1 < n:
            v = _reflector(a, i)
            a = a.at[..., :, i + 1 :].set(_apply_left(v, _conj(tau), a[..., :, i + 1 :]))
        taus.append(tau)
    if not taus:
        return a, _creation.zeros((*aval(a).shape[:-2], 0), dt)
    return a, _shape.stack(taus, axis=-1)


def householder_product(a: Any, taus: Any) -> Any:
    """The first ``n`` columns of ``H_1 ... H_k`` (``a``: ``[..., m, n]``, ``taus``:
    ``[..., k]``, ``k <= n <= m``)."""
    m, n = aval(a).shape[-2:]
    k = aval(taus).shape[-1]
    eye = _creation.eye(m, n, dtype=aval(a).dtype)
    q = _shape.broadcast_to(eye, (*aval(a).shape[:-2], m, n))
    for i in reversed(range(k)):
        q = _apply_left(_reflector(a, i), taus[..., i], q)
    return q


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``op(Q) c`` (``left``) or ``c op(Q)``, ``op`` the conjugate transpose when
    ``transpose``, for ``Q = H_1 ... H_k`` of size ``m x m`` (``m``: ``a``'s rows)."""
    k = aval(taus).shape[-1]
    order = range(k) if left == transpose else reversed(range(k))
    for i in order:
        tau = taus[..., i]
        tau = _conj(tau) if transpose else tau
        v = _reflector(a, i)
        c = _apply_left(v, tau, c) if left else _apply_right(v, tau, c)
    return c
