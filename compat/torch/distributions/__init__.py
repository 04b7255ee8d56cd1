"""``torch.distributions``: probability distributions on compat tensors.

Parameters and values are compat tensors, so ``log_prob``, ``entropy``, ``cdf``,
``kl_divergence`` and reparameterised samples (``rsample``) are differentiable through
compat's autograd. Draws use compat's global generator (``torch.manual_seed``); the
reparameterised gamma, beta and Dirichlet draws carry funcgrad.random's implicit gradient.
"""

from __future__ import annotations

from compat.torch.distributions import constraints, kl, transforms  # noqa: F401
from compat.torch.distributions.bernoulli import Bernoulli
from compat.torch.distributions.beta import Beta
from compat.torch.distributions.binomial import Binomial
from compat.torch.distributions.categorical import Categorical
from compat.torch.distributions.cauchy import Cauchy
from compat.torch.distributions.chi2 import Chi2
from compat.torch.distributions.constraint_registry import biject_to, transform_to
from compat.torch.distributions.continuous_bernoulli import ContinuousBernoulli
from compat.torch.distributions.dirichlet import Dirichlet
from compat.torch.distributions.distribution import Distribution
from compat.torch.distributions.exp_family import ExponentialFamily
from compat.torch.distributions.exponential import Exponential
from compat.torch.distributions.fishersnedecor import FisherSnedecor
from compat.torch.distributions.gamma import Gamma
from compat.torch.distributions.generalized_pareto import GeneralizedPareto
from compat.torch.distributions.geometric import Geometric
from compat.torch.distributions.gumbel import Gumbel
from compat.torch.distributions.half_cauchy import HalfCauchy
from compat.torch.distributions.half_normal import HalfNormal
from compat.torch.distributions.independent import Independent
from compat.torch.distributions.inverse_gamma import InverseGamma
from compat.torch.distributions.kl import kl_divergence, register_kl
from compat.torch.distributions.kumaraswamy import Kumaraswamy
from compat.torch.distributions.laplace import Laplace
from compat.torch.distributions.log_normal import LogNormal
from compat.torch.distributions.logistic_normal import LogisticNormal
from compat.torch.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from compat.torch.distributions.mixture_same_family import MixtureSameFamily
from compat.torch.distributions.multinomial import Multinomial
from compat.torch.distributions.multivariate_normal import MultivariateNormal
from compat.torch.distributions.negative_binomial import NegativeBinomial
from compat.torch.distributions.normal import Normal
from compat.torch.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from compat.torch.distributions.pareto import Pareto
from compat.torch.distributions.poisson import Poisson
from compat.torch.distributions.relaxed_bernoulli import RelaxedBernoulli
from compat.torch.distributions.relaxed_categorical import RelaxedOneHotCategorical
from compat.torch.distributions.student_t import StudentT
from compat.torch.distributions.transformed_distribution import TransformedDistribution
from compat.torch.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from compat.torch.distributions.transforms_pd_cdf_slices import (
    CatTransform,
    CumulativeDistributionTransform,
    PositiveDefiniteTransform,
    StackTransform,
)
from compat.torch.distributions.uniform import Uniform
from compat.torch.distributions.von_mises import VonMises
from compat.torch.distributions.weibull import Weibull

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "Bernoulli",
    "Beta",
    "Binomial",
    "CatTransform",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ComposeTransform",
    "ContinuousBernoulli",
    "CumulativeDistributionTransform",
    "Dirichlet",
    "Distribution",
    "ExpTransform",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "IndependentTransform",
    "InverseGamma",
    "Kumaraswamy",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "LowerCholeskyTransform",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "Poisson",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "StudentT",
    "TanhTransform",
    "Transform",
    "TransformedDistribution",
    "Uniform",
    "VonMises",
    "Weibull",
    "biject_to",
    "constraints",
    "identity_transform",
    "kl_divergence",
    "register_kl",
    "transform_to",
]
