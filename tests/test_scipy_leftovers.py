"""funcgrad.scipy's matrix constructors, polar/expm_frechet, comb/poch/loggamma/Box-Cox and
rankdata/mode/sem, against jax.scipy (values, dtypes, weak types, gradients, errors)."""

from __future__ import annotations

import jax
import jax.scipy.linalg as jla
import jax.scipy.special as jsp
import jax.scipy.stats as jst
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.scipy import linalg as fla
from funcgrad.scipy import special as fsp
from funcgrad.scipy import stats as fst

RNG = np.random.default_rng(0)
C3 = np.array([1.0, -2.0, 3.0], np.float32)
R4 = np.array([4.0, 5.0, 6.0, 7.0], np.float32)
A33 = RNG.standard_normal((3, 3)).astype(np.float32)
E33 = RNG.standard_normal((3, 3)).astype(np.float32)


def _same(got, want, rtol=1e-5, atol=1e-5):
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, rtol, atol)
        return
    assert isinstance(got, jax.Array)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.weak_type == want.weak_type
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def _jitted(fn, args, kwargs, jit):
    """``fn(*args, **kwargs)`` compiled once: NumPy arrays are traced, the rest static."""
    dyn = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def call(*vals):
        full = list(args)
        for i, v in zip(dyn, vals):
            full[i] = v
        return fn(*full, **kwargs)

    return jit(call)(*(args[i] for i in dyn))


def _compare(fmod, jmod, name, args, kwargs, **tol):
    """One compilation per side (eager dispatch compiles every operation separately)."""
    got = _jitted(getattr(fmod, name), args, kwargs, funcgrad.jit)
    _same(got, _jitted(getattr(jmod, name), args, kwargs, jax.jit), **tol)


LINALG_CASES = [
    ("toeplitz", (C3,), {}),
    ("toeplitz", (C3, R4), {}),
    ("toeplitz", (np.ones((2, 3), np.float32), R4), {}),
    ("toeplitz", (np.array([1, 2, 3]),), {}),
    ("toeplitz", (C3 + 1j * C3,), {}),
    ("hankel", (C3,), {}),
    ("hankel", (C3, R4), {}),
    ("circulant", (C3,), {}),
    ("circulant", (np.arange(6.0, dtype=np.float32).reshape(2, 3),), {}),
    ("leslie", (np.array([0.1, 0.2, 0.3], np.float32), np.array([0.5, 0.6], np.float32)), {}),
    ("leslie", (np.array([1, 2]), np.array([3])), {}),
    ("companion", (C3,), {}),
    ("companion", (np.array([1, 2, 3]),), {}),
    ("fiedler", (C3,), {}),
    ("fiedler", (np.array([1, 5, 2]),), {}),
    ("fiedler_companion", (np.array([2.0, 3.0], np.float32),), {}),
    ("fiedler_companion", (np.array([1.0, 2, 3, 4, 5, 6], np.float32),), {}),
    ("fiedler_companion", (np.array([1.0, 2, 3, 4, 5], np.float32),), {}),
    ("convolution_matrix", (C3, 5), {}),
    ("convolution_matrix", (C3, 5, "valid"), {}),
    ("convolution_matrix", (C3, 5, "same"), {}),
    ("convolution_matrix", (np.ones((2, 4), np.float32), 3, "same"), {}),
    ("hilbert", (4,), {}),
    ("invhilbert", (4,), {}),
    ("pascal", (5,), {}),
    ("pascal", (5, "lower"), {}),
    ("pascal", (5, "upper"), {}),
    ("invpascal", (5,), {}),
    ("invpascal", (5, "lower"), {}),
    ("invpascal", (5, "upper"), {}),
    ("helmert", (4,), {}),
    ("helmert", (4, True), {}),
    ("hadamard", (8,), {}),
    ("hadamard", (4, np.float32), {}),
    ("dft", (5,), {}),
    ("dft", (4, "sqrtn"), {}),
    ("dft", (4, "n"), {}),
    ("polar", (A33,), {}),
    ("polar", (RNG.standard_normal((2, 4, 3)).astype(np.float32), "left"), {"method": "svd"}),
]


