"""``funcgrad.random``'s refusals of a batch of keys and of traced shapes, against
``jax.random``'s: the same exception types and leading phrases (a batch of keys was a
TypeError; a traced shape's message did not say that shapes are static)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.errors
import funcgrad.random as fr

KEYS = np.asarray(jax.random.split(jax.random.PRNGKey(0)))

CALLS = {
    "bits": lambda r: r.bits(KEYS, (2,)),
    "split": lambda r: r.split(KEYS),
    "fold_in": lambda r: r.fold_in(KEYS, 0),
    "gamma": lambda r: r.gamma(KEYS, 1.0, (2,)),
    "loggamma": lambda r: r.loggamma(KEYS, 1.0, (2,)),
    "chisquare": lambda r: r.chisquare(KEYS, 1.0, shape=(2,)),
    "dirichlet": lambda r: r.dirichlet(KEYS, np.arange(1.0, 3.0), shape=(2,)),
    "normal": lambda r: r.normal(KEYS, (2,)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_batch_of_keys_refused_as_jax(name):
    with pytest.raises(Exception) as want:
        CALLS[name](jax.random)
    with pytest.raises(type(want.value)) as got:
        CALLS[name](fr)
    head = f"{name} accepts a single key, but was given a key array of shape (2, 2) != ()."
    assert str(want.value).startswith(head)
    assert str(got.value).startswith(head)


def test_traced_shape_refused_as_jax():
    def sample(r, jit):
        return jit(lambda n: r.normal(r.PRNGKey(0), (n, 2)))(3)

    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        sample(jax.random, jax.jit)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
        sample(fr, fg.jit)


@pytest.mark.parametrize("axis", [3, 1, -2])
def test_permutation_of_an_int_checks_axis_as_jax(axis):
    """``permutation(key, n, axis)`` permutes ``arange(n)``: an axis past its one
    dimension is refused (it was ignored)."""
    key = jax.random.PRNGKey(0)
    with pytest.raises(ValueError):
        jax.random.permutation(key, 10, axis=axis)
    with pytest.raises(ValueError):
        fr.permutation(np.asarray(key), 10, axis=axis)


def test_permutation_of_an_int_values_and_tracer():
    key = np.asarray(jax.random.PRNGKey(3))
    for axis in (0, -1):
        got = fr.permutation(key, 7, axis=axis)
        assert sorted(np.asarray(got).tolist()) == list(range(7))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jax.random.permutation)(jax.random.PRNGKey(0), 10)
    with pytest.raises(funcgrad.errors.ConcretizationTypeError):
        fg.jit(fr.permutation)(key, 10)
