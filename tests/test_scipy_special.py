"""funcgrad.scipy.special against jax.scipy.special (values, dtypes, weak types, grads,
vmap, jit, errors) and the special-function primitives' own rules."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import jax_oracle as jo
import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives import special as sp
from funcgrad.scipy import special as fss

RNG = np.random.default_rng(0)
X = RNG.uniform(-3.0, 3.0, 6)
POS = RNG.uniform(0.2, 4.0, 6)
UNIT = RNG.uniform(0.05, 0.95, 6)

# name -> arguments (float64 arrays); every case also runs in float32
CASES = {
    "erf": (X,),
    "erfc": (X,),
    "erfinv": (UNIT * 2 - 1,),
    "expit": (X,),
    "logit": (UNIT,),
    "xlogy": (
        np.array([0.0, 0.0, 1.5, -2.0, 3.0, 0.0]),
        np.array([0.0, 2.0, 0.5, 3.0, 1.0, np.nan]),
    ),
    "xlog1py": (
        np.array([0.0, 0.0, 1.5, -2.0, 3.0, 1.0]),
        np.array([-1.0, 2.0, 0.5, 3.0, 1.0, -0.5]),
    ),
    "gammaln": (POS,),
    "gamma": (np.array([0.5, 1.0, 3.5, -0.5, -1.5, -2.5]),),
    "gammasgn": (np.array([0.5, 1.0, 3.5, -0.5, -1.5, -2.5]),),
    "digamma": (POS,),
    "betaln": (POS, POS[::-1]),
    "beta": (POS, POS[::-1]),
    "gammainc": (POS, POS[::-1]),
    "gammaincc": (POS, POS[::-1]),
    "betainc": (POS, POS[::-1], UNIT),
    "ndtr": (X * 3,),
    "ndtri": (UNIT,),
    "log_ndtr": (np.array([-40.0, -21.0, -3.0, 0.0, 9.0, 30.0]),),
    "entr": (np.array([-1.0, 0.0, 0.3, 1.0, 2.5, 0.01]),),
    "rel_entr": (
        np.array([0.0, 0.0, 0.5, 1.0, 2.0, -1.0]),
        np.array([0.0, 1.0, 0.5, -1.0, 0.3, 1.0]),
    ),
    "kl_div": (
        np.array([0.0, 0.0, 0.5, 1.0, 2.0, -1.0]),
        np.array([0.0, 1.0, 0.5, -1.0, 0.3, 1.0]),
    ),
    "i0e": (X,),
    "i1e": (X,),
    "i0": (X,),
    "i1": (X,),
    "zeta": (POS + 1.1, POS),
    "factorial": (np.array([-1.0, 0.0, 1.0, 4.0, 5.5, 10.0]),),
}


def _close(a, b, rtol):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)


# float32 for a sample of the functions (the rest share their code paths)
F32 = ("erfc", "xlogy", "gammaln", "gammainc", "betainc", "ndtr", "ndtri", "log_ndtr", "i1e")
VALUE_CASES = [(n, np.float64) for n in sorted(CASES)] + [(n, np.float32) for n in F32]


@pytest.mark.parametrize(
    "name,dtype", VALUE_CASES, ids=[f"{n}-{np.dtype(d).name}" for n, d in VALUE_CASES]
)
def test_values_match_jax(name, dtype):
    args = [np.asarray(a, dtype) for a in CASES[name]]
    if name in ("log_ndtr",) and dtype == np.float32:
        args = [np.array([-20.0, -11.0, -3.0, 0.0, 2.0, 6.0], dtype)]  # float32's ranges
    with np.errstate(all="ignore"):
        want = getattr(jss, name)(*args)
    got = getattr(fss, name)(*args)
    _close(got, want, 1e-12 if dtype == np.float64 else 3e-5)


def test_polygamma_and_multigammaln():
    n = np.array([0, 1, 2, 3])
    x = np.array([0.5, 1.5, 2.0, 4.0])
    _close(fss.polygamma(n, x), jss.polygamma(n, x), 1e-12)
    a = np.array([2.0, 3.5])
    _close(fss.multigammaln(a, 3), jss.multigammaln(a, 3), 1e-12)


def test_bernoulli_numbers_are_exact():
    exact = [1, -1 / 2, 1 / 6, 0, -1 / 30, 0, 1 / 42, 0, -1 / 30, 0, 5 / 66, 0, -691 / 2730]
    got = np.asarray(fss.bernoulli(12))
    np.testing.assert_allclose(got, exact, rtol=1e-15)
    np.testing.assert_allclose(got, ss.bernoulli(12), rtol=1e-10)


def test_tails_match_scipy():
    # (arrays of one shape throughout: eager ops compile once per shape)
    for p in ([1e-300, 1e-50, 1e-12, 1e-7, 0.2, 0.5], [0.9, 1 - 1e-10, 0.0, 1.0, 0.7, 0.3]):
        p = np.array(p)
        np.testing.assert_allclose(np.asarray(fss.ndtri(p)), ss.ndtri(p), rtol=1e-12)
    assert np.isnan(np.asarray(fss.ndtri(np.array([-0.1, 1.1, np.nan, 0.5, 0.5, 0.5]))[:3])).all()
    for x in ([-1e3, -40.0, -20.5, -19.5, -5.0, 0.0], [7.9, 8.1, 40.0, -0.5, 2.0, -10.0]):
        x = np.array(x)
        # the asymptotic series (3 terms, as JAX) and log(ndtr) near 1 limit the accuracy
        got = np.asarray(fss.log_ndtr(x))
        np.testing.assert_allclose(got, ss.log_ndtr(x), rtol=1e-10, atol=1e-16)
        np.testing.assert_allclose(got, jss.log_ndtr(x), rtol=1e-14)


@pytest.mark.parametrize("name", ["erf", "ndtr", "entr", "factorial", "gamma"])
def test_weak_types_of_python_scalars(name):
    got, want = getattr(fss, name)(0.3), getattr(jss, name)(0.3)
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    got, want = fss.rel_entr(0.3, 0.4), jss.rel_entr(0.3, 0.4)
    assert got.weak_type == want.weak_type


def test_integer_promotion():
    got, want = fss.gammaln(np.array([1, 2, 3])), jss.gammaln(np.array([1, 2, 3]))
    assert got.dtype == want.dtype
    got, want = fss.xlogy(np.float32(2.0), 3.0), jss.xlogy(np.float32(2.0), 3.0)
    assert got.dtype == want.dtype == np.float32


# derivatives: funcgrad's against jax.grad at the points of CASES (first argument, and
# every argument JAX differentiates)
GRAD_CASES = [
    ("erfc", 0),
    ("logit", 0),
    ("xlogy", 0),
    ("xlogy", 1),
    ("xlog1py", 0),
    ("xlog1py", 1),
    ("gamma", 0),
    ("digamma", 0),
    ("beta", 1),
    ("gammainc", 0),
    ("gammaincc", 1),
    ("betainc", 2),
    ("ndtr", 0),
    ("ndtri", 0),
    ("log_ndtr", 0),
    ("entr", 0),
    ("rel_entr", 0),
    ("kl_div", 1),
    ("i0e", 0),
    ("i1e", 0),
]


@pytest.mark.parametrize("name,argnum", GRAD_CASES, ids=[f"{n}-{i}" for n, i in GRAD_CASES])
def test_grad_matches_jax(name, argnum):
    args = [np.asarray(a) for a in CASES[name]]

    def summed(mod, np_):
        def f(z):
            full = list(args)
            full[argnum] = z
            return np_.sum(getattr(mod, name)(*full))

        return f

    with np.errstate(all="ignore"):
        want = jo.grad(summed(jss, jnp))(args[argnum])
    got = fg.jit(fg.grad(summed(fss, fg.numpy)))(args[argnum])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)


def test_special_points_derivatives():
    # xlogy/xlog1py/entr: well-defined derivatives at x == 0, as JAX's custom rules
    for f, y in ((fss.xlogy, 0.0), (fss.xlog1py, -1.0)):
        jf = getattr(jss, f.__name__)
        assert float(fg.grad(lambda x: f(x, y))(0.0)) == float(jo.grad(lambda x: jf(x, y))(0.0))
    assert float(fg.grad(fss.i1e)(0.0)) == 0.5
    # second derivatives: digamma through polygamma, log_ndtr through its rule
    for f in ("log_ndtr", "gammaln"):
        x = 1.7
        got = fg.grad(fg.grad(getattr(fss, f)))(x)
        want = jo.grad(jo.grad(getattr(jss, f)))(x)
        np.testing.assert_allclose(float(got), float(want), rtol=1e-8)


def test_vmap_and_jit():
    a = POS[:, None] * np.ones((6, 6))
    x = np.linspace(0.5, 3.0, 6)
    got = fg.vmap(fss.gammainc, in_axes=(0, None))(a, x)
    _close(got, jss.gammainc(a, x), 1e-12)
    got = fg.vmap(fg.grad(lambda z: fss.betainc(2.0, 3.0, z)))(UNIT)
    want = jo.vmap(jo.grad(lambda z: jss.betainc(2.0, 3.0, z)))(UNIT)
    _close(got, want, 1e-10)
    b = np.array([1.0, -0.5, 2.0, 1.0, 1.0, 0.0])
    got = fg.jit(lambda v: fss.logsumexp(v, axis=0, b=b))(X)
    _close(got, jss.logsumexp(X, axis=0, b=b), 1e-12)


@given(st.floats(-30.0, 30.0))
def test_log_ndtr_consistent_with_ndtr(x):
    want = float(jss.log_ndtr(x))
    np.testing.assert_allclose(float(fss.log_ndtr(x)), want, rtol=1e-12, atol=1e-300)


def test_errors():
    with pytest.raises(ValueError, match="integer type"):
        fss.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="Riemann"):
        fss.zeta(2.0)
    with pytest.raises(NotImplementedError, match="exact=True"):
        fss.factorial(3, exact=True)
    with pytest.raises(ValueError, match="complex"):
        fss.xlogy(1j, 2.0)
    with pytest.raises(TypeError, match="not supported"):
        fss.ndtr(np.array([1, 2]))
    with pytest.raises(TypeError, match="series_order"):
        fss.log_ndtr(1.0, series_order=1.5)


def test_zeta_derivative_in_q():
    x, q = CASES["zeta"]
    got = fg.vmap(fg.grad(fss.zeta, argnums=1))(x, q)
    np.testing.assert_allclose(np.asarray(got), -x * np.asarray(jax.lax.zeta(x + 1, q)), rtol=1e-12)


def test_primitive_errors_and_non_differentiable_arguments():
    with pytest.raises(TypeError, match=r"igamma.*one dtype"):
        sp.igamma(np.float32(1.0), np.float64(2.0))
    with pytest.raises(TypeError, match=r"betainc.*equal shapes"):
        sp.betainc(np.ones(2), np.ones(3), np.ones(2))
    with pytest.raises(TypeError, match="zeta requires a real floating dtype"):
        sp.zeta(np.array([2, 3]), np.array([1, 1]))
    # as jax.lax: no derivative in polygamma's m, zeta's x, betainc's a and b
    with pytest.raises(ValueError, match="polygamma: differentiation"):
        fg.jvp(lambda m: sp.polygamma(m, 2.0), (1.0,), (1.0,))
    with pytest.raises(ValueError, match="betainc: differentiation"):
        fg.jvp(lambda a: sp.betainc(a, 2.0, 0.5), (1.0,), (1.0,))
    # igamma's derivative in a goes through igamma_grad_a
    got = fg.grad(lambda a: sp.igamma(a, 1.5))(2.0)
    want = jo.grad(lambda a: jax.lax.igamma(a, 1.5))(2.0)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-10)


# --------------------------------------------------------------------------- comb, poch, loggamma, Box-Cox (float32, compiled once per side)

N = np.array([5.0, 4.0, 3.0, -1.0, 2.5, 10.0], np.float32)
K = np.array([2.0, 5.0, 0.0, 1.0, 1.5, 3.0], np.float32)
XB = np.array([0.5, 1.0, 2.0, 1e-5, 3.5, 0.1], np.float32)
LAM = np.array([0.0, 0.5, -1.0, 2.0, 1e-3, 0.0], np.float32)

SPECIAL_CASES = [
    ("comb", (N, K), {}),
    ("comb", (N, K), {"repetition": True}),
    ("comb", (5, 2), {}),
    ("comb", (np.array([5, 6]), np.array([2, 3])), {}),
    (
        "poch",
        (np.array([1.5, 2.0, 3.0, 0.3], np.float32), np.array([0.0, 1.2, 2.0, -0.2], np.float32)),
        {},
    ),
    ("loggamma", (np.array([-1.0, 0.0, 0.5, 3.0, 30.0], np.float32),), {}),
    ("loggamma", (2.5,), {}),
    ("boxcox", (XB, LAM), {}),
    ("boxcox", (2.0, 0.5), {}),
    ("boxcox1p", (XB, LAM), {}),
]


@pytest.mark.parametrize("name,args,kwargs", SPECIAL_CASES)
def test_special_matches_jax(name, args, kwargs):
    jo.compare_jitted(fss, jss, name, args, kwargs, rtol=2e-5)


@pytest.mark.parametrize("name", ["comb", "poch", "boxcox", "boxcox1p"])
def test_special_gradients(name):
    x = np.array([4.0, 2.5, 3.0], np.float32)
    y = np.array([1.5, 0.7, 0.0], np.float32)

    def f(a, b):
        return fnp.sum(getattr(fss, name)(a, b))

    def g(a, b):
        return jax.numpy.sum(getattr(jss, name)(a, b))

    got_grads = fg.jit(fg.grad(f, argnums=(0, 1)))(x, y)
    for got, want in zip(got_grads, jax.jit(jo.grad(g, (0, 1)))(x, y)):
        jo.same_array(got, want, rtol=1e-4, atol=1e-5)


def test_special_complex_rejected():
    with pytest.raises(ValueError, match="loggamma"):
        fss.loggamma(np.array([1 + 1j]))


@given(
    a=st.floats(0.05, 1e30, allow_nan=False),
    b=st.floats(0.05, 1e30, allow_nan=False),
)
def test_betaln_keeps_its_digits_for_large_arguments(a, b):
    """``gammaln(b) - gammaln(a + b)`` of two large values lost every digit (betaln(2.4e7,
    1) was -128 against -17.01): SciPy's float64 values, in float32."""
    got = float(fss.betaln(np.float32(a), np.float32(b)))
    a32, b32 = float(np.float32(a)), float(np.float32(b))
    want = ss.betaln(a32, b32)
    assert abs(got - want) <= 2e-5 * max(1.0, abs(want))


