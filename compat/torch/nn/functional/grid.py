"""``nn.functional.affine_grid`` and ``grid_sample``: spatial-transformer sampling.

Each is one compat op (``AffineGridGeneratorBackward0``, ``GridSampler2DBackward0`` /
``GridSampler3DBackward0``) over a pure array function, so the gradients with respect
to ``theta``, ``input`` and ``grid`` come from funcgrad's autodiff. Sampling is
vectorised: per spatial axis a few taps (index, weight, in-range mask), and for every
combination of taps one gather of the flattened input; out-of-range taps read zero.
Coordinates follow PyTorch's CPU kernels: unnormalisation, clipping and reflection in
the input's precision, a clipped coordinate lying on the border gets no gradient, and
``nearest`` rounds half to even.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core import dtypes as _dt
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor

_A = -0.75  # the cubic convolution constant PyTorch uses
_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
_DEFAULT_ALIGN = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details."
)


# --- affine_grid -------------------------------------------------------------------------


def _linspace(n: int, align: bool, dt: Any) -> np.ndarray:
    """PyTorch's ``linspace_from_neg_one`` in precision ``dt``: -1..1 over ``n`` steps,
    shrunk to pixel centres without ``align_corners`` (a single step is 0)."""
    if n <= 1:
        return np.zeros(1, dt)
    step = dt(2) / dt(n - 1)
    i = np.arange(n)
    half = n // 2
    r = np.where(i < half, dt(-1) + step * i.astype(dt), dt(1) - step * (n - 1 - i).astype(dt))
    r = r.astype(dt)
    if not align:
        r = (r * dt(n - 1) / dt(n)).astype(dt)
    return r


def _base_grid(spatial: tuple[int, ...], align: bool, dt: Any) -> np.ndarray:
    """``(prod(spatial), k + 1)`` homogeneous pixel coordinates, x (last axis) first."""
    axes = [_linspace(n, align, dt) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)]
    cols.append(np.ones(math.prod(spatial), dt))
    return np.stack(cols, axis=1)


def _affine_grid_f(theta: Any, *, spatial: tuple[int, ...], align: bool) -> Any:
    base = _base_grid(spatial, align, np.dtype(theta.dtype).type)
    out = fnp.matmul(base, fnp.swapaxes(theta, 1, 2))
    return out.reshape((theta.shape[0], *spatial, len(spatial)))


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """Sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of the affine maps
    ``theta`` ``(N, 2, 3)`` (or ``(N, 3, 4)``) for an output of ``size``, in
    ``grid_sample``'s normalised coordinates.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> F.affine_grid(theta, (1, 1, 2, 3), align_corners=False).shape
        torch.Size([1, 2, 3, 2])
    """
    if align_corners is None:
        warnings.warn(_DEFAULT_ALIGN, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                f"Got {theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                f"Got {theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}."
        )
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.",
            UserWarning,
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    dims = []
    for pos, s in enumerate(size, 1):
        try:
            dims.append(operator.index(s))
        except TypeError:
            raise TypeError(
                "affine_grid_generator(): argument 'size' failed to unpack the object at pos "
                f'{pos} with error "type must be tuple of ints,but got {type(s).__name__}"'
            ) from None
    if theta.shape[0] != dims[0]:
        k1 = theta.shape[-1]
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{dims[0]}, {k1}] but got: [{theta.shape[0]}, {k1}]."
        )
    static = (("spatial", tuple(dims[2:])), ("align", bool(align_corners)))
    return apply(_affine_grid_f, "AffineGridGeneratorBackward0", (theta,), static)


# --- grid_sample -------------------------------------------------------------------------


def _keep_inside(c: Any, n: int, vec: bool) -> Any:
    """Clip to ``[0, n - 1]``; a clipped or border value has no gradient. NaN goes to 0
    in PyTorch's vectorised 2-D kernel, to ``n - 1`` in its scalar 3-D kernel."""
    if not vec:
        c = fnp.where(fnp.isnan(c), n - 1, c)
    c = fnp.where(c > 0, c, 0)
    return fnp.where(c < n - 1, c, n - 1)


