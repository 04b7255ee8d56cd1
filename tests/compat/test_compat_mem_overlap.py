"""PyTorch's memory-overlap checks, against real PyTorch 2.13: an in-place or ``out=`` op
whose input overlaps the written tensor in part (or lies on its memory with another
layout: a transpose) raises "unsupported operation: some elements of the input tensor and
the written-to tensor refer to a single memory location"; the index ops (``index_add_``,
``index_copy_``, ``index_fill_``, ``masked_fill_``, ``put_``, ``scatter_``, ``index_put_``)
refuse any shared memory between ``self`` and the index, source or mask; the same memory
with the same layout is allowed elsewhere; ``index_fill_``/``masked_fill_`` on an expanded
tensor warn and fill. (compat computed a result, as if the input had been cloned.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch

D = np.arange(18, dtype=np.float64) / 7.0
O1 = np.linspace(-1.0, 1.0, 9)
O2 = np.linspace(2.0, 3.0, 9)

CASES = {
    "copy_partial": lambda T, d: d[0:9].copy_(d[1:10]),
    "copy_transpose": lambda T, d: d[:9].view(3, 3).t().copy_(d[:9].view(3, 3)),
    "copy_identical": lambda T, d: d[0:9].copy_(d[0:9]),
    "copy_disjoint": lambda T, d: d[0:9].copy_(d[9:18]),
    "add_out_partial": lambda T, d: T.add(d[1:10], 1.0, out=d[0:9]),
    "add_out_identical": lambda T, d: T.add(d[0:9], 1.0, out=d[0:9]),
    "neg_out_transpose": lambda T, d: T.neg(d[:9].view(3, 3), out=d[:9].view(3, 3).t()),
    "cumsum_out_partial": lambda T, d: T.cumsum(d[:5], 0, out=d[1:6]),
    "addcmul_out_partial": lambda T, d: T.addcmul(T.tensor(O1), d[1:10], T.tensor(O2), out=d[0:9]),
    "addcdiv_out_third": lambda T, d: T.addcdiv(T.tensor(O1), T.tensor(O2), d[1:10], out=d[:9]),
    "lerp_out_partial": lambda T, d: T.lerp(T.tensor(O1), d[1:10], T.tensor(O2), out=d[0:9]),
    "mul_inplace_partial": lambda T, d: d[:-1].mul_(d[1:]),
    "shift_inplace_partial": lambda T, d: (lambda x: x[:-1].__ilshift__(x[1:]))(T.arange(3)),
    "setitem_basic_partial": lambda T, d: d.__setitem__(slice(1, None), d[:-1]),
    "setitem_index_partial": lambda T, d: d.__setitem__([1, 2], d[:2]),
    # ``x[i] += v`` writes x[i] (a view of x) back into itself: the same memory, allowed
    "setitem_own_view_int": lambda T, d: d.__setitem__(2, d[2].add_(1.0)),
    "setitem_own_view_0d_tensor": lambda T, d: d.__setitem__(T.tensor(3), d[T.tensor(3)] + 1),
    "setitem_own_slice": lambda T, d: d.__setitem__(slice(2, 5), d[2:5].mul_(2.0)),
    "setitem_other_slice_disjoint": lambda T, d: d.__setitem__(slice(0, 3), d[9:12]),
    "index_add_source": lambda T, d: d.index_add_(0, T.tensor([2, 1, 0]), d[:3]),
    "index_add_index": lambda T, d: (lambda i: i.index_add_(0, i, i.clone()))(T.tensor([2, 1, 0])),
    "index_add_index2": lambda T, d: (lambda i: i.index_add_(0, i.clone(), i))(T.tensor([2, 1, 0])),
    "index_copy_source": lambda T, d: d.index_copy_(0, T.tensor([2, 1, 0]), d[:3]),
    "index_fill_index": lambda T, d: (lambda i: i.index_fill_(0, i, 0))(T.tensor([2, 1, 0])),
    "put_source": lambda T, d: d.put_(T.tensor([2, 1, 0]), d[:3]),
    "put_scalar_source": lambda T, d: d.put_(T.tensor(2), d[0]),
    "put_index": lambda T, d: (lambda i: i.put_(i, i))(T.tensor([2, 1, 0])),
    "masked_fill_mask": lambda T, d: (lambda m: m[1:].masked_fill_(m[:-1], False))(
        T.tensor([True, False, True, True, False, False])
    ),
    "scatter_source": lambda T, d: (lambda s: s.scatter_(0, T.tensor([2, 1, 0]), s))(d[:3]),
    "scatter_index": lambda T, d: (lambda i: i.scatter_(0, i, i.clone()))(T.tensor([2, 1, 0])),
    "index_put_source": lambda T, d: d.index_put_((T.tensor([2, 1, 0]),), d[0]),
    "index_put_index": lambda T, d: (lambda i: i.index_put_((i,), i))(T.tensor([2, 1, 0])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_overlap_outcome_as_torch(real_torch, name):
    results = []
    for lib in (ctorch, real_torch):
        d = lib.tensor(D)
        try:
            CASES[name](lib, d)
            results.append(npv(d).copy())
        except RuntimeError as e:
            results.append(str(e).split("\n  (in your code at")[0])
    if isinstance(results[1], str):
        assert results[0] == results[1]
    else:
        np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


@pytest.mark.parametrize("op", ["index_fill_", "masked_fill_"])
def test_fill_on_expanded_warns_as_torch(real_torch, op):
    got = []
    for lib in (ctorch, real_torch):
        x = lib.tensor([0.5]).expand(6)
        where = (
            (0, lib.tensor([2, 1, 0]))
            if op == "index_fill_"
            else (lib.tensor([True, False, True, True, False, False]),)
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(x, op)(*where, 2.0)
        said = [str(w.message).split(" (Triggered internally")[0] for w in caught]
        got.append((said, npv(x).tolist()))
    assert got[0] == got[1]
    assert got[0][0] and "on expanded tensors is deprecated" in got[0][0][0]


def test_reduction_out_overlapping_input_is_not_refused(real_torch):
    """Reductions and matmul do not make the check (PyTorch writes their ``out=`` whatever
    it overlaps; its values then depend on its kernel's order, so only the outcome's kind
    is compared)."""
    for lib in (ctorch, real_torch):
        d = lib.tensor(D)
        lib.sum(d.view(3, 6), 0, out=d[:6])
        m = lib.ones(2, 2, dtype=lib.float64)
        lib.mm(m, m, out=m)


_SETITEM_CASES = {
    "row_from_its_own_element": lambda z: z.__setitem__(1, z[1][0]),
    "slice_from_a_one_element_slice": lambda z: z.__setitem__((1, slice(None, 3)), z[1, 1:2]),
    "slice_from_an_overlapping_slice": lambda z: z.__setitem__((1, slice(None, 2)), z[1:2, 1:3]),
    "advanced_from_its_own_element": lambda z: z.__setitem__([0, 1], z[0, 0]),
}


@pytest.mark.parametrize("case", sorted(_SETITEM_CASES))
def test_setitem_of_a_zero_dim_view_of_itself(real_torch, case):
    """``x[i] = x[i][0]`` (PyTorch's ``test_embedding_bag_2D_padding_idx``): a basic index
    written with a 0-d value (after its leading ones are dropped) is filled with its
    number, no overlap error; a partial overlap and an advanced index still refuse."""
    res = []
    for lib in (ctorch, real_torch):
        z = lib.tensor(np.arange(12).reshape(3, 4) * 7 % 11)
        try:
            _SETITEM_CASES[case](z)
        except RuntimeError as e:
            res.append(str(e))
        else:
            res.append(npv(z).tolist())
    assert res[0] == res[1]
