"""funcgrad.scipy.special's expn, spence and fresnel against SciPy (values over wide
ranges and at the edges), mpmath (fresnel at large x, where SciPy's own phase rounds)
and JAX (the derivatives JAX defines, jit and vmap)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import mpmath
import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import special as fsp

# magnitudes from 1e-12 to 1e3
_POS = st.floats(-12.0, 3.0).map(lambda e: 10.0**e)


def _rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.abs(a - b) / np.maximum(np.abs(b), np.finfo(np.float64).tiny)


def _grad(f, x):
    return np.array([float(fg.grad(f)(float(v))) for v in x])


# --------------------------------------------------------------------------- expn


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.lists(_POS, min_size=1, max_size=12))
def test_expn_matches_scipy(n, xs):
    x = np.array(xs)
    want = ss.expn(n, x)
    ok = np.isfinite(want) & (want > 1e-290)
    got = np.asarray(fsp.expn(n, x))
    assert got.dtype == np.float64
    assert np.all(_rel(got[ok], want[ok]) < 1e-12)


def test_expn_large_orders_float32_and_edges():
    x = np.logspace(-6, np.log10(600), 300)
    for n in (100, 1000, 5000, 20000):
        want = ss.expn(n, x)
        ok = want > 1e-290
        assert _rel(np.asarray(fsp.expn(float(n), x))[ok], want[ok]).max() < 1e-12
    x32 = np.logspace(-6, 1.8, 300).astype(np.float32)
    got = np.asarray(fsp.expn(np.float32(3), x32))
    want = ss.expn(3, x32.astype(np.float64))
    ok = want > 1e-37
    assert got.dtype == np.float32 and _rel(got[ok], want[ok]).max() < 2e-5
    n = np.array([0, 1, 2, 5, 3, -1, 2])
    x = np.array([0.0, 0.0, 0.0, 0.0, np.inf, 1.0, -1.0])
    np.testing.assert_array_equal(np.asarray(fsp.expn(n, x)), ss.expn(n, x))  # (1/(n-1) at 0)
    assert np.isnan(np.asarray(fsp.expn(2.5, 1.0)))  # not an integer order (JAX: NaN)
    with pytest.raises(ValueError, match="expn does not support complex"):
        fsp.expn(1, 1j)


def test_expn_derivative_as_jax_and_jit_vmap():
    n = np.array([1.0, 2.0, 3.0, 7.0, 1.0])
    x = np.array([0.3, 1.0, 2.5, 40.0, 1.7])
    got = np.asarray(fg.jit(fg.vmap(fg.grad(fsp.expn, argnums=1)))(n, x))
    want = np.asarray(jax.vmap(jax.grad(jsp.expn, argnums=1))(jnp.asarray(n), jnp.asarray(x)))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got, -ss.expn(n.astype(int) - 1, x), rtol=1e-12)
    assert float(fg.grad(fsp.expn, argnums=0)(2.0, 1.0)) == float(
        jax.grad(jsp.expn, argnums=0)(2.0, 1.0)
    )
    np.testing.assert_allclose(
        np.asarray(fg.jit(fsp.expn)(n, x)), ss.expn(n.astype(int), x), rtol=1e-13
    )


# --------------------------------------------------------------------------- spence


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-30.0, 30.0).map(lambda e: 10.0**e), min_size=1, max_size=16))
def test_spence_matches_scipy(xs):
    x = np.array(xs)
    want = ss.spence(x)
    got = np.asarray(fsp.spence(x))
    ok = want != 0
    assert np.all(_rel(got[ok], want[ok]) < 1e-14)


def test_spence_near_one_float32_edges_and_refusal():
    x = np.concatenate([np.linspace(0.99, 1.01, 2001), np.linspace(0, 4, 4001)])
    want = ss.spence(x)
    ok = want != 0
    assert _rel(np.asarray(fsp.spence(x))[ok], want[ok]).max() < 1e-14
    x32 = x.astype(np.float32)
    got = np.asarray(fsp.spence(x32))
    want32 = ss.spence(x32.astype(np.float64))
    ok = want32 != 0
    assert got.dtype == np.float32 and _rel(got[ok], want32[ok]).max() < 1e-6
    edges = np.array([0.0, 1.0, np.inf, -1.0, np.nan, 1e-300, 1e300])
    np.testing.assert_allclose(np.asarray(fsp.spence(edges)), ss.spence(edges), rtol=1e-14)
    with pytest.raises(TypeError, match=r"x\.dtype=int32 is not supported"):
        fsp.spence(np.int32(2))


def test_spence_derivative_where_jaxs_is_defined():
    x = np.array([0.01, 0.3, 0.9, 1.5, 3.0, 50.0])
    want = np.log(x) / (1 - x)
    np.testing.assert_allclose(_grad(fsp.spence, x), want, rtol=1e-13)
    jaxs = np.array([float(jax.grad(jsp.spence)(v)) for v in x])
    finite = np.isfinite(jaxs)  # (JAX's is NaN for 1 < x <= 2: autodiff of its piecewise form)
    assert finite.sum() >= 4
    np.testing.assert_allclose(_grad(fsp.spence, x)[finite], jaxs[finite], rtol=1e-6)
    # at 1 the limit -1 (JAX's autodiff of its piecewise form gives 0 there)
    assert float(fg.grad(fsp.spence)(1.0)) == -1.0
    got = np.asarray(fg.jit(fg.vmap(fsp.spence))(x))
    np.testing.assert_allclose(got, ss.spence(x), rtol=1e-14)


# --------------------------------------------------------------------------- fresnel


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-10.0, 2.0).map(lambda e: 10.0**e), min_size=1, max_size=16))
def test_fresnel_matches_scipy(xs):
    x = np.array(xs + [-v for v in xs])
    gs, gc = fsp.fresnel(x)
    ws, wc = ss.fresnel(x)
    assert np.all(_rel(gs, ws) < 1e-14) and np.all(_rel(gc, wc) < 1e-14)


def test_fresnel_large_x_against_mpmath():
    # SciPy rounds the phase pi x**2 / 2 (1e-11 off at 1e5); the reduced phase does not
    mpmath.mp.dps = 30
    for x in (37.3, 780.0097, 12345.678, 92682.98233793504):
        gs, gc = fsp.fresnel(x)
        assert _rel(gs, float(mpmath.fresnels(x))) < 1e-14
        assert _rel(gc, float(mpmath.fresnelc(x))) < 1e-14


def test_fresnel_float32_edges_derivatives_jit_vmap():
    x32 = np.linspace(-6, 6, 2001).astype(np.float32)
    gs, gc = fsp.fresnel(x32)
    ws, wc = ss.fresnel(x32.astype(np.float64))
    assert gs.dtype == np.float32
    assert np.abs(np.asarray(gs) - ws).max() < 1e-6 and np.abs(np.asarray(gc) - wc).max() < 1e-6
    edges = np.array([0.0, np.inf, -np.inf, np.nan, -1e200])
    for g, w in zip(fsp.fresnel(edges), jsp.fresnel(jnp.asarray(edges))):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))  # (SciPy: NaN at 1e200)
    for g, w in zip(fsp.fresnel(edges[:4]), ss.fresnel(edges[:4])):
        np.testing.assert_array_equal(np.asarray(g), w)
    x = np.array([-2.5, 0.2, 1.0, 3.0, 40.0])
    for k in (0, 1):
        got = np.asarray(fg.jit(fg.vmap(fg.grad(lambda v, k=k: fsp.fresnel(v)[k])))(x))
        want = np.asarray(jax.vmap(jax.grad(lambda v, k=k: jsp.fresnel(v)[k]))(jnp.asarray(x)))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="fresnel does not support complex"):
        fsp.fresnel(1j)


# --------------------------------------------------------------------------- owens_t


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(-6.0, 1.5), st.floats(-4.0, 6.0), st.booleans(), st.booleans()),
        min_size=1,
        max_size=16,
    )
)
def test_owens_t_matches_scipy(parts):
    h = np.array([(-1) ** sh * 10.0**eh for eh, _, sh, _ in parts])
    a = np.array([(-1) ** sa * 10.0**ea for _, ea, _, sa in parts])
    want = ss.owens_t(h, a)
    ok = np.abs(want) > 1e-290
    assert np.all(_rel(np.asarray(fsp.owens_t(h, a))[ok], want[ok]) < 1e-12)


def test_owens_t_small_a_against_mpmath_and_edges():
    # for a below 1e-6 SciPy's own value is 1e-9 off; mpmath's quadrature decides
    mpmath.mp.dps = 30
    for h, a in ((-5.377, -1.05e-8), (10.87, 1.76e-6), (0.3, 1e-7)):
        f = lambda x, h=h: mpmath.exp(-(h**2) * (1 + x**2) / 2) / (1 + x**2)
        want = float(mpmath.quad(f, [0, abs(a)]) / (2 * mpmath.pi)) * np.sign(a)
        assert _rel(fsp.owens_t(h, a), want) < 1e-13  # (exp(-h**2/2) rounds h**2)
    h = np.array([0.0, 0.0, 1.0, np.inf, 1.0, np.nan, 2.0, -3.0])
    a = np.array([1.0, np.inf, np.inf, 1.0, 0.0, 1.0, -np.inf, 0.5])
    np.testing.assert_allclose(np.asarray(fsp.owens_t(h, a)), ss.owens_t(h, a), rtol=1e-14)
    h32 = np.linspace(-5, 5, 101).astype(np.float32)
    got = np.asarray(fsp.owens_t(h32, np.float32(2.5)))
    want = ss.owens_t(h32.astype(np.float64), 2.5)
    assert got.dtype == np.float32 and _rel(got, want).max() < 1e-5
    with pytest.raises(ValueError, match="owens_t does not support complex"):
        fsp.owens_t(1j, 1.0)


def test_owens_t_derivatives_as_jax_and_jit_vmap():
    h = np.array([-2.0, 0.0, 0.5, 1.5, 4.0, 0.7])
    a = np.array([0.3, 2.0, -1.5, 0.9, 7.0, 1.0])
    for k in (0, 1):
        got = np.asarray(fg.jit(fg.vmap(fg.grad(fsp.owens_t, argnums=k)))(h, a))
        want = np.asarray(
            jax.vmap(jax.grad(jsp.owens_t, argnums=k))(jnp.asarray(h), jnp.asarray(a))
        )
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    # against finite differences of the values themselves
    eps = 1e-6
    fd_a = (np.asarray(fsp.owens_t(h, a + eps)) - np.asarray(fsp.owens_t(h, a - eps))) / (2 * eps)
    np.testing.assert_allclose(
        np.asarray(fg.vmap(fg.grad(fsp.owens_t, 1))(h, a)), fd_a, rtol=1e-6, atol=1e-12
    )


# --------------------------------------------------------------------------- hyp1f1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0.01, 30.0), st.floats(0.01, 30.0), st.floats(-100.0, 300.0)),
        min_size=1,
        max_size=16,
    )
)
def test_hyp1f1_matches_scipy(parts):
    a, b, x = (np.array(v) for v in zip(*parts))
    want = ss.hyp1f1(a, b, x)
    # (x < 0 with a > b: exp(x) M(b - a, b, -x) cancels; measured in docs/conformance.md)
    ok = np.isfinite(want) & (np.abs(want) > 1e-280) & ((x >= 0) | (a <= b))
    got = np.asarray(fsp.hyp1f1(a, b, x))
    assert np.all(_rel(got[ok], want[ok]) < 5e-13)


def test_hyp1f1_edges_float32_and_refusal():
    a, b = np.array([0.0, 2.0, 1.0, 0.0]), np.array([1.0, 2.0, 0.0, 0.0])
    got = np.asarray(fsp.hyp1f1(a, b, 2.0))
    np.testing.assert_allclose(got, js_hyp1f1(a, b, 2.0), rtol=1e-14)  # (JAX's: 1 at a = b = 0)
    np.testing.assert_allclose(got[:3], ss.hyp1f1(a[:3], b[:3], 2.0), rtol=1e-14)
    a = np.linspace(0.5, 10, 50).astype(np.float32)
    x = np.linspace(-20, 40, 50).astype(np.float32)
    got32 = np.asarray(fsp.hyp1f1(a, np.float32(12.5), x))
    want32 = ss.hyp1f1(a.astype(np.float64), 12.5, x.astype(np.float64))
    assert got32.dtype == np.float32 and _rel(got32, want32).max() < 1e-5
    with pytest.raises(ValueError, match="hyp1f1 does not support complex"):
        fsp.hyp1f1(1.0, 2.0, 1j)


def js_hyp1f1(a, b, x):
    return jsp.hyp1f1(jnp.asarray(a), jnp.asarray(b), jnp.asarray(x))


def test_hyp1f1_derivatives_as_jax_and_jit_vmap():
    a = np.array([0.5, 1.5, 3.0, 7.0, 2.2])
    b = np.array([1.0, 2.5, 1.5, 9.0, 4.0])
    x = np.array([0.3, 2.0, 5.0, 12.0, 30.0])
    for k in (0, 1, 2):
        got = np.asarray(fg.jit(fg.vmap(fg.grad(fsp.hyp1f1, argnums=k)))(a, b, x))
        want = np.asarray(
            jax.vmap(jax.grad(jsp.hyp1f1, argnums=k))(
                jnp.asarray(a), jnp.asarray(b), jnp.asarray(x)
            )
        )
        np.testing.assert_allclose(got, want, rtol=1e-11)
        # and against central differences of the values
        eps = 1e-6
        up = [a, b, x]
        dn = [a, b, x]
        up[k], dn[k] = up[k] + eps, dn[k] - eps
        fd = (np.asarray(fsp.hyp1f1(*up)) - np.asarray(fsp.hyp1f1(*dn))) / (2 * eps)
        np.testing.assert_allclose(got, fd, rtol=1e-6)


# --------------------------------------------------------------------------- sph_harm_y


@pytest.mark.parametrize("n_max", [0, 3, 12, 30])
def test_sph_harm_y_matches_scipy(n_max):
    rng = np.random.default_rng(n_max)
    n = rng.integers(0, n_max + 1, 300)
    m = np.array([rng.integers(-k, k + 1) for k in n])
    theta = rng.uniform(0, np.pi, 300)
    phi = rng.uniform(0, 2 * np.pi, 300)
    got = np.asarray(fsp.sph_harm_y(n, m, theta, phi, n_max=n_max))
    want = ss.sph_harm_y(n, m, theta, phi)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-14)
    got = np.asarray(fsp.sph_harm_y(n, m, theta, phi))  # (n_max = max(n))
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-14)


def test_sph_harm_y_conventions_as_jax():
    def both(*args, **kw):
        jargs = [jnp.asarray(a) for a in args]
        return np.asarray(fsp.sph_harm_y(*args, **kw)), np.asarray(jsp.sph_harm_y(*jargs, **kw))

    n, m = np.array([1, 2, 6, 4]), np.array([3, -1, 2, -4])
    theta, phi = np.array([0.5, 0.0, 1.2, 2.9]), np.array([1.0, 2.0, 0.3, 5.0])
    got, want = both(n, m, theta, phi)  # (|m| > n: 0)
    np.testing.assert_allclose(got, want, atol=1e-14)
    got, want = both(n, m, theta, phi, n_max=3)  # (n and |m| clipped to n_max)
    np.testing.assert_allclose(got, want, atol=1e-14)
    got, want = both(np.array([2]), np.array([1]), 0.3, np.array([0.2]))  # (a scalar theta)
    assert got.shape == (1,)
    np.testing.assert_allclose(got, want, atol=1e-14)
    with pytest.raises(NotImplementedError, match="diff_n"):
        fsp.sph_harm_y(n, m, theta, phi, diff_n=1)
    with pytest.raises(TypeError, match="must be statically specified"):
        fg.jit(lambda n: fsp.sph_harm_y(n, m, theta, phi))(n)
    f32 = fsp.sph_harm_y(n, m, theta.astype(np.float32), phi.astype(np.float32), n_max=6)
    assert np.asarray(f32).dtype == np.complex64


def test_sph_harm_y_derivatives_as_jax_under_jit():
    n, m = np.array([0, 1, 3, 5, 5]), np.array([0, -1, 2, 5, -3])
    phi = np.array([0.1, 1.0, 2.0, 4.0, 6.0])

    def f(mod, fn, grad, wrap):
        def loss(theta, phi):
            y = fn(n, m, theta, phi, n_max=5)
            return mod.sum(mod.real(y) ** 2 + 3 * mod.imag(y))

        return wrap(grad(loss, argnums=(0, 1)))

    theta = np.array([0.3, 0.7, 1.1, 2.0, 2.8])
    got = f(fnp, fsp.sph_harm_y, fg.grad, fg.jit)(theta, phi)
    want = f(jnp, jsp.sph_harm_y, jax.grad, jax.jit)(jnp.asarray(theta), jnp.asarray(phi))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-13)
