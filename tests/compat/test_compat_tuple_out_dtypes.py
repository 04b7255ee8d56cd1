"""Ops of several outputs (values and indices) never cast into their ``out=`` tensors: an
``out`` of another dtype is PyTorch's RuntimeError, in its words (the first output checked
first, ``median``'s indices first); matching dtypes are written as PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

#: (name, call of (lib, x, out)) for ops of two outputs taking ``out=``
_OPS = [
    ("max", lambda lib, x, o: lib.max(x, 0, out=o)),
    ("min", lambda lib, x, o: lib.min(x, 1, out=o)),
    ("sort", lambda lib, x, o: lib.sort(x, 0, out=o)),
    ("topk", lambda lib, x, o: lib.topk(x, 2, out=o)),
    ("kthvalue", lambda lib, x, o: lib.kthvalue(x, 2, out=o)),
    ("mode", lambda lib, x, o: lib.mode(x, 0, out=o)),
    ("cummax", lambda lib, x, o: lib.cummax(x, 0, out=o)),
    ("cummin", lambda lib, x, o: lib.cummin(x, 1, out=o)),
    ("median", lambda lib, x, o: lib.median(x, 0, out=o)),
    ("nanmedian", lambda lib, x, o: lib.nanmedian(x, 1, out=o)),
    ("aminmax", lambda lib, x, o: lib.aminmax(x, dim=0, out=o)),
]

_DTYPES = ["float32", "float64", "int64", "int32"]


def _run(lib: Any, call: Any, dtypes: tuple[str, str]) -> Any:
    x = lib.tensor(
        np.array(
            [[0.5, -3.0, 2.0, 7.25], [1.5, 4.0, -0.75, 2.0], [9.0, 0.0, 3.5, -1.0]], np.float32
        )
    )
    out = tuple(lib.empty(0, dtype=getattr(lib, d)) for d in dtypes)
    try:
        call(lib, x, out)
    except RuntimeError as e:
        return ("error", str(e), None)
    return ("ok", [str(o.dtype) for o in out], [o.tolist() for o in out])


@pytest.mark.parametrize("name,call", _OPS, ids=[n for n, _ in _OPS])
@pytest.mark.parametrize("d0", _DTYPES)
@pytest.mark.parametrize("d1", ["int64", "float32"])
def test_tuple_out_dtypes_as_pytorch(name, call, d0, d1):
    got, want = _run(ctorch, call, (d0, d1)), _run(torch, call, (d0, d1))
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert got[1] == want[1]
    else:
        assert (
            got[1] == [s.replace("torch.", "compat.torch.") for s in want[1]] or got[1] == want[1]
        )
        np.testing.assert_allclose(np.array(got[2][0]), np.array(want[2][0]))
        np.testing.assert_array_equal(np.array(got[2][1]), np.array(want[2][1]))
