"""``funcgrad.nn``: ``jax.nn``'s activations, ``one_hot``, ``logsumexp``, softmaxes,
``standardize``, ``dot_product_attention`` and ``funcgrad.nn.initializers``.

Everything here is a composite of ``funcgrad.numpy`` operations, so it is
differentiable, batchable and compilable like any user function.

    >>> import funcgrad.nn as fnn, funcgrad.numpy as fnp
    >>> fnn.relu(fnp.asarray([-1.0, 2.0])).tolist()
    [0.0, 2.0]
"""

from funcgrad.nn import initializers
from funcgrad.nn._activations import (
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    log_softmax,
    logmeanexp,
    logsumexp,
    mish,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softmax,
    softplus,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    standardize,
    swish,
    tanh,
)
from funcgrad.nn._attention import dot_product_attention

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "initializers",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]
