"""``funcgrad.numpy``'s constructors give arrays with the Array API under ``jit`` too (as
``jnp``'s): ``arange`` of floats and ``tril_indices``/``triu_indices`` were NumPy arrays
there, so ``fnp.arange(4.0).at[1].set(x)`` raised ``AttributeError``; JAX is the oracle."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _programs(np_: Any) -> dict[str, Any]:
    return {
        "arange_at_set": lambda x: np_.arange(4.0).at[1].set(x),
        "arange_step_at_add": lambda x: np_.arange(0.5, 3.0, 0.5).at[::2].add(x),
        "arange_f32_methods": lambda x: np_.arange(3, dtype=np_.float32).at[0].mul(x).sum(),
        "tril_indices_at": lambda x: np_.tril_indices(3)[1].at[0].set(7) * x,
        "triu_indices_take": lambda x: np_.ones((3, 3)).at[np_.triu_indices(3, 1)].set(x),
    }


@pytest.mark.parametrize("name", list(_programs(jnp)))
def test_constructors_have_the_array_api_under_jit(name: str) -> None:
    x = np.float32(2.5)
    want = jax.jit(_programs(jnp)[name])(x)
    got = fg.jit(_programs(fnp)[name])(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # eagerly and under grad as well
    np.testing.assert_allclose(_programs(fnp)[name](x), want, rtol=1e-6)
    if name != "tril_indices_at":
        g = fg.grad(lambda v: _programs(fnp)[name](v).sum())(x)
        np.testing.assert_allclose(g, jax.grad(lambda v: _programs(jnp)[name](v).sum())(x))
