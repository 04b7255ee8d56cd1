"""Indexing a 0-d tensor, against PyTorch 2.13: a lone int (or NumPy integer) and a lone
slice are refused in PyTorch's own words, for reading and writing (compat said "too many
indices"), while ``x[(0,)]``, ``x[None, 0]`` and a 0-d index tensor keep that error and
``x[True]``, ``x[...]``, ``x[None]`` still work."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_FORMS = {
    "int": lambda x: x[0],
    "negative int": lambda x: x[-1],
    "int 2": lambda x: x[2],
    "numpy int": lambda x: x[np.int64(0)],
    "slice": lambda x: x[0:1],
    "full slice": lambda x: x[:],
    "tuple of int": lambda x: x[(0,)],
    "None and int": lambda x: x[None, 0],
    "ellipsis and int": lambda x: x[..., 0],
    "0-d index tensor": lambda x: x[x.new_tensor(0).long()],
    "True": lambda x: x[True].tolist(),
    "Ellipsis": lambda x: x[...].tolist(),
    "None": lambda x: x[None].tolist(),
    "set int": lambda x: x.__setitem__(0, 2.0),
    "set slice": lambda x: x.__setitem__(slice(None), 3.0),
}


def _outcome(lib, form):
    try:
        return ("ok", _FORMS[form](lib.tensor(10.0)))
    except IndexError as e:
        return ("IndexError", str(e))


@pytest.mark.parametrize("form", sorted(_FORMS))
def test_as_pytorch(form):
    assert _outcome(ctorch, form) == _outcome(torch, form)
