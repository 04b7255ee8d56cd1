"""``clone()``/``contiguous()`` copy bits, as PyTorch's: -0.0 keeps its sign and a NaN its
payload in every dtype (compat's clone was ``x + 0``, which made -0.0 into +0.0); the
copy's node is ``CloneBackward0`` with PyTorch's gradient. Real PyTorch is the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import import_real_torch

import compat.torch as ct

real = import_real_torch()

# (dtype name, the same-width integer dtype the bits are read as)
BITS = [
    ("float32", "int32"),
    ("float64", "int64"),
    ("float16", "int16"),
    ("bfloat16", "int16"),
    ("int32", "int32"),
    ("int64", "int64"),
    ("int16", "int16"),
    ("int8", "int8"),
    ("uint8", "uint8"),
]
WIDTH = {"int64": 64, "int32": 32, "int16": 16, "int8": 8, "uint8": 8}


def _bits(lib, pattern: np.ndarray, name: str, as_int: str):
    """A tensor of dtype ``name`` whose elements have the bit patterns ``pattern``."""
    t = lib.tensor(pattern.tolist(), dtype=getattr(lib, as_int))
    return t if name == as_int else t.view(getattr(lib, name))


def _copies(lib, x):
    return [x.clone(), x.t().contiguous() if x.dim() == 2 else x.contiguous(), x[::2].clone()]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(BITS), st.lists(st.integers(0, 2**64 - 1), min_size=4, max_size=12))
def test_clone_keeps_every_bit(dts, words):
    name, as_int = dts
    w = WIDTH[as_int]
    lo = 0 if as_int == "uint8" else -(2 ** (w - 1))
    # arbitrary bit patterns: signed zeros, NaNs with payloads, infinities, subnormals
    pattern = np.array([lo + (v % 2**w) for v in words], dtype=np.int64)
    pattern[0] = lo if as_int != "uint8" else 0  # -0.0 of the float dtype
    pattern = pattern.reshape(2, -1) if pattern.size % 2 == 0 else pattern
    got = []
    for lib in (real, ct):
        x = _bits(lib, pattern, name, as_int)
        got.append([c.view(getattr(lib, as_int)).tolist() for c in _copies(lib, x)])
    assert got[0] == got[1]
    assert got[1][0] == pattern.tolist()


@pytest.mark.parametrize("name", ["bool", "complex64", "complex128"])
def test_clone_other_dtypes(name):
    got = []
    for lib in (real, ct):
        if name == "bool":
            x = lib.tensor([[True, False], [False, True]])
        else:
            x = lib.complex(
                lib.tensor([[-0.0, 1.0], [-2.0, -0.0]]), lib.tensor([[-0.0, 0.0], [-0.0, 3.0]])
            )
            x = x.to(getattr(lib, name))
        got.append(
            [
                lib.view_as_real(c).signbit().tolist() if x.is_complex() else c.tolist()
                for c in _copies(lib, x)
            ]
        )
        got[-1].append([c.dtype == x.dtype for c in _copies(lib, x)])
    assert got[0] == got[1]


def test_clone_node_and_gradient():
    got = []
    for lib in (real, ct):
        x = lib.tensor([[-0.0, 2.0], [3.0, -0.0]], requires_grad=True)
        y = x * 1.0
        c = y.clone()
        t = y.t().contiguous()
        (c * lib.tensor([[1.0, 2.0], [3.0, 4.0]]) + t).sum().backward()
        got.append(
            (
                c.grad_fn.name(),
                t.grad_fn.name(),
                c.signbit().tolist(),
                t.signbit().tolist(),
                x.grad.tolist(),
            )
        )
    assert got[0] == got[1]
    assert got[1][0] == "CloneBackward0"


def test_clone_is_a_new_storage():
    for lib in (real, ct):
        x = lib.tensor([-0.0, 1.0])
        c = x.clone()
        c.add_(1.0)
        assert x.signbit().tolist() == [True, False] and c.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_from_parts_keeps_signed_zeros_and_infinities(dtype):
    """``torch.complex`` writes its parts (compat's was ``re + 1j * im``: a -0.0 imaginary
    part became +0.0, an infinite imaginary part made the real part NaN)."""
    parts = [-0.0, 0.0, 1.0, float("inf"), -float("inf"), float("nan")]
    got = []
    for lib in (real, ct):
        re = lib.tensor(parts, dtype=getattr(lib, dtype), requires_grad=True)
        im = lib.tensor([parts[::-1], parts], dtype=getattr(lib, dtype), requires_grad=True)
        z = lib.complex(re, im)
        pairs = lib.view_as_real(z)
        (pairs.nan_to_num() * lib.arange(24.0).reshape(2, 6, 2)).sum().backward()
        got.append(
            (str(pairs.tolist()), pairs.signbit().tolist(), re.grad.tolist(), im.grad.tolist())
        )
    assert got[0] == got[1]
