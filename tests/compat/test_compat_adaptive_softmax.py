"""``nn.AdaptiveLogSoftmaxWithLoss`` against PyTorch 2.13 with the same weights: the
layout (head and tail shapes), ``forward``'s output and loss and the gradients of every
weight and of the input, ``log_prob``, ``predict``, unbatched input, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]


def _pair(args: tuple, kwargs: dict) -> list:
    """The same module in both libraries (PyTorch's weights copied into compat's)."""
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    ours = ctorch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    sd = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(sd) == list(ours.state_dict())
    ours.load_state_dict({k: ctorch.tensor(v) for k, v in sd.items()})
    return [ours, theirs]


@pytest.mark.parametrize(
    "args,kwargs,targets",
    [((16, 20, [5, 10, 15]), {"div_value": 2.0}, [0, 17, 5, 4, 19, 12]),
     ((8, 10, [4, 8]), {"head_bias": True, "div_value": 2.0}, [1, 1, 2, 3]),  # shortlist only
     ((8, 10, [4, 8]), {"div_value": 2.0}, [9, 8, 5, 6])],  # clusters only
)  # fmt: skip
def test_forward_and_gradients(args: tuple, kwargs: dict, targets: list) -> None:
    x = np.random.default_rng(0).standard_normal((len(targets), args[0]))
    results = []
    for lib, m in zip(LIBS, _pair(args, kwargs)):
        inp = lib.tensor(x, requires_grad=True)
        out, loss = m(inp, lib.tensor(targets))
        (out.sum() + loss).backward()
        grads = [p.grad.numpy() if p.grad is not None else None for p in m.parameters()]
        results.append([out.detach().numpy(), loss.detach().numpy(), inp.grad.numpy(), *grads])
    for ours, theirs in zip(*results):
        if theirs is None:
            assert ours is None or not ours.any()
            continue
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_log_prob_predict_and_unbatched() -> None:
    x = np.abs(np.random.default_rng(1).standard_normal((16, 8)))
    results = []
    for lib, m in zip(LIBS, _pair((8, 10, [4, 8]), {"div_value": 2.0, "head_bias": True})):
        with lib.no_grad():
            m.head.weight[: m.shortlist_size].zero_()  # argmax outside the shortlist
        t = lib.tensor(x)
        results.append([
            m.log_prob(t).detach().numpy(), m.predict(t).numpy(),
            m(t[:3], lib.tensor([9, 5, 8])).output.detach().numpy(),
            (m.head.weight.shape, [tuple(s[1].weight.shape) for s in m.tail]),
        ])  # fmt: skip
    # an unbatched row (and 0-d target): the batched result's row (compat only: PyTorch's
    # log_prob and forward fail on it, its one-row index squeezing to 0-d)
    m = _pair((8, 10, [4, 8]), {"div_value": 2.0})[0]
    row = ctorch.tensor(x[:1])
    np.testing.assert_allclose(
        m.log_prob(row[0]).detach().numpy(), m.log_prob(row).detach().numpy()[0]
    )
    assert m.predict(row[0]).item() == m.predict(row)[0].item()
    np.testing.assert_allclose(
        m(row[0], ctorch.tensor(9)).output.detach().numpy(),
        m(row, ctorch.tensor([9])).output.detach().numpy()[0],
    )
    for ours, theirs in zip(*results):
        if isinstance(theirs, tuple):
            assert ours == theirs
        else:
            assert np.shape(ours) == np.shape(theirs)
            np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


ERRORS: dict[str, Any] = {
    "repeated cutoff": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 15, 15]),
    "unsorted": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 15, 10]),
    "cutoff too large": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 10, 20]),
    "no cutoff": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, []),
    "batch sizes": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5])(lib.randn(2, 16), lib.tensor([0, 5, 10])),
    "target out of range": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5])(lib.randn(2, 16), lib.tensor([0, 20])),
    "negative target": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5])(lib.randn(2, 16), lib.tensor([-1, 2])),
    "2-D target": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5])(lib.randn(2, 16), lib.zeros(2, 1, dtype=lib.long)),
}  # fmt: skip


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name: str) -> None:
    seen = []
    for lib in LIBS:
        with pytest.raises((ValueError, RuntimeError)) as info:
            ERRORS[name](lib)
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]