@pytest.mark.parametrize("name,args,kwargs", LINALG_CASES)
def test_linalg_matches_jax(name, args, kwargs):
    _compare(fla, jla, name, args, kwargs, rtol=2e-4, atol=2e-4)


def test_constructors_under_jit_and_grad():
    def f(c, r):
        return fnp.sum(fla.toeplitz(c, r) ** 2) + fnp.sum(
            fla.circulant(c) * fla.hankel(c, r)[:, :3]
        )

    def g(c, r):
        return jax.numpy.sum(jla.toeplitz(c, r) ** 2) + jax.numpy.sum(
            jla.circulant(c) * jla.hankel(c, r)[:, :3]
        )

    _same(funcgrad.jit(f)(C3, R4), g(C3, R4))
    got_grads = funcgrad.jit(funcgrad.grad(f, argnums=(0, 1)))(C3, R4)
    for got, want in zip(got_grads, jax.jit(jo.grad(g, (0, 1)))(C3, R4)):
        _same(got, want)


def test_expm_frechet_value_and_gradient_under_jit():
    def f(a, e):
        expa, frechet = fla.expm_frechet(a, e)
        return fnp.sum(frechet**2) + fnp.sum(expa)

    def g(a, e):
        expa, frechet = jla.expm_frechet(a, e)
        return jax.numpy.sum(frechet**2) + jax.numpy.sum(expa)

    a, e = 0.5 * A33, E33
    _compare(fla, jla, "expm_frechet", (a, e), {}, rtol=1e-4, atol=1e-4)
    got = funcgrad.jit(funcgrad.grad(f, argnums=(0, 1)))(a, e)
    want = jax.jit(jo.grad(g, (0, 1)))(a, e)
    for gv, wv in zip(got, want):
        _same(gv, wv, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "call,err",
    [
        (lambda: fla.leslie([1.0], []), ValueError),
        (lambda: fla.leslie([1.0, 2.0, 3.0], [1.0]), ValueError),
        (lambda: fla.companion([1.0]), ValueError),
        (lambda: fla.fiedler_companion(np.zeros((0,), np.float32)), ValueError),
        (lambda: fla.convolution_matrix(C3, 0), ValueError),
        (lambda: fla.convolution_matrix(C3, 2, "wide"), ValueError),
        (lambda: fla.convolution_matrix(1.0, 2), ValueError),
        (lambda: fla.hankel(1.0), ValueError),
        (lambda: fla.pascal(3, "diag"), ValueError),
        (lambda: fla.invpascal(3, "diag"), ValueError),
        (lambda: fla.helmert(0), ValueError),
        (lambda: fla.hadamard(6), ValueError),
        (lambda: fla.dft(4, "half"), ValueError),
        (lambda: fla.dft(4, dtype=np.float32), ValueError),
        (lambda: fla.hilbert(2.5), TypeError),
        (lambda: fla.polar(A33, "up"), ValueError),
        (lambda: fla.polar(C3), ValueError),
        (lambda: fla.expm_frechet(A33, C3), ValueError),
    ],
)
def test_linalg_errors(call, err):
    with pytest.raises(err):
        call()


N = np.array([5.0, 4.0, 3.0, -1.0, 2.5, 10.0], np.float32)
K = np.array([2.0, 5.0, 0.0, 1.0, 1.5, 3.0], np.float32)
X = np.array([0.5, 1.0, 2.0, 1e-5, 3.5, 0.1], np.float32)
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
    ("boxcox", (X, LAM), {}),
    ("boxcox", (2.0, 0.5), {}),
    ("boxcox1p", (X, LAM), {}),
]


@pytest.mark.parametrize("name,args,kwargs", SPECIAL_CASES)
def test_special_matches_jax(name, args, kwargs):
    _compare(fsp, jsp, name, args, kwargs, rtol=2e-5)


@pytest.mark.parametrize("name", ["comb", "poch", "boxcox", "boxcox1p"])
def test_special_gradients(name):
    x = np.array([4.0, 2.5, 3.0], np.float32)
    y = np.array([1.5, 0.7, 0.0], np.float32)

    def f(a, b):
        return fnp.sum(getattr(fsp, name)(a, b))

    def g(a, b):
        return jax.numpy.sum(getattr(jsp, name)(a, b))

    got_grads = funcgrad.jit(funcgrad.grad(f, argnums=(0, 1)))(x, y)
    for got, want in zip(got_grads, jax.jit(jo.grad(g, (0, 1)))(x, y)):
        _same(got, want, rtol=1e-4, atol=1e-5)


