"""Selections and order statistics of empty tensors against real PyTorch (from PyTorch's
``test_reductions.py``: ``test_tensor_compare_ops_empty``, ``..._kthvalue_dim_empty``,
``test_median_corner_cases``, ``test_quantile_error``).

The median of no element is NaN (an integer dtype's is NaN converted as x86 converts it);
selecting along a dimension of size 0 (``max(x, dim)``, ``median``, ``kthvalue``, ``mode``,
``aminmax``) is PyTorch's ``IndexError``, ``quantile`` of no element its ``RuntimeError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["median", "nanmedian"])
def test_median_of_no_element_matches_pytorch(op, dtype, real_torch):
    out = []
    for lib in (real_torch, ctorch):
        r = getattr(lib, op)(lib.empty(2, 0, dtype=getattr(lib, dtype)))
        out.append((str(r.dtype), tuple(r.shape), r.float().item()))
    (t_dtype, t_shape, t_value), (o_dtype, o_shape, o_value) = out
    assert (o_dtype, o_shape) == (t_dtype, t_shape)
    np.testing.assert_equal(o_value, t_value)


def test_median_of_no_element_has_a_node(real_torch):
    grads = []
    for lib in (real_torch, ctorch):
        x = lib.empty(0, requires_grad=True)
        r = lib.median(x)
        assert r.grad_fn.name() == "MedianBackward0"
        r.backward()
        grads.append(tuple(x.grad.shape))
    assert grads[0] == grads[1]


CALLS = {
    "max dim": lambda lib, x: lib.max(x, dim=1),
    "min dim": lambda lib, x: lib.min(x, 1, True),
    "max last": lambda lib, x: lib.max(x.transpose(1, 2), dim=-1),
    "median dim": lambda lib, x: lib.median(x, dim=1),
    "nanmedian dim": lambda lib, x: lib.nanmedian(x, dim=1),
    "kthvalue dim": lambda lib, x: lib.kthvalue(x, 1, dim=1),
    "kthvalue k": lambda lib, x: lib.kthvalue(x, 3, dim=2),
    "mode dim": lambda lib, x: lib.mode(x, dim=1),
    "aminmax": lambda lib, x: lib.aminmax(x),
    "aminmax dim": lambda lib, x: lib.aminmax(x, dim=1),
    "quantile": lambda lib, x: lib.quantile(x, 0.5),
    "nanquantile dim": lambda lib, x: lib.nanquantile(x, 0.5, dim=2),
    "quantile long": lambda lib, x: lib.quantile(x.long(), 0.5),
    "max other dim": lambda lib, x: lib.max(x, dim=2).values,
    "median other dim": lambda lib, x: lib.median(x, dim=-1, keepdim=True).values,
    "mode other dim": lambda lib, x: lib.mode(x, dim=0).values,
}


@pytest.mark.parametrize("label", sorted(CALLS))
def test_selection_on_empty_matches_pytorch(label, real_torch):
    def run(lib):
        return CALLS[label](lib, lib.zeros(2, 0, 4))

    try:
        theirs = run(real_torch)
    except Exception as e:
        with pytest.raises(type(e)) as info:
            run(ctorch)
        assert str(info.value) == str(e), label
        return
    ours = run(ctorch)
    for o, t in zip(
        ours if isinstance(ours, tuple) else (ours,),
        theirs if isinstance(theirs, tuple) else (theirs,),
    ):
        assert tuple(o.shape) == tuple(t.shape) and str(o.dtype) == str(t.dtype), label


QUANTILE_CALLS = {
    "interpolation": lambda lib: lib.quantile(
        lib.tensor([1.0]), lib.tensor([1.0]), None, False, interpolation="random_mode"
    ),
    "q below": lambda lib: lib.quantile(lib.tensor([1.0]), -1.0),
    "q above": lambda lib: lib.quantile(lib.tensor([1.0]), 1.1),
    "q int above": lambda lib: lib.quantile(lib.tensor([1.0]), 2),
    "q 2-d": lambda lib: lib.nanquantile(lib.tensor([1.0]), lib.tensor([[1.0]])),
    "q dtype": lambda lib: lib.quantile(lib.tensor([1.0]), lib.tensor([1])),
    "q values": lambda lib: lib.quantile(lib.tensor([1.0]), lib.tensor([0.5, 1.1])),
    "out int": lambda lib: lib.nanquantile(
        lib.tensor([1.0]), 0.5, out=lib.empty([], dtype=lib.int32)
    ),
    "out double": lambda lib: lib.quantile(
        lib.tensor([1.0]), 0.5, out=lib.empty([], dtype=lib.float64)
    ),
    "out float": lambda lib: lib.quantile(
        lib.tensor([1.0, 3.0]), lib.tensor([0.25, 0.5]), out=lib.empty(2)
    ),
}


@pytest.mark.parametrize("label", sorted(QUANTILE_CALLS))
def test_quantile_checks_match_pytorch(label, real_torch):
    """PyTorch's ``test_quantile_error``'s checks, in its words."""
    try:
        theirs = QUANTILE_CALLS[label](real_torch)
    except Exception as e:
        with pytest.raises(type(e)) as info:
            QUANTILE_CALLS[label](ctorch)
        assert str(info.value) == str(e), label
        return
    ours = QUANTILE_CALLS[label](ctorch)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), err_msg=label)