def _reflect(c: Any, n: int, align: bool) -> Any:
    """Reflect about the borders (pixel centres or pixel edges) until inside."""
    if align and n <= 1:
        return fnp.zeros_like(c)
    low = 0.0 if align else -0.5
    twice_span = 2.0 * (n - 1) if align else 2.0 * n
    d = c - low
    d = fnp.where(d < 0, -d, d)
    extra = d - fnp.trunc(d / twice_span) * twice_span
    flipped = twice_span - extra
    return fnp.where(extra > flipped, flipped, extra) + low


def _pad(c: Any, n: int, padding: str, align: bool, vec: bool) -> Any:
    if padding == "border":
        return _keep_inside(c, n, vec)
    if padding == "reflection":
        return _keep_inside(_reflect(c, n, align), n, vec)
    return c


def _unnormalize(g: Any, n: int, align: bool, vectorised: bool) -> Any:
    """Normalised [-1, 1] to pixel coordinates, in the arithmetic order of PyTorch's
    vectorised 2-D kernel or its scalar 3-D kernel."""
    if vectorised:
        return (g + 1) * ((n - 1) / 2) if align else (g + 1) * (n / 2) - 0.5
    return (g + 1) / 2 * (n - 1) if align else ((g + 1) * n - 1) / 2


def _cubic_weights(t: Any) -> Any:
    """The four cubic-convolution weights of taps ``-1, 0, 1, 2`` at fraction ``t``."""

    def near(x: Any) -> Any:  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x: Any) -> Any:  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return fnp.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], axis=1)


def _taps(g: Any, n: int, mode: str, padding: str, align: bool, vec: bool) -> tuple:
    """One axis's taps for normalised coordinates ``g`` ``(N, Q)``: pixel indices, weights
    (``None`` for ``nearest``) and in-range masks, each ``(N, T, Q)``."""
    if mode == "bicubic":
        c = _unnormalize(g, n, align, vec)
        lo = fnp.floor(c)
        w = _cubic_weights(c - lo)
        idx = _pad(lo[:, None, :] + np.arange(-1.0, 3.0)[:, None], n, padding, align, vec)
    else:
        c = _pad(_unnormalize(g, n, align, vec), n, padding, align, vec)
        if mode == "nearest":
            idx, w = fnp.round(c)[:, None, :], None
        else:
            lo = fnp.floor(c)
            frac = c - lo
            idx = lo[:, None, :] + np.arange(2.0)[:, None]
            w = fnp.stack([1 - frac, frac], axis=1)
    return idx, w, (idx >= 0) & (idx <= n - 1)


def _grid_sample_f(inp: Any, grid: Any, *, mode: str, padding: str, align: bool) -> Any:
    n, c = inp.shape[:2]
    spatial = inp.shape[2:]
    k = len(spatial)
    out_spatial = grid.shape[1:-1]
    q = math.prod(out_spatial)
    g = grid.reshape((n, q, k))
    off = weight = ok = None
    for d in range(k):  # taps of axis d along axis 1 + d; grid lists x (the last axis) first
        idx, w, okd = _taps(g[:, :, k - 1 - d], spatial[d], mode, padding, align, k == 2)
        shape = (n,) + (1,) * d + (idx.shape[1],) + (1,) * (k - 1 - d) + (q,)
        o = (fnp.where(okd, idx, 0).astype(np.int32) * math.prod(spatial[d + 1 :])).reshape(shape)
        off = o if off is None else off + o
        ok = okd.reshape(shape) if ok is None else ok & okd.reshape(shape)
        if w is not None:
            weight = w.reshape(shape) if weight is None else weight * w.reshape(shape)
    taps = math.prod(off.shape[1:-1])
    flat = inp.reshape((n, c, math.prod(spatial)))
    vals = fnp.take_along_axis(flat, off.reshape((n, 1, taps * q)), axis=2)
    vals = vals.reshape((n, c, taps, q))
    ok = ok.reshape((n, 1, taps, q))
    if weight is None:
        return fnp.where(ok, vals, 0).reshape((n, c, *out_spatial))
    weight = weight.reshape((n, 1, taps, q))
    if k == 2:  # a zero read times the weight (NaN for a NaN location), as the 2-D kernel
        vals = fnp.where(ok, vals, 0) * weight
    else:  # out-of-range taps are skipped, as the 3-D kernel
        vals = fnp.where(ok, vals * weight, 0)
    vals = vals.sum(axis=2)
    return vals.reshape((n, c, *out_spatial))


