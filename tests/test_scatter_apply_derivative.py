"""The derivative of ``x.at[i].apply(func)``: JAX raises ``NotImplementedError`` for it
(its ``scatter_apply`` has no JVP), funcgrad differentiates it. The oracle is JAX's
derivative of the same function written as ``x.at[i].set(func(x[i]))``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.array([1.0, 2.0, 3.0, -0.5])


@pytest.mark.parametrize("index", [1, slice(1, 3), (np.array([0, 3]),)])
@pytest.mark.parametrize("name", ["sin", "exp", "tanh"])
def test_scatter_apply_jacobians(index, name) -> None:
    ours = lambda x: x.at[index].apply(getattr(fnp, name))
    oracle = lambda x: x.at[index].set(getattr(jnp, name)(x[index]))
    want = jax.jacfwd(oracle)(X)
    for jac in (fg.jacfwd, fg.jacrev):
        np.testing.assert_allclose(jac(ours)(X), want, rtol=1e-6)
    np.testing.assert_allclose(
        fg.grad(lambda x: fnp.sum(ours(x) ** 2))(X),
        jax.grad(lambda x: jnp.sum(oracle(x) ** 2))(X),
        rtol=1e-6,
    )
    # what JAX's conformance tests (test_scatter_apply_jvp/vjp) check: JAX has none
    with pytest.raises(NotImplementedError):
        jax.jacfwd(lambda x: x.at[index].apply(getattr(jnp, name)))(X)
