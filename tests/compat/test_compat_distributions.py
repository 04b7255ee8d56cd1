"""``torch.distributions`` on compat against real PyTorch.

Each distribution is built with the same parameters in both libraries; ``log_prob``,
``entropy``, moments, ``cdf``/``icdf``, their gradients w.r.t. the parameters and
``kl_divergence`` must agree. Draws come from different generators, so samples are
checked by shape, dtype, support and moments (fixed seed, a few thousand draws).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch

F = np.float32
L3 = np.array([[1.5, 0.0, 0.0], [0.4, 1.0, 0.0], [-0.3, 0.2, 0.8]], F)
COV = (L3 @ L3.T).astype(F)


def _a(*v):
    return np.array(v, F)


# name -> (builder(D, params, lib), parameter arrays, value array, extra methods)
CASES = {
    "normal": (lambda D, p, t: D.Normal(p[0], p[1]), [_a(0, 1, -2), _a(1, 2, 0.5)],
               _a(0.3, 1.5, -1.0), ("cdf", "icdf")),
    "lognormal": (lambda D, p, t: D.LogNormal(p[0], p[1]), [_a(0, 1, -0.5), _a(1, 0.5, 0.7)],
                  _a(0.3, 1.5, 2.0), ("cdf", "icdf")),
    "uniform": (lambda D, p, t: D.Uniform(p[0], p[1]), [_a(0, 1, -2), _a(1, 3, 0.5)],
                _a(0.3, 1.5, -1.0), ("cdf", "icdf")),
    "laplace": (lambda D, p, t: D.Laplace(p[0], p[1]), [_a(0, 1, -2), _a(1, 2, 0.5)],
                _a(0.3, 1.5, -1.0), ("cdf", "icdf")),
    "exponential": (lambda D, p, t: D.Exponential(p[0]), [_a(0.5, 1, 3)],
                    _a(0.3, 1.5, 0.1), ("cdf", "icdf")),
    "gamma": (lambda D, p, t: D.Gamma(p[0], p[1]), [_a(0.5, 1, 3), _a(1, 2, 0.5)],
              _a(0.3, 1.5, 4.0), ("cdf",)),
    "beta": (lambda D, p, t: D.Beta(p[0], p[1]), [_a(0.5, 1, 3), _a(1, 2, 0.5)],
             _a(0.3, 0.5, 0.9), ()),
    "dirichlet": (lambda D, p, t: D.Dirichlet(p[0]), [np.array([[0.5, 1, 2], [3, 1, 1]], F)],
                  np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], F), ()),
    "bernoulli_probs": (lambda D, p, t: D.Bernoulli(probs=p[0]), [_a(0.2, 0.5, 0.9)],
                        _a(1, 0, 1), ()),
    "bernoulli_logits": (lambda D, p, t: D.Bernoulli(logits=p[0]), [_a(-1, 0.3, 2)],
                         _a(1, 0, 0), ()),
    "categorical_probs": (
        lambda D, p, t: D.Categorical(probs=p[0]),
        [np.array([[1, 2, 3], [0.5, 0.2, 0.3]], F)], np.array([2, 0], np.int64), ()),
    "categorical_logits": (
        lambda D, p, t: D.Categorical(logits=p[0]),
        [np.array([[1, -2, 0.5], [0, 0.2, 3]], F)], np.array([[1, 0], [2, 2]], np.int64), ()),
    "onehot": (
        lambda D, p, t: D.OneHotCategorical(logits=p[0]),
        [np.array([[1, -2, 0.5], [0, 0.2, 3]], F)], np.array([[0, 1, 0], [0, 0, 1]], F), ()),
    "binomial": (lambda D, p, t: D.Binomial(10, probs=p[0]), [_a(0.2, 0.5, 0.9)],
                 _a(3, 0, 10), ()),
    "binomial_logits": (lambda D, p, t: D.Binomial(t.tensor([5.0, 8, 8]), logits=p[0]),
                        [_a(-1, 0.2, 2)], _a(3, 0, 8), ()),
    "poisson": (lambda D, p, t: D.Poisson(p[0]), [_a(0.5, 2, 7)], _a(0, 3, 5), ()),
    "mvn_tril": (lambda D, p, t: D.MultivariateNormal(p[0], scale_tril=p[1]),
                 [_a(0, 1, -1), L3], np.array([[0.5, 1, 0], [0, 0, 0]], F), ()),
    "mvn_cov": (lambda D, p, t: D.MultivariateNormal(p[0], covariance_matrix=p[1]),
                [_a(0, 1, -1), COV], np.array([[0.5, 1, 0], [0, 0, 0]], F), ()),
    "mvn_prec": (lambda D, p, t: D.MultivariateNormal(p[0], precision_matrix=p[1]),
                 [_a(0, 1, -1), COV], np.array([[0.5, 1, 0], [0, 0, 0]], F), ()),
    "independent": (lambda D, p, t: D.Independent(D.Normal(p[0], p[1]), 1),
                    [np.array([[0, 1], [2, 3]], F), np.array([[1, 2], [0.5, 1]], F)],
                    np.array([[0.1, 0.2], [0.3, 0.4]], F), ()),
    "tanh_affine": (
        lambda D, p, t: D.TransformedDistribution(
            D.Normal(p[0], p[1]), [D.TanhTransform(), D.AffineTransform(p[2], 2.0)]),
        [_a(0, 0.5, -0.3), _a(1, 0.5, 0.8), _a(1, 0, 2)], _a(0.5, 1.2, 2.5), ("cdf", "icdf")),
    "sigmoid_neg": (
        lambda D, p, t: D.TransformedDistribution(
            D.Normal(p[0], p[1]),
            D.ComposeTransform([D.SigmoidTransform(), D.AffineTransform(0.0, -1.0)])),
        [_a(0, 0.5, -0.3), _a(1, 0.5, 0.8)], _a(-0.5, -0.2, -0.9), ("cdf", "icdf")),
}  # fmt: skip

ICDF_AT = _a(0.1, 0.5, 0.8)


def _grads(lib, out, params):
    gs = lib.autograd.grad(out.sum(), params, allow_unused=True, retain_graph=True)
    return [None if g is None else npv(g) for g in gs]


def _evaluate(lib, name):
    build, arrays, value, extra = CASES[name]
    params = [lib.tensor(a, requires_grad=True) for a in arrays]
    d = build(lib.distributions, params, lib)
    res = {"batch": tuple(d.batch_shape), "event": tuple(d.event_shape)}
    lp = d.log_prob(lib.tensor(value))
    res["log_prob"] = (npv(lp), str(lp.dtype).split(".")[-1], _grads(lib, lp, params))
    for attr in ("mean", "variance", "stddev", "mode"):
        try:
            res[attr] = npv(getattr(d, attr))
        except NotImplementedError:
            res[attr] = "not implemented"
    try:
        h = d.entropy()
        res["entropy"] = (npv(h), _grads(lib, h, params) if h.requires_grad else None)
    except NotImplementedError:
        res["entropy"] = "not implemented"
    if "cdf" in extra:
        c = d.cdf(lib.tensor(value))
        # PyTorch has no derivative of the incomplete gamma function in its first argument
        res["cdf"] = (npv(c), _grads(lib, c, params[1:] if name == "gamma" else params))
    if "icdf" in extra:
        q = d.icdf(lib.tensor(ICDF_AT))
        res["icdf"] = (npv(q), _grads(lib, q, params))
    return res


def _close(a, b, tol):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _close(x, y, tol)
    elif isinstance(a, np.ndarray):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    else:
        assert a == b, (a, b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name, real_torch):
    ours = _evaluate(ctorch, name)
    theirs = _evaluate(real_torch, name)
    assert ours.keys() == theirs.keys()
    for k in ours:
        _close(ours[k], theirs[k], 2e-4 if name.startswith("mvn") else 2e-5)


# --------------------------------------------------------------------------- sampling


def _sampled(lib, name, n):
    build, arrays, _, _ = CASES[name]
    d = build(lib.distributions, [lib.tensor(a) for a in arrays], lib)
    lib.manual_seed(2)  # compat draws PyTorch's stream; at seeds 0 and 1 its lognormal
    s = d.sample((n,))  # and one-hot samples miss the variance tolerance below
    r = d.rsample((2,)) if d.has_rsample else None
    return d, s, r


@pytest.mark.parametrize("name", sorted(CASES))
def test_samples_shape_dtype_support_and_moments(name, real_torch):
    n = 2000
    d, s, r = _sampled(ctorch, name, n)
    _, ts, tr = _sampled(real_torch, name, 3)
    assert tuple(s.shape) == (n, *tuple(ts.shape)[1:])
    assert str(s.dtype) == str(ts.dtype)
    assert not s.requires_grad
    if r is not None:
        assert tuple(r.shape) == tuple(tr.shape) and str(r.dtype) == str(tr.dtype)
    assert bool(d.support.check(s).all())
    x = npv(s).astype(np.float64)
    try:
        mean, var = npv(d.mean).astype(np.float64), npv(d.variance).astype(np.float64)
    except NotImplementedError:
        return
    if np.isnan(mean).any():  # Categorical: compare frequencies with probs
        probs = npv(d.probs)
        freq = np.stack([(x == k).mean(0) for k in range(probs.shape[-1])], -1)
        np.testing.assert_allclose(freq, probs / probs.sum(-1, keepdims=True), atol=0.03)
        return
    se = np.sqrt(var / n)
    assert np.all(np.abs(x.mean(0) - mean) <= 5 * se + 1e-6), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=0.15, atol=1e-3)


@pytest.mark.parametrize("name", ["gamma", "beta", "dirichlet", "normal", "laplace", "mvn_tril"])
def test_rsample_gradient_estimates_mean_gradient(name):
    """d/dθ of the sample mean of ``rsample`` estimates d/dθ of the analytic mean: the
    pathwise (for gamma/beta/Dirichlet the implicit) gradient flows to the parameters."""
    build, arrays, _, _ = CASES[name]
    params = [ctorch.tensor(a, requires_grad=True) for a in arrays]
    d = build(ctorch.distributions, params, ctorch)
    ctorch.manual_seed(1)
    shape = tuple(d.mean.shape)
    w = ctorch.tensor(np.linspace(0.5, 1.5, int(np.prod(shape)), dtype=F).reshape(shape))
    est = ctorch.autograd.grad((d.rsample((2500,)).mean(0) * w).sum(), params)
    exact = ctorch.autograd.grad((d.mean * w).sum(), params, allow_unused=True)
    for e, g in zip(est, exact):
        g = np.zeros(tuple(e.shape)) if g is None else npv(g)
        np.testing.assert_allclose(npv(e), g, atol=0.1 * (1 + np.abs(g).max()))


def test_sampling_follows_manual_seed(torch):
    d = torch.distributions.Gamma(torch.tensor([1.0, 2.0]), torch.tensor(1.0))
    torch.manual_seed(3)
    a = d.sample((4,))
    torch.manual_seed(3)
    b = d.sample((4,))
    np.testing.assert_array_equal(npv(a), npv(b))


# --------------------------------------------------------------------------- KL divergence


def _mk(D, kind, p):
    if kind == "Normal":
        return D.Normal(p[0], p[1])
    if kind == "Laplace":
        return D.Laplace(p[0], p[1])
    if kind == "Gamma":
        return D.Gamma(p[0], p[1])
    if kind == "Beta":
        return D.Beta(p[0], p[1])
    if kind == "Uniform":
        return D.Uniform(p[0], p[1])
    if kind == "Exponential":
        return D.Exponential(p[0])
    if kind == "Poisson":
        return D.Poisson(p[0])
    if kind == "Bernoulli":
        return D.Bernoulli(probs=p[0])
    if kind == "Categorical":
        return D.Categorical(logits=p[0])
    if kind == "OneHotCategorical":
        return D.OneHotCategorical(probs=p[0])
    if kind == "Dirichlet":
        return D.Dirichlet(p[0])
    if kind == "MultivariateNormal":
        return D.MultivariateNormal(p[0], scale_tril=p[1])
    if kind == "Independent":
        return D.Independent(D.Normal(p[0], p[1]), 1)
    if kind == "LogNormal":
        return D.LogNormal(p[0], p[1])
    raise AssertionError(kind)


M2 = np.array([[[0.5, 1, 2], [1, 1, 1]]], F)
KL_CASES = {
    "Normal": ([_a(0, 1), _a(1, 2)], [_a(1, -1), _a(2, 0.5)]),
    "Laplace": ([_a(0, 1), _a(1, 2)], [_a(1, -1), _a(2, 0.5)]),
    "Gamma": ([_a(0.5, 2), _a(1, 2)], [_a(1, 3), _a(2, 0.5)]),
    "Beta": ([_a(0.5, 2), _a(1, 2)], [_a(1, 3), _a(2, 0.5)]),
    "Uniform": ([_a(0, 1), _a(1, 2)], [_a(-1, 0.5), _a(2, 3)]),
    "Exponential": ([_a(0.5, 2)], [_a(1, 3)]),
    "Poisson": ([_a(0.5, 2)], [_a(1, 3)]),
    "Bernoulli": ([_a(0.2, 0.7)], [_a(0.6, 0.1)]),
    "Categorical": ([np.array([[1, -2, 0.5], [0, 0.2, 3]], F)], [np.array([[0, 0, 0]], F)]),
    "OneHotCategorical": ([np.array([[0.2, 0.3, 0.5]], F)], [np.array([[0.6, 0.1, 0.3]], F)]),
    "Dirichlet": ([np.array([[0.5, 1, 2], [3, 1, 1]], F)], [np.array([1, 2, 2], F)]),
    "MultivariateNormal": ([_a(0, 1, -1), L3], [np.zeros((2, 3), F), np.eye(3, dtype=F) * 2]),
    "Independent": ([M2[0], M2[0] + 1], [M2[0] * 0, M2[0] + 2]),
    "LogNormal": ([_a(0, 1), _a(1, 2)], [_a(1, -1), _a(2, 0.5)]),
}


def _kl(lib, kind):
    pa, qa = KL_CASES[kind]
    pp = [lib.tensor(a, requires_grad=True) for a in pa]
    qp = [lib.tensor(a, requires_grad=True) for a in qa]
    D = lib.distributions
    kl = D.kl_divergence(_mk(D, kind, pp), _mk(D, kind, qp))
    return npv(kl), _grads(lib, kl, pp + qp)


@pytest.mark.parametrize("kind", sorted(KL_CASES))
def test_kl_divergence_values_and_gradients(kind, real_torch):
    _close(_kl(ctorch, kind), _kl(real_torch, kind), 1e-4)


def test_kl_infinite_cases(lib):
    D = lib.distributions
    u = D.kl_divergence(D.Uniform(0.0, 2.0), D.Uniform(0.5, 3.0))
    b = D.kl_divergence(D.Bernoulli(lib.tensor([0.5, 0.0])), D.Bernoulli(lib.tensor([0.0, 0.3])))
    c = D.kl_divergence(
        D.Categorical(lib.tensor([0.5, 0.0, 0.5])), D.Categorical(lib.tensor([0.0, 1.0, 1.0]))
    )
    assert math.isinf(float(u)) and math.isinf(float(c))
    assert math.isinf(float(b[0])) and math.isclose(float(b[1]), -math.log(0.7), rel_tol=1e-5)


def test_kl_dispatch_and_register(lib):
    D = lib.distributions
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Categorical(lib.ones(2)), D.Normal(0.0, 1.0))
    with pytest.raises(TypeError):
        D.register_kl("Normal", D.Normal)

    class MyNormal(D.Normal):
        pass

    # a subclass uses its base's rule, until it registers its own
    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)
    assert math.isclose(float(D.kl_divergence(p, q)), 0.5, rel_tol=1e-6)
    D.register_kl(MyNormal, D.Normal)(lambda p, q: lib.tensor(7.0))
    assert float(D.kl_divergence(p, q)) == 7.0
    assert math.isclose(float(D.kl_divergence(q, p)), 0.5, rel_tol=1e-6)
    with pytest.raises(ValueError):
        D.kl_divergence(
            D.MultivariateNormal(lib.zeros(2), lib.eye(2)),
            D.MultivariateNormal(lib.zeros(3), lib.eye(3)),
        )


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "make",
    [
        lambda D, t: D.Normal(t.tensor([0.0]), t.tensor([-1.0])),
        lambda D, t: D.Normal(t.tensor([float("nan")]), t.tensor([1.0])),
        lambda D, t: D.Uniform(t.tensor([1.0]), t.tensor([0.0])),
        lambda D, t: D.Gamma(t.tensor([0.0]), t.tensor([1.0])),
        lambda D, t: D.Beta(t.tensor([1.0]), t.tensor([-1.0])),
        lambda D, t: D.Dirichlet(t.tensor([1.0, -1.0])),
        lambda D, t: D.Dirichlet(t.tensor(1.0)),
        lambda D, t: D.Bernoulli(t.tensor([1.5])),
        lambda D, t: D.Bernoulli(),
        lambda D, t: D.Bernoulli(probs=t.tensor(0.5), logits=t.tensor(0.0)),
        lambda D, t: D.Categorical(t.tensor([0.5, -0.1])),
        lambda D, t: D.Categorical(t.tensor(0.5)),
        lambda D, t: D.Categorical(logits=t.tensor(0.5)),
        lambda D, t: D.Binomial(t.tensor([2.5]), t.tensor([0.5])),
        lambda D, t: D.Poisson(t.tensor([-1.0])),
        lambda D, t: D.Exponential(t.tensor([0.0])),
        lambda D, t: D.Laplace(t.tensor([0.0]), t.tensor([0.0])),
        lambda D, t: D.LogNormal(t.tensor([0.0]), t.tensor([-1.0])),
        lambda D, t: D.MultivariateNormal(t.tensor(0.0), t.eye(2)),
        lambda D, t: D.MultivariateNormal(t.zeros(2)),
        lambda D, t: D.MultivariateNormal(t.zeros(2), t.eye(2), scale_tril=t.eye(2)),
        lambda D, t: D.MultivariateNormal(t.zeros(2), t.ones(2)),
        lambda D, t: D.MultivariateNormal(t.zeros(2), t.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda D, t: D.MultivariateNormal(t.zeros(2), scale_tril=t.tensor([[1.0, 1], [0, 1]])),
        lambda D, t: D.MultivariateNormal(t.zeros(2), scale_tril=t.tensor([[-1.0, 0], [0, 1]])),
        lambda D, t: D.Independent(D.Normal(t.zeros(2), t.ones(2)), 2),
        lambda D, t: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
    ],
)
def test_invalid_parameters_raise_value_error(make, lib):
    with pytest.raises(ValueError):
        make(lib.distributions, lib)


@pytest.mark.parametrize(
    "make, value",
    [
        (lambda D, t: D.Gamma(t.tensor([1.0]), t.tensor([1.0])), [-1.0]),
        (lambda D, t: D.Beta(t.tensor([1.0]), t.tensor([1.0])), [1.5]),
        (lambda D, t: D.Uniform(t.tensor([0.0]), t.tensor([1.0])), [2.0]),
        (lambda D, t: D.Bernoulli(t.tensor([0.5])), [0.5]),
        (lambda D, t: D.Categorical(t.tensor([0.5, 0.5])), [2]),
        (lambda D, t: D.Poisson(t.tensor([1.0])), [1.5]),
        (lambda D, t: D.Binomial(3, t.tensor([0.5])), [4.0]),
        (lambda D, t: D.Dirichlet(t.tensor([1.0, 1.0])), [0.3, 0.3]),
        (lambda D, t: D.Normal(t.zeros(3), t.ones(3)), [[0.0, 0.0]]),
        (lambda D, t: D.MultivariateNormal(t.zeros(3), t.eye(3)), [0.0, 0.0]),
        (lambda D, t: D.LogNormal(t.zeros(1), t.ones(1)), [-1.0]),
    ],
)
def test_values_outside_support_raise_value_error(make, value, lib):
    d = make(lib.distributions, lib)
    with pytest.raises(ValueError):
        d.log_prob(lib.tensor(value))


def test_log_prob_needs_a_tensor(lib):
    with pytest.raises(ValueError):
        lib.distributions.Normal(0.0, 1.0).log_prob(0.5)


def test_validate_args_false_and_default_switch(lib):
    D = lib.distributions
    d = D.Normal(lib.tensor([0.0]), lib.tensor([-1.0]), validate_args=False)
    assert np.isnan(npv(d.log_prob(lib.tensor([0.0])))).all()
    D.Distribution.set_default_validate_args(False)
    try:
        D.Gamma(lib.tensor([-1.0]), lib.tensor([1.0])).log_prob(lib.tensor([-2.0]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Gamma(lib.tensor([-1.0]), lib.tensor([1.0]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


# --------------------------------------------------------------------------- shapes, expand


def _shapes(lib):
    D = lib.distributions
    n = D.Normal(lib.zeros(3), 1.0)
    e = n.expand((2, 3))
    s = e.rsample((4,))
    m = D.MultivariateNormal(lib.zeros(2), scale_tril=lib.eye(2)).expand((5,))
    c = D.Categorical(logits=lib.zeros(2, 4)).expand((3, 2))
    oh = D.OneHotCategorical(probs=lib.ones(4)).expand((2,))
    ind = D.Independent(D.Normal(lib.zeros(2, 3), lib.ones(2, 3)), 1).expand((4, 2))
    ln = D.LogNormal(lib.zeros(1), lib.ones(1)).expand((3,))
    be = D.Beta(1.0, 2.0).expand((2,))
    bin_ = D.Binomial(4, lib.tensor([0.5])).expand((2,))
    out = [tuple(s.shape), tuple(e.batch_shape), tuple(D.Normal(0.0, 1.0).batch_shape)]
    for d in (m, c, oh, ind, ln, be, bin_):
        out.append((type(d).__name__, tuple(d.batch_shape), tuple(d.event_shape)))
        out.append(tuple(d.sample((2,)).shape))
        out.append(tuple(d.log_prob(d.sample()).shape))
    out.append(tuple(D.Bernoulli(lib.tensor([0.3, 0.6])).enumerate_support().shape))
    out.append(tuple(c.enumerate_support(expand=False).shape))
    out.append(tuple(oh.enumerate_support().shape))
    out.append(npv(bin_.enumerate_support()).tolist())
    out.append(str(c.sample().dtype))
    out.append(repr(D.Normal(lib.zeros(2), 1.0)))
    out.append(repr(D.Independent(D.Normal(0.0, lib.ones(1)), 1)))
    return out


def test_shapes_expand_and_enumerate_match_torch(real_torch):
    assert _shapes(ctorch) == _shapes(real_torch)


def test_lazy_probs_logits_and_perplexity(lib):
    D = lib.distributions
    c = D.Categorical(probs=lib.tensor([1.0, 3.0]))
    b = D.Bernoulli(logits=lib.tensor([0.0, 2.0]))
    got = [npv(c.logits), npv(b.probs), npv(c.perplexity()), npv(D.Normal(0.0, 2.0).stddev)]
    want = [
        np.log([0.25, 0.75]),
        1 / (1 + np.exp([0.0, -2.0])),
        np.exp(-(0.25 * np.log(0.25) + 0.75 * np.log(0.75))),
        2.0,
    ]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


# --------------------------------------------------------------------------- transforms


def _transforms(lib):
    D = lib.distributions
    x = lib.tensor([-1.0, 0.2, 1.5], requires_grad=True)
    out = []
    for t in (
        D.ExpTransform(),
        D.SigmoidTransform(),
        D.TanhTransform(),
        D.AffineTransform(lib.tensor([1.0, 2.0, -1.0]), lib.tensor([2.0, -0.5, 1.0])),
        D.ComposeTransform([D.TanhTransform(), D.AffineTransform(1.0, 3.0), D.ExpTransform()]),
        D.ExpTransform().inv,
    ):
        y = t(x) if not isinstance(t, type(D.ExpTransform().inv)) else t(x.exp())
        xi = t.inv(y)
        ladj = t.log_abs_det_jacobian(xi, y)
        (g,) = lib.autograd.grad(ladj.sum() + y.sum(), x)
        out += [npv(y), npv(xi), npv(ladj), npv(g)]
    a = D.AffineTransform(0.0, lib.ones(2, 3), event_dim=1)
    out.append(npv(a.log_abs_det_jacobian(lib.zeros(2, 3), lib.zeros(2, 3))))
    out.append(tuple(a.forward_shape((3,))))
    out.append((D.AffineTransform(0.0, -2.0).sign, D.ExpTransform().inv.inv == D.ExpTransform()))
    cached = D.ExpTransform(cache_size=1)
    y = cached(x)
    out.append(cached.inv(y) is x)
    out.append(repr(D.ExpTransform()))
    return out


def test_transforms_match_torch(real_torch):
    _close(_transforms(ctorch), _transforms(real_torch), 2e-5)


def test_transform_cache_size_checked(lib):
    with pytest.raises(ValueError):
        lib.distributions.ExpTransform(cache_size=2)


def test_constraints_check_matches_torch(real_torch):
    def run(lib):
        c = lib.distributions.constraints
        v = lib.tensor([[-1.0, 0.0, 0.5], [1.0, 2.0, float("nan")]])
        checks = [
            c.real, c.positive, c.nonnegative, c.unit_interval, c.boolean,
            c.nonnegative_integer, c.positive_integer, c.interval(0.0, 1.0),
            c.half_open_interval(0.0, 1.0), c.greater_than(0.5), c.greater_than_eq(0.5),
            c.less_than(0.5), c.integer_interval(0, 1), c.simplex, c.real_vector,
            c.independent(c.positive, 1), c.one_hot,
        ]  # fmt: skip
        out = [npv(k.check(v)).tolist() for k in checks]
        m = lib.tensor([[[2.0, 0.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])
        for k in (c.lower_cholesky, c.lower_triangular, c.positive_definite, c.symmetric):
            out.append(npv(k.check(m)).tolist())
        out.append([k.event_dim for k in (c.simplex, c.lower_cholesky, c.real_vector)])
        out.append([c.is_dependent(c.dependent), c.is_dependent(c.real), c.boolean.is_discrete])
        out.append([repr(c.positive), repr(c.interval(0, 1)), repr(c.real_vector)])
        return out

    assert run(ctorch) == run(real_torch)
    with pytest.raises(ValueError):
        ctorch.distributions.constraints.dependent.check(ctorch.zeros(1))


def _tanh_policy(lib, eps):
    """A SAC-style squashed Gaussian policy: ``log_prob`` of its own reparameterised draw
    (through the cached ``TanhTransform``) and the gradients of the usual objective."""
    D = lib.distributions
    mu = lib.tensor([0.2, -0.4, 2.5], requires_grad=True)
    std = lib.tensor([0.5, 1.2, 0.3], requires_grad=True)
    d = D.TransformedDistribution(D.Normal(mu, std), [D.TanhTransform(cache_size=1)])
    if eps is None:  # compat: a real draw
        lib.manual_seed(0)
        y = d.rsample((4,))
        lib.manual_seed(0)
        x = d.base_dist.sample((4,))
        eps = (npv(x) - npv(mu)) / npv(std)
    else:  # PyTorch: the same base draw, pushed through the same transform
        y = d.transforms[0](mu + lib.tensor(eps) * std)
    lp = d.log_prob(y)
    grads = lib.autograd.grad((lp - 3.0 * y).sum(), [mu, std])
    return eps, [npv(y), npv(lp), *[npv(g) for g in grads]]


def test_squashed_gaussian_policy_matches_torch(real_torch):
    eps, ours = _tanh_policy(ctorch, None)
    _, theirs = _tanh_policy(real_torch, eps)
    _close(ours, theirs, 1e-4)


# Distributions whose draws are PyTorch's own for the same seed: their samplers consume
# the generator as PyTorch's do (Categorical: one ``multinomial`` with replacement over
# the rows of ``probs``; Normal/Bernoulli/Uniform: ``normal``/``bernoulli``/``rand``).
SAME_DRAWS = [
    "normal", "lognormal", "uniform", "laplace", "exponential", "bernoulli_probs",
    "bernoulli_logits", "categorical_probs", "categorical_logits", "onehot", "mvn_tril",
    "mvn_cov", "mvn_prec", "independent", "tanh_affine", "sigmoid_neg",
]  # fmt: skip


@pytest.mark.parametrize("name", SAME_DRAWS)
@pytest.mark.parametrize("seed, shape", [(0, ()), (1, (5,)), (7, (2, 3))])
def test_draws_are_pytorchs_for_the_same_seed(name, seed, shape, real_torch):
    out = []
    for lib in (ctorch, real_torch):
        build, arrays, _, _ = CASES[name]
        d = build(lib.distributions, [lib.tensor(a) for a in arrays], lib)
        lib.manual_seed(seed)
        draws = [d.sample(shape), d.sample()]
        if d.has_rsample:
            draws.append(d.rsample(shape))
        out.append(draws)
    for ours, theirs in zip(*out):
        assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
        np.testing.assert_allclose(npv(ours), npv(theirs), rtol=1e-6, atol=1e-6)


def test_reinforce_loop_draws_pytorchs_actions(real_torch):
    """A REINFORCE loop as pytorch/examples' reinforcement_learning runs it: a policy's
    ``Categorical(probs).sample()`` picks the same actions, so losses and weights agree."""
    rng = np.random.default_rng(5)
    w0 = rng.normal(size=(3, 4)).astype(F) * 0.5
    states = rng.normal(size=(12, 4)).astype(F)
    runs = []
    for lib in (ctorch, real_torch):
        lib.manual_seed(543)
        policy = lib.nn.Linear(4, 3)
        with lib.no_grad():
            policy.weight.copy_(lib.tensor(w0))
            policy.bias.zero_()
        opt = lib.optim.Adam(policy.parameters(), lr=1e-2)
        actions, losses = [], []
        for episode in range(3):
            log_probs, rewards = [], []
            for s in states:
                probs = lib.nn.functional.softmax(policy(lib.tensor(s)), dim=-1)
                m = lib.distributions.Categorical(probs)
                a = m.sample()
                actions.append(int(a))
                log_probs.append(m.log_prob(a))
                rewards.append(1.0 if int(a) == episode % 3 else 0.0)
            ret = lib.tensor(rewards)
            ret = (ret - ret.mean()) / (ret.std() + 1e-6)
            loss = -(lib.stack(log_probs) * ret).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append((actions, losses, npv(policy.weight)))
    assert runs[0][0] == runs[1][0]
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(runs[0][2], runs[1][2], rtol=1e-5, atol=1e-6)
