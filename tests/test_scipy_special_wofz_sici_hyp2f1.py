"""funcgrad.scipy.special's wofz, erfcx, dawsn, sici and hyp2f1 against SciPy (values
over wide ranges: large, small, negative, complex arguments) and JAX (values and the
derivatives JAX defines)."""

from __future__ import annotations

import jax
import jax.scipy.special as jsp
import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.scipy import special as fsp

# magnitudes from 1e-8 to 1e6, either sign
_MAG = st.floats(-8.0, 6.0).map(lambda e: 10.0**e)
_REAL = st.tuples(_MAG, st.booleans()).map(lambda t: -t[0] if t[1] else t[0])


def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.abs(a - b) / np.maximum(np.abs(b), np.finfo(np.float64).tiny)


# --------------------------------------------------------------------------- wofz


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_REAL, _REAL), min_size=1, max_size=16))
def test_wofz_matches_scipy_over_the_plane(parts):
    z = np.array([complex(r, i) for r, i in parts])
    want = ss.wofz(z)
    ok = np.isfinite(want) & (np.abs(want) < 1e300)
    got = np.asarray(fsp.wofz(z))
    assert got.dtype == np.complex128
    assert np.all(_rel(got[ok], want[ok]) < 5e-13)


def test_wofz_complex64_and_reflection():
    rng = np.random.default_rng(0)
    z = (rng.standard_normal(400) * 3 + 1j * rng.standard_normal(400) * 3).astype(np.complex64)
    got = np.asarray(fsp.wofz(z))
    want = ss.wofz(z.astype(np.complex128))
    assert got.dtype == np.complex64
    upper = z.imag >= 0
    assert _rel(got[upper], want[upper]).max() < 2e-6
    # below the axis the reflection 2 exp(-z^2) - w(-z): exp(-z^2)'s own float32 rounding
    # (where float32 holds the value; beyond, both overflow)
    fits = ~upper & (np.abs(want) < 1e37)
    assert _rel(got[fits], want[fits]).max() < 2e-5
    big = ~upper & (np.abs(want) > 1e39)
    assert big.any() and np.all(~np.isfinite(got[big]))
    # a real argument is taken as complex (JAX's promote_args_complex)
    np.testing.assert_allclose(np.asarray(fsp.wofz(np.float32(0.5))), ss.wofz(0.5), rtol=1e-6)


def test_wofz_against_jax_values_and_jvp():
    rng = np.random.default_rng(1)
    z = rng.standard_normal(30) * 2 + 1j * (rng.standard_normal(30) * 2)
    np.testing.assert_allclose(np.asarray(fsp.wofz(z)), np.asarray(jsp.wofz(z)), rtol=1e-12)
    t = np.ones_like(z)
    _, got = fg.jvp(fsp.wofz, (z,), (t,))
    _, want = jax.jvp(jsp.wofz, (z,), (t,))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10)


# --------------------------------------------------------------------------- erfcx


@settings(max_examples=60, deadline=None)
@given(st.lists(_REAL, min_size=1, max_size=16))
def test_erfcx_matches_scipy(xs):
    x = np.array(xs)
    want = ss.erfcx(x)
    got = np.asarray(fsp.erfcx(x))
    inf = np.isinf(want)
    assert np.array_equal(np.isinf(got), inf)
    # below zero exp(x^2)'s rounding (|x|^2 eps relative) is SciPy's too
    tol = np.where(x < 0, 1e-15 * np.maximum(x * x, 1) * 4, 1e-14)
    assert np.all(_rel(got[~inf], want[~inf]) < tol[~inf])


def test_erfcx_large_float32_and_special_values():
    x = np.array([10.0, 20.0, 50.0, 100.0], np.float32)
    got = np.asarray(fsp.erfcx(x))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ss.erfcx(x.astype(np.float64)), rtol=1e-6)
    x = np.array([27.0, 50.0, 100.0, 500.0, 1e300, np.inf, -np.inf, -30.0, 0.0])
    np.testing.assert_allclose(np.asarray(fsp.erfcx(x)), ss.erfcx(x), rtol=1e-14)
    z = np.array([1 + 1j, -2 + 0.5j, 3 - 4j, 0.1j])
    np.testing.assert_allclose(np.asarray(fsp.erfcx(z)), ss.erfcx(z), rtol=1e-13)


