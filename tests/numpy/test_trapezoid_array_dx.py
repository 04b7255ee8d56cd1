"""``trapezoid`` with an array of spacings ``dx`` broadcasts it against the pairs' sums as
NumPy and JAX 0.10.2 do (trailing axes aligned, the integration axis where ``y`` has it),
also under rank promotion ``"raise"`` (the project's test setting and JAX's)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad.numpy as fnp

CASES = [
    ((3, 4, 5), (4, 5), 0),
    ((3, 4, 5), (3, 5), 1),
    ((3, 4, 5), (5,), 1),
    ((2, 3, 4, 5), (2, 4, 5), 1),
    ((2, 3, 4, 5), (2, 1, 3, 5), 2),
    ((3, 4, 5), (2, 4, 5), 0),  # varies along the integration axis
    ((3, 4, 5), (3, 3, 5), 1),
]


@pytest.mark.parametrize(("yshape", "dxshape", "axis"), CASES)
@pytest.mark.parametrize("rank_promotion", ["allow", "raise"])
def test_array_dx(yshape: tuple, dxshape: tuple, axis: int, rank_promotion: str) -> None:
    rng = np.random.RandomState(0)
    y = rng.randn(*yshape).astype(np.float32)
    dx = rng.rand(*dxshape).astype(np.float32)
    old = jax.config.jax_numpy_rank_promotion
    jax.config.update("jax_numpy_rank_promotion", rank_promotion)
    try:
        theirs = jnp.trapezoid(y, dx=dx, axis=axis)
        ours = fnp.trapezoid(y, dx=dx, axis=axis)
    finally:
        jax.config.update("jax_numpy_rank_promotion", old)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        np.asarray(ours), np.trapezoid(y, dx=dx, axis=axis), rtol=1e-5, atol=1e-5
    )
