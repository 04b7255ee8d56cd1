"""``Tensor.mT``/``mH``/``H``/``adjoint()`` and ``torch.adjoint`` on compat against real
PyTorch: values (conjugation of complex tensors), shapes, ``grad_fn`` names, gradients
through them, PyTorch's dimension errors and the 0-D deprecation warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch

G = np.random.default_rng(11)
Z3 = G.standard_normal((2, 3, 4)) + 1j * G.standard_normal((2, 3, 4))
R2 = G.standard_normal((3, 4))

VIEWS = {
    "mT": lambda lib, x: x.mT,
    "mH": lambda lib, x: x.mH,
    "H": lambda lib, x: x.H,
    "adjoint": lambda lib, x: x.adjoint(),
    "torch.adjoint": lambda lib, x: lib.adjoint(x),
}


def _record(lib, name, a):
    x = lib.tensor(a, requires_grad=True)
    y = VIEWS[name](lib, x)
    w = lib.tensor(np.arange(y.numel()).reshape(tuple(y.shape)) * (1 + 0.5j))
    loss = (y * w).real.sum() if y.is_complex() else (y * w.real).sum()
    loss.backward()
    return y.detach().resolve_conj().numpy(), y.grad_fn.name(), x.grad.numpy()


# H is for 2-D tensors only (its error on 3-D is tested below)
VALUE_CASES = [(n, d) for n in sorted(VIEWS) for d in ("complex3d", "complex2d", "real2d")]
VALUE_CASES = [(n, d) for n, d in VALUE_CASES if not (n == "H" and d == "complex3d")]


@pytest.mark.parametrize(("name", "data"), VALUE_CASES)
def test_values_and_gradients(real_torch, name, data):
    a = {"complex3d": Z3, "complex2d": Z3[0], "real2d": R2}[data]
    ours, theirs = _record(ctorch, name, a), _record(real_torch, name, a)
    assert ours[0].dtype == theirs[0].dtype and ours[0].shape == theirs[0].shape
    np.testing.assert_allclose(ours[0], theirs[0], rtol=0, atol=0)
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12, atol=1e-12)


def test_mh_conjugates():
    z = ctorch.tensor(Z3)
    np.testing.assert_array_equal(z.mH.numpy(), np.conj(np.swapaxes(Z3, -1, -2)))


@pytest.mark.parametrize(("name", "ndim"), [(n, 1) for n in sorted(VIEWS)] + [("H", 3)])
def test_dimension_errors(real_torch, name, ndim):
    got = []
    for lib in (ctorch, real_torch):
        with pytest.raises(RuntimeError) as info:
            VIEWS[name](lib, lib.zeros([2] * ndim))
        got.append(str(info.value))
    assert got[0] == got[1]


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_zero_dim_warns_and_conjugates(real_torch, name):
    """PyTorch warns once per process (so only compat's warning is checked); the values
    agree: identity for mT, conj for the others."""
    z = ctorch.tensor(2.0 + 1.0j)
    with pytest.warns(UserWarning, match="deprecated on 0-D tensors"):
        ours = VIEWS[name](ctorch, z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = VIEWS[name](real_torch, real_torch.tensor(2.0 + 1.0j)).resolve_conj()
    assert complex(ours.item()) == complex(theirs.item())
