"""The general (non-symmetric) eigendecomposition ``eig`` as a primitive, lowered to
``jax.lax.linalg.eig`` (CPU only, as in JAX).

Outputs are ``[w, vl?, vr?]``: complex eigenvalues, then the left and right eigenvectors
that ``compute_left_eigenvectors`` / ``compute_right_eigenvectors`` ask for, always of
the complex dtype of the operand's precision. LAPACK's ``geev`` normalises each
eigenvector to unit 2-norm with a real largest-magnitude component.

Derivatives (JAX's rules, written with ``funcgrad.numpy`` so they transform again):

* eigenvalues: ``dw = diag(V^{-1} dA V)`` (distinct eigenvalues assumed);
* eigenvectors, only with ``enable_eigvec_derivs=True`` (as in JAX, since the result is
  valid only for distinct eigenvalues and a unique largest-magnitude component):
  ``dV = V (F o V^{-1} dA V) + V diag(c)`` where ``c`` keeps ``geev``'s normalisation;
  left eigenvectors are right eigenvectors of ``A^H`` with eigenvalues ``conj(w)``.
* the VJP is the exact (real-linear) adjoint of that JVP; for a real operand the
  cotangent is its real part.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax import lax

from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import reductions as red
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.decomp import (
    FAMILY,
    _perm_matrix,
    lu_p,
    triangular_solve,
)
from funcgrad.primitives.matrix_rules import (
    _H,
    _as,
    _check_matrix,
    _conj,
    _ct,
    _diag,
    _embed,
    _eye,
    _mm,
    _pairing_adjoint,
    _real,
)
from funcgrad.primitives.rules import rand

_PARAMS = ("compute_left_eigenvectors", "compute_right_eigenvectors", "enable_eigvec_derivs")

eig_p = Primitive("eig", family=FAMILY, multiple_results=True)


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


@eig_p.def_abstract_eval
def _eig_abstract_eval(
    a: Aval,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
) -> list[Aval]:
    _check_matrix("eig", a)
    ct = _complex_dtype(a.dtype)
    outs = [Aval(a.shape[:-1], ct)]
    outs += [Aval(a.shape, ct)] * (int(compute_left_eigenvectors) + int(compute_right_eigenvectors))
    return outs


def _eig_lower(
    a: Any,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
) -> list:
    del enable_eigvec_derivs
    return list(
        lax.linalg.eig(
            a,
            compute_left_eigenvectors=compute_left_eigenvectors,
            compute_right_eigenvectors=compute_right_eigenvectors,
        )
    )


eig_p.lower = _eig_lower


def _check_vec_derivs(p: dict) -> None:
    if (p["compute_left_eigenvectors"] or p["compute_right_eigenvectors"]) and not p[
        "enable_eigvec_derivs"
    ]:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that funcgrad cannot check (distinct eigenvalues, a unique "
            "largest-magnitude component per eigenvector). Pass enable_eigvec_derivs=True "
            "to funcgrad.lax.linalg.eig to opt in."
        )


def _gaps(w: Any) -> Any:
    """``F_ij = 1 / (w_j - w_i)`` off the diagonal, ``0`` on it (complex ``w``)."""
    n = to_aval(w).shape[-1]
    eye = _eye(n, dtype=to_aval(w).dtype)
    return 1.0 / (eye + w[..., None, :] - w[..., :, None]) - eye


def _argmax_mask(v: Any) -> Any:
    """One-hot (per column) of each eigenvector's largest-magnitude component."""
    *batch, n, m = to_aval(v).shape
    k = red.argmax(ew.abs(v), axis=len(batch), index_dtype=np.int32)  # (*batch, m)
    rows = sh.broadcast_in_dim(np.arange(n, dtype=np.int32), (*batch, n, m), (len(batch),))
    best = sh.broadcast_in_dim(k, (*batch, n, m), (*range(len(batch)), len(batch) + 1))
    return _as(ew.eq(rows, best), to_aval(v).dtype)


def _vec_tangent(w: Any, v: Any, p_mat: Any) -> tuple[Any, Any]:
    """``(dw, dv)`` from ``P = V^{-1} dA V`` under ``geev``'s normalisation."""
    u = _mm(v, _gaps(w) * p_mat)
    mask = _argmax_mask(v)
    re = -_real(_col_sum(_conj(v) * u))
    im = -ew.imag(_col_sum(mask * u)) / _real(_col_sum(mask * v))
    c = _as(re, to_aval(v).dtype) + 1j * _as(im, to_aval(v).dtype)
    return _diag(p_mat), u + v * c[..., None, :]


