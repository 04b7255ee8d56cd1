"""The creation rows' numpy forms (``funcgrad.core.creation_row``: ``zeros``, ``ones``,
``empty``, ``full`` and their ``*_like`` forms, generated in ``funcgrad/numpy/_creation.py``)
against JAX 0.10.2's: parameters, dtypes (weak types included), values and refusals."""

from __future__ import annotations

import inspect
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad._compat_contract import creation_rows

ROWS = [r.name for r in creation_rows()]


def outcome(call: Any) -> tuple:
    """The result's dtype, weak type, shape and values, or the exception's type."""
    try:
        r = call()
    except Exception as e:  # (the exception type is the outcome compared)
        return (type(e).__name__,)
    if np.dtype(r.dtype) == jax.dtypes.float0:
        return ("float0", r.shape)
    return (str(r.dtype), getattr(r, "weak_type", False), r.shape, np.asarray(r).tolist())


@pytest.mark.parametrize("name", ROWS)
def test_parameters_are_jaxs(name: str) -> None:
    ours = inspect.signature(getattr(fnp, name)).parameters
    theirs = inspect.signature(getattr(jnp, name)).parameters
    assert [(p.name, p.kind) for p in ours.values()] == [(p.name, p.kind) for p in theirs.values()]
    assert fnp.__dict__[name] is getattr(fnp, name)


SHAPES = (3, (2, 3), (), [0, 2], np.int64(2))
DTYPES = (None, "float32", "int32", "bool", "complex64", "uint8")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ("zeros", "ones", "empty"))
def test_sized_forms(name: str, dtype: str | None) -> None:
    for shape in SHAPES:
        assert outcome(lambda: getattr(fnp, name)(shape, dtype)) == outcome(
            lambda: getattr(jnp, name)(shape, dtype)
        )
    assert outcome(lambda: getattr(fnp, name)(shape=(2,), dtype=dtype)) == outcome(
        lambda: getattr(jnp, name)(shape=(2,), dtype=dtype)
    )


@pytest.mark.parametrize("fill", (2, 2.5, True, 1j, np.float32(3), np.arange(3, dtype=np.int8)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_full_forms(fill: Any, dtype: str | None) -> None:
    """(A complex fill of a real dtype: JAX casts with NumPy's ``ComplexWarning``, funcgrad
    refuses with a ``TypeError``, as before the rows; not compared.)"""
    if isinstance(fill, complex) and dtype != "complex64":
        fill = 1.5
    for shape in ((2, 3), 3):
        assert outcome(lambda: fnp.full(shape, fill, dtype)) == outcome(
            lambda: jnp.full(shape, fill, dtype)
        )
    for a in (np.ones((2, 3), np.float32), np.ones(3, np.int16), 2.0):
        assert outcome(lambda: fnp.full_like(a, fill, dtype)) == outcome(
            lambda: jnp.full_like(a, fill, dtype)
        )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ("zeros_like", "ones_like", "empty_like"))
def test_like_forms(name: str, dtype: str | None) -> None:
    templates = (np.ones((2, 3), np.float32), np.ones(3, np.int8), 2.0, 3, True)
    for a in (*templates, jax.ShapeDtypeStruct((2,), jnp.int32)):
        for shape in (None, (4,)):
            assert outcome(lambda: getattr(fnp, name)(a, dtype, shape)) == outcome(
                lambda: getattr(jnp, name)(a, dtype, shape)
            )


CALLS = [
    lambda m: m.zeros(2, 3),
    lambda m: m.zeros(-1),
    lambda m: m.ones((2, 3.0)),
    lambda m: m.zeros(2, jax.dtypes.float0),
    lambda m: m.ones(2, jax.dtypes.float0),
    lambda m: m.empty(2, jax.dtypes.float0),
    lambda m: m.full((2,), [1, 2]),
    lambda m: m.full((2,)),
    lambda m: m.zeros_like([1, 2]),
    lambda m: m.empty_like(prototype=np.ones(2)),
    lambda m: m.full_like(np.ones(2), [1, 2]),
    lambda m: m.full_like(np.ones(2), fill_value=3, dtype="int8", shape=(1, 2)),
    lambda m: m.zeros((2,), "float32", None),
    lambda m: m.ones(2, bogus=1),
]


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_calls_and_refusals(i: int) -> None:
    assert outcome(lambda: CALLS[i](fnp)) == outcome(lambda: CALLS[i](jnp))


def test_traced() -> None:
    """Under ``jit`` the forms give tracers, with the values of their eager forms."""

    def f(x: Any) -> Any:
        return fnp.full_like(x, 2.0) * x + fnp.zeros_like(x) + fnp.ones(x.shape)

    x = np.arange(3.0)
    assert np.allclose(funcgrad.jit(f)(x), 2.0 * x + 1)
