"""JAX's transforms as test oracles, each applied function compiled whole.

``jax.grad(f)(x)`` run eagerly compiles every primitive of ``f``'s derivative on its
own (a test's oracle could cost dozens of XLA compilations); the same call under
``jax.jit`` is one compilation. These wrappers return the transformed function under
``jax.jit``, falling back to the eager call when its arguments are not all arrays
or its output shape depends on values (``jax.jit`` would refuse them). Use as
``import jax_oracle as jo`` and ``jo.grad(f)(x)`` wherever the test used ``jax.grad``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

_ARRAYS = (np.ndarray, np.generic, jax.Array, float, int, complex, bool)


def compiled(g: Callable[..., Any]) -> Callable[..., Any]:
    """``g`` run as one compiled program where ``jax.jit`` can take its call."""

    @functools.wraps(g)
    def run(*args: Any, **kwargs: Any) -> Any:
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if kwargs or not all(isinstance(a, _ARRAYS) for a in leaves):
            return g(*args, **kwargs)
        try:
            return jax.jit(g)(*args)
        except (jax.errors.JAXTypeError, jax.errors.JAXIndexError):
            return g(*args)

    return run


def _wrap(transform: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(transform)
    def make(*args: Any, **kwargs: Any) -> Any:
        return compiled(transform(*args, **kwargs))

    return make


grad = _wrap(jax.grad)
value_and_grad = _wrap(jax.value_and_grad)
jacrev = _wrap(jax.jacrev)
jacfwd = _wrap(jax.jacfwd)
hessian = _wrap(jax.hessian)
vmap = _wrap(jax.vmap)


def jvp(f: Callable[..., Any], primals: Any, tangents: Any) -> Any:
    """``jax.jvp(f, primals, tangents)``, compiled whole."""
    return compiled(lambda p, t: jax.jvp(f, p, t))(tuple(primals), tuple(tangents))


def vjp(f: Callable[..., Any], primals: Any, cotangent: Any) -> Any:
    """``jax.vjp(f, *primals)[1](cotangent)`` (the input cotangents), compiled whole."""
    return compiled(lambda p, c: jax.vjp(f, *p)[1](c))(tuple(primals), cotangent)


def trees_close(got: Any, want: Any, rtol: float = 1e-8, atol: float = 1e-8) -> None:
    """Assert two pytrees have the same leaves' shapes and dtypes and close values."""
    got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
