"""compat ``F.affine_grid`` and ``F.grid_sample`` against real PyTorch: values, gradients
with respect to ``input``, ``grid`` and ``theta``, ``grad_fn`` names, warnings and errors.

Grids mix random locations with exact lattice points (pixel centres, half-pixel ties for
``nearest``, the borders where clipping cuts the gradient) and locations far outside
``[-1, 1]`` (several reflections). Shapes are shared between tests so that each compat
program compiles once.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch
import compat.torch.nn.functional as F

MODES_2D = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]
IN_2D, GRID_2D = (2, 3, 4, 8), (2, 5, 6, 2)
IN_3D, GRID_3D = (2, 2, 3, 4, 2), (2, 2, 3, 4, 3)


def _grid(shape: tuple, spatial: tuple, align: bool, dt, seed: int) -> np.ndarray:
    """Random locations in [-1.6, 1.6], with a third of them replaced by lattice points of
    the input's pixel grid (integers, halves, borders, far outside)."""
    rng = np.random.default_rng(seed)
    g = rng.uniform(-1.6, 1.6, shape)
    pix = np.array([0.0, 0.5, 1.0, 1.5, 2.5, -0.5, -1.0, -3.5, 7.0, 9.5, 13.0])
    flat = g.reshape(-1, shape[-1])
    lattice = rng.random(flat.shape[0]) < 0.35
    for j, n in enumerate(reversed(spatial)):  # grid lists x (the last axis) first
        x = rng.choice(np.concatenate([pix, [n - 1.0, n - 1.5, n - 0.5]]), flat.shape[0])
        norm = 2 * x / (n - 1) - 1 if align else (2 * x + 1) / n - 1
        flat[lattice, j] = norm[lattice]
    return flat.reshape(shape).astype(dt)


def _run_both(rt, x, g, gout, **kw):
    """Forward and backward on both libraries: (output, d input, d grid, grad_fn name)."""
    res = []
    for lib, fn in ((rt, rt.nn.functional.grid_sample), (torch, F.grid_sample)):
        xi = lib.tensor(x, requires_grad=True)
        gi = lib.tensor(g, requires_grad=True)
        out = fn(xi, gi, **kw)
        (out * lib.tensor(gout)).sum().backward()
        res.append((npv(out), npv(xi.grad), npv(gi.grad), out.grad_fn.name()))
    return res


def _compare(rt, in_shape, grid_shape, dt, tol, seed=0, **kw):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(in_shape).astype(dt)
    g = _grid(grid_shape, in_shape[2:], kw["align_corners"], dt, seed)
    gout = rng.standard_normal(in_shape[:2] + grid_shape[1:-1]).astype(dt)
    (want, *w_grads, w_name), (got, *g_grads, g_name) = _run_both(rt, x, g, gout, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    for a, b in zip(g_grads, w_grads):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, np.abs(b).max()))
    assert g_name == w_name


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES_2D)
def test_grid_sample_2d_float64(real_torch, mode, padding, align):
    _compare(real_torch, IN_2D, GRID_2D, np.float64, 1e-10, 1, mode=mode,
             padding_mode=padding, align_corners=align)  # fmt: skip


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d_float64(real_torch, mode, padding, align):
    _compare(real_torch, IN_3D, GRID_3D, np.float64, 1e-10, 2, mode=mode,
             padding_mode=padding, align_corners=align)  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "padding", "align", "dim"),
    [
        ("bilinear", "zeros", False, 2),
        ("bicubic", "reflection", True, 2),
        ("nearest", "border", False, 2),
        ("bilinear", "reflection", False, 3),
    ],
)
def test_grid_sample_float32(real_torch, mode, padding, align, dim):
    shapes = (IN_2D, GRID_2D) if dim == 2 else (IN_3D, GRID_3D)
    _compare(real_torch, *shapes, np.float32, 1e-5, 3, mode=mode, padding_mode=padding,
             align_corners=align)  # fmt: skip


@pytest.mark.parametrize("dim", [2, 3])
def test_grid_sample_non_finite_locations(real_torch, dim):
    """NaN, infinite and huge locations read what PyTorch's CPU kernels read (they differ
    between the 2-D and the 3-D kernel)."""
    special = [np.nan, np.inf, -np.inf, 1e20, -0.3, 1.0]
    rt = real_torch
    x = np.arange(2 * 60.0).reshape((1, 2, 3, 4, 5) if dim == 3 else (1, 2, 4, 15))
    pts = np.array(np.meshgrid(*[special] * dim, indexing="ij")).reshape(dim, -1).T
    g = pts.reshape((1, 6, 6, 6, 3) if dim == 3 else (1, 6, 6, 2))
    for padding in PADDINGS:
        for mode in ("bilinear", "nearest"):
            kw = dict(mode=mode, padding_mode=padding, align_corners=False)
            want = rt.nn.functional.grid_sample(rt.tensor(x), rt.tensor(g), **kw).numpy()
            got = npv(F.grid_sample(torch.tensor(x), torch.tensor(g), **kw))
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("dim", [2, 3])
def test_affine_grid_values_and_theta_grad(real_torch, dim, align):
    rt = real_torch
    rng = np.random.default_rng(4)
    size = (2, 3, 4, 8) if dim == 2 else (2, 2, 3, 4, 2)
    theta = rng.standard_normal((2, dim, dim + 1))
    gout = rng.standard_normal((*size[:1], *size[2:], dim))
    res = []
    for lib in (rt, torch):
        th = lib.tensor(theta, requires_grad=True)
        out = lib.nn.functional.affine_grid(th, size, align_corners=align)
        (out * lib.tensor(gout)).sum().backward()
        res.append((npv(out), npv(th.grad), out.grad_fn.name()))
    (want, want_g, want_name), (got, got_g, got_name) = res
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-10, atol=1e-10)
    assert got_name == want_name == "AffineGridGeneratorBackward0"