def _check_tensor(value: Any, arg: str, pos: int) -> None:
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            f"grid_sampler(): argument '{arg}' (position {pos}) must be Tensor, "
            f"not {type(value).__name__}"
        )


def check_shapes(input: Tensor, grid: Tensor, mode: str, want: int | None = None) -> None:
    """PyTorch's ``grid_sampler`` checks, in its order (``want``: the number of dimensions
    ``grid_sampler_2d``/``_3d`` require; ``grid_sampler`` takes 4 or 5)."""
    ins, gs = list(input.shape), list(grid.shape)
    k = input.dim() - 2
    if ins[0] != gs[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but got input "
            f"with sizes {ins} and grid with sizes {gs}"
        )
    if grid.shape[-1] != k:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {k} in last dimension, but got grid "
            f"with sizes {gs}"
        )
    for i in range(2, input.dim()):
        if ins[i] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {ins} with dimension {i} being empty"
            )
    want = want or (4 if input.dim() == 4 else 5)
    if input.dim() != want or grid.dim() != want:
        raise RuntimeError(
            f"grid_sampler(): expected {want}D input and grid with same number of "
            f"dimensions, but got input with sizes {ins} and grid with sizes {gs}"
        )
    if mode == "bicubic" and want == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``) at the normalised
    locations ``grid`` ``(N, H_out, W_out, 2)`` (or ``(..., 3)``), with ``bilinear``,
    ``nearest`` or (4-D) ``bicubic`` interpolation and ``zeros``, ``border`` or
    ``reflection`` padding.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> x = torch.arange(4.0).reshape(1, 1, 2, 2)
        >>> F.grid_sample(x, torch.zeros(1, 1, 1, 2), align_corners=False)
        tensor([[[[1.5000]]]])
    """
    if mode not in _MODES:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or "
            f"'bicubic', but got: '{mode}'"
        )
    if padding_mode not in _PADDINGS:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
            f"'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_DEFAULT_ALIGN, UserWarning, stacklevel=2)
        align_corners = False
    _check_tensor(input, "input", 1)
    _check_tensor(grid, "grid", 2)
    if not isinstance(align_corners, bool):
        raise TypeError(
            "grid_sampler(): argument 'align_corners' (position 5) must be bool, not "
            f"{type(align_corners).__name__}"
        )
    check_shapes(input, grid, mode)
    dim = input.dim() - 2
    if not input.is_floating_point() or input.is_complex():
        kernel = "grid_sampler_2d_cpu_kernel_impl" if dim == 2 else "grid_sampler_3d_cpu"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_dt.scalar_type_name(input._npdtype)}'"
        )
    if grid.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {_dt.scalar_type_name(input._npdtype)} but found "
            f"{_dt.scalar_type_name(grid._npdtype)}"
        )
    static = (("mode", mode), ("padding", padding_mode), ("align", align_corners))
    return apply(_grid_sample_f, f"GridSampler{dim}DBackward0", (input, grid), static)


#: PyTorch's enum values of the modes, what its private ``torch.grid_sampler*`` functions
#: take (``F.GRID_SAMPLE_INTERPOLATION_MODES``, ``F.GRID_SAMPLE_PADDING_MODES``)
GRID_SAMPLE_INTERPOLATION_MODES = _MODES
GRID_SAMPLE_PADDING_MODES = _PADDINGS
