"""``torch.frexp``/``Tensor.frexp`` against PyTorch 2.13: mantissa and int32 exponent bit
for bit over float16/float32/float64 (zeros of both signs, infinities, NaN, subnormals),
the mantissa's gradient (``FrexpBackward0``: ``2**-exponent``), ``out=`` and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_SPECIAL = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-40, -3e-310, 65504.0]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["float16", "float32", "float64"]),
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=1, max_size=8),
)
def test_values_as_pytorch(dtype, values):
    x = np.array(values + _SPECIAL, np.float64)
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    got = ctorch.frexp(ctorch.tensor(x))
    want = torch.frexp(torch.tensor(x))
    assert type(got).__name__ == "frexp" and got._fields == ("mantissa", "exponent")
    assert got.exponent.dtype == ctorch.int32 and got.mantissa.dtype == getattr(ctorch, dtype)
    np.testing.assert_array_equal(got.exponent.numpy(), want.exponent.numpy())
    assert got.mantissa.numpy().tobytes() == want.mantissa.numpy().tobytes()
    _m, e = ctorch.tensor(x).frexp()
    np.testing.assert_array_equal(e.numpy(), want.exponent.numpy())


def test_gradient_as_pytorch():
    vals = [0.0, -0.0, 1.5, -3.25, 1e-40, 65504.0, 7.0]
    grads = []
    for lib in (ctorch, torch):
        x = lib.tensor(vals, requires_grad=True)
        m, e = lib.frexp(x)
        assert type(m.grad_fn).__name__ == "FrexpBackward0" or m.grad_fn.name() == "FrexpBackward0"
        assert not e.requires_grad
        (m * lib.arange(7.0)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_out_and_errors_as_pytorch():
    for lib in (ctorch, torch):
        x = lib.tensor([1.5, -8.0])
        m, e = lib.empty(0), lib.empty(0, dtype=lib.int32)
        lib.frexp(x, out=(m, e))
        assert m.tolist() == [0.75, -0.5] and e.tolist() == [1, 4]
    msgs = []
    for lib in (ctorch, torch):
        got = []
        for args in [
            (lib.tensor([1, 2]), {}),
            (
                lib.tensor([1.0]),
                {"out": (lib.empty(0, dtype=lib.int64), lib.empty(0, dtype=lib.int32))},
            ),
            (lib.tensor([1.0]), {"out": (lib.empty(0), lib.empty(0))}),
        ]:
            with pytest.raises(RuntimeError) as info:
                lib.frexp(args[0], **args[1])
            got.append(str(info.value))
        msgs.append(got)
    assert msgs[0] == msgs[1]
