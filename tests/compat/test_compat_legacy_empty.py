"""``torch.LongTensor()`` & co with no arguments make an empty 1-d tensor, as PyTorch
2.13's (compat made a 0-d tensor holding 0: ``x[torch.LongTensor()]`` selected element 0
instead of nothing, ``ByteTensor().all()`` was false); with sizes or data they are
unchanged."""

from __future__ import annotations

import pytest

import compat.torch as ctorch

NAMES = ["LongTensor", "FloatTensor", "DoubleTensor", "IntTensor", "ByteTensor", "BoolTensor"]


def _summary(t, name):
    cls = getattr(t, name)
    e = cls()
    ref = t.arange(27.0).reshape(3, 3, 3)
    return [
        tuple(e.shape),
        str(e.dtype).removeprefix("torch."),
        bool(e.all()),
        bool(e.any()),
        tuple(ref[t.LongTensor()].shape),
        tuple(cls(2, 3).shape),
        cls([1, 0]).tolist(),
    ]


@pytest.mark.parametrize("name", NAMES)
def test_legacy_constructor_like_torch(real_torch, name):
    assert _summary(ctorch, name) == _summary(real_torch, name)
