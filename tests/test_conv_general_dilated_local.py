"""``funcgrad.lax.conv_general_dilated_local`` against ``jax.lax``'s (JAX 0.10.2): values
for several layouts, paddings, strides and dilations, under ``jit``, gradients in both
operands and ``vmap``."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as fl

CASES = [
    (None, (2, 3, 9, 8), (3, 2), (1, 2), "SAME", None, None),
    (("NHWC", "HWIO", "NHWC"), (2, 9, 8, 3), (2, 3), (2, 1), "VALID", None, (1, 2)),
    (("NCHW", "OIHW", "NHWC"), (2, 3, 7, 6), (3, 3), (1, 1), ((1, 0), (2, 1)), (2, 1), None),
    (("NWC", "WOI", "CNW"), (2, 7, 3), (3,), (2,), "SAME", None, None),
]


def _operands(case: tuple, seed: int = 0) -> tuple:
    dn, lshape, fshape, strides, pad, ldil, rdil = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(lshape)
    p = jax.lax.conv_general_dilated_patches(x, fshape, strides, pad, ldil, rdil, dn)
    _, rspec, ospec = jax.lax.conv_dimension_numbers(lshape, (1, 1, *fshape), dn)
    rshape = [0] * len(lshape)
    rshape[rspec[0]], rshape[rspec[1]] = 4, p.shape[ospec[1]]
    for k, d in enumerate(rspec[2:]):
        rshape[d] = p.shape[ospec[2 + k]]
    return x, rng.standard_normal(rshape)


def _local(lax_: Any, case: tuple) -> Any:
    dn, _, fshape, strides, pad, ldil, rdil = case
    return lambda x, w: lax_.conv_general_dilated_local(
        x, w, strides, pad, fshape, ldil, rdil, dimension_numbers=dn
    )


@pytest.mark.parametrize("i", range(len(CASES)))
def test_values_and_gradients(i: int) -> None:
    case = CASES[i]
    x, w = _operands(case)
    theirs = _local(jax.lax, case)(x, w)
    for ours in (_local(fl, case)(x, w), fg.jit(_local(fl, case))(x, w)):
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-10, atol=1e-10)
    ct = np.random.default_rng(1).standard_normal(theirs.shape)

    def loss(lax_: Any) -> Any:
        return lambda x, w: (_local(lax_, case)(x, w) * ct).sum()

    for o, t in zip(fg.grad(loss(fl), (0, 1))(x, w), jax.grad(loss(jax.lax), (0, 1))(x, w)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-10, atol=1e-10)


def test_vmap() -> None:
    case = CASES[1]
    (x0, w), (x1, _) = _operands(case), _operands(case, 1)
    xs = np.stack([x0, x1])
    theirs = jax.vmap(_local(jax.lax, case), (0, None))(xs, w)
    ours = fg.vmap(_local(fl, case), (0, None))(xs, w)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-10, atol=1e-10)
