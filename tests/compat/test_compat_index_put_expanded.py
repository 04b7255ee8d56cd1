"""An advanced-index write (``index_put_``, ``t[indices] = v``) on an expanded tensor
warns and writes through to the memory the expand shares, as PyTorch 2.13's does (compat
refused it as an overlapping write); ``accumulate=True`` there is refused with a clear
error (PyTorch adds every write to the one memory place, which compat does not model)."""

from __future__ import annotations

import warnings

import pytest

import compat.torch as ctorch


def _msgs(w):
    return [(type(x.message).__name__, str(x.message).split(" (Triggered")[0]) for x in w]


def _index_put(t):
    base = t.zeros(3)
    e = base.expand(2, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = e.index_put_((t.tensor([0]), t.tensor([1])), t.tensor(5.0))
    return [r is e, base.tolist(), e.tolist(), _msgs(w)]


def _setitem(t):
    base = t.arange(4.0).reshape(4, 1)
    e = base.expand(4, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        e[t.tensor([1, 3]), t.tensor([2, 0])] = t.tensor([10.0, 30.0])
        e[t.tensor([True, False, False, False])] = -1.0
        e[t.tensor([False, True, False, False])] = t.tensor([[7.0, 8.0, 9.0]])
    return [base.tolist(), e.tolist(), _msgs(w)]


@pytest.mark.parametrize("case", [_index_put, _setitem], ids=lambda f: f.__name__)
def test_expanded_write_like_torch(real_torch, case):
    assert case(ctorch) == case(real_torch)


def test_accumulate_on_expanded_is_refused():
    e = ctorch.zeros(3).expand(2, 3)
    with pytest.raises(RuntimeError, match="accumulate=True"):
        e.index_put_(
            (ctorch.tensor([0, 1]), ctorch.tensor([0, 0])), ctorch.ones(2), accumulate=True
        )
