"""``movedim``/``moveaxis`` with a dim repeated in ``source`` or ``destination`` raise
PyTorch 2.13's errors (compat went on to ``permute`` and failed with its length error,
or moved the dims); valid moves, negative dims among them, still equal PyTorch's."""

from __future__ import annotations

import pytest

import compat.torch as ctorch

CASES = [
    ((0, 0), (0, 1)),
    ((0, 1, 0), (0, 1, 2)),
    ((0, 1), (1, 1)),
    ((0, 1, 2), (1, 0, 1)),
    ((0, -4), (1, 2)),
    ((1, 0), (0,)),
    ((0, 1), (-1, 0)),
    (2, -1),
    ((3, 1, 0), (0, 2, 3)),
]


def _outcome(t, name, src, dst):
    x = t.arange(5 * 6 * 7 * 8).reshape(5, 6, 7, 8)
    try:
        r = getattr(t, name)(x, src, dst)
    except (RuntimeError, IndexError) as e:
        return type(e).__name__, str(e)
    return tuple(r.shape), r.flatten()[:50].tolist()


@pytest.mark.parametrize("name", ["movedim", "moveaxis"])
@pytest.mark.parametrize(("src", "dst"), CASES, ids=str)
def test_movedim_like_torch(real_torch, name, src, dst):
    assert _outcome(ctorch, name, src, dst) == _outcome(real_torch, name, src, dst)
