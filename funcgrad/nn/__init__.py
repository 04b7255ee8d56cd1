"""``funcgrad.nn``: ``jax.nn``'s activations, ``one_hot``, ``logsumexp``, softmaxes,
``standardize``, ``dot_product_attention`` and ``funcgrad.nn.initializers``.

Everything here is a composite of ``funcgrad.numpy`` operations, so it is
differentiable, batchable and compilable like any user function.

    >>> import funcgrad.nn as fnn, funcgrad.numpy as fnp
    >>> fnn.relu(fnp.asarray([-1.0, 2.0])).tolist()
    [0.0, 2.0]
"""

from funcgrad import numpy as _fnp
from funcgrad.nn import _activations, initializers  # noqa: F401
from funcgrad.nn._activations import *  # noqa: F403
from funcgrad.nn._attention import dot_product_attention  # noqa: F401
from funcgrad.nn._axis_forms import declared_forms as _axis_forms
from funcgrad.primitives import public_forms as _public_forms

# the forms the primitives' rows declare (``public=("nn", ...)``): as in JAX, each is
# the ``funcgrad.numpy`` function (``jax.nn.tanh`` is ``jnp.tanh``)
_DECLARED = {name: getattr(_fnp, name) for name in _public_forms("nn")}
# and of the composite reduction rows (``logsumexp``, ``softmax``, ``log_softmax``)
_DECLARED.update(_axis_forms("nn"))
globals().update(_DECLARED)

__all__ = sorted([*_activations.__all__, *_DECLARED, "dot_product_attention", "initializers"])
