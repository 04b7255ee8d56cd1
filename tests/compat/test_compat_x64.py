"""Importing compat leaves JAX's x64 mode, and so funcgrad's dtypes, as they were;
PyTorch's 64-bit tensors still work (compat scopes x64 to its own calls)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent(
    """
    import os
    import jax
    if os.environ.get("USER_X64") == "1":
        jax.config.update("jax_enable_x64", True)
    import numpy as np
    import funcgrad as fg
    import funcgrad.numpy as fnp
    import compat.torch as torch

    x64 = os.environ.get("USER_X64") == "1"
    def fg_dtypes():
        return (
            str(fnp.arange(3).dtype),
            str(fnp.asarray(1.5).dtype),
            str(fg.jit(lambda v: v * 2.0)(np.ones(2)).dtype),
            str(fg.grad(lambda v: (v * v).sum())(np.ones(2)).dtype),
            str(jax.numpy.ones(2).dtype),
        )
    before = fg_dtypes()
    # PyTorch's 64-bit tensors, ops, autograd and optimisers
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = (x * x + 1.5).sum()
    y.backward()
    assert y.dtype == torch.float64 and x.grad.dtype == torch.float64, (y.dtype, x.grad.dtype)
    assert x.grad.tolist() == [2.0, 4.0]
    assert torch.arange(3).dtype == torch.int64 and torch.tensor([1, 2]).dtype == torch.int64
    assert (torch.arange(3) + 2**40).tolist() == [2**40, 2**40 + 1, 2**40 + 2]
    big = torch.tensor(1.0 + 1e-12, dtype=torch.float64)
    assert (big - 1.0).item() != 0.0  # not truncated to float32
    m = torch.nn.Linear(2, 1).double()
    opt = torch.optim.Adam(m.parameters(), lr=0.1)
    m(x.detach().reshape(1, 2)).sum().backward()
    opt.step()
    assert m.weight.dtype == torch.float64
    f = torch.func.grad(lambda t: (t * t).sum())
    assert f(torch.ones(2, dtype=torch.float64)).dtype == torch.float64
    after = fg_dtypes()
    assert before == after, (before, after)
    assert jax.config.jax_enable_x64 == x64
    print(",".join(after))
    """
)


@pytest.mark.parametrize("user_x64", ["0", "1"])
def test_importing_compat_keeps_funcgrad_dtypes(user_x64):
    env = {"USER_X64": user_x64, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = proc.stdout.strip().split(",")
    if user_x64 == "1":
        assert got == ["int64", "float64", "float64", "float64", "float64"]
    else:
        assert got == ["int32", "float32", "float32", "float32", "float32"]