def _vec_adjoint(w: Any, v: Any, gv: Any) -> Any:
    """Hermitian adjoint of ``P -> dv`` of :func:`_vec_tangent` (``P``'s cotangent)."""
    dt = to_aval(v).dtype
    gc = _col_sum(_conj(v) * gv)
    mask = _argmax_mask(v)
    r = _real(_col_sum(mask * v))
    gu = gv - v * _as(_real(gc), dt)[..., None, :]
    gu = gu - 1j * mask * _as(ew.imag(gc) / r, dt)[..., None, :]
    return _conj(_gaps(w)) * _mm(_H(v), gu)


def _col_sum(x: Any) -> Any:
    """Sum over the rows of each matrix (axis -2)."""
    return red.reduce_sum(x, to_aval(x).ndim - 2)


def _solve(v: Any, b: Any) -> Any:
    """``v^{-1} b`` through ``v``'s LU factors (``P v = L U``)."""
    lu, _, perm = lu_p.bind(v)
    pb = _mm(_perm_matrix(perm, to_aval(lu).dtype), b)
    y = triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu, y, left_side=True, lower=False)


@eig_p.def_jvp
def _eig_jvp(primals: list, tangents: list, **p: Any) -> tuple:
    (a,), (da,) = primals, tangents
    _check_vec_derivs(p)
    left = p["compute_left_eigenvectors"]
    outs = eig_p.bind(a, **{**p, "compute_right_eigenvectors": True})
    w, vr = outs[0], outs[-1]
    dt = to_aval(w).dtype
    da = _as(da, dt)
    p_mat = _mm(_solve(vr, da), vr)
    if not (left or p["compute_right_eigenvectors"]):
        return [w], [_diag(p_mat)]
    dw, dvr = _vec_tangent(w, vr, p_mat)
    primal, tangent = [w], [dw]
    if left:
        vl = outs[1]
        _, dvl = _vec_tangent(_conj(w), vl, _mm(_solve(vl, _H(da)), vl))
        primal.append(vl)
        tangent.append(dvl)
    if p["compute_right_eigenvectors"]:
        primal.append(vr)
        tangent.append(dvr)
    return primal, tangent


@eig_p.def_vjp
def _eig_vjp(cts: list, a: Any, *, out: Any, **p: Any) -> tuple:
    a_aval = to_aval(a).strip_weak()
    if all(is_zero(c) for c in cts):
        return (Zero(a_aval),)
    _check_vec_derivs(p)
    left, right = p["compute_left_eigenvectors"], p["compute_right_eigenvectors"]
    w = out[0]
    vl = out[1] if left else None
    vr = out[-1] if right else eig_p.bind(a, **{**p, "compute_right_eigenvectors": True})[-1]
    dt = to_aval(w).dtype
    gs = [_ct(cts[0], w)]
    if left:
        gs.append(_ct(cts[1], vl))
    if right:
        gs.append(_ct(cts[-1], vr))

    def adjoint(gw: Any, *gvs: Any) -> Any:
        gp = _embed(gw, dt)
        ga = 0.0
        if right:
            gp = gp + _vec_adjoint(w, vr, gvs[-1])
        if left:
            gpl = _vec_adjoint(_conj(w), vl, gvs[0])
            # P_l = vl^{-1} dA^H vl: dA's Hermitian cotangent is (vl^{-H} gpl vl^H)^H
            ga = _H(_mm(_solve(_H(vl), gpl), _H(vl)))
        return _mm(_solve(_H(vr), gp), _H(vr)) + ga

    g = _pairing_adjoint(adjoint, *gs)
    if a_aval.dtype.kind != "c":
        g = _real(g)
    return (g,)


@eig_p.def_batch
def _eig_batch(args: list, dims: list, **p: Any) -> tuple:
    outs = eig_p.bind(rules.moveaxis(args[0], dims[0], 0), **p)
    return outs, [0] * len(outs)


