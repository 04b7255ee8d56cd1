"""Array functions and tracer methods JAX's own tests use (``reshape(order="F")``,
``pad(mode="empty")``, ``round()`` on a traced value, ``x.searchsorted``), eager and
under ``jit``, against JAX."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _same(f: Callable[[Any, Any], Any], *args: Any) -> None:
    """``f(np_module, jit)(*args)`` agrees between JAX and funcgrad, eager and jitted."""
    for jit in (False, True):
        want = f(jnp, jax.jit if jit else (lambda g: g))(*args)
        got = f(fnp, fg.jit if jit else (lambda g: g))(*args)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize(
    ("shape", "new"), [((6,), (2, 3)), ((2, 3, 4), (4, -1)), ((2, 6), 12), ((4, 3), (3, 2, 2))]
)
def test_reshape_fortran_order(shape: tuple[int, ...], new: Any) -> None:
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    _same(lambda np_, jit: jit(lambda a: np_.reshape(a, new, order="F")), x)
    _same(lambda np_, jit: jit(lambda a: np_.asarray(a).reshape(new, order="F")), x)
    for np_ in (jnp, fnp):  # neither implements order="A"
        with pytest.raises(NotImplementedError):
            jax.jit(lambda a: np_.reshape(a, new, order="A"))(x) if np_ is jnp else fg.jit(
                lambda a: np_.reshape(a, new, order="A")
            )(x)


def test_reshape_fortran_order_gradient() -> None:
    x = np.arange(6.0).reshape(2, 3)

    def loss(np_: Any) -> Callable:
        return lambda a: np_.sum(np_.reshape(a, (3, 2), order="F") * np_.arange(6.0).reshape(3, 2))

    np.testing.assert_allclose(fg.grad(loss(fnp))(x), jax.grad(loss(jnp))(x))


@pytest.mark.parametrize("width", [1, (2, 0), ((1, 0), (0, 2))])
def test_pad_empty_fills_zeros_like_jax(width: Any) -> None:
    x = np.full((2, 3), 5.0, np.float32)
    _same(lambda np_, jit: jit(lambda a: np_.pad(a, width, mode="empty")), x)
    with pytest.raises(ValueError, match="empty"):
        fnp.pad(x, 1, mode="empty", constant_values=2)


@pytest.mark.parametrize("value", [2.4, 2.5, -3.7, 3.5])
def test_round_builtin_on_tracers(value: float) -> None:
    x = np.float32(value)
    _same(lambda np_, jit: jax.jit(lambda a: round(a)) if np_ is jnp else fg.jit(round), x)
    _same(
        lambda np_, jit: jit(lambda a: round(np_.asarray(a), 1)),
        np.array([value, 1.26], np.float32),
    )


def test_tracer_searchsorted_method() -> None:
    a = np.array([0.0, 1.0, 1.0, 2.5, 4.0], np.float32)
    v = np.array([1.0, 3.0, -1.0], np.float32)
    for side in ("left", "right"):
        _same(lambda np_, jit: jit(lambda s, q: np_.asarray(s).searchsorted(q, side=side)), a, v)
