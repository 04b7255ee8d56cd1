"""The Schur, Hessenberg and tridiagonal reductions (``funcgrad.lax.linalg.schur``/
``hessenberg``/``tridiagonal``) and the ``scipy.linalg`` functions built on them
(``schur``, ``rsf2csf``, ``sqrtm``, ``funm``, ``solve_sylvester``, ``hessenberg``)
against JAX 0.10.2 and SciPy: reconstructions ``Q T Q^H == A`` and the forms' shapes
(Schur vectors are unique only up to phases, so they are not compared entry by entry
with another library), SciPy's values where the algorithm is SciPy's, ``vmap`` vs a
loop, ``jit`` vs eager, and JAX's errors (no derivative, bad shapes). The primitives'
own rules are also checked by tests/test_registry.py and tests/test_host_tier.py.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.lax import linalg as flax_linalg
from funcgrad.scipy import linalg as fsl

DTYPES = ["float32", "complex64"]
_EPS = {"float32": 1.2e-7, "complex64": 1.2e-7}


def _rand(seed: int, shape: tuple, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-3, 3, shape)
    return x.astype(dtype)


def _H(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _quasi_triangular(t: np.ndarray, complex_form: bool) -> bool:
    """Zero below the first subdiagonal; a complex form also on it; a real form's
    subdiagonal entries never two in a row (2 x 2 blocks only)."""
    n = t.shape[-1]
    if n < 2:
        return True
    if not np.all(np.tril(t, -2) == 0):
        return False
    sub = np.diagonal(t, -1) != 0
    if complex_form:
        return not sub.any()
    return not np.any(sub[1:] & sub[:-1])


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 12), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 99))
def test_lax_schur_reconstructs_and_matches_jax_form(n, dtype, seed):
    a = _rand(seed, (n, n), dtype)
    t, q = (np.asarray(x) for x in flax_linalg.schur(a))
    tj, qj = (np.asarray(x) for x in jax.lax.linalg.schur(a))
    assert t.dtype == tj.dtype == np.dtype(dtype) and q.dtype == qj.dtype
    tol = 600 * _EPS[dtype] * max(1.0, np.abs(a).max())
    np.testing.assert_allclose(q @ t @ _H(q), a, atol=tol * n)
    np.testing.assert_allclose(q @ _H(q), np.eye(n), atol=100 * _EPS[dtype] * n)
    assert _quasi_triangular(t, complex_form=dtype.startswith("complex"))
    # the same LAPACK routine: the same eigenvalues in the same order on the diagonal
    np.testing.assert_allclose(np.diagonal(t), np.diagonal(tj), atol=tol)


def test_lax_schur_without_vectors_batched_jit_and_vmap():
    a = _rand(3, (4, 5, 5), "float32")
    (t,) = flax_linalg.schur(a, compute_schur_vectors=False)
    (tj,) = jax.lax.linalg.schur(a, compute_schur_vectors=False)
    np.testing.assert_allclose(np.asarray(t), np.asarray(tj), atol=1e-5)
    t_jit, q_jit = fg.jit(flax_linalg.schur)(a)
    t_vm, q_vm = fg.vmap(flax_linalg.schur)(a)
    for i in range(4):
        ti, qi = flax_linalg.schur(a[i])
        np.testing.assert_allclose(np.asarray(t_vm[i]), np.asarray(ti), atol=1e-5)
        np.testing.assert_allclose(np.asarray(q_vm[i]), np.asarray(qi), atol=1e-5)
        np.testing.assert_allclose(np.asarray(t_jit[i]), np.asarray(ti), atol=1e-5)
        np.testing.assert_allclose(np.asarray(q_jit[i]), np.asarray(qi), atol=1e-5)


def test_schur_errors_as_jax():
    a = _rand(0, (3, 3), "float32")
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        fg.grad(lambda x: flax_linalg.schur(x)[0].sum())(a)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        fg.jvp(lambda x: flax_linalg.schur(x)[0], (a,), (a,))
    with pytest.raises(NotImplementedError, match="sort feature"):
        flax_linalg.schur(a, sort_eig_vals=True)
    with pytest.raises(ValueError, match="square matrix"):
        flax_linalg.schur(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="schur requires a float32"):
        flax_linalg.schur(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="'output' to be either"):
        fsl.schur(a, output="other")
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'hessenberg'"):
        fg.grad(lambda x: flax_linalg.hessenberg(x)[0].sum())(a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lax_hessenberg_and_tridiagonal_match_jax(dtype):
    a = _rand(5, (2, 6, 6), dtype)
    for got, want in zip(flax_linalg.hessenberg(a), jax.lax.linalg.hessenberg(a)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    for lower in (True, False):
        got = flax_linalg.tridiagonal(a, lower=lower)
        want = jax.lax.linalg.tridiagonal(a, lower=lower)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="must be a square matrix"):
        flax_linalg.tridiagonal(np.ones((2, 3), dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("output", ["real", "complex"])
def test_scipy_schur_against_scipy(dtype, output):
    a = _rand(7, (7, 7), dtype)
    t, z = (np.asarray(x) for x in fsl.schur(a, output=output))
    ts, _ = sl.schur(a, output=output)
    assert t.dtype == ts.dtype
    np.testing.assert_allclose(z @ t @ _H(z), a, atol=1e-4)
    assert _quasi_triangular(t, complex_form=output == "complex" or dtype == "complex64")
    # SciPy calls the same gees: the same form
    np.testing.assert_allclose(t, ts, atol=2e-4)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 10), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 99))
def test_rsf2csf_against_scipy(n, dtype, seed):
    """Arbitrary (not quasi-triangular) inputs, as JAX's test: SciPy's exact sweep."""
    t, z = _rand(seed, (n, n), dtype), _rand(seed + 1, (n, n), dtype)
    got = fsl.rsf2csf(t, z)
    want = sl.rsf2csf(t, z)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=3e-5, atol=3e-5 * n)


def test_rsf2csf_of_a_real_schur_form_is_triangular_and_batches():
    a = _rand(11, (3, 5, 5), "float32")
    t, z = fsl.schur(a)
    ct, cz = (np.asarray(x) for x in fsl.rsf2csf(t, z))
    assert all(_quasi_triangular(ct[i], complex_form=True) for i in range(3))
    np.testing.assert_allclose(cz @ ct @ _H(cz), a, atol=1e-4)
    with pytest.raises(ValueError, match="Input array shapes must match"):
        fsl.rsf2csf(np.eye(3), np.eye(2))


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 12), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 99))
def test_sqrtm_against_scipy_and_its_square(n, dtype, seed):
    a = _rand(seed, (n, n), dtype)
    psd = a @ a.T  # no negative real eigenvalue: the principal root is unique
    r = np.asarray(fsl.sqrtm(psd))
    scale = np.abs(psd).max()
    np.testing.assert_allclose(r, sl.sqrtm(psd), atol=1e-4 * np.sqrt(scale) * n)
    g = np.asarray(fsl.sqrtm(a))
    np.testing.assert_allclose(g @ g, a, atol=2e-3 * max(1.0, np.abs(a).max()) * n)


def test_sqrtm_zero_numerators_and_jit():
    m = np.diag([0.0, 0.0, 9.0, 0.0, 0.0, 4.0]).astype(np.float32)
    np.testing.assert_allclose(np.asarray(fsl.sqrtm(m)), np.diag([0, 0, 3, 0, 0, 2]), atol=1e-6)
    a = _rand(2, (6, 6), "float32")
    np.testing.assert_allclose(
        np.asarray(fg.jit(fsl.sqrtm)(a @ a.T)),
        np.asarray(jax.scipy.linalg.sqrtm(a @ a.T)),
        atol=1e-3,
    )
    with pytest.raises(NotImplementedError, match="Blocked"):
        fsl.sqrtm(m, blocksize=2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("disp", [True, False])
def test_funm_against_scipy(dtype, disp):
    a = _rand(4, (6, 6), dtype)

    def func(x):
        return x**-2.718

    got = fsl.funm(a, func, disp=disp)
    want = sl.funm(a, func, disp=disp)
    if disp:
        got, want = (got,), (want,)
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-4, atol=1e-4)
    if not disp:
        np.testing.assert_allclose(float(got[1]), want[1], rtol=1e-3)
    np.testing.assert_allclose(
        np.asarray(fsl.funm(a, fnp.exp)), sl.expm(a.astype(np.complex128)), rtol=1e-3, atol=1e-3
    )
    with pytest.raises(ValueError, match="expected square"):
        fsl.funm(np.ones((2, 3)), fnp.exp)


@settings(max_examples=10, deadline=None)
@given(
    m=st.integers(1, 6),
    n=st.integers(1, 6),
    dtype=st.sampled_from(DTYPES),
    method=st.sampled_from(["schur", "eigen"]),
    seed=st.integers(0, 99),
)
def test_solve_sylvester_against_scipy(m, n, dtype, method, seed):
    a = _rand(seed, (m, m), dtype) + 4 * np.eye(m, dtype=dtype)
    b = _rand(seed + 1, (n, n), dtype) + 4 * np.eye(n, dtype=dtype)
    c = _rand(seed + 2, (m, n), dtype)
    x = np.asarray(fsl.solve_sylvester(a, b, c, method=method))
    assert x.dtype == np.asarray(jax.scipy.linalg.solve_sylvester(a, b, c, method=method)).dtype
    np.testing.assert_allclose(x, sl.solve_sylvester(a, b, c), rtol=1e-3, atol=1e-3)


def test_solve_sylvester_broadcast_and_nan_when_singular():
    a = _rand(1, (3, 4, 4), "float32") + 4 * np.eye(4, dtype=np.float32)
    b = _rand(2, (2, 2), "float32") + 4 * np.eye(2, dtype=np.float32)
    c = _rand(3, (4, 2), "float32")
    x = np.asarray(fsl.solve_sylvester(a, b, c))
    for i in range(3):
        np.testing.assert_allclose(x[i], sl.solve_sylvester(a[i], b, c), rtol=1e-3, atol=1e-3)
    # A = -B: every eigenvalue sum is zero, so no solution is unique
    s = np.asarray(fsl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)), tol=1e-5))
    assert np.isnan(s).all()
    with pytest.raises(ValueError, match="Unrecognized method"):
        fsl.solve_sylvester(np.eye(2), np.eye(2), np.eye(2), method="other")


@pytest.mark.parametrize("dtype", DTYPES)
def test_scipy_hessenberg_against_scipy(dtype):
    a = _rand(9, (6, 6), dtype)
    h, q = (np.asarray(x) for x in fsl.hessenberg(a, calc_q=True))
    hs, qs = sl.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(h, hs, atol=1e-4)
    np.testing.assert_allclose(q, qs, atol=1e-5)
    np.testing.assert_allclose(q @ h @ _H(q), a, atol=1e-4)
    np.testing.assert_allclose(np.asarray(fsl.hessenberg(a)), hs, atol=1e-4)
    batch = _rand(10, (2, 4, 4), dtype)
    hb = np.asarray(fsl.hessenberg(batch))
    for i in range(2):
        np.testing.assert_allclose(hb[i], sl.hessenberg(batch[i]), atol=1e-4)
    empty = fsl.hessenberg(np.zeros((0, 0), dtype), calc_q=True)
    assert [np.asarray(e).shape for e in empty] == [(0, 0), (0, 0)]
