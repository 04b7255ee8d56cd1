"""``kl_divergence(p, q)`` and ``register_kl`` with closed forms for the common pairs.

Dispatch picks the registered ``(type_p, type_q)`` pair closest to the arguments' types
in their method resolution orders; an unregistered pair raises ``NotImplementedError``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core.creation_rows import full_like
from compat._core.ops import exp, log, matmul, where
from compat._core.ops.linalg_ns import solve_triangular
from compat._core.ops.selecting import diag_embed, diagonal
from compat._core.ops.unary import digamma, lgamma
from compat._core.tensor import Tensor
from compat.torch.distributions.bernoulli import Bernoulli
from compat.torch.distributions.beta import Beta
from compat.torch.distributions.categorical import Categorical
from compat.torch.distributions.cauchy import Cauchy
from compat.torch.distributions.continuous_bernoulli import ContinuousBernoulli
from compat.torch.distributions.dirichlet import Dirichlet
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.exponential import Exponential
from compat.torch.distributions.gamma import Gamma
from compat.torch.distributions.geometric import Geometric
from compat.torch.distributions.gumbel import EULER, Gumbel
from compat.torch.distributions.half_normal import HalfNormal
from compat.torch.distributions.independent import Independent
from compat.torch.distributions.laplace import Laplace
from compat.torch.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from compat.torch.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from compat.torch.distributions.normal import Normal
from compat.torch.distributions.one_hot_categorical import OneHotCategorical
from compat.torch.distributions.pareto import Pareto
from compat.torch.distributions.poisson import Poisson
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.uniform import Uniform
from compat.torch.distributions.utils import _sum_rightmost
from compat.torch.nn.functional.activation import softplus

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable] = {}
_KL_MEMO: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable], Callable]:
    """Decorator registering ``fun(p, q)`` as ``KL(p || q)`` for these distribution types."""
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not isinstance(t, type):  # PyTorch accepts any class here
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMO.clear()
        return fun

    return decorator


def _dispatch(type_p: type, type_q: type) -> Any:
    """The registered function whose pair is nearest ``(type_p, type_q)`` (MRO distance)."""
    mro_p, mro_q = type_p.__mro__, type_q.__mro__
    scored = []
    for sp, sq in _KL_REGISTRY:
        if issubclass(type_p, sp) and issubclass(type_q, sq):
            dp, dq = mro_p.index(sp), mro_q.index(sq)
            scored.append(((dp, dq), (sp, sq)))
    if not scored:
        return NotImplemented
    left = min(scored)[1]
    right = min(scored, key=lambda s: (s[0][1], s[0][0]))[1]
    if _KL_REGISTRY[left] is not _KL_REGISTRY[right]:
        warnings.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left[0].__name__}, {right[1].__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return _KL_REGISTRY[left]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q)``, a tensor of the batch shape."""
    key = (type(p), type(q))
    fun = _KL_MEMO.get(key)
    if fun is None:
        fun = _KL_MEMO[key] = _dispatch(*key)
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
            f"{q.__class__.__name__}"
        )
    return fun(p, q)


def _inf_where(cond: Tensor, t: Tensor) -> Tensor:
    return where(cond, full_like(t, math.inf), t)


