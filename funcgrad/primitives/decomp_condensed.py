"""Reductions to condensed forms as primitives: the Schur decomposition ``schur``, the
Hessenberg reduction ``hessenberg`` and the Hermitian tridiagonal reduction
``tridiagonal``, lowered to ``jax.lax.linalg`` (LAPACK's ``gees``, ``gehrd`` and
``sytrd``/``hetrd``: CPU only, as in JAX).

* ``schur(a)``: ``[T]`` or ``[T, Q]`` with ``A = Q T Q^H``, ``Q`` unitary and ``T``
  upper triangular (complex operand) or quasi-upper triangular with standardised 2 x 2
  blocks for conjugate pairs (real operand: LAPACK's real Schur form).
* ``hessenberg(a)``: ``[h, taus]``, LAPACK's packed form: the upper Hessenberg matrix in
  the upper triangle and first subdiagonal, Householder vectors below it, and their
  ``n - 1`` scalar factors.
* ``tridiagonal(a, lower)``: ``[a, d, e, taus]``: the packed reflectors, the (real)
  diagonal and off-diagonal of the tridiagonal matrix, the ``n - 1`` factors.

None has a derivative rule in JAX (the outputs are not unique: a Schur form is defined up
to the order of the eigenvalues and the phases of ``Q``'s columns); funcgrad raises JAX's
``NotImplementedError`` in forward and reverse mode alike, rather than return a
derivative of one arbitrary choice. Batching moves the vmapped axis to the front and
binds once (leading dimensions are batch dimensions). The host rules call the same
LAPACK routines with the same arguments as XLA's CPU kernels, so both tiers give the
same factors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax import lax

from funcgrad.core.interp import bind
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.primitives import lapack_host, rules
from funcgrad.primitives.decomp import FAMILY
from funcgrad.primitives.matrix_rules import _check_matrix, _real_dtype
from funcgrad.primitives.rules import rand


def _no_derivative(name: str) -> Any:
    """A JVP/VJP rule raising JAX's error: ``name`` has no derivative rule."""

    def rule(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")

    return rule


def _batch_front(prim: Primitive) -> Any:
    """The batching rule of a primitive on stacks of matrices: the batch axis to the front,
    one bind."""

    def rule(args: list, dims: list, **p: Any) -> tuple:
        outs = bind(prim, rules.moveaxis(args[0], dims[0], 0), **p)
        return outs, [0] * len(outs)

    return rule


def _nonempty(name: str, a: Aval) -> None:
    if a.shape[-1] == 0:
        raise ValueError(f"{name} requires non-empty square matrices, got {a}")


def _nan_where(bad: bool, *outs: np.ndarray) -> None:
    if bad:
        for o in outs:
            o[...] = np.nan


def _general(rng: np.random.Generator, shape: tuple, dtype: str = "float64") -> np.ndarray:
    """A random matrix (or stack), entries in [-1, 1) (real and imaginary parts)."""
    return rand(rng, shape, dtype)


# --------------------------------------------------------------------------- schur


def _no_select(*args: Any) -> None:
    """``gees``'s eigenvalue selector, unused without sorting."""
    return None


schur_p = Primitive("schur", family=FAMILY, multiple_results=True)


@schur_p.def_abstract_eval
def _schur_abstract_eval(a: Aval, *, compute_schur_vectors: bool) -> list[Aval]:
    _check_matrix("schur", a)
    out = Aval(a.shape, a.dtype)
    return [out, out] if compute_schur_vectors else [out]


@schur_p.def_lower
def _schur_lower(a: Any, *, compute_schur_vectors: bool) -> list:
    if a.shape[-1] == 0:  # (XLA's kernel wants a workspace of at least one)
        return [a] * (2 if compute_schur_vectors else 1)
    return list(lax.linalg.schur(a, compute_schur_vectors=compute_schur_vectors))


schur_p.jvp = _no_derivative("schur")
schur_p.vjp = _no_derivative("schur")
schur_p.batch = _batch_front(schur_p)


@schur_p.def_host
def _schur_host(a: Any, *, compute_schur_vectors: bool) -> list:
    """``gees`` per matrix without sorting (XLA's CPU kernel); NaN for a matrix LAPACK
    fails on."""
    a = np.asarray(a)
    t = np.empty_like(a)
    q = np.empty_like(a)
    if a.size:
        n = a.shape[-1]
        gees = lapack_host._lapack("gees", a.dtype)
        flags = dict(compute_v=int(compute_schur_vectors), sort_t=0)
        # (LAPACK's workspace query, as XLA's kernel makes: SciPy has no gees_lwork)
        work = gees(_no_select, np.zeros((n, n), a.dtype), lwork=-1, **flags)[-2]
        lwork = max(1, int(np.real(work[0])))
        for i in lapack_host._matrices(a):
            res = gees(_no_select, a[i], lwork=lwork, **flags)
            t[i], q[i], info = res[0], res[-3], res[-1]
            _nan_where(info != 0 or not np.isfinite(a[i]).all(), t[i], q[i])
    return [t, q] if compute_schur_vectors else [t]


schur_p.examples = lambda rng: [
    Example([_general(rng, (3, 3))], {"compute_schur_vectors": True}, diff_argnums=()),
    Example([_general(rng, (4, 4), "float32")], {"compute_schur_vectors": False}, diff_argnums=()),
    Example(
        [_general(rng, (2, 3, 3), "complex128")], {"compute_schur_vectors": True}, diff_argnums=()
    ),
]


def schur(x: Any, *, compute_schur_vectors: bool = True) -> list:
    """``[T, Q]`` (or ``[T]``): the Schur form and the unitary Schur vectors of ``x``."""
    return bind(schur_p, x, compute_schur_vectors=bool(compute_schur_vectors))


# --------------------------------------------------------------------------- hessenberg

hessenberg_p = Primitive("hessenberg", family=FAMILY, multiple_results=True)


@hessenberg_p.def_abstract_eval
def _hessenberg_abstract_eval(a: Aval) -> list[Aval]:
    _check_matrix("hessenberg", a)
    _nonempty("hessenberg", a)
    return [Aval(a.shape, a.dtype), Aval((*a.shape[:-2], a.shape[-1] - 1), a.dtype)]


@hessenberg_p.def_lower
def _hessenberg_lower(a: Any) -> list:
    return list(lax.linalg.hessenberg(a))


hessenberg_p.jvp = _no_derivative("hessenberg")
hessenberg_p.vjp = _no_derivative("hessenberg")
hessenberg_p.batch = _batch_front(hessenberg_p)


@hessenberg_p.def_host
def _hessenberg_host(a: Any) -> list:
    """``gehrd`` per matrix over the whole matrix (``ilo = 1``, ``ihi = n``)."""
    a = np.asarray(a)
    n = a.shape[-1]
    h = np.empty_like(a)
    taus = np.empty((*a.shape[:-2], n - 1), a.dtype)
    gehrd = lapack_host._lapack("gehrd", a.dtype)
    lwork = lapack_host._lwork("gehrd", a.dtype, n)
    for i in lapack_host._matrices(a):
        hi, tau, info = gehrd(a[i], lo=0, hi=n - 1, lwork=lwork)
        h[i], taus[i] = hi, tau[: n - 1]
        _nan_where(info != 0, h[i], taus[i])
    return [h, taus]


hessenberg_p.examples = lambda rng: [
    Example([_general(rng, (4, 4))], diff_argnums=()),
    Example([_general(rng, (2, 3, 3), "complex64")], diff_argnums=()),
]


def hessenberg(x: Any) -> list:
    """``[h, taus]``: ``x`` reduced to upper Hessenberg form, in LAPACK's packed form."""
    return bind(hessenberg_p, x)


# --------------------------------------------------------------------------- tridiagonal

tridiagonal_p = Primitive("tridiagonal", family=FAMILY, multiple_results=True)


@tridiagonal_p.def_abstract_eval
def _tridiagonal_abstract_eval(a: Aval, *, lower: bool) -> list[Aval]:
    _check_matrix("tridiagonal", a)
    _nonempty("tridiagonal", a)
    *batch, n, _ = a.shape
    real = _real_dtype(a.dtype)
    return [
        Aval(a.shape, a.dtype),
        Aval((*batch, n), real),
        Aval((*batch, n - 1), real),
        Aval((*batch, n - 1), a.dtype),
    ]


@tridiagonal_p.def_lower
def _tridiagonal_lower(a: Any, *, lower: bool) -> list:
    return list(lax.linalg.tridiagonal(a, lower=lower))


tridiagonal_p.jvp = _no_derivative("tridiagonal")
tridiagonal_p.vjp = _no_derivative("tridiagonal")
tridiagonal_p.batch = _batch_front(tridiagonal_p)


@tridiagonal_p.def_host
def _tridiagonal_host(a: Any, *, lower: bool) -> list:
    """``sytrd``/``hetrd`` per matrix on the ``lower`` (or upper) triangle."""
    a = np.asarray(a)
    *batch, n, _ = a.shape
    real = _real_dtype(a.dtype)
    out = [np.empty_like(a), np.empty((*batch, n), real)]
    out += [np.empty((*batch, n - 1), real), np.empty((*batch, n - 1), a.dtype)]
    name = "hetrd" if a.dtype.kind == "c" else "sytrd"
    trd = lapack_host._lapack(name, a.dtype)
    lwork = lapack_host._lwork(name, a.dtype, n, lower=int(lower))
    for i in lapack_host._matrices(a):
        c, d, e, tau, info = trd(a[i], lower=int(lower), lwork=lwork)
        for o, v in zip(out, (c, d, e, tau)):
            o[i] = v
        _nan_where(info != 0, *(o[i] for o in out))
    return out


tridiagonal_p.examples = lambda rng: [
    Example([_general(rng, (4, 4))], {"lower": True}, diff_argnums=()),
    Example([_general(rng, (2, 3, 3), "complex128")], {"lower": False}, diff_argnums=()),
]


def tridiagonal(x: Any, *, lower: bool = True) -> list:
    """``[a, d, e, taus]``: the Hermitian matrix in ``x``'s ``lower`` (or upper) triangle
    reduced to real tridiagonal form, in LAPACK's packed form."""
    return bind(tridiagonal_p, x, lower=bool(lower))
