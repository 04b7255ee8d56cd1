"""``quantile``/``nanquantile`` against real PyTorch 2.13 with NaN inputs: a row holding
a NaN gives NaN and its gradient goes to the NaN element (compat's gave zero gradients,
JAX's convention of a constant NaN); ``nanquantile`` of an all-NaN row sends it to the
first NaN. Values and gradients of rows without NaNs are checked too (every method, a
``q`` vector, ``dim=None``, ``keepdim``)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import compat.torch as ct

torch = pytest.importorskip("torch")

METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


def _run(m: object, v: np.ndarray, q: object, nan: bool, **kw: object) -> tuple:
    a = m.tensor(v).requires_grad_()
    qq = m.tensor(q, dtype=a.dtype) if isinstance(q, list) else q
    r = (m.nanquantile if nan else m.quantile)(a, qq, **kw)
    g = m.autograd.grad(r, a, m.ones_like(r) * 1.5)[0]
    return r.detach().numpy(), g.numpy()


def _check(v: np.ndarray, q: object, nan: bool, **kw: object) -> None:
    (r0, g0), (r1, g1) = _run(torch, v, q, nan, **kw), _run(ct, v, q, nan, **kw)
    assert r1.shape == r0.shape
    np.testing.assert_allclose(r1, r0, rtol=1e-12, atol=0, equal_nan=True)
    np.testing.assert_array_equal(g1 != 0, g0 != 0)  # (the elements it goes to)
    np.testing.assert_allclose(g1, g0, rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    ("dim", "keepdim", "method", "nan"),
    list(itertools.product([None, 0, 1, -1], [False, True], METHODS, [False, True])),
)
@pytest.mark.parametrize("q", [0.3, [0.0, 0.25, 0.5, 0.9, 1.0]])
def test_rows_with_one_nan(dim, keepdim, method, nan, q):
    """At most one NaN a row (PyTorch's sort orders several NaNs as it happens to)."""
    rng = np.random.default_rng(0)
    v = rng.standard_normal((3, 4, 5))
    if dim is None:
        v = v[:1, :2]  # (one row of 10: one NaN in it)
        v[0, 1, 3] = np.nan
    else:
        m = np.moveaxis(v, dim, -1)
        m[..., 2][rng.uniform(size=m.shape[:-1]) < 0.5] = np.nan
    _check(v, q, nan, dim=dim, keepdim=keepdim, interpolation=method)


@pytest.mark.parametrize("method", METHODS)
def test_nanquantile_all_nan_row(method):
    v = np.random.default_rng(1).standard_normal((3, 6))
    v[1] = np.nan
    _check(v, [0.2, 0.7], True, dim=1, interpolation=method)
    _check(np.full(5, np.nan), 0.4, True, interpolation=method)


def test_several_nans_gradient_on_a_nan():
    """Several NaNs in a row: the whole gradient on one NaN element (which one is
    PyTorch's sort's choice)."""
    v = np.random.default_rng(2).standard_normal((4, 30))
    v[:, [3, 17, 25]] = np.nan
    r, g = _run(ct, v, 0.6, False, dim=1)
    assert np.isnan(r).all()
    np.testing.assert_array_equal(g.sum(1), [1.5] * 4)
    assert (g[~np.isnan(v)] == 0).all()
    _, g0 = _run(torch, v, 0.6, False, dim=1)
    np.testing.assert_array_equal(g.sum(1), g0.sum(1))
