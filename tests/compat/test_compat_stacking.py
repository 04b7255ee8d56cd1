"""compat's ``hstack``, ``vstack``, ``dstack`` and ``column_stack`` against PyTorch 2.13 (the
``real_torch`` fixture): each op on lists of 0- to 3-d tensors (mismatched ones, an empty
one, mixed dtypes too): the result's dtype, shape, values and node, or the exception's type
and message."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

OPS = ["hstack", "vstack", "dstack", "column_stack"]
#: the tensors' shapes and dtypes of each case
CASES = [
    [],
    [((3,), "float32"), ((3,), "float32")],
    [((2, 3), "float32"), ((2, 1), "float64")],
    [((3,), "float32"), ((3, 2), "float32")],
    [((), "float32")],
    [((), "int64"), ((2,), "float32")],
    [((2, 3), "float32")],
    [((2, 3), "float32"), ((3,), "float32")],
    [((0,), "float32"), ((2,), "float32")],
    [((2, 3, 4), "float32"), ((2, 3, 1), "float32")],
    [((2,), "uint8"), ((2,), "int8")],
    [((3,), "float32"), ((4,), "float32")],
]


def _outcome(lib, name, case):
    rng = np.random.default_rng(7)
    tensors = []
    for shape, dtype in case:
        t = lib.tensor(rng.integers(0, 5, shape).tolist(), dtype=getattr(lib, dtype))
        tensors.append(t.requires_grad_() if dtype.startswith("float") else t)
    try:
        r = getattr(lib, name)(tensors)
    except Exception as e:  # (compared with PyTorch's)
        return type(e).__name__, str(e)
    node = r.grad_fn.name() if r.grad_fn is not None else None
    return str(r.dtype), tuple(r.shape), r.detach().tolist(), node


@pytest.mark.parametrize("name", OPS)
def test_stacking_as_pytorch(real_torch, name):
    for case in CASES:
        assert _outcome(ctorch, name, case) == _outcome(real_torch, name, case), (name, case)
