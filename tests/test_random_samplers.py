"""funcgrad.random samplers against jax.random: the same key gives the same bits (values,
dtypes, shapes), under jit and vmap over keys too; gamma's implicit gradient against
jax.grad; errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.random as fr
from funcgrad.primitives import random as rp

pytestmark = pytest.mark.skipif(
    not jax.config.jax_threefry_partitionable,
    reason="funcgrad lowers JAX's partitionable threefry layout",
)

KEY = jax.random.PRNGKey(7)
FKEY = np.asarray(KEY)
A4 = np.array([0.3, 1.0, 2.5, 7.0])
P5 = np.array([0.1, 0.2, 0.3, 0.2, 0.2])

# name -> sampler(R, key) written once for both libraries (R is jax.random or funcgrad.random)
CASES = {
    "gamma": lambda R, k: R.gamma(k, A4, (2, 4)),
    "gamma_f32": lambda R, k: R.gamma(k, 0.7, (5,), jnp.float32),
    "gamma_bf16": lambda R, k: R.gamma(k, np.array([0.5, 3.0], jnp.bfloat16), dtype=jnp.bfloat16),
    "loggamma": lambda R, k: R.loggamma(k, np.array([0.01, 1.0, 2.5])),
    "beta": lambda R, k: R.beta(k, 0.5, np.array([1.0, 2.0, 3.0])),
    "dirichlet": lambda R, k: R.dirichlet(k, np.array([0.5, 1.0, 2.0]), (2,), jnp.float32),
    "poisson": lambda R, k: R.poisson(k, np.array([0.5, 3.0, 12.0, 50.0, 0.0]), (3, 5)),
    "poisson_i32": lambda R, k: R.poisson(k, 4.0, (4,), jnp.int32),
    "binomial": lambda R, k: R.binomial(
        k, np.array([5.0, 20.0, 100.0]), np.array([0.3, 0.7, 0.5]), (2, 3)
    ),
    "multinomial": lambda R, k: R.multinomial(k, 20.0, np.array([0.2, 0.3, 0.5])),
    "truncated_normal": lambda R, k: R.truncated_normal(k, -1.0, 2.0, (6,)),
    "truncated_normal_f32": lambda R, k: R.truncated_normal(
        k, np.array([-1.0, 0.0]), 2.0, (3, 2), jnp.float32
    ),
    "laplace": lambda R, k: R.laplace(k, (7,)),
    "cauchy_f32": lambda R, k: R.cauchy(k, (7,), jnp.float32),
    "logistic_f16": lambda R, k: R.logistic(k, (7,), jnp.float16),
    "exponential_f32": lambda R, k: R.exponential(k, (5,), jnp.float32),
    "t": lambda R, k: R.t(k, 3.0, (5,)),
    "chisquare": lambda R, k: R.chisquare(k, np.array([1.0, 4.0]), (3, 2)),
    "f": lambda R, k: R.f(k, 3.0, 5.0, (4,)),
    "pareto": lambda R, k: R.pareto(k, 2.0, (5,)),
    "weibull_min": lambda R, k: R.weibull_min(k, 2.0, 1.5, (5,)),
    "rademacher": lambda R, k: R.rademacher(k, (8,)),
    "rademacher_f32": lambda R, k: R.rademacher(k, (3,), jnp.float32),
    "maxwell": lambda R, k: R.maxwell(k, (5,)),
    "double_sided_maxwell": lambda R, k: R.double_sided_maxwell(k, 1.0, np.array([1.0, 2.0])),
    "generalized_normal": lambda R, k: R.generalized_normal(k, 1.5, (5,)),
    "ball": lambda R, k: R.ball(k, 3, 2, (4,)),
    "ball_p1_f32": lambda R, k: R.ball(k, 2, 1.0, (3,), jnp.float32),
    "rayleigh": lambda R, k: R.rayleigh(k, 2.0, (5,)),
    "wald": lambda R, k: R.wald(k, np.array([0.5, 1.0, 3.0])),
    "geometric": lambda R, k: R.geometric(k, 0.3, (6,)),
    "triangular": lambda R, k: R.triangular(k, 0.0, 0.3, 1.0, (5,)),
    "lognormal": lambda R, k: R.lognormal(k, 0.5, (5,)),
    "gumbel_high": lambda R, k: R.gumbel(k, (5,), mode="high"),
    "bernoulli_high": lambda R, k: R.bernoulli(k, 0.3, (8,), mode="high"),
    "categorical_no_replace": lambda R, k: R.categorical(
        k,
        np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])),
        shape=(3, 2),
        replace=False,
    ),
    "categorical_axis0": lambda R, k: R.categorical(k, np.log(np.full((3, 2), 1 / 3)), axis=0),
    "choice_p": lambda R, k: R.choice(k, 5, (6,), p=P5),
    "choice_p_no_replace": lambda R, k: R.choice(
        k, np.arange(10.0).reshape(5, 2), (3,), replace=False, p=P5
    ),
    "choice_axis1": lambda R, k: R.choice(k, np.arange(12).reshape(3, 4), (2,), axis=1),
    "normal_c64": lambda R, k: R.normal(k, (3,), jnp.complex64),
    "bits_u8": lambda R, k: R.bits(k, (4,), jnp.uint8),
    "randint_i16": lambda R, k: R.randint(k, (5,), -3, 9, jnp.int16),
}


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sampler_bit_identical_to_jax(name):
    fn = CASES[name]
    same(fn(fr, FKEY), fn(jax.random, KEY))


@pytest.mark.parametrize("name", ["gamma", "poisson", "beta", "truncated_normal", "ball"])
def test_sampler_under_jit(name):
    fn = CASES[name]
    same(fg.jit(lambda k: fn(fr, k))(FKEY), jax.jit(lambda k: fn(jax.random, k))(KEY))


@pytest.mark.parametrize(
    "fn",
    [
        lambda R, k: R.gamma(k, A4),
        lambda R, k: R.poisson(k, np.array([2.0, 30.0])),
        lambda R, k: R.t(k, 4.0, (3,)),
        lambda R, k: R.binomial(k, 30.0, 0.4, (3,)),
    ],
    ids=["gamma", "poisson", "t", "binomial"],
)
def test_vmap_over_keys(fn):
    keys = jax.random.split(KEY, 3)
    same(fg.vmap(lambda k: fn(fr, k))(np.asarray(keys)), jo.vmap(lambda k: fn(jax.random, k))(keys))


def test_gamma_primitive_batches_unbatched_key_like_jax():
    a = np.array([[0.5, 2.0], [1.5, 4.0], [3.0, 0.2]])
    out = fg.vmap(lambda a: fr.gamma(FKEY, a))(a)
    same(out, jo.vmap(lambda a: jax.random.gamma(KEY, a))(a))


# --------------------------------------------------------------------------- gradients


@pytest.mark.parametrize(
    "name,fn",
    [
        ("gamma", lambda R, k, a: R.gamma(k, a, (2, 4)).sum()),
        ("beta", lambda R, k, a: R.beta(k, a, 2.0).sum()),
        ("t", lambda R, k, a: R.t(k, a).sum()),
    ],
)
def test_reparameterised_gradient_matches_jax(name, fn):
    got = fg.grad(lambda a: fn(fr, FKEY, a))(A4)
    want = jo.grad(lambda a: fn(jax.random, KEY, a))(A4)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)


def test_gamma_gradient_is_the_implicit_cdf_gradient():
    # dz/da = -(dF/da) / (dF/dz), F the gamma CDF, by central differences in a
    from scipy import special, stats

    a = np.array([0.5, 1.7, 6.0])
    z = np.asarray(fr.gamma(FKEY, a))
    h = 1e-6
    dfda = (special.gammainc(a + h, z) - special.gammainc(a - h, z)) / (2 * h)
    want = -dfda / stats.gamma.pdf(z, a)
    got = fg.jacfwd(lambda a: fr.gamma(FKEY, a))(a)
    np.testing.assert_allclose(np.diag(np.asarray(got)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got) - np.diag(np.diag(np.asarray(got))), 0.0)


def test_pathwise_gradients_match_jax():
    def fn(R, k, p):
        lo, sigma, mean = p[0], p[1], p[2]
        return (
            R.truncated_normal(k, lo, 2.0, (3,)).sum()
            + R.lognormal(k, sigma, (3,)).sum()
            + R.wald(k, mean, (3,)).sum()
        )

    p = np.array([-0.5, 0.7, 1.3])
    got = fg.grad(lambda p: fn(fr, FKEY, p))(p)
    want = jo.grad(lambda p: fn(jax.random, KEY, p))(p)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9)


def test_random_gamma_grad_matches_lax_and_has_no_derivative():
    a, x = np.array([0.5, 2.0, 5.0]), np.array([0.3, 1.5, 7.0])
    np.testing.assert_allclose(
        np.asarray(rp.random_gamma_grad(a, x)), np.asarray(jax.lax.random_gamma_grad(a, x))
    )
    with pytest.raises(NotImplementedError, match="random_gamma_grad"):
        fg.grad(lambda a: rp.random_gamma_grad(a, x).sum())(a)


# --------------------------------------------------------------------------- keys and misc


def test_key_helpers():
    keys = fr.split(FKEY, (2, 3))
    assert keys.shape == (2, 3, 2)
    same(keys, jax.random.split(KEY, (2, 3)))
    same(fr.key_data(keys), keys)
    same(fr.key_data(jax.random.key(7)), jax.random.key_data(jax.random.key(7)))
    same(fr.wrap_key_data(FKEY), FKEY)
    assert fr.key_impl(FKEY) == "threefry2x32"
    same(fr.clone(FKEY), FKEY)
    same(fr.PRNGKey(3), jax.random.PRNGKey(3))
    with pytest.raises(ValueError, match="both `impl` and `dtype`"):
        fr.wrap_key_data(FKEY, impl="threefry2x32", dtype="threefry2x32")
    with pytest.raises(ValueError, match="split accepts a single key"):  # JAX's type
        jax.random.split(keys)
    with pytest.raises(ValueError, match="split accepts a single key"):
        fr.split(keys)


def test_multivariate_normal_and_orthogonal():
    mean, cov = np.array([1.0, -1.0]), np.array([[2.0, 0.5], [0.5, 1.0]])
    for method in ("cholesky", "eigh", "svd"):
        got = fr.multivariate_normal(FKEY, mean, cov, (3,), method=method)
        want = jax.random.multivariate_normal(KEY, mean, cov, (3,), method=method)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10, atol=1e-12)
    q = fr.orthogonal(FKEY, 3)
    np.testing.assert_allclose(np.asarray(q), np.asarray(jax.random.orthogonal(KEY, 3)), atol=1e-12)
    with pytest.raises(ValueError, match="method must be one of"):
        fr.multivariate_normal(FKEY, mean, cov, method="lu")
    with pytest.raises(ValueError, match=r"cov\.shape"):
        fr.multivariate_normal(FKEY, mean, np.eye(3))


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call,err,match",
    [
        (lambda: fr.gamma(FKEY, 1.0, dtype=jnp.int32), ValueError, "must be a float dtype"),
        (lambda: fr.gamma(FKEY, np.ones(3), (2,)), ValueError, "broadcast-compatible"),
        (lambda: fr.beta(FKEY, np.float64(1.0), 1.0, dtype=jnp.float32), ValueError, "safely"),
        (lambda: fr.dirichlet(FKEY, 1.0), ValueError, "alpha.ndim >= 1"),
        (lambda: fr.poisson(FKEY, 1.0, dtype=jnp.float32), ValueError, "int dtype"),
        (lambda: fr.binomial(FKEY, 3.0, 0.5, dtype=jnp.int32), ValueError, "float dtype"),
        (lambda: fr.gumbel(FKEY, mode="mid"), ValueError, "valid mode"),
        (lambda: fr.bernoulli(FKEY, 0.5, mode="mid"), ValueError, "expected 'high' or 'low'"),
        (lambda: fr.bits(FKEY, (2,), jnp.int32), ValueError, "unsigned int"),
        (lambda: fr.choice(FKEY, 3, 5), TypeError, "must be a sequence"),
        (lambda: fr.choice(FKEY, 3, (2,), p=np.ones(4) / 4), ValueError, "p must be None"),
        (
            lambda: fr.categorical(FKEY, np.zeros(3), shape=(5,), replace=False),
            ValueError,
            "cannot exceed",
        ),
        (lambda: fr.t(FKEY, 3.0, dtype=jnp.int32), ValueError, "must be a float dtype"),
        (lambda: fr.gamma(np.zeros(3, np.uint32), 1.0), TypeError, "PRNG key"),
    ],
)
def test_errors(call, err, match):
    with pytest.raises(err, match=match):
        call()
