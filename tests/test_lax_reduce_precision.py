"""``funcgrad.lax.reduce_precision`` against ``jax.lax.reduce_precision`` (JAX 0.10.2):
values in several float formats (bit for bit, eager and under ``jit``, ``vmap``), its
derivatives (linear: the cotangent rounded the same way, as JAX's) and its errors."""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as fl

RNG = np.random.default_rng(0)
FORMATS = {
    "bfloat16": (8, 7),
    "float16": (5, 10),
    "float8_e4m3": (4, 3),
    "tiny": (2, 1),
    "float32": (8, 23),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_values_bit_for_bit(dtype: str, fmt: str) -> None:
    e, m = FORMATS[fmt]
    x = (RNG.standard_normal((3, 5)) * 10.0 ** RNG.integers(-6, 6, (3, 5))).astype(dtype)
    x[0, :3] = [np.inf, -np.inf, np.nan]
    theirs = np.asarray(jax.lax.reduce_precision(x, e, m))
    for ours in (fl.reduce_precision(x, e, m), fg.jit(lambda v: fl.reduce_precision(v, e, m))(x)):
        ours = np.asarray(ours)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours.view(np.uint8), theirs.view(np.uint8))
    batched = fg.vmap(lambda v: fl.reduce_precision(v, e, m))(x)
    np.testing.assert_array_equal(np.asarray(batched).view(np.uint8), theirs.view(np.uint8))


def test_matches_a_cast_through_the_narrow_dtype() -> None:
    x = RNG.standard_normal(64).astype(np.float32)
    info = ml_dtypes.finfo(ml_dtypes.bfloat16)
    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(fl.reduce_precision(x, info.nexp, info.nmant)), want)


def test_derivatives_as_jax() -> None:
    def f(lax_):
        return lambda v: (lax_.reduce_precision(v * 3.0, 8, 7) ** 2).sum()

    x = RNG.standard_normal(6)
    np.testing.assert_array_equal(fg.grad(f(fl))(x), jax.grad(f(jax.lax))(x))
    t = RNG.standard_normal(6)
    ours = fg.jvp(lambda v: fl.reduce_precision(v, 5, 10), (x,), (t,))
    theirs = jax.jvp(lambda v: jax.lax.reduce_precision(v, 5, 10), (x,), (t,))
    for o, w in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(o, w)


def test_errors_as_jax() -> None:
    cases = [
        (np.arange(3), 8, 7, TypeError),
        (np.ones(3), 0, 7, ValueError),
        (np.ones(3), 8, -1, ValueError),
    ]
    for x, e, m, err in cases:
        with pytest.raises(err) as want:
            jax.lax.reduce_precision(x, e, m)
        with pytest.raises(err) as got:
            fl.reduce_precision(x, e, m)
        assert str(want.value) in str(got.value)
