"""``save``/``savez``/``load`` round trips, against ``jax.numpy``'s."""

import io

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad.numpy as fnp


@pytest.mark.parametrize("dtype", [np.float32, np.int32, jnp.bfloat16, object])
def test_save_load_round_trip(dtype):
    a = np.arange(5).astype(dtype)
    results = []
    for np_ in (fnp, jnp):
        with io.BytesIO() as f:
            np_.save(f, a)
            f.seek(0)
            results.append(np_.load(f, allow_pickle=True))
    ours, theirs = results
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours, float), np.asarray(theirs, float))


def test_savez():
    with io.BytesIO() as f:
        fnp.savez(f, x=fnp.arange(3))
        f.seek(0)
        np.testing.assert_array_equal(fnp.load(f)["x"], np.arange(3))
