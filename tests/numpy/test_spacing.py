"""``funcgrad.numpy.spacing`` against ``jax.numpy.spacing``, bit for bit, subnormals included.

XLA's CPU code flushes subnormal results of arithmetic to zero, so a spacing computed as
a difference of neighbours came out 0 for every subnormal and for zero (JAX's
``testSpacingSubnormals``). Each dtype runs a grid of zeros of both signs, subnormals,
binade boundaries, ordinary values, the largest finite values, infinities and NaN,
eagerly and under ``jit``.
"""

from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp


def _grid(dt) -> np.ndarray:
    fi = ml_dtypes.finfo(dt)
    tiny, sub = float(fi.tiny), float(fi.smallest_subnormal)
    base = [0.0, sub, 2 * sub, 3 * sub, tiny / 2, tiny - sub, tiny, tiny * 2, 0.5, 1.0]
    base += [1.5, 2.0, 3.0, 1e-3, 7e3, float(fi.max) / 2, float(fi.max)]
    vals = base + [-v for v in base] + [np.inf, -np.inf, np.nan]
    x = np.array(vals, dtype=np.float64).astype(dt)
    walk = [np.zeros((), dt)]  # the neighbours of zero, both ways (JAX's test)
    for _ in range(5):
        walk.append(
            np.nextafter(walk[-1], np.array(np.inf, dt)) if dt != ml_dtypes.bfloat16 else walk[-1]
        )
    return np.concatenate([x, np.array(walk, dt), -np.array(walk, dt)])


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_spacing_matches_numpy_and_jax(dt) -> None:
    """Magnitudes are NumPy's (ml_dtypes' for bfloat16) everywhere; the values are JAX's
    wherever JAX's magnitude is NumPy's, and the signs are JAX's (the spacing of ``-0.0``
    is negative in float32/64, as JAX's; NumPy's is positive). JAX's own differ from
    NumPy's next to the smallest normal number (its neighbours' difference is flushed)."""
    x = _grid(dt)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = np.abs(np.spacing(x).astype(np.float64))
    want = np.asarray(jnp.spacing(x))
    jax_ok = (np.abs(want.astype(np.float64)) == ref) | np.isnan(ref)
    assert jax_ok.sum() >= len(x) - 4  # only the points next to the smallest normal
    for got in (fnp.spacing(x), funcgrad.jit(fnp.spacing)(x)):
        got = np.asarray(got)
        assert got.dtype == want.dtype
        real = ~np.isnan(ref)  # (NumPy's float16 gives NaN at -inf, JAX's inf)
        np.testing.assert_array_equal(np.abs(got.astype(np.float64))[real], ref[real])
        np.testing.assert_array_equal(
            got[jax_ok].astype(np.float64), want[jax_ok].astype(np.float64)
        )
        num = ~np.isnan(want.astype(np.float64))  # (a NaN's sign bit means nothing)
        np.testing.assert_array_equal(np.signbit(got)[num], np.signbit(want)[num])


def test_spacing_of_subnormals_is_not_flushed() -> None:
    """The smallest float32 subnormal's spacing is itself (JAX and NumPy), not 0."""
    s = np.finfo(np.float32).smallest_subnormal
    x = np.array([s, -s, 0.0], np.float32)
    np.testing.assert_array_equal(np.asarray(fnp.spacing(x)), np.spacing(x[:2]).tolist() + [s])
