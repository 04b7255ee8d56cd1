"""``torch.utils.dlpack`` (and ``torch.from_dlpack``, ``asarray`` of a capsule): compat
tensors exported to PyTorch, NumPy and compat itself, PyTorch's and NumPy's arrays
imported, every dtype DLPack carries (bfloat16 too); imports are copies, as ``from_numpy``
is (a later write to the producer does not reach the tensor)."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import import_real_torch

import compat.torch as ct
from compat.torch.utils.dlpack import from_dlpack, to_dlpack

real = import_real_torch()

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int64", "bool"]
DTYPES += ["complex64", "complex128"]


def sample(lib, dtype: str):
    return (lib.arange(12) % 5 - 2).to(getattr(lib, dtype)).reshape(3, 4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trips(dtype: str) -> None:
    t = sample(ct, dtype)
    want = sample(real, dtype)
    for got in (from_dlpack(to_dlpack(t)), ct.from_dlpack(to_dlpack(t)), ct.asarray(to_dlpack(t))):
        assert str(got.dtype) == str(want.dtype) and got.shape == want.shape
        assert got.to(ct.float64 if not got.is_complex() else ct.complex128).tolist() == (
            want.to(real.float64 if not want.is_complex() else real.complex128).tolist()
        )
    into_torch = real.from_dlpack(to_dlpack(t))  # PyTorch reads compat's capsule
    assert into_torch.dtype == want.dtype and real.equal(into_torch, want)
    from_torch = from_dlpack(want)  # and compat reads PyTorch's tensor
    assert str(from_torch.dtype) == str(want.dtype)
    assert real.equal(real.from_dlpack(to_dlpack(from_torch)), want)


def test_import_copies() -> None:
    a = np.arange(4.0)
    t = ct.from_dlpack(a)
    a[0] = 7.0
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert ct.asarray(to_dlpack(t), copy=True).data_ptr() != t.data_ptr()


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="__dlpack__"):
        from_dlpack([1, 2])
    with pytest.raises(TypeError, match="must be Tensor"):
        to_dlpack(np.arange(3))
    with pytest.raises(ValueError, match="cannot be aliased"):
        ct.asarray(to_dlpack(ct.arange(3)), copy=False)