def _distinct(rng: np.random.Generator, n: int, dtype: str = "float64") -> np.ndarray:
    """A matrix with eigenvalues 1, 2, ..., n and a well-conditioned eigenbasis."""
    s = np.eye(n) + 0.3 * rand(rng, (n, n), dtype)
    return ((s * np.arange(1.0, n + 1)) @ np.linalg.inv(s)).astype(dtype)


def _conjugate_pair(rng: np.random.Generator) -> np.ndarray:
    """A real 3 x 3 matrix with eigenvalues 1 + 2i, 1 - 2i and 3."""
    s = np.eye(3) + 0.3 * rand(rng, (3, 3))
    block = np.array([[1.0, 2.0, 0.0], [-2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
    return s @ block @ np.linalg.inv(s)


def _ex(a: np.ndarray, left: bool = False, right: bool = False, derivs: bool = True) -> Example:
    return Example([a], dict(zip(_PARAMS, (left, right, derivs))))


eig_p.examples = lambda rng: [
    _ex(_distinct(rng, 3)),
    _ex(_distinct(rng, 3), right=True),
    _ex(np.stack([_distinct(rng, 2), _distinct(rng, 2)]), left=True, right=True),
    _ex(_distinct(rng, 3, "complex128"), left=True, right=True),
    # a real matrix with a conjugate pair of eigenvalues (LAPACK packs its eigenvectors)
    _ex(_conjugate_pair(rng), left=True, right=True),
]


def eig(
    x: Any,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
) -> list:
    """``[w, vl?, vr?]``: eigenvalues and the requested left/right eigenvectors."""
    return bind(
        eig_p,
        x,
        compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
        enable_eigvec_derivs=bool(enable_eigvec_derivs),
    )


# --------------------------------------------------------------------------- host rule


def _eig_host(
    a: Any,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
) -> list:
    """``geev`` per matrix (XLA's CPU kernel: the same routine, the same vectors asked
    for, so the same eigenvalue order and eigenvector normalisation); a real matrix's
    conjugate pairs of eigenvectors, packed by LAPACK as real and imaginary parts in
    adjacent columns, are unpacked; NaN for a matrix with a non-finite entry or one
    LAPACK fails on."""
    from scipy.linalg import get_lapack_funcs

    del enable_eigvec_derivs
    a = np.asarray(a)
    n = a.shape[-1]
    ct = _complex_dtype(a.dtype)
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    w = np.empty(a.shape[:-1], ct)
    vl = np.empty(a.shape, ct) if left else None
    vr = np.empty(a.shape, ct) if right else None
    if a.size:
        geev = get_lapack_funcs("geev", dtype=a.dtype)
        query = get_lapack_funcs("geev_lwork", dtype=a.dtype)
        flags = dict(compute_vl=int(left), compute_vr=int(right))
        lwork = max(1, int(np.real(query(n, **flags)[0])))
        real = a.dtype.kind != "c"
        finite = np.isfinite(a).all(axis=(-2, -1))
        for i in np.ndindex(a.shape[:-2]):
            if finite[i]:
                res = geev(a[i], lwork=lwork, **flags)
                if real:
                    wr, wi, l_, r_, info = res
                    wi_ = wr + 1j * wi
                else:
                    wi_, l_, r_, info = res
            else:  # (XLA's kernel does not call LAPACK, whose balancing rejects them)
                info = -1
            if info != 0:
                w[i] = np.nan
                if left:
                    vl[i] = np.nan
                if right:
                    vr[i] = np.nan
                continue
            w[i] = wi_
            if left:
                vl[i] = _unpack_pairs(wi, l_) if real else l_
            if right:
                vr[i] = _unpack_pairs(wi, r_) if real else r_
    return [w, *([vl] if left else []), *([vr] if right else [])]


def _unpack_pairs(wi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Complex eigenvectors from LAPACK's real packing: for a conjugate pair (columns
    ``j``, ``j + 1``, ``wi[j] > 0``) ``v[:, j] +- 1j v[:, j + 1]``."""
    out = v.astype(np.result_type(v.dtype, np.complex64))
    first = np.nonzero(wi > 0)[0]
    if first.size:
        re, im = v[:, first], v[:, first + 1]
        out[:, first] = re + 1j * im
        out[:, first + 1] = re - 1j * im
    return out


eig_p.host = _eig_host
