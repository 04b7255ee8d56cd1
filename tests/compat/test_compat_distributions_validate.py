"""Argument and sample validation of ``torch.distributions`` answered from host arrays
(``distribution.satisfied``): the same answer as the constraint's tensor ``check``, and
as real PyTorch's, on every value the host rules take or refuse."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch
from compat.torch.distributions import constraints
from compat.torch.distributions.distribution import satisfied

INF, NAN = float("inf"), float("nan")
SIMPLEX = [
    ([0.25, 0.75], "float32"),
    ([0.3, 0.7000005], "float32"),  # inside the tolerance
    ([0.3, 0.70001], "float32"),  # outside it
    ([[0.5, 0.5], [0.1, 0.8]], "float32"),
    ([[0.5, 0.5], [-0.0, 1.0]], "float64"),
    ([1.1, -0.1], "float64"),
    ([NAN, 1.0], "float32"),
    ([INF, -INF], "float32"),
    (np.full(1000, 1e-3).tolist(), "float32"),
    (np.zeros((2, 0)).tolist(), "float32"),
    ([0.5, 0.5], "float16"),  # no host rule: the tensor path
]
INTERVAL = [
    ([0, 1, 2], "int64", 0, 2),
    ([0, 3], "int64", 0, 2),
    ([-1], "int32", 0, 2),
    ([[1], [2]], "uint8", 0, 5),
    ([1.0, 2.0], "float32", 0, 2),  # floats: the tensor path (``value % 1``)
    ([1.5], "float32", 0, 2),
    ([5], "int8", 0, 300),  # a bound past the dtype: the tensor path
]


def _check(lib, c, v, dt):
    return bool(c.check(lib.tensor(v, dtype=getattr(lib, dt))).all())


@pytest.mark.parametrize(("v", "dt"), SIMPLEX)
def test_simplex_answers_as_the_tensor_check_and_pytorch(real_torch, v, dt):
    t = ctorch.tensor(v, dtype=getattr(ctorch, dt))
    got = satisfied(constraints.simplex, t)
    assert got == bool(constraints.simplex.check(t).all())
    assert got == _check(real_torch, real_torch.distributions.constraints.simplex, v, dt)


@pytest.mark.parametrize(("v", "dt", "lo", "hi"), INTERVAL)
def test_integer_interval_answers_as_the_tensor_check_and_pytorch(real_torch, v, dt, lo, hi):
    c = constraints.integer_interval(lo, hi)
    t = ctorch.tensor(v, dtype=getattr(ctorch, dt))
    got = satisfied(c, t)
    assert got == bool(c.check(t).all())
    ref = real_torch.distributions.constraints.integer_interval(lo, hi)
    assert got == _check(real_torch, ref, v, dt)


def test_a_subclass_keeps_its_own_check():
    class Never(type(constraints.simplex)):
        def check(self, value):
            return value.sum(-1) < -1

    assert not satisfied(Never(), ctorch.tensor([0.5, 0.5]))


@pytest.mark.parametrize("lib_name", ["compat", "torch"])
def test_categorical_validation_errors(real_torch, lib_name):
    lib = ctorch if lib_name == "compat" else real_torch
    D = lib.distributions
    with pytest.raises(ValueError, match="probs"):
        D.Categorical(probs=lib.tensor([[0.5, 0.5], [-0.5, 1.5]]) * 1.0, validate_args=True)
    m = D.Categorical(probs=lib.tensor([0.2, 0.8]), validate_args=True)
    with pytest.raises(ValueError, match="support"):
        m.log_prob(lib.tensor(2))
    lp = m.log_prob(lib.tensor([1, 0]))
    np.testing.assert_allclose(np.asarray(lp.tolist()), np.log([0.8, 0.2]), rtol=1e-6)


def test_validation_under_a_trace_takes_the_tensor_path():
    # torch.func traces: arrays are not NumPy's, the tensor check runs (values known)
    def f(p):
        return ctorch.distributions.Categorical(probs=p, validate_args=True).log_prob(
            ctorch.tensor(1)
        )

    g = ctorch.func.grad(f)(ctorch.tensor([0.25, 0.75]))
    np.testing.assert_allclose(g.numpy(), [-1.0, 1 / 3], rtol=1e-5)
