"""The bridge to the JAX ecosystem: call JAX functions from funcgrad programs.

:func:`from_jax` wraps any JAX-traceable function (pytrees of arrays in and
out: an optax update, a Flax module's ``apply``, a ``jax.numpy`` routine) as
one opaque funcgrad equation, ``jax_call``. funcgrad never looks inside it:
its shapes come from ``jax.eval_shape``, it lowers by calling the function in
the compiled program, and funcgrad's ``jvp``/``grad``/``vmap`` of it are
``jax.jvp``/``jax.vjp``/``jax.vmap`` of the foreign function, bound again as
``jax_call`` equations so they stay part of funcgrad's IR and transform
further (``grad`` of ``grad``, ``vmap`` of ``grad``, ...).

**This package is the one place in funcgrad allowed to call JAX's
transformations** (``jax.jvp``, ``jax.vjp``, ``jax.vmap``, ``jax.eval_shape``,
``jax.jit``), and only ever on the wrapped foreign function. Everything else
in funcgrad differentiates and batches with its own rules.

Example:
    >>> import jax.numpy as jnp
    >>> import funcgrad as fg
    >>> from funcgrad.interop import from_jax
    >>> softplus = from_jax(lambda x: jnp.logaddexp(x, 0.0))
    >>> g = fg.grad(lambda x: softplus(x).sum())(fg.numpy.ones(3))
"""

from funcgrad.interop._jax_call import from_jax, jax_call, jax_call_p

__all__ = ["from_jax", "jax_call", "jax_call_p"]
