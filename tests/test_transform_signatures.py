"""Transforms accept the arguments JAX's accept (found by running JAX's own tests
against funcgrad, ``tools/conformance/run_jax.py``); JAX is the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp


def test_vmap_accepts_axis_name() -> None:
    x = np.arange(12.0).reshape(3, 4)
    want = jax.vmap(lambda r: jnp.sin(r) * 2.0, axis_name="i")(x)
    got = fg.vmap(lambda r: fnp.sin(r) * 2.0, axis_name="i")(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    got = fg.vmap(fg.vmap(lambda v: v + 1.0, axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(got, x + 1.0)


def test_vmap_accepts_spmd_axis_name() -> None:
    # (without a sharding constraint inside, it changes nothing, as JAX's; with one,
    # tests/test_sharding_placement.py on 8 devices)
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    want = jax.vmap(jnp.sin, spmd_axis_name="x")(x)
    np.testing.assert_allclose(fg.vmap(fnp.sin, spmd_axis_name="x")(x), want, rtol=1e-6)
    got = fg.jit(fg.vmap(fnp.sin, spmd_axis_name=("x", "y")))(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
