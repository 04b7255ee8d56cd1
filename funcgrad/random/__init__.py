"""Key-based pseudo-random numbers (``jax.random``'s API over funcgrad primitives).

A key is a ``uint32[2]`` array, the layout of ``jax.random.PRNGKey``; keys
are split, never reused::

    import funcgrad.random as fr

    key = fr.key(0)
    key, sub = fr.split(key)
    x = fr.normal(sub, (3,))

Every sampler is built from the ``random_bits`` / ``random_split`` /
``random_fold_in`` / ``random_gamma`` primitives with JAX's recipes, so for a
given key the values are the same eagerly, under ``jit`` and under ``vmap``
over keys, and equal ``jax.random``'s (with JAX's default
``jax_threefry_partitionable``). Samples are differentiable in their
parameters where JAX's are (pathwise for normal/uniform transforms; the
implicit gamma gradient for gamma, beta, dirichlet, t, chisquare, f); ``vmap``
over a batch of keys gives each example the values its own key gives.
"""

from funcgrad.random._continuous import (
    ball,
    beta,
    cauchy,
    chisquare,
    dirichlet,
    double_sided_maxwell,
    f,
    gamma,
    generalized_normal,
    laplace,
    loggamma,
    logistic,
    lognormal,
    maxwell,
    multivariate_normal,
    orthogonal,
    pareto,
    rademacher,
    rayleigh,
    t,
    triangular,
    truncated_normal,
    wald,
    weibull_min,
)
from funcgrad.random._core import (
    PRNGKey,
    bernoulli,
    bits,
    categorical,
    choice,
    clone,
    exponential,
    fold_in,
    gumbel,
    key,
    key_data,
    key_impl,
    normal,
    permutation,
    randint,
    split,
    uniform,
    wrap_key_data,
)
from funcgrad.random._discrete import binomial, geometric, multinomial, poisson

__all__ = [
    "PRNGKey",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "rayleigh",
    "split",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]
