"""JAX's ``jax.test_util`` names: :func:`check_grads` (see :mod:`funcgrad.testing`)."""

from funcgrad.testing import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
