"""``F.triplet_margin_with_distance_loss`` and ``nn.TripletMarginWithDistanceLoss`` against
PyTorch 2.13 (the ``real_torch`` fixture): values and gradients from the same inputs, with
and without a distance function, and the errors' messages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch


def _cosine_distance(lib: Any) -> Any:
    return lambda x, y: 1.0 - lib.nn.functional.cosine_similarity(x, y)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"margin": 0.5, "swap": True, "reduction": "none"}, {"margin": 1.5, "reduction": "sum"},
     {"distance": True, "swap": True}, {"distance": True, "reduction": "none", "module": True}],
)  # fmt: skip
def test_triplet_margin_with_distance_loss(real_torch, kwargs: dict) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((5, 6)) for _ in range(3)]
    results = []
    for lib in (ctorch, real_torch):
        kw = {k: v for k, v in kwargs.items() if k not in ("distance", "module")}
        if kwargs.get("distance"):
            kw["distance_function"] = _cosine_distance(lib)
        tensors = [lib.tensor(a, requires_grad=True) for a in arrays]
        if kwargs.get("module"):
            out = lib.nn.TripletMarginWithDistanceLoss(**kw)(*tensors)
        else:
            out = lib.nn.functional.triplet_margin_with_distance_loss(*tensors, **kw)
        out.sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in tensors])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_triplet_margin_with_distance_loss_errors(real_torch) -> None:
    msgs = []
    for lib in (ctorch, real_torch):
        f = lib.nn.functional.triplet_margin_with_distance_loss
        with pytest.raises(ValueError) as margin:
            f(lib.ones(2, 3), lib.ones(2, 3), lib.ones(2, 3), margin=0)
        with pytest.raises(RuntimeError) as dims:
            f(lib.ones(2, 3), lib.ones(3), lib.ones(2, 3))
        with pytest.raises(ValueError):
            lib.nn.TripletMarginWithDistanceLoss(margin=-1.0)
        msgs.append((str(margin.value), str(dims.value)))
    assert msgs[0] == msgs[1]
