"""``torch.broadcast_shapes``/``broadcast_tensors``/``can_cast``/``scalar_tensor`` and the
top-level ``pairwise_distance``/``cosine_similarity``, against PyTorch 2.13: results,
gradients and errors (type and message)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

SHAPES = [
    (),
    ((2, 1),),
    ((2, 1), [3]),
    (3, (1,)),
    ([2, 1], (1, 1, 3)),
    ((4, 1, 1), (3, 2), (1,)),
    ((3,), (5,)),
    ((2, 3), (4, 3), (1,)),
    ((-1,),),
    ((1, -12), (3,)),
    (1.1,),
]


def _outcome(fn: Any) -> Any:
    try:
        return ("ok", fn())
    except Exception as e:
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("shapes", SHAPES)
def test_broadcast_shapes(shapes: tuple) -> None:
    ours = _outcome(lambda: tuple(ctorch.broadcast_shapes(*shapes)))
    ref = _outcome(lambda: tuple(torch.broadcast_shapes(*shapes)))
    assert ours == ref


@pytest.mark.parametrize(
    "shapes", [[(2, 1, 3), (3,), (3, 1)], [(4,)], [(2, 3), (4, 3)], [(3,), (5,)], [(1,), ()]]
)
def test_broadcast_tensors_values_views_and_gradients(shapes: list) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    results = []
    for lib in (ctorch, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = _outcome(lambda lib=lib, xs=xs: lib.broadcast_tensors(*xs))
        if out[0] != "ok":
            results.append(out)
            continue
        ys = out[1]
        assert isinstance(ys, tuple)
        # a view where the shape changes; the input itself where it does not
        assert [y._is_view() or y is x for y, x in zip(ys, xs)] == [True] * len(xs)
        assert [y is x for y, x in zip(ys, xs)] == [
            tuple(x.shape) == tuple(ys[0].shape) for x in xs
        ]
        sum(((i + 1) * y).sum() for i, y in enumerate(ys)).backward()
        results.append(("ok", [y.detach().numpy() for y in ys], [x.grad.numpy() for x in xs]))
    ours, ref = results
    assert ours[0] == ref[0]
    if ours[0] != "ok":
        assert ours == ref
        return
    for a, b in zip(ours[1] + ours[2], ref[1] + ref[2]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_broadcast_tensors_refuses_non_tensors() -> None:
    ours = _outcome(lambda: ctorch.broadcast_tensors(ctorch.ones(2), 3))
    ref = _outcome(lambda: torch.broadcast_tensors(torch.ones(2), 3))
    assert ours == ref


NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
         "float32", "float64", "complex64", "complex128"]  # fmt: skip


def test_can_cast_every_pair() -> None:
    for a in NAMES:
        for b in NAMES:
            ours = ctorch.can_cast(getattr(ctorch, a), getattr(ctorch, b))
            assert ours == torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)
    ours = _outcome(lambda: ctorch.can_cast(1, ctorch.int32))
    assert ours == _outcome(lambda: torch.can_cast(1, torch.int32))


@pytest.mark.parametrize("value", [3, True, 1.5, -2])
@pytest.mark.parametrize("dtype", [None, "int32", "float64", "bool"])
def test_scalar_tensor(value: Any, dtype: str | None) -> None:
    ours = ctorch.scalar_tensor(value, dtype=getattr(ctorch, dtype) if dtype else None)
    ref = torch.scalar_tensor(value, dtype=getattr(torch, dtype) if dtype else None)
    assert str(ours.dtype) == str(ref.dtype) and tuple(ours.shape) == ()
    assert ours.item() == ref.item()


def test_distance_functions_at_top_level() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 4, 5)).astype(np.float32)
    for name, kw in [("pairwise_distance", {"p": 1.5}), ("cosine_similarity", {"dim": 0})]:
        ours = getattr(ctorch, name)(ctorch.tensor(a), ctorch.tensor(b), **kw)
        ref = getattr(torch, name)(torch.tensor(a), torch.tensor(b), **kw)
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-5)
