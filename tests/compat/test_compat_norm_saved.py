"""What compat's normalisation nodes save, against real PyTorch.

PyTorch's batch, instance, layer and group norm nodes save their input (and weight,
statistics), never their result, so an in-place op on the result (``ReLU(inplace=True)``
after ``InstanceNorm2d``, the usual generator block) leaves the backward valid, while an
in-place op on the input makes it fail. Each case runs the same numbers through
``compat.torch`` and real PyTorch: first and second derivatives through an in-place
ReLU, and the version-check error when the input is modified.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch


def _norms(lib):
    """The normalisations under test, each without an affine part (the result is then the
    normalised value itself) and, for batch and layer norm, with one."""
    F = lib.nn.functional
    w, b = (
        lib.linspace(0.5, 1.5, 3, dtype=lib.float64),
        lib.linspace(-1.0, 1.0, 3, dtype=lib.float64),
    )
    return {
        "instance_norm": lambda x: F.instance_norm(x),
        "batch_norm": lambda x: F.batch_norm(x, None, None, training=True),
        "batch_norm_affine": lambda x: F.batch_norm(x, None, None, w, b, training=True),
        "layer_norm": lambda x: F.layer_norm(x, x.shape[-2:]),
        "group_norm": lambda x: F.group_norm(x, 1),
        "InstanceNorm2d": lib.nn.InstanceNorm2d(3),
        "BatchNorm2d_no_affine": lib.nn.BatchNorm2d(3, affine=False).double(),
    }


NAMES = list(_norms(ctorch))


def _x() -> np.ndarray:
    return np.sin(np.arange(2 * 3 * 2 * 4, dtype=np.float64) * 0.7).reshape(2, 3, 2, 4) * 3.0


def _through_inplace_relu(lib, name: str):
    """Gradient of ``relu_(norm(x)) ** 2`` (with its graph) and the gradient of that
    gradient weighted by a fixed tensor."""
    f = _norms(lib)[name]
    x = lib.tensor(_x(), requires_grad=True)
    y = lib.nn.functional.relu(f(x.double()), inplace=True)
    (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
    weights = lib.tensor(np.cos(np.arange(g.numel(), dtype=np.float64)).reshape(g.shape))
    (g2,) = lib.autograd.grad((g * weights).sum(), x)
    return y, g, g2


@pytest.mark.parametrize("name", NAMES)
def test_inplace_op_on_result_keeps_backward(real_torch, name):
    """An in-place ReLU on the result: both libraries differentiate it, twice, alike."""
    got = _through_inplace_relu(ctorch, name)
    want = _through_inplace_relu(real_torch, name)
    for a, b in zip(got, want):
        np.testing.assert_allclose(npv(a), npv(b), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_inplace_op_on_input_is_refused(real_torch, name):
    """The input modified in place after the op: both raise the version-check error."""

    def run(lib):
        x = lib.tensor(_x(), requires_grad=True)
        h = x * 1
        y = _norms(lib)[name](h)
        h.add_(1.0)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        return str(info.value)

    got, want = run(ctorch), run(real_torch)
    assert "modified by an inplace operation" in want
    # the tensor's type and versions as PyTorch's; its shape may differ (PyTorch's instance
    # norm saves a (1, N * C, ...) view of the input, compat the input)
    assert got.split(" [")[:2][0] == want.split(" [")[:2][0]
    assert "[torch.DoubleTensor [" in got
    assert "is at version 1; expected version 0 instead" in got
