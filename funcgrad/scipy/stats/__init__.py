"""``funcgrad.scipy.stats``: ``jax.scipy.stats``'s distributions as composites of funcgrad
operations (differentiable, batchable and compiled under ``jit``).

    >>> from funcgrad.scipy import stats
    >>> round(float(stats.norm.logpdf(0.0)), 6)
    -0.918939
"""

from __future__ import annotations

from funcgrad.scipy.stats import (
    bernoulli,
    beta,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    geom,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
)

__all__ = [
    "bernoulli",
    "beta",
    "binom",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "gamma",
    "geom",
    "laplace",
    "logistic",
    "multivariate_normal",
    "norm",
    "pareto",
    "poisson",
    "t",
    "truncnorm",
    "uniform",
]
