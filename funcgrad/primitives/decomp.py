"""Matrix decompositions as primitives: ``cholesky``, ``triangular_solve``, ``lu``,
``lu_pivots_to_permutation``, ``qr``, ``svd`` and ``eigh`` (lowered to ``jax.lax.linalg``).

Every operand is a stack of matrices: leading dimensions are batch dimensions, and the
batching rules move the vmapped axis to the front and bind the primitive once.

Derivative rules (funcgrad's own, written with ``funcgrad.numpy`` so they transform
again):

* Kernels that read one triangle of a Hermitian matrix (``cholesky``, ``eigh``) are
  differentiated as functions of the Hermitian matrix ``E(A)`` built from that triangle
  (its strict triangle, the triangle's conjugate transpose and the real diagonal), which
  is exactly what LAPACK factors; finite differences of any input then agree with the JVP.
* JVPs are the standard forms: Murray (2016) for Cholesky, ``dQ``/``dR`` from the
  skew-Hermitian ``Q^H dA R^{-1}`` for QR, ``V (F o V^H dA V)`` for ``eigh`` and the
  reduced-SVD formula with ``F_ij = 1 / (s_j^2 - s_i^2)`` (distinct values assumed), the
  triangular-solve form for LU.
* VJPs are the exact adjoints of those JVPs. For complex inputs funcgrad's (and JAX's)
  cotangent pairing is ``Re(sum(a * b))`` (no conjugation), so a rule computes the
  Hermitian adjoint on conjugated cotangents and conjugates the result.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from jax import lax

from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import lapack_host, rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.matrix_rules import (
    _H,
    _T,
    _as,
    _bcast,
    _check_matrix,
    _conj,
    _ct,
    _diag,
    _embed,
    _eye,
    _hermitian_from,
    _hermitian_from_adjoint,
    _is_complex,
    _mm,
    _pairing_adjoint,
    _real,
    _real_dtype,
    _tril,
    _triu,
)
from funcgrad.primitives.rules import rand

FAMILY = "decomp"

_LAPACK = {np.dtype(t) for t in ("float32", "float64", "complex64", "complex128")}
_I32 = np.dtype("int32")


def _front(args: list, dims: list) -> list:
    size = rules.batch_size(args, dims)
    return [rules.bdim_to_front(a, d, size) for a, d in zip(args, dims)]


def _spd(rng: np.random.Generator, n: int, dtype: str = "float64") -> np.ndarray:
    x = rand(rng, (n, n), dtype)
    return (x @ np.conj(x).T + n * np.eye(n)).astype(dtype)


def _separated_hermitian(rng: np.random.Generator, n: int, dtype: str = "float64"):
    """A Hermitian matrix with eigenvalues 1, 2, ..., n (well separated)."""
    q, _ = np.linalg.qr(rand(rng, (n, n), dtype))
    return ((q * np.arange(1.0, n + 1)) @ np.conj(q).T).astype(dtype)


def _separated_singular(rng: np.random.Generator, m: int, n: int, dtype: str = "float64"):
    """A matrix with singular values 1, 2, ..., min(m, n)."""
    k = min(m, n)
    u, _ = np.linalg.qr(rand(rng, (m, k), dtype))
    v, _ = np.linalg.qr(rand(rng, (n, k), dtype))
    return ((u * np.arange(1.0, k + 1)) @ np.conj(v).T).astype(dtype)


# --------------------------------------------------------------------------- triangular_solve

triangular_solve_p = Primitive("triangular_solve", family=FAMILY)

_TS_PARAMS = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")


@triangular_solve_p.def_abstract_eval
def _triangular_solve_abstract_eval(
    a: Aval,
    b: Aval,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> Aval:
    _check_matrix("triangular_solve", a)
    if b.dtype != a.dtype:
        raise TypeError(f"triangular_solve requires operands of one dtype, got a {a} and b {b}")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]:
        raise ValueError(
            f"triangular_solve requires a and b with equal batch dimensions, got a {a} and b {b}"
        )
    m = a.shape[-1]
    side = b.shape[-2] if left_side else b.shape[-1]
    if side != m:
        what = "rows" if left_side else "columns"
        raise ValueError(
            f"triangular_solve (left_side={left_side}) requires b to have {m} {what} "
            f"to match a, got a {a} and b {b}"
        )
    return Aval(b.shape, b.dtype)


triangular_solve_p.lower = lambda a, b, **p: lax.linalg.triangular_solve(a, b, **p)


def _tri_mask(x: Any, lower: bool, unit_diagonal: bool) -> Any:
    """The part of ``x`` the solve reads: one triangle, without the diagonal if unit."""
    k = (-1 if lower else 1) if unit_diagonal else 0
    return _tril(x, k) if lower else _triu(x, k)


def _op(x: Any, transpose_a: bool, conjugate_a: bool) -> Any:
    if transpose_a:
        x = _T(x)
    return _conj(x) if conjugate_a else x


@triangular_solve_p.def_jvp
def _triangular_solve_jvp(primals: list, tangents: list, **p: Any) -> tuple:
    (a, b), (da, db) = primals, tangents
    x = triangular_solve(a, b, **p)
    t: Any = Zero(to_aval(x).strip_weak())
    if not is_zero(db):
        t = triangular_solve(a, db, **p)
    if not is_zero(da):
        g = _op(_tri_mask(da, p["lower"], p["unit_diagonal"]), p["transpose_a"], p["conjugate_a"])
        rhs = _mm(g, x) if p["left_side"] else _mm(x, g)
        t = rules.add_tangents(t, -triangular_solve(a, rhs, **p))
    return x, t


@triangular_solve_p.def_vjp
def _triangular_solve_vjp(ct: Any, a: Any, b: Any, *, out: Any, **p: Any) -> tuple:
    if is_zero(ct):
        return Zero(to_aval(a).strip_weak()), Zero(to_aval(b).strip_weak())
    # ct_b = (op(T)^T)^{-1} ct: op(T)'s transpose is the same solve with transpose toggled
    ct_b = triangular_solve(a, ct, **{**p, "transpose_a": not p["transpose_a"]})
    ct_g = -_mm(ct_b, _T(out)) if p["left_side"] else -_mm(_T(out), ct_b)
    # op (transpose and/or conjugate) is its own transpose under the pairing Re(sum(a * b))
    ct_a = _tri_mask(_op(ct_g, p["transpose_a"], p["conjugate_a"]), p["lower"], p["unit_diagonal"])
    return ct_a, ct_b


@triangular_solve_p.def_batch
def _triangular_solve_batch(args: list, dims: list, **p: Any) -> tuple:
    a, b = _front(args, dims)
    return triangular_solve(a, b, **p), 0


@triangular_solve_p.def_examples
def _triangular_solve_examples(rng: np.random.Generator) -> list[Example]:
    def tri(n: int, dtype: str = "float64") -> np.ndarray:
        return (rand(rng, (n, n), dtype) + 4 * np.eye(n)).astype(dtype)

    def ex(a: Any, b: Any, **kw: Any) -> Example:
        p = dict.fromkeys(_TS_PARAMS, False)
        p.update(kw)
        return Example([a, b], p)

    return [
        ex(tri(3), rand(rng, (3, 2)), left_side=True, lower=True),
        ex(tri(3), rand(rng, (2, 3)), lower=False, transpose_a=True),
        ex(tri(3), rand(rng, (3, 2)), left_side=True, unit_diagonal=True, transpose_a=True),
        ex(
            tri(3, "complex128"),
            rand(rng, (3, 2), "complex128"),
            left_side=True,
            lower=True,
            transpose_a=True,
            conjugate_a=True,
        ),
    ]


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
    """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` with triangular ``a``."""
    return bind(
        triangular_solve_p,
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a),
        unit_diagonal=bool(unit_diagonal),
    )


# --------------------------------------------------------------------------- cholesky

cholesky_p = Primitive("cholesky", family=FAMILY)


@cholesky_p.def_abstract_eval
def _cholesky_abstract_eval(a: Aval) -> Aval:
    _check_matrix("cholesky", a)
    return a.strip_weak()


cholesky_p.lower = lambda a: lax.linalg.cholesky(a, symmetrize_input=False)


def _phi_mask(n: int, dtype: np.dtype) -> np.ndarray:
    """Murray's ``Phi``: the lower triangle with the diagonal halved, as a mask."""
    return (np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(_real_dtype(dtype))


@cholesky_p.def_jvp
def _cholesky_jvp(primals: list, tangents: list) -> tuple:
    (a,), (da,) = primals, tangents
    lo = cholesky(a)
    x = triangular_solve(lo, _hermitian_from(da, True), left_side=True, lower=True)
    x = triangular_solve(lo, x, lower=True, transpose_a=True, conjugate_a=True)
    n = to_aval(a).shape[-1]
    return lo, _mm(lo, x * _phi_mask(n, to_aval(a).dtype))


@cholesky_p.def_vjp
def _cholesky_vjp(ct: Any, a: Any, *, out: Any) -> tuple:
    if is_zero(ct):
        return (Zero(to_aval(a).strip_weak()),)
    lo, n = out, to_aval(a).shape[-1]

    def adjoint(g: Any) -> Any:
        x = _mm(_H(lo), g) * _phi_mask(n, to_aval(a).dtype)
        x = triangular_solve(lo, x, left_side=True, lower=True, transpose_a=True, conjugate_a=True)
        x = triangular_solve(lo, x, lower=True)
        return _hermitian_from_adjoint(x, True)

    return (_pairing_adjoint(adjoint, ct),)


@cholesky_p.def_batch
def _cholesky_batch(args: list, dims: list) -> tuple:
    return cholesky(rules.moveaxis(args[0], dims[0], 0)), 0


cholesky_p.examples = lambda rng: [
    Example([_spd(rng, 3)]),
    Example([np.stack([_spd(rng, 2), _spd(rng, 2)])]),
    Example([_spd(rng, 3, "complex128")]),
]


def cholesky(x: Any) -> Any:
    """Lower Cholesky factor of the Hermitian matrix in ``x``'s lower triangle."""
    return bind(cholesky_p, x)


# --------------------------------------------------------------------------- lu

lu_p = Primitive("lu", family=FAMILY, multiple_results=True)


@lu_p.def_abstract_eval
def _lu_abstract_eval(a: Aval) -> list[Aval]:
    _check_matrix("lu", a, square=False)
    *batch, m, n = a.shape
    return [
        a.strip_weak(),
        Aval((*batch, min(m, n)), _I32),
        Aval((*batch, m), _I32),
    ]


lu_p.lower = lambda a: list(lax.linalg.lu(a))


def _perm_matrix(perm: Any, dtype: np.dtype) -> Any:
    """``P`` with ``P @ x == x[perm]`` (a one-hot matrix, so batching comes for free)."""
    *batch, m = to_aval(perm).shape
    rows = sh.broadcast_in_dim(perm, (*batch, m, m), tuple(range(len(batch) + 1)))
    cols = _bcast(np.arange(m, dtype=_I32), (*batch, m, m))
    return _as(ew.eq(_as(rows, _I32), cols), dtype)


def _lu_factors(lu: Any) -> tuple[Any, Any]:
    """Unit-lower ``L`` padded to ``m x m`` and upper ``U`` padded to ``n x n``."""
    av = to_aval(lu)
    *batch, m, n = av.shape
    k, dt = min(m, n), av.dtype
    lo = _tril(lu[..., :, :k], -1) + _eye(m, k, dtype=dt)
    if m > k:
        lo = sh.concatenate(
            lo,
            _bcast(_eye(m, dtype=dt)[:, k:], (*batch, m, m - k)),
            dimension=-1 % (len(batch) + 2),
        )
    up = _triu(lu[..., :k, :])
    if n > k:
        up = sh.concatenate(
            up, _bcast(_eye(n, dtype=dt)[k:, :], (*batch, n - k, n)), dimension=len(batch)
        )
    return lo, up


@lu_p.def_jvp
def _lu_jvp(primals: list, tangents: list) -> tuple:
    (a,), (da,) = primals, tangents
    lu, piv, perm = lu_p.bind(a)
    lo, up = _lu_factors(lu)
    x = _mm(_perm_matrix(perm, to_aval(a).dtype), da)
    la = triangular_solve(lo, x, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(up, la, lower=False)
    dlu = _mm(lo, _tril(lau, -1)) + _mm(_triu(lau), up)
    return [lu, piv, perm], [dlu, None, None]


@lu_p.def_vjp
def _lu_vjp(cts: list, a: Any, *, out: Any) -> tuple:
    ct = cts[0]
    if is_zero(ct):
        return (Zero(to_aval(a).strip_weak()),)
    lu, _, perm = out
    lo, up = _lu_factors(lu)
    # the transpose of the (complex-linear) JVP, step by step in reverse
    lau = _tril(_mm(_T(lo), ct), -1) + _triu(_mm(ct, _T(up)))
    la = triangular_solve(up, lau, lower=False, transpose_a=True)
    x = triangular_solve(lo, la, left_side=True, lower=True, unit_diagonal=True, transpose_a=True)
    return (_mm(_T(_perm_matrix(perm, to_aval(a).dtype)), x),)


@lu_p.def_batch
def _lu_batch(args: list, dims: list) -> tuple:
    return lu_p.bind(rules.moveaxis(args[0], dims[0], 0)), [0, 0, 0]


lu_p.examples = lambda rng: [
    Example([rand(rng, (3, 3))]),
    Example([rand(rng, (2, 4, 3))]),
    Example([rand(rng, (3, 4), "complex128")]),
]


def lu(x: Any) -> tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting: ``(lu, pivots, permutation)``."""
    return tuple(bind(lu_p, x))


# --------------------------------------------------------------------------- lu_pivots_to_permutation

lu_pivots_to_permutation_p = Primitive(
    "lu_pivots_to_permutation", family=FAMILY, differentiable=False
)


@lu_pivots_to_permutation_p.def_abstract_eval
def _pivots_abstract_eval(pivots: Aval, *, permutation_size: int) -> Aval:
    if pivots.dtype != _I32 or pivots.ndim < 1:
        raise TypeError(f"lu_pivots_to_permutation requires an int32 array of pivots, got {pivots}")
    if permutation_size < pivots.shape[-1]:
        raise ValueError(
            f"lu_pivots_to_permutation: permutation_size={permutation_size} is smaller than "
            f"the number of pivots in {pivots}"
        )
    return Aval((*pivots.shape[:-1], permutation_size), _I32)


lu_pivots_to_permutation_p.lower = lambda piv, *, permutation_size: (
    lax.linalg.lu_pivots_to_permutation(piv, permutation_size)
)


@lu_pivots_to_permutation_p.def_batch
def _pivots_batch(args: list, dims: list, *, permutation_size: int) -> tuple:
    piv = rules.moveaxis(args[0], dims[0], 0)
    return lu_pivots_to_permutation(piv, permutation_size), 0


lu_pivots_to_permutation_p.examples = lambda rng: [
    Example([np.array([2, 2, 2], np.int32)], {"permutation_size": 4}),
    Example([np.array([[1, 1], [0, 1]], np.int32)], {"permutation_size": 2}),
]


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The row permutation that LAPACK-style ``pivots`` (row swaps) describe."""
    return bind(
        lu_pivots_to_permutation_p, pivots, permutation_size=operator.index(permutation_size)
    )


# --------------------------------------------------------------------------- qr

qr_p = Primitive("qr", family=FAMILY, multiple_results=True)


@qr_p.def_abstract_eval
def _qr_abstract_eval(a: Aval, *, full_matrices: bool) -> list[Aval]:
    _check_matrix("qr", a, square=False)
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    return [Aval((*batch, m, k), a.dtype), Aval((*batch, k, n), a.dtype)]


qr_p.lower = lambda a, *, full_matrices: list(lax.linalg.qr(a, full_matrices=full_matrices))


def _qr_check_jvp(a: Any, full_matrices: bool) -> None:
    m, n = to_aval(a).shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(
            "Unimplemented case of QR decomposition derivative: qr is differentiable only "
            f"for m >= n and full_matrices=False (or square input), got {to_aval(a)} with "
            f"full_matrices={full_matrices}"
        )


def _imag_diag_part(x: Any) -> Any:
    """``I o (x - Re x)``: the imaginary part of ``x``'s diagonal, as a matrix."""
    return _embed(ew.imag(_diag(x)), to_aval(x).dtype) * 1j


@qr_p.def_jvp
def _qr_jvp(primals: list, tangents: list, *, full_matrices: bool) -> tuple:
    (a,), (da,) = primals, tangents
    _qr_check_jvp(a, full_matrices)
    q, r = qr(a, full_matrices=full_matrices)
    y = triangular_solve(r, da, lower=False)  # dA R^{-1}
    z = _mm(_H(q), y)
    lw = _tril(z, -1)
    d = lw - _H(lw)
    if _is_complex(a):
        d = d + _imag_diag_part(z)
    return [q, r], [_mm(q, d - z) + y, _mm(z - d, r)]


@qr_p.def_vjp
def _qr_vjp(cts: list, a: Any, *, out: Any, full_matrices: bool) -> tuple:
    if all(is_zero(c) for c in cts):
        return (Zero(to_aval(a).strip_weak()),)
    _qr_check_jvp(a, full_matrices)
    q, r = out
    qb, rb = _ct(cts[0], q), _ct(cts[1], r)

    def adjoint(qb: Any, rb: Any) -> Any:
        e = _mm(_H(q), qb) - _mm(rb, _H(r))
        zb = _tril(e - _H(e), -1) - e
        if _is_complex(a):
            zb = zb + _imag_diag_part(e)
        yb = qb + _mm(q, zb)
        return triangular_solve(r, yb, lower=False, transpose_a=True, conjugate_a=True)

    return (_pairing_adjoint(adjoint, qb, rb),)


@qr_p.def_batch
def _qr_batch(args: list, dims: list, *, full_matrices: bool) -> tuple:
    return qr_p.bind(rules.moveaxis(args[0], dims[0], 0), full_matrices=full_matrices), [0, 0]


qr_p.examples = lambda rng: [
    Example([rand(rng, (3, 3)) + 3 * np.eye(3)], {"full_matrices": True}),
    Example([rand(rng, (4, 2))], {"full_matrices": False}),
    Example([rand(rng, (2, 3, 2), "complex128")], {"full_matrices": False}),
]


def qr(x: Any, *, full_matrices: bool = True) -> tuple[Any, Any]:
    """QR decomposition ``x = q @ r`` (``q`` with orthonormal columns, ``r`` upper)."""
    return tuple(bind(qr_p, x, full_matrices=bool(full_matrices)))


# --------------------------------------------------------------------------- eigh

eigh_p = Primitive("eigh", family=FAMILY, multiple_results=True)


@eigh_p.def_abstract_eval
def _eigh_abstract_eval(a: Aval, *, lower: bool) -> list[Aval]:
    _check_matrix("eigh", a)
    return [a.strip_weak(), Aval(a.shape[:-1], _real_dtype(a.dtype))]


eigh_p.lower = lambda a, *, lower: list(lax.linalg.eigh(a, lower=lower, symmetrize_input=False))


def _gap_inverse(w: Any) -> Any:
    """``F_ij = 1 / (w_j - w_i)`` off the diagonal, ``0`` on it."""
    n = to_aval(w).shape[-1]
    eye = _eye(n, dtype=to_aval(w).dtype)
    return 1.0 / (eye + w[..., None, :] - w[..., :, None]) - eye


@eigh_p.def_jvp
def _eigh_jvp(primals: list, tangents: list, *, lower: bool) -> tuple:
    (a,), (da,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower)
    dt = to_aval(a).dtype
    m = _mm(_mm(_H(v), _hermitian_from(da, lower)), v)
    dv = _mm(v, _as(_gap_inverse(w), dt) * m)
    return [v, w], [dv, _real(_diag(m))]


@eigh_p.def_vjp
def _eigh_vjp(cts: list, a: Any, *, out: Any, lower: bool) -> tuple:
    if all(is_zero(c) for c in cts):
        return (Zero(to_aval(a).strip_weak()),)
    v, w = out
    dt = to_aval(a).dtype
    if is_zero(cts[0]):  # eigenvalues alone: no gap term (repeated eigenvalues give 0 * inf)

        def values_adjoint(wb: Any) -> Any:
            return _hermitian_from_adjoint(_mm(_mm(v, _embed(wb, dt)), _H(v)), lower)

        return (_pairing_adjoint(values_adjoint, _ct(cts[1], w)),)
    vb, wb = _ct(cts[0], v), _ct(cts[1], w)

    def adjoint(vb: Any, wb: Any) -> Any:
        mb = _as(_gap_inverse(w), dt) * _mm(_H(v), vb) + _embed(wb, dt)
        return _hermitian_from_adjoint(_mm(_mm(v, mb), _H(v)), lower)

    return (_pairing_adjoint(adjoint, vb, wb),)


@eigh_p.def_batch
def _eigh_batch(args: list, dims: list, *, lower: bool) -> tuple:
    return eigh_p.bind(rules.moveaxis(args[0], dims[0], 0), lower=lower), [0, 0]


eigh_p.examples = lambda rng: [
    Example([_separated_hermitian(rng, 3)], {"lower": True}),
    Example([_separated_hermitian(rng, 3)], {"lower": False}),
    # (complex eigenvectors carry a phase gauge that finite differences do not follow:
    # tests/test_linalg_decomp.py checks complex eigh through gauge-invariant functions)
    Example(
        [np.stack([_separated_hermitian(rng, 2), _separated_hermitian(rng, 2)])], {"lower": True}
    ),
]


def eigh(x: Any, *, lower: bool = True) -> tuple[Any, Any]:
    """Eigenvectors and (ascending) eigenvalues ``(v, w)`` of the Hermitian matrix in
    ``x``'s lower (or upper) triangle."""
    return tuple(bind(eigh_p, x, lower=bool(lower)))


# --------------------------------------------------------------------------- svd

svd_p = Primitive("svd", family=FAMILY, multiple_results=True)


@svd_p.def_abstract_eval
def _svd_abstract_eval(a: Aval, *, full_matrices: bool, compute_uv: bool) -> list[Aval]:
    _check_matrix("svd", a, square=False)
    *batch, m, n = a.shape
    k = min(m, n)
    s = Aval((*batch, k), _real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, Aval((*batch, m, ku), a.dtype), Aval((*batch, kv, n), a.dtype)]


def _svd_lower(a: Any, *, full_matrices: bool, compute_uv: bool) -> list:
    if not compute_uv:
        return [lax.linalg.svd(a, full_matrices=full_matrices, compute_uv=False)]
    u, s, vt = lax.linalg.svd(a, full_matrices=full_matrices, compute_uv=True)
    return [s, u, vt]


svd_p.lower = _svd_lower


def _svd_check_jvp(full_matrices: bool, compute_uv: bool) -> None:
    if compute_uv and full_matrices:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices "
            "(use full_matrices=False)"
        )


def _safe_inverse(s: Any) -> Any:
    """``1 / s`` with ``0`` where ``s == 0``."""
    zero = _as(ew.eq(s, sh.full(to_aval(s).shape, 0, to_aval(s).dtype)), to_aval(s).dtype)
    return 1.0 / (s + zero) - zero


def _svd_f(s: Any) -> Any:
    """``F_ij = 1 / (s_j^2 - s_i^2)`` off equal pairs, ``0`` where they are equal."""
    diffs = (s[..., None, :] + s[..., :, None]) * (s[..., None, :] - s[..., :, None])
    av = to_aval(diffs)
    zero = _as(ew.eq(diffs, sh.full(av.shape, 0, av.dtype)), to_aval(s).dtype)
    return 1.0 / (diffs + zero) - zero


@svd_p.def_jvp
def _svd_jvp(primals: list, tangents: list, *, full_matrices: bool, compute_uv: bool) -> tuple:
    (a,), (da,) = primals, tangents
    _svd_check_jvp(full_matrices, compute_uv)
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    dt = to_aval(a).dtype
    v = _H(vt)
    ds_mat = _mm(_mm(_H(u), da), v)
    ds = _real(_diag(ds_mat))
    if not compute_uv:
        return [s], [ds]
    f = _as(_svd_f(s), dt)
    sc = _as(s, dt)
    dss, sds = ds_mat * sc[..., None, :], sc[..., :, None] * ds_mat
    inner_u = f * (dss + _H(dss))
    if _is_complex(a):
        inner_u = inner_u + _imag_diag_part(ds_mat) * _as(_safe_inverse(s), dt)[..., None, :]
    du = _mm(u, inner_u)
    dv = _mm(v, f * (sds + _H(sds)))
    m, n = to_aval(a).shape[-2:]
    sinv = _as(_safe_inverse(s), dt)[..., None, :]
    if m > n:
        dav = _mm(da, v)
        du = du + (dav - _mm(u, _mm(_H(u), dav))) * sinv
    if n > m:
        dahu = _mm(_H(da), u)
        dv = dv + (dahu - _mm(v, _mm(vt, dahu))) * sinv
    return [s, u, vt], [ds, du, _H(dv)]


@svd_p.def_vjp
def _svd_vjp(cts: list, a: Any, *, out: Any, full_matrices: bool, compute_uv: bool) -> tuple:
    if all(is_zero(c) for c in cts):
        return (Zero(to_aval(a).strip_weak()),)
    _svd_check_jvp(full_matrices, compute_uv)
    dt = to_aval(a).dtype
    if compute_uv:
        s, u, vt = out
    else:
        s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    sb = _ct(cts[0], s)
    ub = _ct(cts[1], u) if compute_uv else None
    vtb = _ct(cts[2], vt) if compute_uv else None
    m, n = to_aval(a).shape[-2:]

    def adjoint(sb: Any, ub: Any = None, vtb: Any = None) -> Any:
        v = _H(vt)
        dsb = _embed(sb, dt)
        if ub is not None:
            vb = _H(vtb)
            f, sc = _as(_svd_f(s), dt), _as(s, dt)
            sinv = _as(_safe_inverse(s), dt)
            wu, wv = _mm(_H(u), ub), _mm(_H(v), vb)
            mu, mv = f * wu, f * wv
            dsb = dsb + (mu + _H(mu)) * sc[..., None, :] + sc[..., :, None] * (mv + _H(mv))
            if _is_complex(a):
                dsb = dsb + _imag_diag_part(wu) * sinv[..., None, :]
            extra = 0.0
            if m > n:
                extra = _mm((ub - _mm(u, wu)) * sinv[..., None, :], vt)
            if n > m:
                extra = _mm(u * sinv[..., None, :], _H(vb - _mm(v, wv)))
            return _mm(_mm(u, dsb), vt) + extra
        return _mm(_mm(u, dsb), vt)

    args = (sb,) if not compute_uv else (sb, ub, vtb)
    return (_pairing_adjoint(adjoint, *args),)


@svd_p.def_batch
def _svd_batch(args: list, dims: list, **p: Any) -> tuple:
    outs = svd_p.bind(rules.moveaxis(args[0], dims[0], 0), **p)
    return outs, [0] * len(outs)


svd_p.examples = lambda rng: [
    Example([_separated_singular(rng, 3, 3)], {"full_matrices": False, "compute_uv": True}),
    Example([_separated_singular(rng, 4, 2)], {"full_matrices": False, "compute_uv": True}),
    Example([_separated_singular(rng, 2, 3)], {"full_matrices": False, "compute_uv": True}),
    Example([rand(rng, (2, 3, 4))], {"full_matrices": False, "compute_uv": False}),
]


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True) -> list:
    """Singular value decomposition: ``[s, u, vt]`` (``[s]`` without ``compute_uv``)."""
    return bind(svd_p, x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


# --------------------------------------------------------------------------- host rules
# (the host tier: LAPACK through SciPy as XLA's CPU kernels call it, in lapack_host.py)
cholesky_p.host = lapack_host._cholesky_host
triangular_solve_p.host = lapack_host._triangular_solve_host
lu_pivots_to_permutation_p.host = lapack_host._pivots_host
lu_p.host = lapack_host._lu_host
qr_p.host = lapack_host._qr_host
eigh_p.host = lapack_host._eigh_host
svd_p.host = lapack_host._svd_host
