"""funcgrad.numpy reductions refuse bad ``where=``/``initial=``/``axis=`` arguments with
JAX's exception types and words (checked against jax.numpy 0.10.2)."""

from __future__ import annotations

import re

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad.numpy as fnp


def _error(fn, mod):
    with pytest.raises(Exception) as info:
        fn(mod)
    return info.value


CASES = {
    "where_int_sum": lambda m: m.sum(m.zeros(10), where=m.ones(10, int)),
    "where_int_max": lambda m: m.max(m.zeros(10), where=m.ones(10, int), initial=0.0),
    "where_int_mean": lambda m: m.mean(m.zeros(10), where=m.ones(10, int)),
    "where_int_var": lambda m: m.var(m.zeros(10), where=m.ones(10, int)),
    "where_int_any": lambda m: m.any(m.zeros(10), where=m.ones(10, int)),
    "where_int_nanvar": lambda m: m.nanvar(m.zeros(10), where=m.ones(10, int)),
    "initial_array_sum": lambda m: m.sum(m.ones((2, 3, 4)), axis=-1, initial=m.zeros((1, 2, 3))),
    "initial_array_max": lambda m: m.max(m.ones((2, 3, 4)), axis=-1, initial=m.zeros((1, 2, 3))),
    "duplicate_axis": lambda m: m.sum(m.ones((2, 2)), axis=(0, 0)),
    "cumsum_scalar": lambda m: m.cumulative_sum(m.float32(1)),
    "cumprod_scalar": lambda m: m.cumulative_prod(m.float32(1)),
    "nanvar_complex_real_dtype": lambda m: m.nanvar(m.ones(3, m.complex64), dtype=m.float32),
}

# the words of JAX's message funcgrad's carries
WORDS = {
    "where_int_sum": "jnp.sum: where must be None or a boolean array",
    "where_int_max": "jnp.max: where must be None or a boolean array",
    "where_int_mean": "jnp.mean: where must be None or a boolean array",
    "where_int_var": "jnp.var: where must be None or a boolean array",
    "where_int_any": "jnp.any: where must be None or a boolean array",
    "where_int_nanvar": "jnp.nanvar: where must be None or a boolean array",
    "initial_array_sum": r"initial value must be a scalar. Got array of shape \(1, 2, 3\)",
    "initial_array_max": r"initial value must be a scalar. Got array of shape \(1, 2, 3\)",
    "duplicate_axis": r"duplicate value in 'axis': \(0, 0\)",
    "cumsum_scalar": "The input must be non-scalar to take a cumulative sum",
    "cumprod_scalar": "The input must be non-scalar to take a cumulative product",
    "nanvar_complex_real_dtype": "",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_reduction_errors_are_jaxs(case):
    ours, theirs = _error(CASES[case], fnp), _error(CASES[case], jnp)
    assert type(ours) is type(theirs) is ValueError
    assert re.search(WORDS[case], str(theirs))
    assert re.search(WORDS[case], str(ours))


def test_boolean_where_and_scalar_initial_still_reduce():
    x = np.arange(6.0).reshape(2, 3)
    w = np.array([[True, False, True], [False, True, True]])
    for name in ("sum", "max", "mean", "var", "nanvar"):
        kw = {"initial": -1.0} if name == "max" else {}
        got = getattr(fnp, name)(x, axis=1, where=w, **kw)
        want = getattr(jnp, name)(x, axis=1, where=w, **kw)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(fnp.sum(x, axis=0, initial=np.float64(2.0))),
        np.asarray(jnp.sum(x, axis=0, initial=2.0)),
    )
