"""``torch.range`` (deprecated in PyTorch, still called by old code): values, sizes,
dtypes, ``out=`` (kept shape when the element count matches, resized otherwise), errors
and its warning at every call, against PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import import_real_torch, outcome

import compat.torch as ct

real = import_real_torch()


def out_view(t):
    x = t.zeros(2, 3)
    t.range(0, 3, out=x.narrow(1, 1, 2))
    return x


CALLS = {
    "unit": lambda t: t.range(0, 1),
    "half_steps": lambda t: t.range(1, 2.5, 0.5),
    "int64": lambda t: t.range(0, 4, dtype=t.int64),
    "int_truncates_bounds": lambda t: t.range(0.7, 4.9, dtype=t.int32),
    "int_float_step": lambda t: t.range(0, 4, 1.5, dtype=t.int64),
    "negative_step": lambda t: t.range(1, 0, -1),
    "float16": lambda t: t.range(0, 1, 0.1, dtype=t.float16),
    "float64": lambda t: t.range(-1, 1, 0.1, dtype=t.float64),
    "zero_step": lambda t: t.range(0, 1, 0),
    "inconsistent_sign": lambda t: t.range(0, 1, -1),
    "infinite_end": lambda t: t.range(0, float("inf")),
    "bool": lambda t: t.range(0, 1, dtype=t.bool),
    "requires_grad": lambda t: t.range(0, 3, requires_grad=True),
    "out_view_keeps_shape": out_view,
    "out_grows": lambda t: t.range(0, 5, out=t.zeros(2, dtype=t.float64)),
    "out_dtype_mismatch": lambda t: t.range(0, 5, out=t.zeros(2), dtype=t.float64),
    "equal_bounds_out": lambda t: t.range(1, 1, -1, out=t.tensor(())),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_range(name: str) -> None:
    got, want = outcome(ct, CALLS[name]), outcome(real, CALLS[name])
    if isinstance(want[1], str):
        assert got == want
        return
    assert got[:2] == want[:2] and got[3:] == want[3:]  # dtype, shape, node, the warning
    np.testing.assert_array_equal(got[2], want[2])


@settings(max_examples=40, deadline=None)
@given(
    start=st.integers(-50, 50),
    length=st.integers(0, 40),
    step=st.sampled_from([0.1, 0.25, 0.3, 1, 2, 3, -0.1, -0.7, -1, -2]),
    dtype=st.sampled_from(["float32", "float64", "float16", "int64", "int16"]),
)
def test_range_values(start: int, length: int, step: float, dtype: str) -> None:
    if dtype.startswith("int") and step != int(step):
        step = 1 if step > 0 else -1  # (PyTorch 2.13 dies of SIGFPE on a step truncated to 0)
    end = start + length if step > 0 else start - length

    def fn(t):
        return t.range(start, end, step, dtype=getattr(t, dtype))

    got, want = outcome(ct, fn), outcome(real, fn)
    if isinstance(want[1], str):
        assert got == want
        return
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
