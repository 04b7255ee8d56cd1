"""Float-to-integer conversion gives PyTorch's CPU values (x86): NaN and out-of-range
values become the lowest int64/int32, narrower integers keep the low bits of the int32
conversion (float64 to uint8: of the int64 one), float16/bfloat16 convert through float32 and a complex value its real part.
compat used XLA's conversion (NaN -> 0; bfloat16 to int8 of 300.7 -> 0). Real PyTorch is
the oracle, through every way a tensor is converted."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import import_real_torch

import compat.torch as ct

real = import_real_torch()

SOURCES = ["float32", "float64", "float16", "bfloat16"]
TARGETS = ["int64", "int32", "int16", "int8", "uint8", "bool"]
EDGES = [float("nan"), float("inf"), -float("inf"), 3e9, -3e9, 2.0**31, -(2.0**31), 2.0**63]
EDGES += [-(2.0**63), 1e20, 300.7, -129.5, 70000.0, -1.5, 255.9, 256.0, -0.5, 2.0**33 + 7]
EDGES += [2.0**32 + 5, -(2.0**32) - 5, 2.0**40 + 300, -(2.0**31) - 77]

values = st.lists(
    st.one_of(
        st.sampled_from(EDGES),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(2**40), 2**40).map(float),
    ),
    min_size=1,
    max_size=40,
)


def _convert(lib, data: list, src: str, dst: str, how: str) -> list:
    x = lib.tensor(data, dtype=lib.float64).to(getattr(lib, src))
    d = getattr(lib, dst)
    if how == "to":
        return x.to(d).tolist()
    if how == "copy_":
        return lib.zeros(len(data), dtype=d).copy_(x).tolist()
    if how == "setitem":
        y = lib.zeros(len(data) + 1, dtype=d)
        y[1:] = x
        return y.tolist()
    if how == "strided":
        return x[::2].to(d).tolist()
    raise AssertionError(how)


@settings(max_examples=40, deadline=None)
@given(
    values,
    st.sampled_from(SOURCES),
    st.sampled_from(TARGETS),
    st.sampled_from(["to", "copy_", "setitem", "strided"]),
)
def test_float_to_integer_as_pytorch_cpu(data, src, dst, how):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (float64 values out of float16's range: inf)
        expect = _convert(real, data, src, dst, how)
        got = _convert(ct, data, src, dst, how)
    assert got == expect


@pytest.mark.parametrize("dst", ["int64", "int32", "int8", "uint8"])
@pytest.mark.parametrize("src", SOURCES)
def test_edges_by_method(src, dst):
    """The named methods (``long``/``int``/``char``/``byte``) and ``type`` on the edges."""
    method = {"int64": "long", "int32": "int", "int8": "char", "uint8": "byte"}[dst]
    got = []
    for lib in (real, ct):
        x = lib.tensor(EDGES, dtype=lib.float64).to(getattr(lib, src))
        got.append((getattr(x, method)().tolist(), x.type(getattr(lib, dst)).tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("dst", ["int64", "int32", "int8", "uint8"])
def test_complex_to_integer_converts_the_real_part(dst):
    got = []
    for lib in (real, ct):
        z = lib.complex(lib.tensor(EDGES), lib.tensor(EDGES[::-1]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's "discards the imaginary part")
            got.append(z.to(getattr(lib, dst)).tolist())
    assert got[0] == got[1]


@pytest.mark.parametrize("src", SOURCES)
def test_tensor_and_as_tensor_of_a_float_tensor(src):
    """``torch.tensor``/``as_tensor`` of a float tensor or NumPy array with an integer
    ``dtype`` (compat's ``torch.tensor`` cast with NumPy: bfloat16 300.7 -> int8 0)."""
    got = []
    for lib in (real, ct):
        x = lib.tensor(EDGES, dtype=lib.float64).to(getattr(lib, src))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (PyTorch's copy-construct advice)
            row = [lib.tensor(x, dtype=getattr(lib, d)).tolist() for d in TARGETS]
            row += [lib.as_tensor(x, dtype=getattr(lib, d)).tolist() for d in TARGETS]
            if src != "bfloat16":
                a = np.asarray(x.numpy())
                row += [lib.tensor(a, dtype=getattr(lib, d)).tolist() for d in TARGETS]
        got.append(row)
    assert got[0] == got[1]


def test_values_in_range_truncate_toward_zero():
    """An independent check beside PyTorch: in-range values truncate (NumPy's cast)."""
    a = np.array([-2.9, -0.5, 0.5, 2.9, 127.0, -128.0], np.float32)
    np.testing.assert_array_equal(ct.from_numpy(a).to(ct.int8).numpy(), a.astype(np.int8))
