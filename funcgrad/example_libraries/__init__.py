"""``funcgrad.example_libraries``: the two mini-libraries JAX's examples are written with.

* :mod:`funcgrad.example_libraries.stax`: neural-network layers as
  ``(init_fun, apply_fun)`` pairs and the ``serial``/``parallel`` combinators.
* :mod:`funcgrad.example_libraries.optimizers`: first-order optimizers as
  ``(init_fun, update_fun, get_params)`` triples over pytrees.

Both follow ``jax.example_libraries`` name for name and signature for signature, so code
written for them runs with ``from funcgrad.example_libraries import stax, optimizers``.
They are written with :mod:`funcgrad.numpy`, :mod:`funcgrad.lax`, :mod:`funcgrad.random`
and :mod:`funcgrad.nn`, so every ``apply_fun``/``update_fun`` can be differentiated,
vectorised and jitted by funcgrad's transforms.
"""

from funcgrad.example_libraries import optimizers, stax

__all__ = ["optimizers", "stax"]