def test_betaln_derivative_for_large_arguments():
    xs = np.geomspace(1, 1e30, 200).astype(np.float32)
    _, t = fg.jvp(lambda x: fss.betaln(x, 1.0), (xs,), (np.ones_like(xs),))
    _, tj = jax.jvp(lambda x: jss.betaln(x, 1.0), (xs,), (np.ones_like(xs),))
    np.testing.assert_allclose(np.asarray(t), np.asarray(tj), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(t), -1 / xs, rtol=1e-5, atol=1e-6)


@given(
    re=st.floats(-8.0, 12.0, allow_nan=False),
    im=st.floats(-6.0, 6.0, allow_nan=False),
)
def test_complex_gamma_against_scipy(re, im):
    z = np.complex64(complex(re, im))
    want = ss.gamma(np.complex128(z))
    got = complex(np.asarray(fss.gamma(np.array([z])))[0])
    if not np.isfinite(want) or not 1e-30 < abs(want) < 1e30:  # (complex64 range)
        return
    assert abs(got - want) <= 5e-5 * abs(want) + 1e-6
    np.testing.assert_allclose(got, complex(np.asarray(jss.gamma(np.array([z])))[0]), rtol=5e-5)


def test_complex_gamma_poles_and_nans_are_nan():
    z = np.array([0j, -1 + 0j, -5 + 0j, complex(np.nan, 1.0), complex(1.0, np.nan)], np.complex64)
    got = np.asarray(fss.gamma(z))
    assert got.dtype == np.complex64
    assert np.isnan(got.real).all() and np.isnan(got.imag).all()


