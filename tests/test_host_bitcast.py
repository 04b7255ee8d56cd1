"""The host tier's ``bitcast_convert_type`` keeps JAX's shapes: 0-d operands stay 0-d (a
same-size cast) or become ``(ratio,)`` (to a narrower type); non-contiguous operands are
read in their logical order. Checked against ``jax.lax.bitcast_convert_type``, and
``funcgrad.numpy.ldexp``'s gradient (bitcasts of 0-d exponents) against JAX's; types
narrower than a byte (``int4``, ``float4_e2m1fn``...) bitcast as XLA packs them, on both
tiers."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.dtypes as fdtypes
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from funcgrad.core import tiers

_PAIRS = [
    ("uint32", "float32"),
    ("float32", "int32"),
    ("float64", "uint64"),
    ("float32", "uint8"),
    ("int64", "float32"),
    ("uint16", "float16"),
]


@pytest.mark.parametrize("src,dst", _PAIRS)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_host_bitcast_matches_jax(src, dst, shape):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2**7, size=shape).astype(src)
    if shape == (2, 3):
        x = np.asarray(x.T)  # (a non-contiguous operand)
    with tiers.eager_tier("host"):
        got = np.asarray(flax.bitcast_convert_type(x, np.dtype(dst)))
    want = np.asarray(jax.lax.bitcast_convert_type(x, np.dtype(dst)))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("tier", ["host", "compiled"])
def test_ldexp_gradient_of_a_scalar_is_a_scalar(tier):
    with tiers.eager_tier(tier):
        g = fg.grad(lambda x: fnp.ldexp(x, np.int32(-1)))(1.5)
        m = fg.grad(lambda x: fnp.frexp(x)[0])(1.5)
    assert np.shape(g) == () and np.shape(m) == ()
    np.testing.assert_allclose(g, jax.grad(lambda x: jnp.ldexp(x, np.int32(-1)))(1.5))
    np.testing.assert_allclose(m, jax.grad(lambda x: jnp.frexp(x)[0])(1.5))


_SUB_BYTE = ["int4", "uint4", "float4_e2m1fn", "int2", "uint2"]
_WIDE = ["int8", "uint8", "float16", "int16", "float32", "uint32", "float8_e4m3fn"]


def _operand(dtype: np.dtype, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    if np.issubdtype(dtype, np.integer) or (dtype.kind == "V" and "int" in dtype.name):
        info = ml_dtypes.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max) + 1, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


@pytest.mark.parametrize("tier", ["host", "compiled"])
@pytest.mark.parametrize(
    "src,dst",
    [(a, b) for a in _SUB_BYTE for b in _SUB_BYTE + _WIDE]
    + [(b, a) for a in _SUB_BYTE for b in _WIDE],
)
def test_sub_byte_bitcast_matches_jax(tier, src, dst):
    # (sub-byte types count their own width, as XLA packs them: int4[..., 4] -> float16
    # consumes 4 elements; funcgrad took NumPy's one byte per element and refused it)
    rng = np.random.default_rng(len(src) * 7 + len(dst))
    da, db = (np.dtype(getattr(ml_dtypes, n, None) or n) for n in (src, dst))
    a, b = fdtypes.itemsize_bits(da), fdtypes.itemsize_bits(db)
    # (a JAX array: funcgrad takes sub-byte operands as arrays, as placed by device_put)
    x = jnp.asarray(_operand(da, (3, b // a) if a < b else (3,), rng))
    with tiers.eager_tier(tier):
        got = np.asarray(flax.bitcast_convert_type(x, db))
    want = np.asarray(jax.lax.bitcast_convert_type(x, db))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()
