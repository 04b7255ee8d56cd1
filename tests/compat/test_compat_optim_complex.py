"""Complex parameters in the elementwise optimizers, updated as pairs of reals as PyTorch
2.13's (parameters, complex state and state dicts compared over a few steps; compat
raised NotImplementedError before)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

OPTIMIZERS: dict[str, dict[str, Any]] = {
    "Adadelta": {"lr": 0.5, "weight_decay": 0.1},
    "Adagrad": {"lr": 0.1, "lr_decay": 0.01},
    "Adamax": {"lr": 0.05, "maximize": True},
    "ASGD": {"lr": 0.05, "t0": 1.0},
    "NAdam": {"lr": 0.05, "weight_decay": 0.01},
    "RAdam": {"lr": 0.05, "decoupled_weight_decay": True, "weight_decay": 0.1},
    "RMSprop": {"lr": 0.01, "momentum": 0.5, "centered": True},
    "Rprop": {"lr": 0.01},
}

RNG = np.random.default_rng(1)
START = (RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))).astype(np.complex64)
REAL = RNG.standard_normal(4).astype(np.float32)


def _run(lib: Any, name: str) -> list[Any]:
    z = lib.nn.Parameter(lib.tensor(START))
    r = lib.nn.Parameter(lib.tensor(REAL))
    opt = getattr(lib.optim, name)([z, r], **OPTIMIZERS[name])
    for _ in range(4):
        opt.zero_grad()
        loss = (z * z.conj()).real.sum() + (z.real * z.imag).sin().sum() + (r**2).sum()
        loss.backward()
        opt.step()
    state = opt.state_dict()["state"][0]
    tensors = {k: v.numpy() for k, v in state.items() if k != "step" and v.numel() > 1}
    return [z.detach().numpy(), r.detach().numpy(), tensors]


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_complex_parameters_as_pytorch(name: str) -> None:
    got, want = _run(ctorch, name), _run(torch, name)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    assert sorted(got[2]) == sorted(want[2])
    for k in want[2]:
        assert got[2][k].dtype == want[2][k].dtype, k
        np.testing.assert_allclose(got[2][k], want[2][k], rtol=1e-5, atol=1e-6)
