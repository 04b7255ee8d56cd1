"""compat's reductions generated from the reduction rows (``torch.sum``, ``prod``, ``mean``,
``amax``, ``amin``, ``any``, ``all``: ``TorchReduction`` on each ``Reduction`` row), against
real PyTorch on a grid of dtypes, shapes, ``dim`` (absent, ``None``, one, negative, several,
empty, repeated, out of range), ``keepdim`` and ``dtype=``: the same value, dtype and shape,
or the same exception type; the same node; the method and ``out=`` forms; gradients of
floats, with ties. The ops are read from the rows, not listed by hand."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from torch_oracle import random_tensor

import compat.torch as ctorch
from funcgrad._compat_contract import reduction_rows

# (the softmax rows take ``(input, dim, dtype)``: ``test_compat_softmax_rows.py``)
ROWS = [
    pytest.param(r, id=r.torch.name or r.name) for r in reduction_rows() if r.numpy != "normalize"
]
DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64", "complex64"]
SHAPES = [(), (0,), (4,), (2, 3), (0, 3), (2, 3, 2)]
NO_DIM = object()


def _dims(shape):
    n = len(shape)
    dims = [NO_DIM, None, 0, -1, [], (0, 0), n + 1]
    return dims + ([(0, n - 1), [1, 0]] if n > 1 else [])


def _call(f, x, dim, keepdim, kw):
    try:
        if dim is NO_DIM:
            return f(x, **kw)
        return f(x, dim, keepdim, **kw)
    except Exception as e:  # (compared with PyTorch's)
        return type(e)


def _same(got, want, what):
    if isinstance(want, type) or isinstance(got, type):
        assert got == want, what
        return
    assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape), what
    g, w = np.asarray(got.tolist()), np.asarray(want.tolist())
    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("row", ROWS)
def test_values_dtypes_and_errors_as_pytorch(real_torch, row):
    t = row.torch
    name = t.name or row.name
    rng = np.random.default_rng(10)
    kws = [{}] + ([{"dtype": "float64"}, {"dtype": "int64"}, {"dtype": "bool"}] if t.dtype else [])
    for dtype, shape in itertools.product(DTYPES, SHAPES):
        seed = int(rng.integers(1 << 30))
        x = [
            random_tensor(lib, np.random.default_rng(seed), shape, dtype)
            for lib in (ctorch, real_torch)
        ]
        for dim, keepdim, kw in itertools.product(_dims(shape), (False, True), kws):
            lenient = t.one_dim and t.promote != "index"
            if lenient and (dim is None or isinstance(dim, (list, tuple))):
                continue  # (PyTorch's prod takes one int dim; compat's also takes several)
            if dim == (0, 0) and 0 in shape:
                continue  # (two refusals, empty and repeated: PyTorch's order not followed)
            if dtype == "complex64" and kw:
                continue  # (PyTorch warns that a complex input cast to a real dtype= loses
                # its imaginary part; compat casts it without the warning)
            if t.dim_required and dim == [] and not keepdim and x[1].ndim and x[1].numel():
                continue  # (PyTorch's logsumexp(x, []) reduces every dimension, then fails
                # to write the 0-d result into its [1, ...]-shaped output; compat returns it)
            what = f"{name}({dtype}{list(shape)}, dim={dim}, keepdim={keepdim}, {kw})"
            got, want = (
                _call(
                    getattr(lib, name),
                    xi,
                    dim,
                    keepdim,
                    {k: getattr(lib, v) for k, v in kw.items()},
                )
                for lib, xi in zip((ctorch, real_torch), x)
            )
            _same(got, want, what)
            if not isinstance(want, type):  # the method form
                m = _call(lambda a, *r, **k: getattr(a, name)(*r, **k), x[0], dim, keepdim, {})
                _same(m, _call(getattr(ctorch, name), x[0], dim, keepdim, {}), what + " method")


@pytest.mark.parametrize("row", ROWS)
def test_nodes_and_gradients_as_pytorch(real_torch, row):
    """The node PyTorch names (``SumBackward0`` without ``dim``, ``SumBackward1`` with one,
    an empty list included) and the gradient, ties shared as PyTorch shares them."""
    t = row.torch
    name = t.name or row.name
    value = [[1.5, -0.5, 1.5], [0.25, 2.0, 2.0]]  # (ties for amax/amin)
    # (an explicit ``dim=None`` is not compared: PyTorch's node is then ``SumBackward1``,
    # compat's ``SumBackward0``, as without ``dim``: its functions cannot tell them apart)
    # (nor ``var``/``std`` of ``dim=[]``: PyTorch's value reduces every dimension, its
    # ``VarBackward0`` divides by ``1 - correction``, the derivative of no op; compat's is the
    # value's. Their third argument is ``unbiased``)
    empty = not t.one_dim and not t.correction
    dims = ((NO_DIM, False), (1, True), (-2, False)) + ((([], False),) if empty else ())
    if t.dim_required:  # (``logsumexp``: no default ``dim``)
        dims = ((1, True), (-2, False), ((0, 1), False), ([], True))
    scan = row.numpy == "cumulative"  # (``cumsum(input, dim)``: one dim, no keepdim)
    if scan:
        dims = ((1, None), (-2, None), (0, None))
    for dim, keepdim in dims:
        got = []
        for lib in (ctorch, real_torch):
            x = lib.tensor(value, dtype=lib.float64, requires_grad=True)
            f = getattr(lib, name)
            y = f(x, dim) if scan else _call(f, x, dim, keepdim, {})
            if t.grad_fn is None:
                assert y.grad_fn is None and not y.requires_grad
                continue
            (
                y * lib.arange(1.0, y.numel() + 1, dtype=lib.float64).reshape(y.shape)
            ).sum().backward()
            got.append((y.grad_fn.name(), np.asarray(x.grad.tolist())))
        if got:
            assert got[0][0] == got[1][0], (name, dim)
            np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12, err_msg=f"{name} {dim}")


@pytest.mark.parametrize("row", ROWS)
def test_out_argument_as_pytorch(real_torch, row):
    name = row.torch.name or row.name
    got = []
    for lib in (ctorch, real_torch):
        x = lib.tensor([[1.0, 0.0, 3.0], [4.0, 5.0, 0.5]])
        dt = {"bool": lib.bool, "index": lib.int64}.get(row.torch.promote, lib.float32)
        out = lib.empty(*((2, 3) if row.numpy == "cumulative" else (2,)), dtype=dt)
        r = getattr(lib, name)(x, 1, out=out)
        assert r is out
        got.append(out.tolist())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6)


CORRECTION = [
    pytest.param(r, id=r.torch.name or r.name) for r in reduction_rows() if r.torch.correction
]


@pytest.mark.parametrize("row", CORRECTION)
def test_correction_forms_as_pytorch(real_torch, row):
    """``var``/``std``: ``unbiased`` (a bool second argument too) and ``correction``, not
    both; a divisor at or below 0 (``inf``, PyTorch's warning); the root's gradient where
    the variance is 0 (none, as PyTorch's); the ``*_mean`` forms sharing the arguments."""
    name = row.torch.name or row.name
    value = [[1.5, -0.5, 1.5, 0.0], [0.25, 2.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    calls = [
        ((), {}),
        ((False,), {}),
        ((1,), {"unbiased": False, "keepdim": True}),
        ((1, True, True), {}),
        ((0,), {"correction": 0.5}),
        (((0, 1),), {"correction": 0}),
        ((0,), {"correction": 3}),
        ((0,), {"correction": 1, "unbiased": True}),
        ((1,), {"correction": 4}),
    ]
    for fname in (name, f"{name}_mean"):
        for args, kw in calls:
            got = []
            for lib in (ctorch, real_torch):
                x = lib.tensor(value, dtype=lib.float64, requires_grad=True)
                try:
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        y = getattr(lib, fname)(x, *args, **kw)
                except TypeError:
                    got.append(TypeError)
                    continue
                y = y[0] if isinstance(y, tuple) else y
                y.sum().backward()
                warned = [str(w.message).split(".")[0] for w in caught]
                got.append((y.tolist(), x.grad.tolist(), warned, y.grad_fn.name()))
            what = f"{fname}(*{args}, **{kw})"
            if got[1] is TypeError:
                assert got[0] is TypeError, what
                continue
            (v0, g0, w0, n0), (v1, g1, w1, n1) = got
            np.testing.assert_allclose(v0, v1, rtol=1e-12, equal_nan=True, err_msg=what)
            np.testing.assert_allclose(g0, g1, rtol=1e-12, equal_nan=True, err_msg=what)
            assert (w0, n0) == (w1, n1), what


SCANS = [
    pytest.param(r, id=r.torch.name or r.name) for r in reduction_rows() if r.numpy == "cumulative"
]


@pytest.mark.parametrize("row", SCANS)
def test_cumulative_forms_as_pytorch(real_torch, row):
    """``cumsum``/``cumprod``: values, dtypes (int64 for bools and integers) or exception
    types on a dtype x shape x ``dim`` x ``dtype=`` grid; the method and in-place forms."""
    name = row.torch.name or row.name
    rng = np.random.default_rng(11)
    for dtype, shape in itertools.product(DTYPES, SHAPES):
        seed = int(rng.integers(1 << 30))
        x = [
            random_tensor(lib, np.random.default_rng(seed), shape, dtype)
            for lib in (ctorch, real_torch)
        ]
        for dim, kw in itertools.product(
            (0, -1, len(shape) + 1, None, (0,)), ({}, {"dtype": "float64"}, {"dtype": "int32"})
        ):
            if dtype == "complex64" and kw:
                continue  # (PyTorch warns that the imaginary part is discarded)
            what = f"{name}({dtype}{list(shape)}, dim={dim}, {kw})"
            got, want = (
                _call(
                    lambda a, d, _k, **k: getattr(lib, name)(a, d, **k),
                    xi,
                    dim,
                    None,
                    {k: getattr(lib, v) for k, v in kw.items()},
                )
                for lib, xi in zip((ctorch, real_torch), x)
            )
            _same(got, want, what)
            if isinstance(want, type) or kw:
                continue
            method = _call(lambda a, d, _k: getattr(a, name)(d), x[0], dim, None, {})
            _same(method, want, what + " method")
            inplaced = [
                _call(lambda a, d, _k: getattr(a.clone(), name + "_")(d), xi, dim, None, {})
                for xi in x
            ]
            _same(*inplaced, what + " in place")


NAN_ROWS = [pytest.param(r, id=r.torch.name or r.name) for r in reduction_rows() if r.nan]


@pytest.mark.parametrize("row", NAN_ROWS)
def test_nan_forms_as_pytorch(real_torch, row):
    """``nansum``/``nanmean`` of tensors holding NaNs (a row of NaNs only): values, nodes and
    gradients, with and without ``dim``."""
    name = row.torch.name or row.name
    nan = float("nan")
    value = [[1.5, nan, -2.0, 0.5], [nan, nan, nan, nan], [3.0, 1.0, nan, 2.0]]
    for args in ((), (1,), (0, True), ((0, 1),)):
        got = []
        for lib in (ctorch, real_torch):
            x = lib.tensor(value, dtype=lib.float64, requires_grad=True)
            y = getattr(lib, name)(x, *args)
            (y * y).sum().backward()
            got.append((y.grad_fn.name(), np.asarray(y.tolist()), np.asarray(x.grad.tolist())))
        assert got[0][0] == got[1][0], (name, args)
        (_, v0, g0), (_, v1, g1) = got
        np.testing.assert_allclose(v0, v1, rtol=1e-12, equal_nan=True, err_msg=f"{name}{args}")
        # (where PyTorch's gradient is NaN: an all-NaN slice's NaN mean sends a NaN back, which
        # PyTorch's nansum multiplies by its 0 mask; compat's, funcgrad's and JAX's select
        # give 0 there)
        pytorch_nan = np.isnan(g1)
        assert (g0[pytorch_nan] == 0).all(), (name, args)
        np.testing.assert_allclose(g0[~pytorch_nan], g1[~pytorch_nan], rtol=1e-12)
