"""Indexing refusals of funcgrad tracers with JAX 0.10.2's exception types and words: a
float or complex index is a ``TypeError`` (NumPy says ``IndexError``), a traced slice
bound an ``IndexError``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

CASES = {
    "float_scalar": (lambda np_: lambda x: x[0.0], (2,)),
    "float_in_tuple": (lambda np_: lambda x: x[0, 0.0], (2, 2)),
    "complex_with_array": (lambda np_: lambda x: x[np_.arange(2), 1 + 1j], (2, 2)),
    "float_array": (lambda np_: lambda x: x[np.array([0.5])], (2,)),
    "at_add_float": (lambda np_: lambda x: x.at[0.0].add(1.0), (2,)),
    "at_set_float": (lambda np_: lambda x: x.at[0.0].set(1.0), (2,)),
}
PHRASE = "Indexer must have integer or boolean type, got indexer with type"


@pytest.mark.parametrize("case", list(CASES))
def test_float_and_complex_indices(case: str) -> None:
    make, shape = CASES[case]
    with pytest.raises(TypeError, match=PHRASE):
        jax.jit(make(jnp))(jnp.zeros(shape))
    with pytest.raises(TypeError, match=PHRASE):
        fg.jit(make(fnp))(np.zeros(shape))


def test_traced_slice_bound() -> None:
    def f(np_: Any) -> Any:
        return lambda x, i: x[i:3]

    with pytest.raises(IndexError, match="Slice entries must be static integers"):
        jax.jit(f(jnp))(jnp.zeros(5), 1)
    with pytest.raises(IndexError, match="Slice entries must be static integers"):
        fg.jit(f(fnp))(np.zeros(5), 1)
