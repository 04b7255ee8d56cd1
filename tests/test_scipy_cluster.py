"""``funcgrad.scipy.cluster.vq`` against ``jax.scipy.cluster.vq``: codes and distances,
``jit``, integer inputs and errors."""

from __future__ import annotations

import functools

import jax.scipy as jsp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.scipy.cluster.vq as fvq

RNG = np.random.default_rng(0)
#: values, dtype and shape as JAX's (NaNs equal)
close = functools.partial(jo.same_values, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [((7, 3), (4, 3)), ((9,), (3,))])
def test_vq_matches_jax(shape):
    obs, cb = RNG.normal(size=shape[0]), RNG.normal(size=shape[1])
    got, want = fvq.vq(obs, cb), jsp.cluster.vq.vq(obs, cb)
    close(got[0], want[0])
    close(got[1], want[1])
    jitted = fg.jit(fvq.vq)(obs, cb)
    close(jitted[1], want[1])
    with pytest.raises(ValueError, match="same rank"):
        fvq.vq(obs[..., None], cb)


def test_vq_int_inputs_promote_like_jax():
    obs, cb = np.arange(6).reshape(3, 2), np.array([[0, 0], [4, 4]])
    got, want = fvq.vq(obs, cb), jsp.cluster.vq.vq(obs, cb)
    close(got[0], want[0])
    close(got[1], want[1])