@pytest.mark.parametrize(
    "order,z,n_iter", [(0, 0.01, 5), (1, 1.1, 20), (2, 11.4, 50), (3, 30.0, 80), (6, 100.6, 200)]
)
def test_bessel_jn_against_scipy_and_jax(order, z, n_iter):
    got = np.asarray(fss.bessel_jn(np.float32(z), v=order, n_iter=n_iter))
    want = np.array([ss.jv(k, z) for k in range(order + 1)])
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6 * np.abs(want).max())
    jax_val = np.asarray(jss.bessel_jn(np.float32(z), v=order, n_iter=n_iter))
    np.testing.assert_allclose(got, jax_val, rtol=1e-6)


def test_bessel_jn_batched_and_jit():
    z = np.random.default_rng(0).uniform(0.0, 5.0, (3, 5)).astype(np.float32)
    got = np.asarray(fg.jit(lambda z: fss.bessel_jn(z, v=4, n_iter=15))(z))
    assert got.shape == (5, 3, 5)
    want = np.stack([ss.jv(k, z.astype(np.float64)) for k in range(5)])
    np.testing.assert_allclose(got, want, atol=1e-6)
    with pytest.raises(ValueError, match="complex"):
        fss.bessel_jn(np.ones(2, np.complex64), v=2)


def test_bessel_jn_and_complex_gamma_under_strict_options():
    """Funcgrad's own arithmetic must not trip the user's strict promotion options: a
    NumPy float64 factor is a strong float32 for JAX (strict: float32 x complex64
    raised), and the normalisation broadcasts a (v+1, ...) stack over z's rank."""
    opts = ("jax_numpy_rank_promotion", "jax_numpy_dtype_promotion")
    old = [fg.config.read(o) for o in opts]
    fg.config.update(opts[0], "raise")
    fg.config.update(opts[1], "strict")
    try:
        z = np.random.default_rng(0).uniform(0.1, 4.0, (2, 3)).astype(np.float32)
        got = np.asarray(fss.bessel_jn(z, v=3, n_iter=15))
        c = np.array([-0.5 + 0j, 0.5 + 1j], np.complex64)
        gam = np.asarray(fss.gamma(c))
    finally:
        for o, v in zip(opts, old):
            fg.config.update(o, v)
    want = np.stack([ss.jv(k, z.astype(np.float64)) for k in range(4)])
    np.testing.assert_allclose(got, want, atol=1e-6)
    np.testing.assert_allclose(gam, ss.gamma(c.astype(np.complex128)), rtol=1e-5)
