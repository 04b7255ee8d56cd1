"""compat's ops generated from the array rows (``ArrayRow`` beside ``tril``, ``triu``,
``flip`` and ``roll`` in ``funcgrad/numpy/_shape.py``; ``TorchArrayForm``), against real
PyTorch: values, dtypes and shapes, or the exception type, for the function, the method, the
in-place method and ``out=`` on a shape x dtype x argument grid; the node and the gradient.
The ops are read from the rows."""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest
from cases import sample
from torch_oracle import random_tensor

import compat.torch as ctorch
import funcgrad.numpy as fnp
from funcgrad._compat_contract import array_rows

ROWS = [pytest.param(r, id=r.name) for r in array_rows()]
SHAPES = [(), (0,), (4,), (3, 4), (2, 3, 4), (0, 3)]
DTYPES = ["bool", "int64", "float32", "complex64"]
#: arguments tried per PyTorch parameter kind (``TorchParam.kind``)
ARGS = {
    "int": [0, 1, -2, 5, 1.5],
    "dims": [0, -1, (0, 1), [1, 0], 3, (0, 0)],
    "unique_dims": [0, -1, (0, 1), [1, 0], 3, (0, 0), ()],
    "shifts": [1, -3, (1, 2), (2,)],
}


def test_rows_declared():
    assert {r.values[0].name for r in ROWS} >= {"tril", "triu", "flip", "roll"}


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # (compared with PyTorch's)
        return type(e)
    return str(r.dtype), tuple(r.shape), np.asarray(r.tolist())


def _same(got, want, what):
    if isinstance(want, type) or isinstance(got, type):
        assert got == want, what
        return
    assert got[:2] == want[:2], what
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6, err_msg=what)


def _calls(row):
    """Argument tuples: every combination of each parameter's cases (or its default)."""
    options = []
    for p in row.torch.params:
        cases = list(ARGS[p.kind])
        options.append(cases if p.required else [*cases, None, "default"])
    for combo in itertools.product(*options):
        if "default" in combo[:-1]:
            continue
        yield tuple(c for c in combo if c != "default")


@pytest.mark.parametrize("row", ROWS)
def test_forms_as_pytorch(real_torch, row):
    name = row.name
    rng = np.random.default_rng(12)
    # (CI samples the grid, every dtype kept)
    grid = sample(list(itertools.product(SHAPES, DTYPES)), salt=name, group=lambda c: c[1])
    for shape, dtype in grid:
        seed = int(rng.integers(1 << 30))
        x = [
            random_tensor(L, np.random.default_rng(seed), shape, dtype)
            for L in (ctorch, real_torch)
        ]
        for args in _calls(row):
            what = f"{name}({dtype}{list(shape)}, *{args})"
            fn, want = (
                _outcome(lambda L=L, xi=xi: getattr(L, name)(xi, *args))
                for L, xi in zip((ctorch, real_torch), x)
            )
            _same(fn, want, what)
            method, want_method = (_outcome(lambda xi=xi: getattr(xi, name)(*args)) for xi in x)
            _same(method, want_method, what + " method")
            if row.torch.method_varargs is not None and isinstance(args[0], (list, tuple)):
                star = _outcome(lambda: getattr(x[1], name)(*args[0]))  # (x.flip(0, 1))
                _same(_outcome(lambda: getattr(x[0], name)(*args[0])), star, what + " *args")
            if isinstance(want, type):
                continue
            out = _outcome(
                lambda: getattr(ctorch, name)(x[0], *args, out=ctorch.empty(0, dtype=x[0].dtype))
            )
            _same(out, want, what + " out=")
            if row.torch.inplace:
                inplaced = [
                    _outcome(lambda xi=xi: getattr(xi.clone(), name + "_")(*args)) for xi in x
                ]
                _same(*inplaced, what + " in place")


@pytest.mark.parametrize("row", ROWS)
def test_nodes_and_gradients_as_pytorch(real_torch, row):
    for shape, args in row.torch.samples:
        got = []
        for L in (ctorch, real_torch):
            x = L.tensor(
                np.arange(1.0, 1 + np.prod(shape)).reshape(shape).tolist(),
                dtype=L.float64,
                requires_grad=True,
            )
            y = getattr(L, row.name)(x, *args)
            (y * L.arange(1.0, y.numel() + 1, dtype=L.float64).reshape(y.shape)).sum().backward()
            got.append((y.grad_fn.name(), np.asarray(x.grad.tolist())))
        assert got[0][0] == got[1][0], (row.name, args)
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12, err_msg=f"{row.name}{args}")


@pytest.mark.parametrize("row", ROWS)
def test_row_names_funcgrad_s_function(row):
    """The row's function is ``funcgrad.numpy``'s of that name, and every numpy
    parameter the PyTorch form passes is one of its parameters."""
    assert getattr(fnp, row.name) is row.function
    params = inspect.signature(row.function).parameters
    assert {p.numpy for p in row.torch.params} <= set(params)
