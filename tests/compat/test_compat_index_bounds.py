"""The gather/scatter and index_* ops against PyTorch 2.13: 0-d inputs and indices read as
1-d (compat raised from inside), indices outside the dim refused as PyTorch (compat read
NaN past the end in gather/index_select and wrapped negative indices in gather, scatter
and index_copy), gather's index smaller than the input in the other dims (compat
broadcast it), ``take_along_dim``'s checks (a flattened one is a ``gather``), and PyTorch's
words for bad index dtypes and shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compat.torch as ctorch

torch = pytest.importorskip("torch")

#: calls PyTorch answers with a tensor
_VALUES = {
    "gather 0-d input, 0-d index": lambda t: t.gather(t.tensor(5.0), 0, t.zeros((), dtype=t.int64)),
    "gather 0-d input, 1-d index": lambda t: t.gather(t.tensor(5.0), 0, t.zeros(1, dtype=t.int64)),
    "gather 1-d input, 0-d index": lambda t: t.gather(t.tensor([5.0, 6]), 0, t.tensor(1)),
    "gather smaller index": lambda t: t.gather(t.arange(6.0).reshape(2, 3), 1, t.tensor([[2]])),
    "gather smaller index dim 0": lambda t: t.gather(
        t.arange(12.0).reshape(3, 4), 0, t.tensor([[2, 1], [0, 2]])
    ),
    "gather int32 index": lambda t: t.gather(t.tensor([5.0, 6]), 0, t.tensor([1], dtype=t.int32)),
    "gather empty index, larger": lambda t: t.gather(t.zeros(2, 3), 0, t.zeros(0, 5, dtype=t.long)),
    "take_along_dim int32 flattened": lambda t: t.take_along_dim(
        t.arange(6.0), t.tensor([5, 0], dtype=t.int32)
    ),
    "take_along_dim 0-d flattened": lambda t: t.take_along_dim(t.tensor(5.0), t.tensor(0)),
    "take_along_dim broadcast": lambda t: t.take_along_dim(
        t.arange(3.0).reshape(1, 3), t.tensor([[0, 1], [2, 2], [1, 0]]), 1
    ),
    "take_along_dim empty": lambda t: t.take_along_dim(
        t.zeros(0, 3), t.zeros(0, 2, dtype=t.long), 1
    ),
    "index_select 0-d input": lambda t: t.tensor(5.0).index_select(0, t.tensor([0])),
    "index_select 0-d input, 0-d index": lambda t: t.tensor(5.0).index_select(0, t.tensor(0)),
    "index_select 0-d index": lambda t: t.arange(3.0).index_select(0, t.tensor(1)),
    "index_select empty dim, no index": lambda t: t.zeros(0, 3).index_select(
        0, t.tensor([], dtype=t.long)
    ),
    "scatter 0-d": lambda t: t.zeros(()).scatter(0, t.tensor(0), t.ones(())),
    "scatter 0-d, 1-d index": lambda t: t.zeros(()).scatter(0, t.tensor([0]), t.ones(1)),
    "scatter 0-d value": lambda t: t.zeros(()).scatter(0, t.tensor(0), 3.0),
    "scatter 1-d, 0-d index": lambda t: t.zeros(3).scatter(0, t.tensor(1), t.tensor(7.0)),
    "scatter int32 index": lambda t: t.zeros(3).scatter(0, t.tensor([1], dtype=t.int32), t.ones(1)),
    "scatter_add 0-d": lambda t: t.zeros(()).scatter_add(0, t.tensor(0), t.ones(())),
    "scatter_reduce 0-d": lambda t: t.zeros(()).scatter_reduce(0, t.tensor(0), t.ones(()), "sum"),
    "index_fill 0-d": lambda t: t.zeros(()).index_fill(0, t.tensor([0]), 1.0),
    "index_fill 0-d, index -1": lambda t: t.zeros(()).index_fill(0, t.tensor([-1]), 1.0),
    "index_fill 0-d index": lambda t: t.zeros(3).index_fill(0, t.tensor(1), 2.0),
    "index_copy 0-d": lambda t: t.zeros(()).index_copy(0, t.tensor([0]), t.ones(())),
    "index_copy 0-d index": lambda t: t.zeros(3).index_copy(0, t.tensor(1), t.ones(1)),
    "index_add 0-d": lambda t: t.zeros(()).index_add(0, t.tensor([0]), t.ones(())),
}

#: calls PyTorch refuses: (error type, call)
_ERRORS = {
    "gather past the end": (RuntimeError, lambda t: t.gather(t.zeros(2), 0, t.tensor([2]))),
    "gather negative": (RuntimeError, lambda t: t.gather(t.zeros(2), 0, t.tensor([-1]))),
    "gather first bad in order": (
        RuntimeError,
        lambda t: t.gather(t.zeros(3), 0, t.tensor([1, -2, 5])),
    ),
    "gather 0-d, index 1": (RuntimeError, lambda t: t.gather(t.tensor(5.0), 0, t.tensor(1))),
    "gather empty input": (
        RuntimeError,
        lambda t: t.gather(t.zeros(0, 2), 0, t.zeros(1, 2, dtype=t.long)),
    ),
    "gather larger index": (
        RuntimeError,
        lambda t: t.gather(t.zeros(2, 2), 0, t.zeros(2, 3, dtype=t.long)),
    ),
    "gather 0-d index of 2-d": (RuntimeError, lambda t: t.gather(t.zeros(2, 2), 0, t.tensor(0))),
    "gather uint8 index": (
        RuntimeError,
        lambda t: t.gather(t.zeros(2), 0, t.tensor([1], dtype=t.uint8)),
    ),
    "gather float index": (RuntimeError, lambda t: t.gather(t.zeros(2), 0, t.tensor([1.0]))),
    "take_along_dim dims differ": (
        RuntimeError,
        lambda t: t.take_along_dim(t.zeros(2, 3), t.zeros(2, dtype=t.long), dim=0),
    ),
    "take_along_dim int32 with dim": (
        RuntimeError,
        lambda t: t.take_along_dim(t.zeros(2, 3), t.zeros(2, 3, dtype=t.int32), dim=0),
    ),
    "take_along_dim 0-d with dim": (
        IndexError,
        lambda t: t.take_along_dim(t.tensor(5.0), t.tensor(0), 0),
    ),
    "take_along_dim flattened past the end": (
        RuntimeError,
        lambda t: t.take_along_dim(t.tensor([5.0, 6]), t.tensor([2])),
    ),
    "take_along_dim flattened float index": (
        RuntimeError,
        lambda t: t.take_along_dim(t.tensor([5.0, 6]), t.tensor([1.0])),
    ),
    "take_along_dim no broadcast": (
        RuntimeError,
        lambda t: t.take_along_dim(t.zeros(2, 3), t.zeros(3, 1, dtype=t.long), 1),
    ),
    "index_select past the end": (
        IndexError,
        lambda t: t.arange(3.0).index_select(0, t.tensor([3])),
    ),
    "index_select negative": (IndexError, lambda t: t.arange(3.0).index_select(0, t.tensor([-1]))),
    "index_select 2-d index": (
        IndexError,
        lambda t: t.arange(3.0).index_select(0, t.tensor([[0]])),
    ),
    "index_select empty input past the end": (
        RuntimeError,
        lambda t: t.zeros(0, 3).index_select(1, t.tensor([0, 5])),
    ),
    "index_select empty input negative": (
        RuntimeError,
        lambda t: t.zeros(0, 3).index_select(1, t.tensor([-1])),
    ),
    "index_select empty dim": (
        RuntimeError,
        lambda t: t.zeros(0, 3).index_select(0, t.tensor([0, 1])),
    ),
    "index_select int16 index": (
        RuntimeError,
        lambda t: t.arange(3.0).index_select(0, t.tensor([1], dtype=t.int16)),
    ),
    "index_select 0-d, two indices": (
        RuntimeError,
        lambda t: t.tensor(5.0).index_select(0, t.tensor([0, 0])),
    ),
    "index_select 0-d, index 1": (
        IndexError,
        lambda t: t.tensor(5.0).index_select(0, t.tensor([1])),
    ),
    "scatter negative": (RuntimeError, lambda t: t.zeros(3).scatter(0, t.tensor([-1]), t.ones(1))),
    "scatter 0-d, index 1": (
        RuntimeError,
        lambda t: t.zeros(()).scatter(0, t.tensor(1), t.ones(())),
    ),
    "scatter int16 index": (
        RuntimeError,
        lambda t: t.zeros(3).scatter(0, t.tensor([1], dtype=t.int16), t.ones(1)),
    ),
    "scatter_add negative": (
        RuntimeError,
        lambda t: t.zeros(3).scatter_add(0, t.tensor([-3]), t.ones(1)),
    ),
    "index_copy negative": (
        IndexError,
        lambda t: t.zeros(3).index_copy(0, t.tensor([-1]), t.ones(1)),
    ),
    "index_copy past the end": (
        IndexError,
        lambda t: t.zeros(3).index_copy(0, t.tensor([3]), t.ones(1)),
    ),
    "index_copy 0-d, index 1": (
        IndexError,
        lambda t: t.zeros(()).index_copy(0, t.tensor([1]), t.ones(())),
    ),
    "index_fill past the end": (IndexError, lambda t: t.zeros(3).index_fill(0, t.tensor([3]), 1.0)),
    "index_fill below -size": (IndexError, lambda t: t.zeros(3).index_fill(0, t.tensor([-4]), 1.0)),
    "index_fill 0-d, index 1": (
        IndexError,
        lambda t: t.zeros(()).index_fill(0, t.tensor([1]), 1.0),
    ),
    "index_add negative": (
        IndexError,
        lambda t: t.zeros(3).index_add(0, t.tensor([-1]), t.ones(1)),
    ),
    "index_add past the end": (
        IndexError,
        lambda t: t.zeros(3).index_add(0, t.tensor([3]), t.ones(1)),
    ),
    "index_reduce past the end": (
        IndexError,
        lambda t: t.zeros(3).index_reduce(0, t.tensor([3]), t.ones(1), "prod"),
    ),
}


def _quiet(f, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (index_reduce's beta warning)
        return f(lib)


@pytest.mark.parametrize("form", sorted(_VALUES))
def test_values_as_pytorch(form):
    got, want = _quiet(_VALUES[form], ctorch), _quiet(_VALUES[form], torch)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("form", sorted(_ERRORS))
def test_errors_as_pytorch(form):
    kind, call = _ERRORS[form]
    got = []
    for lib in (ctorch, torch):
        with pytest.raises(kind) as info:
            _quiet(call, lib)
        got.append(str(info.value))
    assert got[0] == got[1]


@pytest.mark.parametrize("method", ["scatter_", "index_fill_", "index_copy_"])
def test_inplace_on_0d(method):
    """The in-place forms write the 0-d tensor itself."""
    out = []
    for lib in (ctorch, torch):
        x = lib.zeros(())
        src = lib.tensor(4.0)
        args = {"scatter_": (0, lib.tensor(0), src), "index_fill_": (0, lib.tensor([0]), 4.0)}
        getattr(x, method)(*args.get(method, (0, lib.tensor([0]), src)))
        out.append(float(x))
    assert out[0] == out[1] == 4.0


def test_gather_grads_on_0d_and_smaller_index():
    """Gradients reach the read elements only, as PyTorch's GatherBackward0."""
    grads = []
    for lib in (ctorch, torch):
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        s = lib.tensor(2.0, requires_grad=True)
        y = lib.gather(x, 1, lib.tensor([[3, 3], [0, 1]])).sum() * 2
        y = y + lib.gather(s, 0, lib.tensor([0, 0])).sum()
        y.backward()
        grads.append((x.grad.numpy().copy(), float(s.grad)))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    assert grads[0][1] == grads[1][1] == 2.0


@settings(max_examples=30, deadline=None)
@given(shape=st.tuples(st.integers(1, 4), st.integers(1, 4)), dim=st.integers(0, 1), data=st.data())
def test_gather_index_select_in_range(shape, dim, data):
    """In-range gathers and selections of random shapes read what PyTorch reads (an index
    at most as large as the input in the other dim)."""
    other = data.draw(st.integers(1, shape[1 - dim]))
    along = data.draw(st.integers(0, 5))
    ishape = (along, other) if dim == 0 else (other, along)
    n = shape[dim]
    vals = data.draw(
        st.lists(st.integers(0, n - 1), min_size=along * other, max_size=along * other)
    )
    idx = np.array(vals, np.int64).reshape(ishape)
    x = np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape)
    got = ctorch.gather(ctorch.tensor(x), dim, ctorch.tensor(idx))
    want = torch.gather(torch.tensor(x), dim, torch.tensor(idx))
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    flat = idx.reshape(-1)
    got = ctorch.tensor(x).index_select(dim, ctorch.tensor(flat))
    want = torch.tensor(x).index_select(dim, torch.tensor(flat))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
