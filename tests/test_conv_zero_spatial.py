"""Convolutions with no spatial dimension (``window_strides=()``, as neural_tangents
builds for dense layers) are matrix products: ``conv_general_dilated``'s values, its
VJP, ``jit`` and ``conv_transpose`` agree with JAX 0.10.2 (the host tier indexed the
last spatial dimension, which is absent)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import lax as flax

RNG = np.random.RandomState(0)
LHS = RNG.randn(2, 5).astype(np.float32)
RHS = RNG.randn(5, 10).astype(np.float32)


def _conv(lax: object) -> object:
    dn = lax.ConvDimensionNumbers((0, 1), (1, 0), (0, 1))
    return lambda lhs, rhs: lax.conv_general_dilated(
        lhs, rhs, window_strides=(), padding=(), lhs_dilation=(), rhs_dilation=(),
        dimension_numbers=dn,
    )  # fmt: skip


def test_values_vjp_and_jit() -> None:
    theirs, jpb = jax.vjp(_conv(jax.lax), LHS, RHS)
    ours, fpb = fg.vjp(_conv(flax), LHS, RHS)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)
    ct = RNG.randn(*np.shape(theirs)).astype(np.float32)
    for o, t in zip(fpb(ct), jpb(ct)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        np.asarray(fg.jit(_conv(flax))(LHS, RHS)), np.asarray(theirs), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize("rhs_dilation", [None, ()])
def test_conv_transpose(padding: str, rhs_dilation: tuple | None) -> None:
    lhs, rhs = RNG.randn(3, 2).astype(np.float32), RNG.randn(2, 3).astype(np.float32)
    kw = dict(dimension_numbers=("NC", "IO", "NC"), rhs_dilation=rhs_dilation)
    theirs = jax.lax.conv_transpose(lhs, rhs, (), padding, **kw)
    ours = flax.conv_transpose(lhs, rhs, (), padding, **kw)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)
