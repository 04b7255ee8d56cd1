"""JAX's transforms as test oracles, each applied function compiled whole.

``jax.grad(f)(x)`` run eagerly compiles every primitive of ``f``'s derivative on its
own (a test's oracle could cost dozens of XLA compilations); the same call under
``jax.jit`` is one compilation. These wrappers return the transformed function under
``jax.jit``, falling back to the eager call when its arguments are not all arrays
or its output shape depends on values (``jax.jit`` would refuse them). Use as
``import jax_oracle as jo`` and ``jo.grad(f)(x)`` wherever the test used ``jax.grad``.

``compare_jitted(fmod, jmod, name, args, kwargs)`` runs a funcgrad function and JAX's of
the same name, each compiled once, and checks ``same_array`` (shape, dtype, weak type,
values).

``random_array(rng, *shape, dtype=)`` and ``spd_matrix(rng, n, batch, dtype=)``: the
linear-algebra tests' inputs, drawn from the caller's generator (each test file keeps its
own seed).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import funcgrad

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


def same_array(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """``got`` (a funcgrad result) equals JAX's ``want``: a ``jax.Array`` of the same shape,
    dtype and weak type with close values; tuples element by element."""
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same_array(g, w, rtol, atol)
        return
    assert isinstance(got, jax.Array)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.weak_type == want.weak_type
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def jitted_call(fn: Callable[..., Any], args: tuple, kwargs: dict, jit: Callable) -> Any:
    """``fn(*args, **kwargs)`` compiled once by ``jit`` (``funcgrad.jit`` or ``jax.jit``):
    the NumPy array arguments are traced, the rest static."""
    dyn = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def call(*vals: Any) -> Any:
        full = list(args)
        for i, v in zip(dyn, vals):
            full[i] = v
        return fn(*full, **kwargs)

    return jit(call)(*(args[i] for i in dyn))


def compare_jitted(fmod: Any, jmod: Any, name: str, args: tuple, kwargs: dict, **tol: Any) -> None:
    """``fmod.<name>`` (funcgrad) and ``jmod.<name>`` (JAX) on the same arguments, each
    compiled once (eager dispatch compiles every operation separately): ``same_array``."""
    got = jitted_call(getattr(fmod, name), args, kwargs, funcgrad.jit)
    same_array(got, jitted_call(getattr(jmod, name), args, kwargs, jax.jit), **tol)


def same_values(a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """``a`` and ``b`` (arrays of either library) have the same dtype and shape and close
    values, NaNs in the same places (weak types not compared)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def random_array(rng: np.random.Generator, *shape: int, dtype: str = "float64") -> np.ndarray:
    """Standard-normal values of ``shape`` (real and imaginary parts for a complex dtype)."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def spd_matrix(
    rng: np.random.Generator, n: int, batch: tuple = (), dtype: str = "float64"
) -> np.ndarray:
    """A (batch of) Hermitian positive-definite ``n x n`` matrices: ``x x^H + n I``."""
    x = random_array(rng, *batch, n, n, dtype=dtype)
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)
