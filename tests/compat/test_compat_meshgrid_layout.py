"""``torch.meshgrid(..., indexing='xy')`` gives PyTorch 2.13's grids (compat transposed
them: shapes and values of the 'ij' grids, silently) for one to four inputs, 0-d ones
among them, and ``Tensor.layout``/``torch.strided`` are one object, as PyTorch's (``t.layout
is torch.strided`` was false: two equal strings), kept by copies and pickling."""

from __future__ import annotations

import copy
import pickle

import pytest

import compat.torch as ctorch

SIZES = [(3,), (3, 2), (0, 4), (1, 3, 2), (3, 2, 4), (2, 3, 1, 2), ((), 3, 2)]


def _grids(t, sizes, indexing):
    ins = [
        t.tensor(7) if s == () else t.arange(10 * (k + 1), 10 * (k + 1) + s)
        for k, s in enumerate(sizes)
    ]
    return [(tuple(g.shape), g.tolist()) for g in t.meshgrid(*ins, indexing=indexing)]


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sizes", SIZES, ids=str)
def test_meshgrid_like_torch(real_torch, sizes, indexing):
    assert _grids(ctorch, sizes, indexing) == _grids(real_torch, sizes, indexing)


def _layouts(t):
    z = t.zeros(2, 3, layout=t.strided)
    s = t.strided
    return [
        z.layout is s,
        t.ones(2).layout is s,
        repr(s),
        str(z.layout),
        copy.deepcopy(s) is s,
        pickle.loads(pickle.dumps(s)) is s,
        isinstance(s, t.layout),
        type(s).__name__,
    ]


def test_layout_like_torch(real_torch):
    assert _layouts(ctorch) == _layouts(real_torch)