def test_erfcx_derivative_jit_vmap_against_jax():
    x = np.linspace(-5, 30, 41)
    got = fg.vmap(fg.grad(fsp.erfcx))(x)
    want = jax.vmap(jax.grad(jsp.erfcx))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(
        np.asarray(fg.jit(fsp.erfcx)(x)), np.asarray(jsp.erfcx(x)), rtol=1e-12
    )


# --------------------------------------------------------------------------- dawsn


@settings(max_examples=60, deadline=None)
@given(st.lists(_REAL, min_size=1, max_size=16))
def test_dawsn_matches_scipy(xs):
    x = np.array(xs)
    np.testing.assert_allclose(np.asarray(fsp.dawsn(x)), ss.dawsn(x), rtol=5e-14, atol=0)


def test_dawsn_edges_derivative_and_refusal():
    x = np.array([-10.0, -6.25, -3.25, 0.0, 3.25, 6.25, 10.0, 100.0, 1e300, np.inf, -np.inf])
    np.testing.assert_allclose(np.asarray(fsp.dawsn(x)), ss.dawsn(x), rtol=1e-14)
    x32 = np.linspace(-8, 8, 33).astype(np.float32)
    got = np.asarray(fsp.dawsn(x32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ss.dawsn(x32.astype(np.float64)), rtol=2e-6, atol=1e-7)
    xs = np.linspace(-6, 6, 25)
    np.testing.assert_allclose(
        np.asarray(fg.vmap(fg.grad(fsp.dawsn))(xs)),
        np.asarray(jax.vmap(jax.grad(jsp.dawsn))(xs)),
        rtol=1e-10,
        atol=1e-14,
    )
    with pytest.raises(ValueError, match="dawsn does not support complex"):
        fsp.dawsn(np.array([1j]))


# --------------------------------------------------------------------------- sici


@pytest.mark.parametrize("scale", [1.0, 10.0, 1e9])
def test_sici_matches_scipy(scale):
    x = np.random.default_rng(int(scale) % 97).standard_normal(300) * scale
    si, ci = (np.asarray(v) for v in fsp.sici(x))
    want_si, want_ci = ss.sici(x)
    np.testing.assert_allclose(si, want_si, rtol=1e-14)
    # Ci has zeros (x = 0.6165, 3.3842...): an absolute bound there
    np.testing.assert_allclose(ci, want_ci, rtol=1e-13, atol=1e-15)


def test_sici_float32_edges_and_refusal():
    x = np.random.default_rng(3).standard_normal(300).astype(np.float32) * 10
    si, ci = (np.asarray(v) for v in fsp.sici(x))
    assert si.dtype == ci.dtype == np.float32
    want_si, want_ci = ss.sici(x.astype(np.float64))
    np.testing.assert_allclose(si, want_si, rtol=1e-6)
    np.testing.assert_allclose(ci, want_ci, rtol=1e-6, atol=1e-6)
    si, ci = fsp.sici(np.array([0.0, np.inf, -np.inf]))
    np.testing.assert_array_equal(np.asarray(si), [0.0, np.pi / 2, -np.pi / 2])
    np.testing.assert_array_equal(np.asarray(ci), [-np.inf, 0.0, np.nan])
    with pytest.raises(ValueError, match=r"Argument `x` to sici must be real-valued\."):
        fsp.sici(np.arange(5, dtype=complex))


def test_sici_derivatives_against_jax():
    x = np.linspace(0.25, 20, 30)
    for k in (0, 1):
        got = fg.vmap(fg.grad(lambda v, k=k: fsp.sici(v)[k]))(x)
        want = jax.vmap(jax.grad(lambda v, k=k: jsp.sici(v)[k]))(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10)


# --------------------------------------------------------------------------- hyp2f1

# JAX's special cases (lax_scipy_special_functions_test.testHyp2f1SpecialCases)
_A = [0, 1, 1, 1, 1, 5, 5, 0.245, 0.45, 0.45, 2, 0.4, 0.32, 4, 4]
_B = [1, 0, 1, 1, 1, 1, 1, 3, 0.7, 0.7, 1, 0.7, 0.76, 2, 3]
_C = [1, 1, 0, 1, -1, 3, 3, 3, 0.45, 0.45, 5, 0.3, 0.11, 7, 7]
_X = [1, 1, 1, 0, 1, 0.5, 1, 0.35, 0.35, 1.5, 1, 0.4, 0.95, 0.95, 0.95]


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-13), (np.float32, 5e-6)])
def test_hyp2f1_special_cases(dtype, rtol):
    args = [np.array(v, dtype) for v in (_A, _B, _C, _X)]
    got = np.asarray(fsp.hyp2f1(*args))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ss.hyp2f1(*args), rtol=rtol)
    np.testing.assert_allclose(np.asarray(fg.jit(fsp.hyp2f1)(*args)), got, rtol=rtol)