def test_special_complex_rejected():
    with pytest.raises(ValueError, match="loggamma"):
        fsp.loggamma(np.array([1 + 1j]))


DATA = np.array([[3.0, 1, 2, 2], [5, 5, 1, 0], [1, 1, 1, np.nan]], np.float32)
IDATA = np.array([[3, 1, 2, 2], [5, 5, 1, 0], [1, 1, 1, 4]])


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
@pytest.mark.parametrize("axis,data", [(None, DATA), (1, DATA), (0, IDATA)])
def test_rankdata(method, axis, data):
    got = _jitted(fst.rankdata, (data, method), {"axis": axis}, funcgrad.jit)
    want = _jitted(jst.rankdata, (data, method), {"axis": axis}, jax.jit)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_rankdata_jit_and_errors():
    x = np.array([2.0, 2.0, 1.0, 7.0, 2.0], np.float32)
    got = funcgrad.jit(lambda v: fst.rankdata(v, "average"))(x)
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
    got = _jitted(fst.mode, (data, axis), {"keepdims": keepdims}, funcgrad.jit)
    want = _jitted(jst.mode, (data, axis), {"keepdims": keepdims}, jax.jit)
    assert type(got).__name__ == "ModeResult"
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_mode_scalar_and_errors():
    for g, w in zip(fst.mode(3.0), jst.mode(3.0)):
        _same(g, w)
    with pytest.raises(NotImplementedError):
        fst.mode(IDATA, nan_policy="raise")


@pytest.mark.parametrize("axis,ddof", [(None, 1), (0, 0), (1, 1)])
@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
def test_sem(axis, nan_policy, ddof):
    got = _jitted(fst.sem, (DATA, axis, ddof, nan_policy), {}, funcgrad.jit)
    want = _jitted(jst.sem, (DATA, axis, ddof, nan_policy), {}, jax.jit)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, equal_nan=True)


def test_sem_int_keepdims_grad_and_errors():
    _same(fst.sem(IDATA, keepdims=True), jst.sem(IDATA, keepdims=True))
    x = DATA[:2]
    _same(
        funcgrad.grad(lambda v: fnp.sum(fst.sem(v, 1)))(x),
        jo.grad(lambda v: jax.numpy.sum(jst.sem(v, 1)))(x),
    )
    with pytest.raises(ValueError, match="sem"):
        fst.sem(x, nan_policy="raise")


KDE_1D = np.array([0.3, -1.2, 0.8, 2.0, -0.1, 0.5, 1.1], np.float32)
KDE_W = np.array([0.6, 0.9, 0.7, 0.5, 1.0, 0.8, 0.55], np.float32)
KDE_2D = RNG.standard_normal((2, 6)).astype(np.float32)
KDE_PTS = RNG.standard_normal((2, 3)).astype(np.float32)


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

    _same(run(fst, funcgrad.jit), run(jst, jax.jit), rtol=1e-4, atol=1e-6)


def test_gaussian_kde_pytree_grad_resample_errors():
    kde = fst.gaussian_kde(KDE_2D, lambda k: 0.5)
    np.testing.assert_allclose(
        np.asarray(funcgrad.jit(lambda k, x: k.logpdf(x))(kde, KDE_PTS)),
        np.asarray(jst.gaussian_kde(KDE_2D, lambda k: 0.5).logpdf(KDE_PTS)),
        rtol=1e-5,
    )
    got = funcgrad.jit(funcgrad.grad(lambda d: fnp.sum(fst.gaussian_kde(d).logpdf(KDE_PTS))))(
        KDE_2D
    )
    want = jo.grad(lambda d: jax.numpy.sum(jst.gaussian_kde(d).logpdf(KDE_PTS)))(KDE_2D)
    _same(got, want, rtol=1e-3, atol=1e-4)
    # a tiny bandwidth: every draw lies next to a data point
    draws = fst.gaussian_kde(KDE_1D, 1e-4).resample(funcgrad.random.key(0), (5,))
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