def test_affine_grid_float32_and_unit_sizes(real_torch):
    rt = real_torch
    theta = np.random.default_rng(5).standard_normal((1, 2, 3)).astype(np.float32)
    for size, align in [((1, 1, 7, 5), False), ((1, 2, 1, 3), False), ((1, 1, 1, 1), False)]:
        want = rt.nn.functional.affine_grid(rt.tensor(theta), size, align_corners=align)
        got = F.affine_grid(torch.tensor(theta), torch.Size(size), align_corners=align)
        assert got.dtype == torch.float32
        np.testing.assert_allclose(npv(got), want.numpy(), rtol=1e-6, atol=1e-6)
    with pytest.warns(UserWarning, match="unit-size grids when align_corners=True"):
        got = F.affine_grid(torch.tensor(theta), (1, 1, 1, 4), align_corners=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = rt.nn.functional.affine_grid(rt.tensor(theta), (1, 1, 1, 4), align_corners=True)
    np.testing.assert_allclose(npv(got), want.numpy(), rtol=1e-6, atol=1e-6)


def test_spatial_transformer_gradients(real_torch):
    """theta -> affine_grid -> grid_sample -> loss, as in PyTorch's STN tutorial: the
    gradient reaches theta through both ops; identity theta reproduces the input."""
    rt = real_torch
    rng = np.random.default_rng(6)
    x = rng.standard_normal(IN_2D)
    theta = np.array([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.25]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    gout = rng.standard_normal(IN_2D)
    res = []
    for lib in (rt, torch):
        th = lib.tensor(theta, requires_grad=True)
        xi = lib.tensor(x, requires_grad=True)
        grid = lib.nn.functional.affine_grid(th, IN_2D, align_corners=False)
        out = lib.nn.functional.grid_sample(xi, grid, align_corners=False)
        (out * lib.tensor(gout)).sum().backward()
        res.append((npv(out), npv(th.grad), npv(xi.grad)))
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(res[1][0][1], x[1], rtol=1e-12, atol=1e-12)


def test_default_align_corners_warns(real_torch):
    x, g = torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        out = F.grid_sample(x, g)
    assert out.shape == (1, 1, 1, 1)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.affine_grid(torch.zeros(1, 2, 3), (1, 1, 2, 2))


def test_empty_and_single_grad_paths(real_torch):
    rt = real_torch
    x = np.random.default_rng(7).standard_normal(IN_2D)
    for lib in (rt, torch):  # only the grid requires grad, and an empty output grid
        g = lib.zeros((2, 5, 6, 2), dtype=lib.float64, requires_grad=True)
        out = lib.nn.functional.grid_sample(lib.tensor(x), g, align_corners=True)
        out.sum().backward()
        assert g.grad.shape == (2, 5, 6, 2)
        e = lib.nn.functional.grid_sample(lib.zeros(2, 3, 4, 8), lib.zeros(2, 0, 6, 2),
                                          align_corners=True)  # fmt: skip
        assert tuple(e.shape) == (2, 3, 0, 6)


def _errors(lib):
    F_ = lib.nn.functional
    x4, g4 = lib.zeros(2, 3, 4, 5), lib.zeros(2, 6, 7, 2)
    x5, g5 = lib.zeros(2, 3, 4, 5, 6), lib.zeros(2, 1, 2, 3, 3)
    th = lib.zeros(2, 2, 3)
    gs = F_.grid_sample
    return [
        lambda: gs(x4, g4, mode="linear", align_corners=False),
        lambda: gs(x4, g4, padding_mode="circular", align_corners=False),
        lambda: gs(x4, lib.zeros(2, 6, 7, 3), align_corners=False),
        lambda: gs(x4, lib.zeros(3, 6, 7, 2), align_corners=False),
        lambda: gs(x4, lib.zeros(2, 6, 7, 1, 2), align_corners=False),
        lambda: gs(lib.zeros(3, 4, 5), lib.zeros(3, 6, 1), align_corners=False),
        lambda: gs(lib.zeros(2, 3, 0, 5), g4, align_corners=False),
        lambda: gs(x5, lib.zeros(2, 1, 2, 3, 2), align_corners=False),
        lambda: gs(x5, g5, mode="bicubic", align_corners=False),
        lambda: gs(x4, g4.double(), align_corners=False),
        lambda: gs(x4.long(), g4, align_corners=False),
        lambda: gs(x4, [[0.0, 0.0]], align_corners=False),
        lambda: gs(x4, g4, align_corners=1),
        lambda: F_.affine_grid(th, (2, 3, 4), align_corners=False),
        lambda: F_.affine_grid(th, (2, 3, 4, 5, 6), align_corners=False),
        lambda: F_.affine_grid(lib.zeros(2, 3, 3), (2, 3, 4, 5), align_corners=False),
        lambda: F_.affine_grid(th.long(), (2, 3, 4, 5), align_corners=False),
        lambda: F_.affine_grid(th, (2, 3, 0, 5), align_corners=False),
        lambda: F_.affine_grid(th, (3, 3, 4, 5), align_corners=False),
        lambda: F_.affine_grid(lib.zeros(1, 3, 4), (2, 3, 4, 5, 6), align_corners=False),
        lambda: F_.affine_grid(th, (2, 3, 4, 5.0), align_corners=False),
    ]


def test_errors_match_pytorch(real_torch):
    for want_fn, got_fn in zip(_errors(real_torch), _errors(torch)):
        with pytest.raises(Exception) as want:
            want_fn()
        with pytest.raises(type(want.value)) as got:
            got_fn()
        assert str(got.value) == str(want.value)
