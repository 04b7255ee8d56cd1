"""Transforms accept the arguments JAX's accept (found by running JAX's own tests
against funcgrad, ``tools/conformance/run_jax.py``); JAX is the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def test_vmap_accepts_axis_name() -> None:
    x = np.arange(12.0).reshape(3, 4)
    want = jax.vmap(lambda r: jnp.sin(r) * 2.0, axis_name="i")(x)
    got = fg.vmap(lambda r: fnp.sin(r) * 2.0, axis_name="i")(x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    got = fg.vmap(fg.vmap(lambda v: v + 1.0, axis_name="j"), axis_name="i")(x)
    np.testing.assert_allclose(got, x + 1.0)


def test_vmap_spmd_axis_name_needs_a_mesh() -> None:
    with pytest.raises(NotImplementedError, match="spmd_axis_name"):
        fg.vmap(fnp.sin, spmd_axis_name="x")
