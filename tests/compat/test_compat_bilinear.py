"""``nn.Bilinear`` and ``nn.functional.bilinear`` against PyTorch 2.13: values and
gradients from the same weights, batch shapes (none, several, empty), the initial
weights' bounds, the repr and the errors word for word."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _run(lib: Any, shapes: tuple, arrays: list[np.ndarray], bias: bool) -> list[np.ndarray]:
    x1 = lib.tensor(arrays[0], requires_grad=True)
    x2 = lib.tensor(arrays[1], requires_grad=True)
    w = lib.tensor(arrays[2], requires_grad=True)
    b = lib.tensor(arrays[3], requires_grad=True) if bias else None
    out = lib.nn.functional.bilinear(x1, x2, w, b)
    g = lib.tensor(arrays[4][: out.numel()].reshape(out.shape))
    out.backward(g)
    grads = [x1.grad, x2.grad, w.grad] + ([b.grad] if bias else [])
    return [out.detach().numpy()] + [t.numpy() for t in grads]


@pytest.mark.parametrize("batch", [(4,), (2, 3), (), (0,), (0, 2)])
@pytest.mark.parametrize("bias", [True, False])
def test_values_and_gradients(batch: tuple, bias: bool) -> None:
    rng = np.random.default_rng(0)
    in1, in2, out = 3, 5, 4
    arrays = [
        rng.standard_normal((*batch, in1)),
        rng.standard_normal((*batch, in2)),
        rng.standard_normal((out, in1, in2)),
        rng.standard_normal(out),
        rng.standard_normal(max(1, int(np.prod(batch))) * out),
    ]
    ours = _run(ctorch, batch, arrays, bias)
    ref = _run(torch, batch, arrays, bias)
    for a, b in zip(ours, ref):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "shapes",
    [((2, 2), (3, 3), (4, 2, 3), None), ((2, 3), (2, 3), (4, 2, 3), None),
     ((2, 2), (2, 3), (4, 2, 3), (5,)), ((5, 1, 2), (5, 3, 3), (4, 2, 3), None),
     ((2, 2), (2, 2, 3), (4, 2, 3), None), ((2, 2), (2, 2), (4, 2, 3), None)],
)  # fmt: skip
def test_errors(shapes: tuple) -> None:
    msgs = []
    for lib in (ctorch, torch):
        args = [lib.ones(*s) for s in shapes[:3]] + [lib.ones(*shapes[3]) if shapes[3] else None]
        with pytest.raises(RuntimeError) as info:
            lib.nn.functional.bilinear(*args)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


def test_module() -> None:
    for bias in (True, False):
        ours, ref = (
            ctorch.nn.Bilinear(20, 30, 40, bias=bias),
            torch.nn.Bilinear(20, 30, 40, bias=bias),
        )
        assert repr(ours) == repr(ref)
        assert [tuple(p.shape) for p in ours.parameters()] == [
            tuple(p.shape) for p in ref.parameters()
        ]
        bound = 1 / np.sqrt(20)
        for p in ours.parameters():
            v = p.detach().numpy()
            assert v.min() >= -bound and v.max() <= bound and v.max() - v.min() > bound
        with ctorch.no_grad():
            for p, q in zip(ours.parameters(), ref.parameters()):
                p.copy_(ctorch.tensor(q.detach().numpy()))
        x1, x2 = (
            np.ones((3, 20), np.float32),
            np.linspace(0, 1, 90, dtype=np.float32).reshape(3, 30),
        )
        np.testing.assert_allclose(
            ours(ctorch.tensor(x1), ctorch.tensor(x2)).detach().numpy(),
            ref(torch.tensor(x1), torch.tensor(x2)).detach().numpy(), rtol=1e-5, atol=1e-6)  # fmt: skip
