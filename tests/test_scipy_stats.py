"""funcgrad.scipy.stats against jax.scipy.stats: values (support edges included), dtypes,
gradients, vmap, jit and errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.stats as jst
import jax_oracle as jo
import numpy as np
import pytest
import scipy.stats as sst

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import stats as fst

RNG = np.random.default_rng(1)
X = np.array([-2.5, -0.7, 0.0, 0.4, 1.3, 2.9])
POS = np.array([0.3, 0.9, 1.0, 1.7, 2.4, 3.8])
UNIT = np.array([0.02, 0.2, 0.45, 0.5, 0.8, 0.97])
K = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 5.0])
EDGE = np.array([-1.0, 0.0, 0.5, 1.0, 1.5, np.nan])  # outside, at and inside supports

CASES = [
    ("norm", "logpdf", (X, 0.3, 1.7)),
    ("norm", "pdf", (X,)),
    ("norm", "cdf", (X * 4, 0.5)),
    ("norm", "logcdf", (X * 10,)),
    ("norm", "sf", (X * 4,)),
    ("norm", "logsf", (X * 10,)),
    ("norm", "ppf", (UNIT, 1.0, 2.0)),
    ("norm", "isf", (UNIT,)),
    ("multivariate_normal", "logpdf", (X, 0.5, 2.0)),
    ("bernoulli", "logpmf", (K, 0.3)),
    ("bernoulli", "pmf", (K, 0.6, 1.0)),
    ("bernoulli", "cdf", (EDGE, 0.3)),
    ("bernoulli", "ppf", (EDGE, 0.4)),
    ("beta", "logpdf", (EDGE, 2.0, 3.0)),
    ("beta", "logpdf", (UNIT, POS, POS[::-1])),
    ("beta", "pdf", (UNIT, 0.5, 0.5)),
    ("beta", "cdf", (EDGE, 2.0, 3.0)),
    ("beta", "sf", (EDGE, 2.0, 3.0)),
    ("beta", "logsf", (UNIT, 2.0, 3.0)),
    ("gamma", "logpdf", (X, POS)),
    ("gamma", "pdf", (POS, 2.0, 0.1, 2.0)),
    ("gamma", "cdf", (X, 2.0)),
    ("gamma", "sf", (X, 2.0)),
    ("gamma", "logsf", (POS, 2.0)),
    ("poisson", "logpmf", (K, 2.0)),
    ("poisson", "pmf", (K, POS)),
    ("poisson", "cdf", (K * 2, 2.0)),
    ("poisson", "entropy", (np.array([0.0, 1.0, 5.0, 20.0, 50.0, 150.0]),)),
    ("uniform", "logpdf", (X, -1.0, 2.0)),
    ("uniform", "cdf", (X, -1.0, 2.0)),
    ("uniform", "ppf", (EDGE, 1.0, 2.0)),
    ("t", "logpdf", (X, 3.0, 0.2, 1.5)),
    ("t", "pdf", (X, POS)),
    ("cauchy", "logpdf", (X,)),
    ("cauchy", "pdf", (X, 0.5, 2.0)),
    ("cauchy", "cdf", (X,)),
    ("cauchy", "logcdf", (X,)),
    ("cauchy", "sf", (X,)),
    ("cauchy", "ppf", (UNIT,)),
    ("cauchy", "isf", (UNIT,)),
    ("laplace", "logpdf", (X, 0.3, 2.0)),
    ("laplace", "pdf", (X,)),
    ("laplace", "cdf", (X, 0.3, 2.0)),
    ("logistic", "logpdf", (X * 30,)),
    ("logistic", "pdf", (X, 0.2, 1.5)),
    ("logistic", "cdf", (X,)),
    ("logistic", "ppf", (UNIT,)),
    ("logistic", "isf", (UNIT, 1.0, 3.0)),
    ("expon", "logpdf", (X,)),
    ("expon", "pdf", (X, -1.0, 2.0)),
    ("expon", "cdf", (X,)),
    ("expon", "logcdf", (POS,)),
    ("expon", "sf", (X,)),
    ("expon", "ppf", (EDGE,)),
    ("chi2", "logpdf", (X, 3.0)),
    ("chi2", "cdf", (X, 3.0)),
    ("chi2", "sf", (X, 3.0)),
    ("chi2", "logsf", (POS, 3.0)),
    ("binom", "logpmf", (K, 5.0, 0.3)),
    ("binom", "pmf", (K, 3.0, 0.6)),
    ("binom", "pmf", (np.zeros(6), 0.0, 0.6)),
    ("geom", "logpmf", (K, 0.3)),
    ("geom", "pmf", (K, 0.6)),
    ("pareto", "logpdf", (POS + 0.5, 2.0)),
    ("pareto", "cdf", (X, 2.0)),
    ("pareto", "logcdf", (POS + 1, 2.0)),
    ("pareto", "sf", (X, 2.0)),
    ("pareto", "logsf", (X, 2.0)),
    ("pareto", "ppf", (EDGE, 2.0)),
    ("truncnorm", "logpdf", (X, -1.0, 2.0, 0.5, 1.5)),
    ("truncnorm", "cdf", (X, -1.0, 2.0)),
    ("truncnorm", "logsf", (X, -1.0, 2.0)),
    ("truncnorm", "logpdf", (X + 5, 4.0, 9.0)),
    ("truncnorm", "cdf", (X, -3.0, -2.0)),
    ("truncnorm", "logpdf", (X, 1.0, 1.0)),
    ("gumbel_r", "logpdf", (X, 0.3, 1.5)),
    ("gumbel_r", "cdf", (X, 0.3, 1.5)),
    ("gumbel_r", "logsf", (X * 3,)),
    ("gumbel_r", "ppf", (EDGE,)),
    ("gumbel_r", "logpdf", (X, 0.0, -1.0)),
    ("gumbel_l", "pdf", (X * 3, 0.3, 1.5)),
    ("gumbel_l", "logcdf", (X * 3,)),
    ("gumbel_l", "sf", (X,)),
    ("gumbel_l", "ppf", (EDGE,)),
    ("nbinom", "logpmf", (K, 3.0, 0.4)),
    ("nbinom", "pmf", (K, 2.5, 0.7, 1.0)),
    ("betabinom", "logpmf", (np.zeros(6), 0.0, 2.0, 3.0)),
    ("betabinom", "logpmf", (K, -1.0, 2.0, 3.0)),
    ("vonmises", "pdf", (X, np.array([0.0, 1.0, 2.0, 3.0, 4.0, 50.0]))),
    ("wrapcauchy", "logpdf", (X + 2.5, np.array([0.0, 0.3, 0.5, 0.9, 1.0, 1.2]))),
    ("gennorm", "logpdf", (X, 1.5)),
    ("gennorm", "cdf", (X, 1.5)),
]
IDS = [f"{m}.{f}-{i}" for i, (m, f, _) in enumerate(CASES)]


def _close(a, b, rtol=1e-11):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-14, equal_nan=True)


@pytest.mark.parametrize("mod,fn,args", CASES, ids=IDS)
def test_values_match_jax(mod, fn, args):
    with np.errstate(all="ignore"):
        want = getattr(getattr(jst, mod), fn)(*args)
        got = getattr(getattr(fst, mod), fn)(*args)
    _close(got, want)


@pytest.mark.parametrize(
    "mod,fn,args",
    [
        ("gamma", "logpdf", (POS.astype(np.float32), np.float32(2.0))),
        ("poisson", "logpmf", (K.astype(np.int32), 2.0)),
        ("norm", "cdf", (1.0,)),
        ("t", "logpdf", (2, 3)),
    ],
)
def test_dtypes_and_weak_types(mod, fn, args):
    want = getattr(getattr(jst, mod), fn)(*args)
    got = getattr(getattr(fst, mod), fn)(*args)
    assert got.dtype == want.dtype
    assert got.weak_type == want.weak_type
    _close(got, want, 2e-6 if want.dtype == np.float32 else 1e-12)


# derivatives in the distribution's parameters and in x, against jax.grad
GRAD_CASES = [
    ("norm", "logpdf", (X, 0.3, 1.7), (0, 1, 2)),
    ("norm", "logcdf", (X * 10, 0.0, 1.0), (0, 2)),
    ("gamma", "logpdf", (POS, POS[::-1], 0.0, 1.0), (0, 1, 3)),
    ("gamma", "cdf", (POS, POS[::-1]), (1,)),
    ("beta", "logpdf", (UNIT, POS, POS[::-1]), (0, 1, 2)),
    ("t", "logpdf", (X, POS), (0, 1)),
    ("poisson", "logpmf", (np.abs(K), POS), (1,)),
    ("binom", "logpmf", (np.abs(K), 5.0, UNIT), (2,)),
    ("bernoulli", "logpmf", (np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0]), UNIT), (1,)),
    ("truncnorm", "logpdf", (X * 0.5, -1.0, 2.0), (0, 1, 2)),
    ("logistic", "logpdf", (X, 0.2, 1.5), (0, 1, 2)),
]


@pytest.mark.parametrize(
    "mod,fn,args,argnums", GRAD_CASES, ids=[f"{m}.{f}" for m, f, _, _ in GRAD_CASES]
)
def test_grads_match_jax(mod, fn, args, argnums):
    args = [np.asarray(a, np.float64) for a in args]

    def total(lib, np_):
        f = getattr(getattr(lib, mod), fn)
        return lambda *a: np_.sum(f(*a))

    want = jo.grad(total(jst, jnp), argnums=argnums)(*args)
    got = fg.jit(fg.grad(total(fst, fnp), argnums=argnums))(*args)
    for g, w in zip(got, want):
        _close(g, w, 1e-9)


A = RNG.standard_normal((3, 3))
COV = A @ A.T + 3 * np.eye(3)
MEAN = np.array([0.1, -0.4, 0.7])
PTS = RNG.standard_normal((4, 3))


def test_betabinom_and_multinomial():
    import scipy.stats as sst

    # against SciPy: JAX's betaln loses ~1e-6 relative for small arguments
    # (SciPy gives -inf at a non-integer k; JAX floors k, and so does funcgrad)
    k = np.floor(K)
    want = sst.betabinom.logpmf(k, 5, 2.0, 3.0)
    _close(fst.betabinom.logpmf(K, 5.0, 2.0, 3.0), want, 1e-12)
    _close(fst.betabinom.pmf(K, 3.0, 0.5, 1.5), sst.betabinom.pmf(k, 3, 0.5, 1.5), 1e-12)
    x, p = np.array([[1, 2, 0], [0, 3, 0]]), np.array([0.2, 0.5, 0.3])
    _close(fst.multinomial.pmf(x[0], 3, p), jst.multinomial.pmf(x[0], 3, p))
    _close(fst.multinomial.logpmf(x, 3, p), jst.multinomial.logpmf(x, 3, p))
    with pytest.raises(ValueError, match="integer type"):
        fst.multinomial.logpmf(x * 1.0, 3, p)


def test_multivariate_normal():
    mvn_f, mvn_j = fst.multivariate_normal, jst.multivariate_normal
    _close(mvn_f.logpdf(PTS, MEAN, COV), mvn_j.logpdf(PTS, MEAN, COV))
    _close(mvn_f.logpdf(PTS, MEAN, 2.5), mvn_j.logpdf(PTS, MEAN, 2.5))
    covs = np.stack([COV, 2 * COV, COV + np.eye(3), COV])  # a batch of covariances
    _close(mvn_f.logpdf(PTS, MEAN, covs), mvn_j.logpdf(PTS, MEAN, covs))
    want = jo.grad(lambda m: jnp.sum(mvn_j.logpdf(PTS, m, COV)))(MEAN)
    _close(fg.grad(lambda m: fnp.sum(mvn_f.logpdf(PTS, m, COV)))(MEAN), want, 1e-9)
    # in the covariance along a symmetric direction (the part both conventions agree on:
    # JAX symmetrises the cotangent of its Cholesky factorisation)
    e = A + A.T
    _, want = jo.jvp(lambda c: jnp.sum(mvn_j.logpdf(PTS, MEAN, c)), (COV,), (e,))
    _, got = fg.jvp(lambda c: fnp.sum(mvn_f.logpdf(PTS, MEAN, c)), (COV,), (e,))
    _close(got, want, 1e-9)
    got = fg.vmap(mvn_f.logpdf, in_axes=(0, None, None))(PTS, MEAN, COV)
    _close(got, mvn_j.logpdf(PTS, MEAN, COV))
    with pytest.raises(ValueError, match="incompatible shapes"):
        mvn_f.logpdf(PTS, MEAN, np.eye(2))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        mvn_f.logpdf(PTS, MEAN, COV, allow_singular=True)


def test_dirichlet():
    alpha = np.array([1.5, 2.0, 3.0])
    x = np.array([[0.2, 0.3, 0.1, 0.5], [0.3, 0.3, 0.5, 0.6], [0.5, 0.4, 0.4, -0.1]])
    _close(fst.dirichlet.logpdf(x, alpha), jst.dirichlet.logpdf(x, alpha))
    _close(fst.dirichlet.pdf(x[:2], alpha), jst.dirichlet.pdf(x[:2], alpha))
    want = jo.grad(lambda a: jst.dirichlet.logpdf(x[:, 0], a))(alpha)
    _close(fg.grad(lambda a: fst.dirichlet.logpdf(x[:, 0], a))(alpha), want, 1e-10)
    with pytest.raises(ValueError, match="one-dimensional"):
        fst.dirichlet.logpdf(x, np.ones((3, 1)))
    with pytest.raises(ValueError, match="one entry fewer"):
        fst.dirichlet.logpdf(np.ones(5), alpha)


def test_vmap_and_jit_over_parameters():
    f = lambda x, a: fst.gamma.logpdf(x, a, scale=2.0)
    got = fg.vmap(f, in_axes=(None, 0))(POS, POS)
    want = jo.vmap(lambda x, a: jst.gamma.logpdf(x, a, scale=2.0), in_axes=(None, 0))(POS, POS)
    _close(got, want)
    got = fg.jit(fg.vmap(fst.norm.cdf))(X, POS)
    _close(got, jst.norm.cdf(X, POS))


# --------------------------------------------------------------------------- rankdata, mode, sem, gaussian_kde

DATA = np.array([[3.0, 1, 2, 2], [5, 5, 1, 0], [1, 1, 1, np.nan]], np.float32)
IDATA = np.array([[3, 1, 2, 2], [5, 5, 1, 0], [1, 1, 1, 4]])


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
@pytest.mark.parametrize("axis,data", [(None, DATA), (1, DATA), (0, IDATA)])
def test_rankdata(method, axis, data):
    got = jo.jitted_call(fst.rankdata, (data, method), {"axis": axis}, fg.jit)
    want = jo.jitted_call(jst.rankdata, (data, method), {"axis": axis}, jax.jit)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_rankdata_jit_and_errors():
    x = np.array([2.0, 2.0, 1.0, 7.0, 2.0], np.float32)
    got = fg.jit(lambda v: fst.rankdata(v, "average"))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jst.rankdata(x)))
    with pytest.raises(ValueError, match="rankdata"):
        fst.rankdata(x, "mean")
    with pytest.raises(ValueError, match="nan_policy"):
        fst.rankdata(x, nan_policy="skip")
    with pytest.raises(NotImplementedError):
        fst.rankdata(x, nan_policy="omit")


@pytest.mark.parametrize(
    "axis,keepdims,data", [(None, False, IDATA), (0, True, IDATA), (-1, False, DATA[:2])]
)
def test_mode(axis, keepdims, data):
    got = jo.jitted_call(fst.mode, (data, axis), {"keepdims": keepdims}, fg.jit)
    want = jo.jitted_call(jst.mode, (data, axis), {"keepdims": keepdims}, jax.jit)
    assert type(got).__name__ == "ModeResult"
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_mode_scalar_and_errors():
    for g, w in zip(fst.mode(3.0), jst.mode(3.0)):
        jo.same_array(g, w)
    with pytest.raises(NotImplementedError):
        fst.mode(IDATA, nan_policy="raise")


@pytest.mark.parametrize("axis,ddof", [(None, 1), (0, 0), (1, 1)])
@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
def test_sem(axis, nan_policy, ddof):
    got = jo.jitted_call(fst.sem, (DATA, axis, ddof, nan_policy), {}, fg.jit)
    want = jo.jitted_call(jst.sem, (DATA, axis, ddof, nan_policy), {}, jax.jit)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, equal_nan=True)


def test_sem_int_keepdims_grad_and_errors():
    jo.same_array(fst.sem(IDATA, keepdims=True), jst.sem(IDATA, keepdims=True))
    x = DATA[:2]
    jo.same_array(
        fg.grad(lambda v: fnp.sum(fst.sem(v, 1)))(x),
        jo.grad(lambda v: jax.numpy.sum(jst.sem(v, 1)))(x),
    )
    with pytest.raises(ValueError, match="sem"):
        fst.sem(x, nan_policy="raise")


KDE_RNG = np.random.default_rng(0)
KDE_1D = np.array([0.3, -1.2, 0.8, 2.0, -0.1, 0.5, 1.1], np.float32)
KDE_W = np.array([0.6, 0.9, 0.7, 0.5, 1.0, 0.8, 0.55], np.float32)
KDE_2D = KDE_RNG.standard_normal((2, 6)).astype(np.float32)
KDE_PTS = KDE_RNG.standard_normal((2, 3)).astype(np.float32)


def _kde_summary(stats, data, weights, points, bw):
    kde = stats.gaussian_kde(data, bw, weights)
    other = stats.gaussian_kde(data[..., :4])
    eye = np.eye(kde.d, dtype=np.float32)
    out = (
        kde.evaluate(points),
        kde(points),
        kde.pdf(points),
        kde.logpdf(points),
        kde.neff,
        kde.covariance,
        kde.integrate_gaussian(np.zeros(kde.d, np.float32), eye),
        kde.integrate_kde(other),
    )
    if kde.d == 1:
        out += (kde.integrate_box_1d(-0.5, 1.0),)
    return out


@pytest.mark.parametrize(
    "data,weights,points,bw",
    [
        (KDE_1D, None, np.array([0.1, 0.5], np.float32), None),
        (KDE_1D, KDE_W, np.array([0.3], np.float32), "silverman"),
        (KDE_2D, None, KDE_PTS, 0.7),
    ],
)
def test_gaussian_kde_matches_jax(data, weights, points, bw):
    def run(stats, jit):
        return jit(lambda d, w, p: _kde_summary(stats, d, w, p, bw))(data, weights, points)

    jo.same_array(run(fst, fg.jit), run(jst, jax.jit), rtol=1e-4, atol=1e-6)


def test_gaussian_kde_pytree_grad_resample_errors():
    kde = fst.gaussian_kde(KDE_2D, lambda k: 0.5)
    np.testing.assert_allclose(
        np.asarray(fg.jit(lambda k, x: k.logpdf(x))(kde, KDE_PTS)),
        np.asarray(jst.gaussian_kde(KDE_2D, lambda k: 0.5).logpdf(KDE_PTS)),
        rtol=1e-5,
    )
    got = fg.jit(fg.grad(lambda d: fnp.sum(fst.gaussian_kde(d).logpdf(KDE_PTS))))(KDE_2D)
    want = jo.grad(lambda d: jax.numpy.sum(jst.gaussian_kde(d).logpdf(KDE_PTS)))(KDE_2D)
    jo.same_array(got, want, rtol=1e-3, atol=1e-4)
    # a tiny bandwidth: every draw lies next to a data point
    draws = fst.gaussian_kde(KDE_1D, 1e-4).resample(fg.random.key(0), (5,))
    assert draws.shape == (1, 5) and draws.dtype == np.float32
    assert np.min(np.abs(np.asarray(draws)[0][:, None] - KDE_1D[None, :]), axis=1).max() < 1e-2
    with pytest.raises(ValueError, match="multiple elements"):
        fst.gaussian_kde(np.ones(1, np.float32))
    with pytest.raises(ValueError, match="bw_method"):
        fst.gaussian_kde(KDE_1D, "wide")
    with pytest.raises(ValueError, match="weights"):
        fst.gaussian_kde(KDE_1D, weights=KDE_W[:3])
    with pytest.raises(ValueError, match="dimension"):
        kde.evaluate(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="1-D"):
        kde.integrate_box_1d(0.0, 1.0)
    with pytest.raises(NotImplementedError):
        kde.integrate_box(0.0, 1.0)


def test_poisson_entropy_of_a_negative_mu_is_nan():
    mu = np.array([-1.0, 0.0, -5.0, np.nan, 0.5, 150.0], np.float32)
    got = np.asarray(fst.poisson.entropy(mu))
    np.testing.assert_allclose(got, sst.poisson.entropy(mu.astype(np.float64)), rtol=2e-4)
    np.testing.assert_allclose(got, np.asarray(jst.poisson.entropy(mu)), rtol=2e-4)


@pytest.mark.parametrize("shape", [(0,), (0, 2, 3), (2, 0)])
@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_of_empty_slices(shape, method):
    a = np.zeros(shape, np.float32)
    for axis in (None, *range(len(shape))):
        got = np.asarray(fst.rankdata(a, method=method, axis=axis))
        want = sst.rankdata(a, method=method, axis=axis)
        assert got.shape == want.shape
        np.testing.assert_array_equal(
            got.shape, np.asarray(jst.rankdata(a, method=method, axis=axis)).shape
        )