def _zero_where(cond: Tensor, t: Tensor) -> Tensor:
    return where(cond, full_like(t, 0.0), t)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - log(var_ratio))


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    shape = tuple(t.shape)
    t = _inf_where((q.probs == 0).expand(shape), t)
    t = _zero_where((p.probs == 0).expand(shape), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    sp = softplus
    t1 = p.probs * (sp(-q.logits) - sp(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (sp(q.logits) - sp(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    lg, dg = lgamma, digamma
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lg(q.concentration1) + lg(q.concentration0) + lg(sum_p)
    t2 = lg(p.concentration1) + lg(p.concentration0) + lg(sum_q)
    t3 = (p.concentration1 - q.concentration1) * dg(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * dg(p.concentration0)
    t5 = (sum_q - sum_p) * dg(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    lg, dg = lgamma, digamma
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lg(sum_p) - lg(sum_q)
    t2 = (lg(p.concentration) - lg(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = dg(p.concentration) - dg(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return -log(ratio) + ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * log(p.rate / q.rate)
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -log(scale_ratio)
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (log(p.rate) - log(q.rate)) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = log((q.high - q.low) / (p.high - p.low))
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError(
            "KL-divergence between two Multivariate Normals with different event shapes "
            "cannot be computed"
        )
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = log(diagonal(lq, dim1=-2, dim2=-1)).sum(-1) - log(
        diagonal(lp, dim1=-2, dim2=-1)
    ).sum(-1)
    n = p.event_shape[0]
    batch = tuple(np.broadcast_shapes(tuple(lq.shape[:-2]), tuple(lp.shape[:-2])))
    x = solve_triangular(lq.expand(batch + (n, n)), lp.expand(batch + (n, n)), upper=False)
    term2 = x.pow(2).sum(-1).sum(-1)
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


# --------------------------------------------------------------------------- the
# less common families (PyTorch's pairs for Gumbel, Geometric, HalfNormal, Pareto, Cauchy)


def _infinite_like(t: Tensor) -> Tensor:
    return full_like(t, math.inf)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Tensor:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -log(ct1) - ct2 + ct3
    t3 = exp(ct2 + lgamma(1 + ct1) - ct3)
    return t1 + ct1 * EULER + t3 - (1 + EULER)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * log(p.scale / q.scale) - log(alpha_ratio) + alpha_ratio - 1
    return _inf_where(p.scale < q.scale, result)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    t1 = log((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2))
    return t1 - log(4 * p.scale * q.scale)


@register_kl(Beta, Pareto)
@register_kl(Exponential, Pareto)
@register_kl(Gamma, Pareto)
@register_kl(Laplace, Pareto)
@register_kl(Normal, Pareto)
def _kl_pareto_support_gap(p: Distribution, q: Pareto) -> Tensor:
    """Infinite: ``p`` puts mass below any Pareto's minimum."""
    return _infinite_like(p.mean)


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
def _kl_gumbel_infinity(p: Gumbel, q: Distribution) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Pareto, Beta)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p: Pareto, q: Distribution) -> Tensor:
    return _infinite_like(p.scale)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Exponential, q: Gumbel) -> Tensor:
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    return log(prod) - 1 - ratio + exp(ratio) * prod / (prod + 1) + prod.reciprocal()


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Gamma, q: Gumbel) -> Tensor:
    c = p.concentration
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    t1 = (c - 1) * digamma(c) - lgamma(c) - c
    t2 = log(prod) + c / prod
    t3 = exp(ratio) * (1 + prod.reciprocal()).pow(-c) - ratio
    return t1 + t2 + t3


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Gumbel, q: Normal) -> Tensor:
    ratio = p.scale / q.scale
    t1 = log(ratio / math.sqrt(2 * math.pi))
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (EULER + 1)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Normal, q: Gumbel) -> Tensor:
    mean_ratio = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_ratio = q.loc / q.scale
    t3 = exp(-mean_ratio + 0.5 * var_ratio + loc_ratio)
    return -0.5 * log(var_ratio) + mean_ratio - loc_ratio + t3 - 0.5 * (1 + math.log(2 * math.pi))


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Uniform, q: Gumbel) -> Tensor:
    common = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    return log(common) + 0.5 * (high + low) - common * (exp(-high) - exp(-low))


def _x_log_x(t: Tensor) -> Tensor:
    return t * log(t)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Uniform, q: Pareto) -> Tensor:
    width = p.high - p.low
    t1 = log(q.alpha * q.scale.pow(q.alpha) * width)
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _inf_where(p.low < q.scale, t2 * (q.alpha + 1) - t1)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Pareto, q: Exponential) -> Tensor:
    prod = p.scale * q.rate
    a = p.alpha
    result = log(a / prod) - a.reciprocal() + a * prod / (a - 1) - 1
    return _inf_where(a <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Pareto, q: Gamma) -> Tensor:
    a, c = p.alpha, q.concentration
    common = log(p.scale) + a.reciprocal()
    t1 = log(a) - common
    t2 = lgamma(c) - c * log(q.rate)
    t3 = (1 - c) * common
    t4 = q.rate * a * p.scale / (a - 1)
    return _inf_where(a <= 1, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Pareto, q: Normal) -> Tensor:
    a = p.alpha
    var = 2 * q.scale.pow(2)
    common = p.scale / (a - 1)
    t1 = log(math.sqrt(2 * math.pi) * q.scale * a / p.scale)
    t3 = a * common.pow(2) / (a - 2)
    t4 = (a * common - q.loc).pow(2)
    return _inf_where(a <= 2, t1 - a.reciprocal() + (t3 + t4) / var - 1)


# --------------------------------------------------------------------------- low-rank normals


def _batch_trace_xxt(bmat: Tensor) -> Tensor:
    """``trace(X X^T)`` over the last two dimensions."""
    return bmat.pow(2).sum(-1).sum(-1)


def _check_mvn_events(p: Distribution, q: Distribution, which: str = "(Low Rank)") -> None:
    if p.event_shape != q.event_shape:
        # PyTorch's message, with the run of spaces its line continuation leaves
        raise ValueError(
            f"KL-divergence between two {which} Multivariate Normals with{' ' * 26}"
            "different event shapes cannot be computed"
        )


def _woodbury_a(q: LowRankMultivariateNormal) -> Tensor:
    """``A`` with ``inv(q.cov) = inv(D) - A^T A`` (``A = C^-1 W^T D^-1``, ``C`` lower)."""
    qwt_qdinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return solve_triangular(q._capacitance_tril, qwt_qdinv, upper=False)


def _q_terms(p: Distribution, q: LowRankMultivariateNormal) -> Tensor:
    return _batch_lowrank_mahalanobis(
        q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q.loc - p.loc, q._capacitance_tril
    )


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_mvn_events(p, q, "Low Rank")
    term1 = q._logdet() - p._logdet()
    term3 = _q_terms(p, q)
    a = _woodbury_a(q)
    pw, pd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    qd = q._unbroadcasted_cov_diag
    term21 = (pd / qd).sum(-1)
    term22 = _batch_trace_xxt(pw * qd.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_xxt(a * pd.sqrt().unsqueeze(-2))
    term24 = _batch_trace_xxt(matmul(a, pw))
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal, q: LowRankMultivariateNormal) -> Tensor:
    _check_mvn_events(p, q)
    lp = p._unbroadcasted_scale_tril
    term1 = q._logdet() - 2 * log(diagonal(lp, dim1=-2, dim2=-1)).sum(-1)
    term3 = _q_terms(p, q)
    a = _woodbury_a(q)
    term21 = _batch_trace_xxt(lp * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_xxt(matmul(a, lp))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: LowRankMultivariateNormal, q: MultivariateNormal) -> Tensor:
    _check_mvn_events(p, q)
    lq = q._unbroadcasted_scale_tril
    term1 = 2 * log(diagonal(lq, dim1=-2, dim2=-1)).sum(-1) - _batch_lowrank_logdet(
        p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril
    )
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    n = p.event_shape[0]
    batch = tuple(
        np.broadcast_shapes(tuple(lq.shape[:-2]), tuple(p._unbroadcasted_cov_factor.shape[:-2]))
    )
    lq_b = lq.expand(batch + (n, n))
    pw = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    pd = diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_xxt(solve_triangular(lq_b, pw, upper=False))
    term22 = _batch_trace_xxt(solve_triangular(lq_b, pd, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - n)


# --------------------------------------------------------------------------- continuous Bernoulli


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Pareto)
def _kl_cb_infinity(p: ContinuousBernoulli, q: Distribution) -> Tensor:
    return _infinite_like(p.probs)


@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Pareto, ContinuousBernoulli)
def _kl_outside_unit_interval(p: Distribution, q: ContinuousBernoulli) -> Tensor:
    """Infinite: ``p`` puts mass outside ``[0, 1]``."""
    return _infinite_like(p.mean)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p: Beta, q: ContinuousBernoulli) -> Tensor:
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p: ContinuousBernoulli, q: Exponential) -> Tensor:
    return -p.entropy() - log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p: ContinuousBernoulli, q: Normal) -> Tensor:
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + log(q.scale)
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p: ContinuousBernoulli, q: Uniform) -> Tensor:
    # PyTorch's condition, kept as it is: infinite unless q reaches past both ends of [0, 1]
    result = -p.entropy() + log(q.high - q.low)
    return _inf_where((q.low >= 0.0) | (q.high <= 1.0), result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p: Uniform, q: ContinuousBernoulli) -> Tensor:
    result = -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()
    return _inf_where((p.high >= 1.0) | (p.low <= 0.0), result)
