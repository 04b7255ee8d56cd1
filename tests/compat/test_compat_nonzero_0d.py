"""``nonzero`` of a 0-d tensor against PyTorch 2.13 (compat raised NumPy's ``ValueError``):
rows of no columns (one for a nonzero value, none for zero), one index tensor with
``as_tuple``, and ``torch.where(condition)`` alike."""

from __future__ import annotations

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("value", [0.5, 0.0, -0.0, float("nan"), True, False, 3, 0])
def test_nonzero_of_0d_as_pytorch(value):
    got, want = (
        (
            lib.nonzero(lib.tensor(value)),
            lib.nonzero(lib.tensor(value), as_tuple=True),
            lib.tensor(value).nonzero(),
            lib.where(lib.tensor(value)),
        )
        for lib in (ctorch, torch)
    )
    assert tuple(got[0].shape) == tuple(want[0].shape) and str(got[0].dtype) == str(want[0].dtype)
    assert tuple(got[2].shape) == tuple(want[2].shape)
    for g, w in ((got[1], want[1]), (got[3], want[3])):
        assert len(g) == len(w) == 1
        assert g[0].tolist() == w[0].tolist() and str(g[0].dtype) == str(w[0].dtype)
