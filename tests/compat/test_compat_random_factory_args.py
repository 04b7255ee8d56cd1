"""The random factories take PyTorch's keyword arguments (``out=``, ``dtype=``, ``layout=``,
``generator=``; ``randint(high=, size=)``), draw complex tensors as PyTorch does (both
parts, ``std / sqrt(2)`` for normals: compat drew real parts only), and ``random_`` /
``uniform_`` / ``normal`` check their bounds with PyTorch 2.13's errors and warnings. Real
PyTorch is the oracle: the same seed gives the same numbers in both."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import import_real_torch, outcome

import compat.torch as ct

real = import_real_torch()

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
# float32 normals go through PyTorch's vectorised log/sin/cos: equal within about 1 ulp
ULP32 = 3e-7


def seeded(fn, seed: int = 7):
    def run(lib):
        lib.manual_seed(seed)
        return fn(lib)

    return run


def assert_same_outcome(fn, tol: float = 0.0) -> None:
    """``fn`` gives the same error, or the same dtype, shape, values (to ``tol``), node
    and warnings, in compat as in PyTorch."""
    want, got = outcome(real, fn), outcome(ct, fn)
    if isinstance(want[1], str) or isinstance(got[1], str):  # an error: type and text
        assert got == want
        return
    assert got[0] == want[0] and got[1] == want[1], (got[:2], want[:2])
    np.testing.assert_allclose(got[2], want[2], rtol=tol, atol=tol)
    assert got[3:] == want[3:]


FACTORY_CALLS = {
    "rand_out": lambda t: t.rand(3, 2, out=t.empty(0, dtype=t.float64)),
    "rand_out_size_kw": lambda t: t.rand(size=(4,), out=t.empty(7)),
    "rand_layout": lambda t: t.rand(3, layout=t.strided, pin_memory=False),
    "rand_complex128": lambda t: t.rand(5, dtype=t.complex128),
    "rand_complex64_out": lambda t: t.rand(17, out=t.empty(2, dtype=t.complex64)),
    "rand_int": lambda t: t.rand(2, dtype=t.int64),
    "rand_out_dtype_mismatch": lambda t: t.rand(2, out=t.empty(2), dtype=t.float64),
    "randn_out": lambda t: t.randn(4, 5, out=t.empty(0, dtype=t.float64)),
    "randn_complex128_big": lambda t: t.randn(40, dtype=t.complex128),
    "randn_complex128_small": lambda t: t.randn(3, dtype=t.complex128),
    "randn_int": lambda t: t.randn(2, dtype=t.int32),
    "randn_requires_grad": lambda t: t.randn(3, dtype=t.float64, requires_grad=True),
    "randint_out_float": lambda t: t.randint(0, 6, (4,), out=t.empty(2, dtype=t.float32)),
    "randint_out_int": lambda t: t.randint(6, (3, 3), out=t.empty((), dtype=t.int64)),
    "randint_high_size_kw": lambda t: t.randint(high=10, size=(5,)),
    "randint_low_high_kw": lambda t: t.randint(3, high=10, size=(5,)),
    "randint_size_kw": lambda t: t.randint(1, 3, size=(2, 1), layout=t.strided),
    "randint_generator": lambda t: t.randint(3, size=(4,), generator=t.default_generator),
    "randint_dtype_float": lambda t: t.randint(9, (4,), dtype=t.float32),
    "randint_dtype_mismatch": lambda t: t.randint(3, (2,), out=t.empty(2), dtype=t.int64),
    "randint_bool_out": lambda t: t.randint(0, 5, (2,), out=t.empty(2, dtype=t.bool)),
    "randint_int_requires_grad": lambda t: t.randint(5, (2,), requires_grad=True),
    "randperm_out_float": lambda t: t.randperm(7, out=t.empty(0, dtype=t.float32)),
    "randperm_out_dtype": lambda t: t.randperm(9, out=t.empty(0), dtype=t.float32),
    "randperm_half_limit": lambda t: t.randperm(2049, dtype=t.float16),
    "randperm_half_too_many": lambda t: t.randperm(2050, dtype=t.float16),
    "randperm_int8_limit": lambda t: t.randperm(128, dtype=t.int8),
    "randperm_int8_too_many": lambda t: t.randperm(129, dtype=t.int8),
    "randperm_bool": lambda t: t.randperm(3, dtype=t.bool),
    "randperm_float_too_many": lambda t: t.randperm(2**24 + 2, out=t.empty(0)),
    "randperm_double_too_many": lambda t: t.randperm(2**53 + 2, out=t.empty(0, dtype=t.float64)),
    "randperm_uint8_too_many": lambda t: t.randperm(257, out=t.empty(0, dtype=t.uint8)),
    "randperm_bfloat16_unchecked": lambda t: t.randperm(3000, dtype=t.bfloat16),
    "randperm_zero_out": lambda t: t.randperm(0, out=t.tensor(5)),
    "normal_size_dtype": lambda t: t.normal(2, 3, (20,), dtype=t.float64),
    "normal_size_out": lambda t: t.normal(2, 3, (5,), out=t.empty(3, dtype=t.float64)),
    "normal_size_zero_std": lambda t: t.normal(2, 0, (4, 4), dtype=t.float64),
    "normal_negative_std": lambda t: t.normal(0, -1, (10,)),
    "normal_tensor_negative_std": lambda t: t.normal(t.tensor(0.0), t.tensor(-1.0)),
    "normal_complex_std": lambda t: t.normal(0, t.empty(3, dtype=t.complex64)),
    "normal_mean_tensor_out": lambda t: t.normal(
        t.zeros(20, dtype=t.float64), 2.0, out=t.empty(20, dtype=t.float64)
    ),
    "normal_empty": lambda t: t.normal(mean=t.empty((0, 2)), std=t.empty((0, 1))),
    "normal_std_tensor_out": lambda t: t.normal(
        2.0, t.ones(6, dtype=t.float64), out=t.empty(6, dtype=t.float64)
    ),
}


@pytest.mark.parametrize("name", sorted(FACTORY_CALLS))
def test_factory_arguments(name: str) -> None:
    assert_same_outcome(
        seeded(FACTORY_CALLS[name]), ULP32 if "randn" in name or "normal" in name else 0.0
    )


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_rand_out_matches_rand(dtype: str) -> None:
    """PyTorch's ``test_rand``/``test_randn``: ``out=`` draws what the plain call draws."""
    for fn in (ct.rand, ct.randn):
        ct.manual_seed(5)
        want = fn(10, 10, dtype=getattr(ct, dtype))
        ct.manual_seed(5)
        got = fn(10, 10, out=ct.tensor([], dtype=getattr(ct, dtype)))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


