"""A traced value has no ``sharding`` attribute: reading it is JAX's ``AttributeError``
pointing at ``typeof`` (JAX 0.10.2), and ``getattr(x, "sharding", None)`` stays ``None``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg


@pytest.mark.parametrize("lib", [jax, fg], ids=["jax", "fg"])
@pytest.mark.parametrize("transform", ["jit", "vmap", "grad"])
def test_sharding_of_a_tracer(lib, transform):
    seen = []

    def f(x):
        with pytest.raises(AttributeError) as info:
            _ = x.sharding
        seen.append((str(info.value), getattr(x, "sharding", None)))
        return (x * x).sum()

    x = np.arange(3.0, dtype=np.float32)
    getattr(lib, transform)(f)(x[None] if transform == "vmap" else x)
    msg, default = seen[0]
    assert msg.startswith(
        "The 'sharding' attribute is not available on traced array with shape float32[3]. "
        "To query sharding information on tracers, use `"
    )
    assert "typeof(x)`" in msg and default is None


def test_concrete_arrays_keep_their_sharding():
    assert fg.numpy.ones(2).sharding == jnp.ones(2).sharding
