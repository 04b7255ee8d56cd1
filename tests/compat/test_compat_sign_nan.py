"""``torch.sign`` at NaN: PyTorch's kernel gives 0 there, where NumPy's and JAX's sign
give NaN (compat's op comes from funcgrad's ``sign`` row, whose ``TorchForm.nan_value``
says so). Checked against real PyTorch: every float dtype, the method, the in-place and
``out=`` forms, and the gradient."""

from __future__ import annotations

import pytest
from torch_oracle import check

SPECIAL = [float("nan"), -float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 2.5, -1e-30]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sign_of_nan_is_zero(dtype):
    def scenario(torch, rec):
        x = torch.tensor(SPECIAL, dtype=getattr(torch, dtype))
        rec(torch.sign(x), x.sign(), torch.sgn(x))
        y = x.clone()
        y.sign_()
        out = torch.empty_like(x)
        torch.sign(x, out=out)
        rec(y, out)

    check(scenario)


def test_sign_gradient_and_integers():
    def scenario(torch, rec):
        x = torch.tensor(SPECIAL, requires_grad=True)
        y = torch.sign(x)
        y.sum().backward()
        rec(y, x.grad, y.grad_fn.name())
        rec(torch.sign(torch.tensor([3, -2, 0])), torch.sign(torch.tensor([True, False])))

    check(scenario)


@pytest.mark.parametrize("op", ["abs", "floor", "ceil", "sign", "neg", "trunc"])
def test_bool_operands_as_pytorch(op):
    """PyTorch's sign gives a bool tensor back; abs, floor and ceil refuse one."""

    def scenario(torch, rec):
        try:
            rec(getattr(torch, op)(torch.tensor([True, False])))
        except Exception as e:  # (the type and text compared)
            rec(type(e).__name__, str(e).splitlines()[0])

    check(scenario)
