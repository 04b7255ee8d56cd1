"""compat's ``softmax`` and ``log_softmax`` generated from their rows (``Reduction`` with
``numpy="normalize"`` in ``funcgrad/nn/_activations.py``; its ``TorchReduction``): ``torch.X``,
``Tensor.X``, ``torch.special.X``, ``nn.functional.X`` and ``out=`` against real PyTorch on a
dtype x shape x ``dim`` x ``dtype=`` grid (the same value, dtype and shape, or the same
exception type and text), nodes and gradients, the exact dtype ``out=`` wants, and
``nn.functional``'s implicit ``dim``. The ops are read from the rows."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from cases import sample
from torch_oracle import random_tensor

import compat.torch as ctorch
from funcgrad._compat_contract import reduction_rows

ROWS = [pytest.param(r, id=r.name) for r in reduction_rows() if r.numpy == "normalize"]
DTYPES = ["bool", "int64", "float16", "float32", "float64", "complex64"]
SHAPES = [(), (0,), (4,), (2, 3), (0, 3), (2, 3, 2)]


def test_rows_declared():
    assert {r.values[0].name for r in ROWS} == {"softmax", "log_softmax"}


def _outcome(f, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = f(*args, **kwargs)
    except Exception as e:  # (compared with PyTorch's)
        return type(e), str(e)
    return str(r.dtype), tuple(r.shape), np.asarray(r.detach().double().tolist())


def _same(got, want, what):
    assert type(got[0]) is type(want[0]), (what, got, want)
    if isinstance(want[0], type):  # (the text of the kernels' and out='s refusals too)
        assert got[0] is want[0], (what, got, want)
        assert want[0] is TypeError or got[1] == want[1], (what, got, want)
        return
    assert got[:2] == want[:2], (what, got, want)
    tol = 2e-3 if "float16" in want[0] else 1e-6
    np.testing.assert_allclose(got[2], want[2], rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parametrize("row", ROWS)
def test_forms_as_pytorch(real_torch, row):
    """Every form on the grid: values and dtypes, or PyTorch's refusal (a non-float input's
    kernel ``NotImplementedError``, a tuple ``dim``, a ``dim`` out of range)."""
    name = row.name
    # (CI samples the grid, every dtype kept)
    grid = sample(list(itertools.product(DTYPES, SHAPES)), salt=name, group=lambda c: c[0])
    for i, (dtype, shape) in enumerate(grid):
        x = [
            random_tensor(lib, np.random.default_rng(i), shape, dtype)
            for lib in (ctorch, real_torch)
        ]
        for dim, dt in itertools.product(
            (0, -1, 1, len(shape) + 1, (0,), None), (None, "float64", "int64", "float16")
        ):
            kw = {} if dt is None else {"dtype": dt}
            if dtype == "complex64" and dt is not None and dt != "int64":
                continue  # (PyTorch warns that the cast discards the imaginary part)
            what = f"{name}({dtype}{list(shape)}, {dim}, {kw})"
            forms = {
                "torch": lambda lib, a, *r, **k: getattr(lib, name)(a, *r, **k),
                "method": lambda lib, a, *r, **k: getattr(a, name)(*r, **k),
                "special": lambda lib, a, *r, **k: getattr(lib.special, name)(a, *r, **k),
                "functional": lambda lib, a, *r, **k: getattr(lib.nn.functional, name)(a, *r, **k),
            }
            for form, call in forms.items():
                got, want = (
                    _outcome(call, lib, xi, dim, **{k: getattr(lib, v) for k, v in kw.items()})
                    for lib, xi in zip((ctorch, real_torch), x)
                )
                _same(got, want, f"{what} {form}")


@pytest.mark.parametrize("row", ROWS)
def test_nodes_gradients_and_out_as_pytorch(real_torch, row):
    """The node (saving the result), the gradient (``dtype=`` casting the input first),
    ``out=`` of the result's dtype and PyTorch's refusal of another."""
    name = row.name
    value = [[1.5, -0.5, 1.5], [0.25, 2.0, -3.0]]
    for dim, dt in ((1, None), (0, None), (-1, "float64")):
        got = []
        for lib in (ctorch, real_torch):
            x = lib.tensor(value, dtype=lib.float32, requires_grad=True)
            y = getattr(lib, name)(x, dim, dtype=None if dt is None else getattr(lib, dt))
            (y * lib.arange(1.0, 7.0, dtype=y.dtype).reshape(2, 3)).sum().backward()
            got.append((y.grad_fn.name(), str(y.dtype), np.asarray(x.grad.tolist())))
        assert got[0][:2] == got[1][:2], (name, dim, dt)
        np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-5, atol=1e-6)
    for out_dtype in ("float32", "float64", "int64", "float16"):
        got = []
        for lib in (ctorch, real_torch):
            x = lib.tensor(value)
            out = lib.empty(0, dtype=getattr(lib, out_dtype))
            got.append(_outcome(lambda: getattr(lib, name)(x, 1, out=out)))
        _same(*got, f"{name}(out={out_dtype})")


@pytest.mark.parametrize("row", ROWS)
def test_functional_implicit_dim_as_pytorch(real_torch, row):
    """``nn.functional.X(input)``: PyTorch's deprecation warning, pointing at the caller,
    and its legacy ``dim`` (0 for 0-, 1- and 3-d inputs, else 1); ``dtype=`` by keyword or
    fourth position."""
    name = row.name
    for shape in ((), (3,), (2, 3), (2, 3, 2), (2, 1, 3, 2)):
        got = []
        for lib in (ctorch, real_torch):
            x = random_tensor(lib, np.random.default_rng(5), shape, "float32")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                y = getattr(lib.nn.functional, name)(x)
            (w,) = caught
            assert w.filename == __file__, (name, shape)
            y2 = getattr(lib.nn.functional, name)(x, -1, 3, lib.float64)
            got.append((str(w.message), _outcome(lambda: y), _outcome(lambda: y2)))
        assert got[0][0] == got[1][0]
        _same(got[0][1], got[1][1], f"F.{name}{shape}")
        _same(got[0][2], got[1][2], f"F.{name}{shape}, dtype")
