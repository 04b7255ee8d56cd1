"""Ops taking tensors as varargs or one list (``atleast_1d/2d/3d``, ``meshgrid``,
``cartesian_prod``; ``block_diag`` varargs only) check their arguments as PyTorch's parser:
its ``TypeError`` in its words for a non-tensor element or a lone non-tensor argument (compat
raised an ``AttributeError`` from inside), and the same results for valid calls."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_CALLS = {
    "atleast_1d list of ints": lambda t: t.atleast_1d([1, 2]),
    "atleast_1d int": lambda t: t.atleast_1d(2),
    "atleast_2d float": lambda t: t.atleast_2d(1.5),
    "atleast_3d str": lambda t: t.atleast_3d("a"),
    "atleast_1d tensor and int": lambda t: t.atleast_1d(t.ones(1), 2),
    "meshgrid lists": lambda t: t.meshgrid([1, 2], [3], indexing="ij"),
    "meshgrid tensor and int": lambda t: t.meshgrid(t.ones(1), 2, indexing="ij"),
    "cartesian_prod lists": lambda t: t.cartesian_prod([1, 2], [3]),
    "cartesian_prod tensor and int": lambda t: t.cartesian_prod(t.ones(1), 2),
    "block_diag list": lambda t: t.block_diag([t.ones(1), t.ones(2)]),
    "block_diag tensor and list": lambda t: t.block_diag(t.ones(1), [2]),
}

_VALID = {
    "atleast_2d tuple": lambda t: t.atleast_2d((t.ones(3), t.tensor(2.0))),
    "atleast_3d varargs": lambda t: t.atleast_3d(t.ones(2, 2), t.ones(3)),
    "meshgrid list": lambda t: t.meshgrid([t.arange(3), t.arange(2)], indexing="xy"),
    "cartesian_prod": lambda t: t.cartesian_prod(t.arange(3), t.arange(2)),
    "block_diag": lambda t: t.block_diag(t.ones(1, 2), t.tensor(3.0)),
}


@pytest.mark.parametrize("form", sorted(_CALLS))
def test_errors_as_pytorch(form):
    got = []
    for lib in (ctorch, torch):
        with pytest.raises(TypeError) as info:
            _CALLS[form](lib)
        got.append(str(info.value))
    assert got[0] == got[1]


@pytest.mark.parametrize("form", sorted(_VALID))
def test_valid_calls_as_pytorch(form):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = _VALID[form](ctorch), _VALID[form](torch)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(g.numpy(), w.numpy())
