"""Where PyTorch refuses to promote or to cast, compat refuses too (it computed a value of
another dtype, or silently rounded): ``add``/``sub``/``rsub``'s ``alpha`` against the result
dtype (and ``alpha`` given positionally, or in the deprecated ``(input, alpha, other)``
order), ``lerp``'s ``end``/``weight`` dtypes, and a value of another dtype written through
an advanced index. Outcomes (value and dtype, or exception type and message) against real
PyTorch 2.13.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import outcome

import compat.torch as ctorch

ALPHA_CASES = [
    "T.add(T.ones(4, dtype=T.int32), T.ones(4, dtype=T.int32), alpha=1.1)",
    "T.add(T.ones(4, dtype=T.bool), T.ones(4, dtype=T.bool), alpha=1.1)",
    "T.add(T.ones(4, dtype=T.int64), T.ones(4, dtype=T.int64), alpha=1.0)",
    "T.add(1, 1, alpha=True)",
    "T.add(T.ones(2), T.ones(2), alpha=True)",
    "T.add(T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool), alpha=True)",
    "T.add(T.ones(2, dtype=T.int32), T.ones(2, dtype=T.int32), alpha=2 + 1j)",
    "T.ones(2).add(T.ones(2), alpha=1j)",
    "T.ones(2, dtype=T.complex64).add(T.ones(2), alpha=1j)",
    "T.sub(T.ones(3, dtype=T.int32), T.ones(3, dtype=T.int32), alpha=1.5)",
    "T.rsub(T.ones(3, dtype=T.int32), T.ones(3, dtype=T.int32), alpha=0.5)",
    "T.ones(3, dtype=T.int32).add_(T.ones(3, dtype=T.int32), alpha=1.5)",
    "T.ones(3).sub_(T.ones(3, dtype=T.int32), alpha=1.5)",
    "T.add(T.ones(3, dtype=T.int32), 2, alpha=0.5)",
    "T.add(T.ones(3, dtype=T.int32), 2.5, alpha=2)",
    "T.add(T.tensor(True), T.tensor(True), True)",
    "T.add(T.tensor(1.0), T.tensor(2.0), 3)",
    "T.sub(T.tensor(1.0), T.tensor(2.0), 3)",
    "T.add(T.tensor(1.0), 2.0, 3)",
    "T.tensor(1.0).add(T.tensor(2.0), 3)",
    "T.add(T.tensor(1.0), 3, T.tensor(2.0))",
]

LERP_CASES = [
    "T.lerp(T.ones(3, dtype=T.float64), T.ones(3), 0.5)",
    "T.lerp(T.ones(3, dtype=T.float64), T.ones(3, dtype=T.float64), T.ones(3))",
    "T.lerp(T.ones(3, dtype=T.float64), T.ones(3, dtype=T.float64), T.tensor(0.5))",
    "T.lerp(T.ones(3), T.ones(3), T.tensor(0.5, dtype=T.float64))",
    "T.ones(3, dtype=T.float64).lerp_(T.ones(3), 0.5)",
    "T.lerp(T.ones(2, dtype=T.bfloat16), T.ones(2, dtype=T.float16), 0.5)",
    "T.lerp(T.ones(2, dtype=T.complex64), T.ones(2, dtype=T.complex128), 0.5)",
    "T.lerp(T.ones(2), T.ones(2, dtype=T.complex64), 0.5)",
]

SETITEM_CASES = [
    "a[:, [1]] = T.zeros(5, dtype=T.int32).unsqueeze(-1)",
    "a[[1]] = T.tensor(5)",
    "a[[1]] = T.tensor(5.0)",
    "a[[1]] = T.tensor([5, 6])",
    "a[a > 0] = T.tensor(3)",
    "a[a > 0] = T.tensor(3.0, dtype=T.float32)",
    "a[a > 0] = T.zeros(10, dtype=T.float32)",
    "a[T.tensor([1])] = T.zeros(1, 2, dtype=T.int32)",
    "a[..., [0]] = T.zeros(5, 1, dtype=T.float32)",
    "a[[0, 1], [0, 1]] = T.tensor([1.0, 2.0], dtype=T.float16)",
    "a[[1]] = 3",
    "a[1:3, [0]] = T.zeros(2, 1, dtype=T.int64)",
    "a[T.tensor(1)] = T.zeros(2, dtype=T.int64)",
    "a[[True, False, True, False, False]] = T.zeros(2, dtype=T.int64)",
    "a[[True, False, True, False, False]] = T.tensor(2)",
    "a[None, [1]] = T.zeros(2, dtype=T.int64)",
    "a[:, 1] = T.zeros(5, dtype=T.int32)",
    "a[[0], 0] = T.tensor(3)",
    "a[(a > 0)[:, 0], [0]] = T.tensor(3)",
    "a[(a > 0)[:, 0], 0] = T.tensor([3])",
    "a[0, (a > 0)[0]] = T.tensor(3)",
    "a[None, a > 0] = T.tensor(3)",
    "a[1] = T.tensor([5, 6])",
]


def _same(got, want):
    """Two ``torch_oracle.outcome`` records agree (values exactly)."""
    assert len(got) == len(want), (got, want)
    if len(want) == 2:  # an error: its type and message
        assert got == want
        return
    assert got[:2] == want[:2], (got, want)  # dtype, shape
    np.testing.assert_array_equal(got[2], want[2])


def _eval(lib, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the deprecated overload's warning)
        return eval(expr, {"T": lib})


@pytest.mark.parametrize("expr", ALPHA_CASES + LERP_CASES)
def test_outcome_as_torch(real_torch, expr):
    _same(outcome(ctorch, lambda T: _eval(T, expr)), outcome(real_torch, lambda T: _eval(T, expr)))


@pytest.mark.parametrize("stmt", SETITEM_CASES)
def test_setitem_dtype_as_torch(real_torch, stmt):
    def run(lib):
        a = lib.ones(5, 2, dtype=lib.float64)
        exec(stmt, {"T": lib, "a": a})
        return a

    _same(outcome(ctorch, run), outcome(real_torch, run))