def test_hyp2f1_wide_ranges():
    rng = np.random.default_rng(4)
    a, b, c = (rng.uniform(-3, 5, 600) for _ in range(3))
    a[:80] = np.round(a[:80])  # terminating series
    x = rng.uniform(-5, 1, 600)
    x[80:120] = rng.uniform(0.9, 0.999, 40)  # the transformation near 1
    want = ss.hyp2f1(a, b, c, x)
    got = np.asarray(fsp.hyp2f1(a, b, c, x))
    ok = np.isfinite(want) & (np.abs(want) > 1e-8) & (np.abs(want) < 1e8)
    assert ok.sum() > 500
    assert _rel(got[ok], want[ok]).max() < 1e-10
    # a polynomial past x = 1; x > 1 otherwise (a branch cut) and c a pole: inf, as SciPy
    np.testing.assert_allclose(
        np.asarray(fsp.hyp2f1(-3.0, 0.5, 1.5, np.array([2.0, -4.0]))),
        ss.hyp2f1(-3.0, 0.5, 1.5, [2.0, -4.0]),
        rtol=1e-14,
    )
    assert np.isinf(np.asarray(fsp.hyp2f1(0.5, 0.3, 1.2, 1.2)))
    assert np.isinf(np.asarray(fsp.hyp2f1(0.5, 0.3, -2.0, 0.5)))


def test_hyp2f1_derivatives_against_jax_and_vmap():
    rng = np.random.default_rng(5)
    pts = rng.uniform(0.1, 0.9, (6, 4))
    for a, b, c, x in pts:
        got = fg.grad(fsp.hyp2f1, argnums=(0, 1, 2, 3))(a, b, c, x)
        want = jax.grad(jsp.hyp2f1, argnums=(0, 1, 2, 3))(a, b, c, x)
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-9)
    cols = [pts[:, i] for i in range(4)]
    np.testing.assert_allclose(np.asarray(fg.vmap(fsp.hyp2f1)(*cols)), ss.hyp2f1(*cols), rtol=1e-13)


# --------------------------------------------------------------------------- exp1, expi


@settings(max_examples=60, deadline=None)
@given(st.lists(_REAL, min_size=1, max_size=16))
def test_exp1_expi_match_scipy(xs):
    x = np.array(xs)
    for ours, theirs in ((fsp.exp1, ss.exp1), (fsp.expi, ss.expi)):
        want = theirs(x)
        got = np.asarray(ours(x))
        assert np.array_equal(np.isnan(got), np.isnan(want))
        fin = np.isfinite(want) & (np.abs(want) > 1e-300)
        assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
        tiny = np.abs(want) <= 1e-300  # (subnormal results: XLA's CPU flushes them to 0)
        assert np.all(np.abs(got[tiny]) <= 1e-300)
        # Ei has a zero at 0.3725: an absolute bound beside the relative one
        assert np.all(np.abs(got[fin] - want[fin]) <= 2e-14 * np.abs(want[fin]) + 1e-16)


def test_exp1_expi_edges_float32_and_derivatives():
    e = np.array([-1.0, 0.0, 1e-300, np.inf, -np.inf, 700.0, 800.0])
    np.testing.assert_allclose(np.asarray(fsp.exp1(e)), ss.exp1(e), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(fsp.expi(e)), ss.expi(e), rtol=1e-14)
    x32 = np.array([0.01, 0.5, 1.0, 3.0, 15.0, 25.0, 80.0], np.float32)
    for ours, theirs in ((fsp.exp1, ss.exp1), (fsp.expi, ss.expi)):
        got = np.asarray(ours(x32))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, theirs(x32.astype(np.float64)), rtol=3e-6)
    x = np.linspace(0.25, 30, 24)
    for ours, theirs in ((fsp.exp1, jsp.exp1), (fsp.expi, jsp.expi)):
        got = fg.vmap(fg.grad(ours))(x)
        want = jax.vmap(jax.grad(theirs))(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(fg.grad(fsp.expi)(-1.5)), np.exp(-1.5) / -1.5, rtol=1e-12)
