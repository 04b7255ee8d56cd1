"""Three of PyTorch's rules, against PyTorch 2.13: ``torch.tile`` takes no ``out=``;
``torch.isin``'s ``out`` must be bool; ``torch.norm(x, p="nuc")`` is the nuclear norm of
the matrices over ``dim`` (all of a 2-D input's dimensions by default), refused as
``linalg.matrix_norm`` refuses where ``dim`` does not name two dimensions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch_oracle import npv

import compat.torch as ct

_FIXTURE_OK = [HealthCheck.function_scoped_fixture]


def _outcome(fn):
    """``("ok", result)`` or ``(exception type, message)``."""
    try:
        return "ok", fn()
    except Exception as e:  # (compared between the libraries)
        return type(e), str(e)


def test_tile_takes_no_out(real_torch):
    got = []
    for lib in (ct, real_torch):
        x = lib.ones(2, 3)
        got.append(_outcome(lambda lib=lib, x=x: lib.tile(x, (2,), out=lib.empty(2, 6))))
    assert got[0] == got[1]
    assert got[1][0] is TypeError


@pytest.mark.parametrize("out_dtype", ["bool", "float32", "int64", "uint8"])
@pytest.mark.parametrize("scalar", [False, True])
def test_isin_out_dtype_matches_pytorch(out_dtype, scalar, real_torch):
    results = []
    for lib in (ct, real_torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 2.0]])
        test = 2.0 if scalar else lib.tensor([2.0, 4.0])
        out = lib.empty(2, 3, dtype=getattr(lib, out_dtype))
        results.append((_outcome(lambda lib=lib, x=x, t=test, o=out: lib.isin(x, t, out=o)), out))
    (ours, our_out), (theirs, their_out) = results
    if theirs[0] != "ok":
        assert ours == theirs
        return
    assert ours[0] == "ok" and ours[1] is our_out
    assert our_out.dtype == ct.bool
    np.testing.assert_array_equal(npv(our_out), npv(their_out))


def _nuc(lib, a, dim, keepdim):
    x = lib.tensor(a, requires_grad=True)
    y = lib.norm(x, p="nuc", dim=dim, keepdim=keepdim)
    y.sum().backward()
    return npv(y), npv(x.grad)


@settings(max_examples=15, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(
    shape=st.sampled_from([(3, 3), (2, 4), (4, 2), (2, 3, 2)]),
    keepdim=st.booleans(),
    method=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_nuclear_norm_matches_pytorch(shape, keepdim, method, seed, real_torch):
    a = np.random.default_rng(seed).standard_normal(shape)
    dim = None if len(shape) == 2 else (-2, -1)
    if method:  # (Tensor.norm, with the same arguments)
        got = ct.tensor(a).norm(p="nuc", dim=dim, keepdim=keepdim)
        np.testing.assert_allclose(npv(got), _nuc(real_torch, a, dim, keepdim)[0], rtol=1e-10)
        return
    for o, t in zip(_nuc(ct, a, dim, keepdim), _nuc(real_torch, a, dim, keepdim)):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    ("shape", "kwargs"),
    [
        ((3,), {}),  # (fewer than 2 dimensions)
        ((2, 2, 3), {}),  # (three dimensions by default)
        ((2, 3), {"dim": 0}),
        ((2, 3), {"dim": (0, 1), "dtype": "float32"}),  # (narrowing float64)
    ],
)
def test_nuclear_norm_refusals_match_pytorch(shape, kwargs, real_torch):
    a = np.ones(shape)
    out = []
    for lib in (ct, real_torch):
        kw = dict(kwargs)
        if "dtype" in kw:
            kw["dtype"] = getattr(lib, kw["dtype"])
        out.append(_outcome(lambda lib=lib, kw=kw: lib.norm(lib.tensor(a), p="nuc", **kw)))
    assert out[0] == out[1]
    assert out[1][0] is RuntimeError


def test_nuclear_norm_dtype_widens_as_pytorch(real_torch):
    a = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    got = ct.norm(ct.tensor(a), p="nuc", dim=(0, 1), dtype=ct.float64)
    want = real_torch.norm(real_torch.tensor(a), p="nuc", dim=(0, 1), dtype=real_torch.float64)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(npv(got), npv(want), rtol=1e-12)
