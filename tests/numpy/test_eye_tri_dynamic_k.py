"""``eye``/``tri`` with the diagonal ``k`` traced (JAX's dynamic ``k``, under ``jit``),
and with ``k`` past int32: ``eye`` takes it (JAX's result), ``tri`` raises
``OverflowError`` as JAX does without x64. JAX 0.10.2 is the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

SHAPES = [(4, None), (4, 3), (0, 3), (3, 0), (3, 5)]


@pytest.mark.parametrize("name", ["eye", "tri"])
@pytest.mark.parametrize(("n", "m"), SHAPES)
@pytest.mark.parametrize("k", [-4, -1, 0, 2, 6])
def test_traced_k_under_jit(name: str, n: int, m: int | None, k: int) -> None:
    theirs = jax.jit(lambda k: getattr(jnp, name)(n, M=m, k=k, dtype=np.int32))(k)
    ours = fg.jit(lambda k: getattr(fnp, name)(n, M=m, k=k, dtype=np.int32))(k)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("k", [2**33, -(2**33)])
@pytest.mark.parametrize("x64", [False, True])
def test_k_past_int32(k: int, x64: bool) -> None:
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        np.testing.assert_array_equal(
            np.asarray(fnp.eye(3, 4, k=k)), np.asarray(jnp.eye(3, 4, k=k))
        )
        if x64:
            np.testing.assert_array_equal(np.asarray(fnp.tri(3, k=k)), np.asarray(jnp.tri(3, k=k)))
        else:
            with pytest.raises(OverflowError):
                jnp.tri(3, k=k)
            with pytest.raises(OverflowError):
                fnp.tri(3, k=k)
    finally:
        jax.config.update("jax_enable_x64", old)


def test_non_scalar_k_refused() -> None:
    with pytest.raises(TypeError, match="k must be an integer scalar"):
        fnp.eye(3, k=fnp.array([1, 2]))
