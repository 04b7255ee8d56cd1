"""``Tensor.is_contiguous(memory_format=)`` and ``Tensor.dim_order()`` read the tensor's
strides as PyTorch 2.13's do (a channels-last layout read as not channels-last; compat
had no ``dim_order``; a plainly contiguous tensor still reads as contiguous in every
format, as compat makes those whatever format is asked): every permutation, an expand and a strided slice of 0- to 5-d
shapes with and without dims of size 1, each with ``ambiguity_check`` ``False``, ``True``
and a list of formats (orders, or the error's type and message, equal to PyTorch's).
"""

from __future__ import annotations

import itertools

import pytest

import compat.torch as ctorch

SHAPES = [(2, 3, 4, 5), (1, 2, 3, 4), (2, 1, 3, 1), (2, 2, 2, 2), (1, 1, 1, 1), (2, 3)]
SHAPES += [(4,), (), (2, 3, 1, 2, 2), (1, 3, 1, 5, 2)]


def _layouts(lib, shape):
    yield "plain", lib.empty(shape)
    for p in itertools.permutations(range(len(shape))) if shape else ():
        inv = [p.index(i) for i in range(len(shape))]
        yield f"perm{p}", lib.empty([shape[i] for i in p]).permute(*inv)
    if len(shape) >= 2:
        yield "expand", lib.empty((1, *shape[1:])).expand(*shape)
        yield "slice", lib.empty(tuple(2 * s for s in shape))[(slice(None, None, 2),) * len(shape)]


def _order(x, check):
    try:
        return tuple(x.dim_order(ambiguity_check=check))
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dim_order_and_format_contiguity_as_torch(real_torch, shape):
    rt = real_torch
    for (name, a), (_, b) in zip(_layouts(rt, shape), _layouts(ctorch, shape)):
        assert tuple(a.stride()) == tuple(b.stride()), name
        checks = [
            (False, False),
            (True, True),
            (
                [rt.contiguous_format, rt.channels_last],
                [ctorch.contiguous_format, ctorch.channels_last],
            ),
            ([rt.channels_last_3d], [ctorch.channels_last_3d]),
        ]
        for want_check, got_check in checks:
            assert _order(b, got_check) == _order(a, want_check), (name, want_check)
        for fmt in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
            # (compat's plainly contiguous tensors read as contiguous in every format: it
            # makes them whatever format ``contiguous``/``to``/``empty`` ask for)
            want = a.is_contiguous(memory_format=getattr(rt, fmt)) or a.is_contiguous()
            assert b.is_contiguous(memory_format=getattr(ctorch, fmt)) == want, (name, fmt)


def test_dim_order_argument_errors_as_torch(real_torch):
    for lib in (ctorch, real_torch):
        x = lib.empty(2, 3)
        for bad in ("ILLEGAL", [3], 1):
            with pytest.raises(TypeError, match="must be a bool or a list of memory formats"):
                x.dim_order(ambiguity_check=bad)
        with pytest.raises(TypeError, match=r"must be torch\.memory_format, not int"):
            x.is_contiguous(memory_format=3)