INPLACE_CALLS = {
    "uniform_complex64": lambda t: t.zeros(9, dtype=t.complex64).uniform_(-2, 3),
    "normal_complex128": lambda t: t.zeros(20, dtype=t.complex128).normal_(1, 3),
    "normal_int": lambda t: t.zeros(3, dtype=t.int32).normal_(),
    "uniform_int": lambda t: t.zeros(3, dtype=t.int32).uniform_(),
    "uniform_half_from_out_of_bounds": lambda t: t.zeros(3, dtype=t.half).uniform_(-1e10, 0),
    "uniform_float_to_out_of_bounds": lambda t: t.zeros(3).uniform_(0, 1e39),
    "uniform_half_range_too_wide": lambda t: t.zeros(3, dtype=t.half).uniform_(-6e4, 6e4),
    "uniform_reversed": lambda t: t.zeros(3).uniform_(3, 2),
    "random_to_negative": lambda t: t.zeros(3, dtype=t.int64).random_(-42),
    "random_bool_from_to": lambda t: t.zeros(30, dtype=t.bool).random_(0, 2),
    "random_bool_to_out_of_bounds": lambda t: t.zeros(3, dtype=t.bool).random_(0, 3),
    "random_uint8_full": lambda t: t.zeros(9, dtype=t.uint8).random_(5, None),
    "random_int8_lowest": lambda t: t.zeros(3, dtype=t.int8).random_(I64_MIN, None),
    "random_half_lowest": lambda t: t.zeros(3, dtype=t.half).random_(I64_MIN, None),
    "random_int64_whole_range": lambda t: t.zeros(5, dtype=t.int64).random_(I64_MIN, None),
    "random_bfloat16_whole_range": lambda t: t.zeros(5, dtype=t.bfloat16).random_(I64_MIN, None),
    "random_half_max": lambda t: t.zeros(4, dtype=t.half).random_(65504, 65505),
    "random_float_wide": lambda t: t.zeros(4).random_(-(2**60), 0),
    "random_bfloat16_wide": lambda t: t.zeros(4, dtype=t.bfloat16).random_(0, 2**40),
    "random_int64_to_max": lambda t: t.zeros(4, dtype=t.int64).random_(0, I64_MAX),
    # a range of 2**28 or more takes 64-bit draws in every dtype (compat: from 2**32, and
    # only for int64 and floats)
    "random_int32_from_only": lambda t: t.zeros(6, dtype=t.int32).random_(-300, None),
    "randint_range_2_28": lambda t: t.randint(0, 2**28, (6,)),
    "randint_range_below_2_28": lambda t: t.randint(0, 2**28 - 1, (6,)),
    "randint_int16_wide": lambda t: t.randint(-(2**15), 2**15, (6,), dtype=t.int16),
}


@pytest.mark.parametrize("name", sorted(INPLACE_CALLS))
def test_inplace_draw_bounds(name: str) -> None:
    assert_same_outcome(seeded(INPLACE_CALLS[name]), ULP32 if "normal" in name else 0.0)


BOUNDS = [I64_MIN, I64_MIN + 1, -(2**40), -300, -129, -42, -1, 0, 1, 2, 42, 127, 128, 255]
BOUNDS += [256, 2**11, 2**11 + 1, 2**24 + 1, 65504, 65505, 2**40, I64_MAX]
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16"]
DTYPES += ["float32", "float64"]


@settings(max_examples=60, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    low=st.sampled_from(BOUNDS),
    high=st.one_of(st.none(), st.sampled_from(BOUNDS)),
    seed=st.integers(0, 2**31),
)
def test_random_bounds_against_pytorch(dtype: str, low: int, high: int | None, seed: int):
    """``random_(from, to)`` and ``random_(from, None)``: the same error, warnings or
    values as PyTorch for any bounds."""
    assert_same_outcome(
        seeded(lambda t: t.zeros(6, dtype=getattr(t, dtype)).random_(low, high), seed)
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("n", [15, 16, 17, 20, 33, 100])
def test_half_precision_normals_exact(dtype: str, n: int) -> None:
    """float16/bfloat16 normals of 16+ elements draw their uniforms per block of 16 (none
    for the elements the recomputed last block covers), as PyTorch's ``normal_fill``:
    compat drew all ``n`` first, as for float32, and its last block came out shifted."""
    assert_same_outcome(seeded(lambda t: t.empty(n, dtype=getattr(t, dtype)).normal_(1.5, 3.0), n))
    assert_same_outcome(seeded(lambda t: t.randn(n, dtype=getattr(t, dtype)), n))
