"""``lax.conv_general_dilated_patches`` against JAX 0.10.2: shapes, values and dtypes
for layouts given as strings (output spec differing from the input's), strides, string
and explicit padding, lhs and rhs dilation, bfloat16; its derivative, ``jit`` and
``vmap``."""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax as flax

CASES = [
    ((2, 3, 5, 6), (2, 3), (1, 2), "SAME", None, None, None),
    ((2, 5, 6, 3), (3, 2), (2, 1), "VALID", ("NHWC", "HWIO", "NHWC"), None, (2, 1)),
    ((1, 4, 4, 2), (2, 2), (1, 1), [(1, 0), (0, 1)], ("NHWC", "OIHW", "CNHW"), (2, 1), None),
    ((2, 3, 7), (3,), (2,), "SAME_LOWER", ("NCW", "WIO", "NWC"), None, None),
    ((1, 2, 3, 4, 5), (2, 1, 2), (1, 1, 2), "VALID", None, None, None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: str(c[0]))
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_values_like_jax(case: tuple, dtype: type) -> None:
    shape, fs, st, pad, dn, ld, rd = case
    x = np.random.RandomState(0).randn(*shape).astype(dtype)
    theirs = jax.lax.conv_general_dilated_patches(x, fs, st, pad, ld, rd, dn)
    ours = flax.conv_general_dilated_patches(x, fs, st, pad, ld, rd, dn)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours, np.float32), np.asarray(theirs, np.float32))


def test_gradient_jit_and_vmap() -> None:
    rng = np.random.RandomState(1)
    x = rng.randn(2, 3, 5, 5).astype(np.float32)
    w = rng.randn(2, 18, 5, 5).astype(np.float32)  # a weight per patch entry

    def loss(lax: object) -> object:
        def f(x: object) -> object:
            p = lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "SAME")
            return ((p**2) * w).sum()

        return f

    np.testing.assert_allclose(
        np.asarray(fg.jit(fg.grad(loss(flax)))(x)),
        np.asarray(jax.jit(jax.grad(loss(jax.lax)))(x)),
        rtol=1e-5,
        atol=1e-5,
    )
    xs = np.stack([x, 2 * x])

    def batched(lax: object) -> object:
        return lambda u: lax.conv_general_dilated_patches(u, (3, 2), (2, 1), "VALID")

    np.testing.assert_array_equal(
        np.asarray(fg.vmap(batched(flax))(xs)), np.asarray(jax.vmap(batched(jax.lax))(xs))
    )


def test_filter_shape_rank_checked() -> None:
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        flax.conv_general_dilated_patches(np.ones((1, 1, 4, 4)), (2,), (1, 1), "VALID")
