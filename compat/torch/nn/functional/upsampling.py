"""``nn.functional.interpolate`` (nearest, nearest-exact, linear, bilinear, bicubic,
trilinear, area), the deprecated ``upsample*`` forms, and ``pixel_shuffle``/``pixel_unshuffle``.

Every mode is separable: along each spatial axis the output is a constant ``(out, in)``
matrix (built with NumPy from PyTorch's source-index rules) times the input, so one compat
op applies one matrix per axis and the gradient is the transposed matrices, as PyTorch's
backward kernels compute. Index arithmetic follows PyTorch's precision (``float32`` for
``nearest``, the input's float type for the interpolating modes) so the same source pixels
are picked.
"""

from __future__ import annotations

import functools
import math
import operator
import warnings
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core.tensor import apply
from compat.torch.nn import _fused
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _TENSOR_TYPE
from compat.torch.nn.functional.pooling import _adaptive_matrix
from funcgrad._compat_contract import compile_cache

_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
_MODE_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_A = -0.75  # the cubic convolution constant PyTorch uses


def _scale(n_in: int, n_out: int, scale: float | None, align: bool, dt: Any) -> Any:
    """PyTorch's ``area_pixel_compute_scale`` in precision ``dt``."""
    if align:
        return dt((n_in - 1) / (n_out - 1)) if n_out > 1 else dt(0)
    if scale is not None and scale > 0:
        return dt(1.0 / scale)
    return dt(n_in) / dt(n_out)


def _nearest_matrix(n_in: int, n_out: int, scale: float | None, exact: bool) -> np.ndarray:
    s = _scale(n_in, n_out, scale, False, np.float32)
    dst = np.arange(n_out, dtype=np.float32)
    if exact:  # a float64 product rounded to float32, as PyTorch's kernel computes it
        prod = ((np.arange(n_out) + 0.5) * np.float64(s)).astype(np.float32)
        src = np.floor(prod).astype(np.int64)
    elif n_out == n_in:
        src = np.arange(n_out)
    elif n_out == 2 * n_in:
        src = np.arange(n_out) >> 1
    else:
        src = np.floor(dst * s).astype(np.int64)
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), np.minimum(src, n_in - 1)] = 1.0
    return m


def _source(n_in: int, n_out: int, scale: float | None, align: bool, cubic: bool, dt: Any):
    s = _scale(n_in, n_out, scale, align, dt)
    if align:
        return s * np.arange(n_out, dtype=dt)
    # PyTorch: scale * (dst + 0.5) - 0.5 in double, rounded to the input's float type
    src = (np.float64(s) * (np.arange(n_out) + 0.5) - 0.5).astype(dt)
    return src if cubic else np.maximum(src, dt(0))


def _linear_matrix(n_in: int, n_out: int, scale: float | None, align: bool, dt: Any):
    src = _source(n_in, n_out, scale, align, False, dt)
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    lam = np.clip(src - i0.astype(dt), 0, 1)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    np.add.at(m, (rows, i0), (dt(1) - lam).astype(np.float64))
    np.add.at(m, (rows, i1), lam.astype(np.float64))
    return m


def _cubic_matrix(n_in: int, n_out: int, scale: float | None, align: bool, dt: Any):
    src = _source(n_in, n_out, scale, align, True, dt)
    i = np.floor(src).astype(np.int64)
    t = np.clip(src - i.astype(dt), 0, 1).astype(np.float64)

    def near(x: np.ndarray) -> np.ndarray:  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    for j, w in enumerate(weights):
        np.add.at(m, (rows, np.clip(i - 1 + j, 0, n_in - 1)), w)
    return m


def _area_matrix(n_in: int, n_out: int) -> np.ndarray:
    m = _adaptive_matrix(n_in, n_out)
    return m / m.sum(axis=1, keepdims=True)


@compile_cache.register_lru_kind("resampling_matrices")
@functools.lru_cache(maxsize=256)
def _axis_matrix(mode: str, n: int, o: int, s: float | None, align: bool, dt: Any) -> _Key:
    """One axis's resampling matrix, cached (a model resamples the same sizes every step)."""
    if mode in ("nearest", "nearest-exact"):
        m = _nearest_matrix(n, o, s, mode == "nearest-exact")
    elif mode == "area":
        m = _area_matrix(n, o)
    elif mode == "bicubic":
        m = _cubic_matrix(n, o, s, align, dt)
    else:
        m = _linear_matrix(n, o, s, align, dt)
    return _Key(m)


@_fused.opmath  # (float16/bfloat16: accumulated in float32, as PyTorch's kernels)
def _interp_f(x: Any, *, mats: tuple[Any, ...]) -> Any:
    nd = len(mats)
    for i, m in enumerate(mats):
        axis = x.ndim - nd + i
        mat = np.asarray(m, dtype=x.dtype)
        x = fnp.moveaxis(fnp.tensordot(mat, x, axes=([1], [axis])), 0, axis)
    return x


class _Key:
    """A hashable wrapper of a constant matrix (static arguments must be hashable)."""

    def __init__(self, m: np.ndarray) -> None:
        self.m = m
        self._key = (m.shape, m.tobytes())

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self._key == other._key

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.m if dtype is None else self.m.astype(dtype)


def _spatial_list(name: str, value: Any, dim: int, input: Tensor) -> list:
    if isinstance(value, (tuple, list)):
        if len(value) != dim:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                f"{list(value) if name == 'size' else value}. Please provide input tensor in "
                "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
            )
        return list(value)
    return [value] * dim


def _int_sizes(sizes: list) -> list[int]:
    """The output sizes as ints; PyTorch's ``TypeError`` for floats (or float tensors)."""
    try:
        return [operator.index(s) for s in sizes]
    except TypeError:
        types = ", ".join(str(type(s)).replace("compat._core.tensor", "torch") for s in sizes)
        raise TypeError(
            "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
            f"Tuple[int, int, int], but got size with types [{types}]"
        ) from None


def interpolate(
    input: Tensor,
    size: int | tuple[int, ...] | None = None,
    scale_factor: float | tuple[float, ...] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize the spatial dimensions of an ``(N, C, d1, ..., dK)`` input (``K`` = 1, 2, 3)
    to ``size`` or by ``scale_factor`` with PyTorch's sampling rules.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> F.interpolate(torch.arange(4.0).reshape(1, 1, 2, 2), scale_factor=2).shape
        torch.Size([1, 1, 4, 4])
    """
    if not isinstance(input, torch.Tensor):
        raise TypeError(
            f"interpolate(): argument 'input' must be Tensor, not {type(input).__name__}"
        )
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales: list | None = None
    if size is not None:
        out = _int_sizes(_spatial_list("size", size, dim, input))
    elif scale_factor is not None:
        scales = [float(s) for s in _spatial_list("scale_factor", scale_factor, dim, input)]
        out = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute_scale_factor = True
    if antialias:
        raise NotImplementedError("compat interpolate does not support antialias=True")
    known = ("nearest", "nearest-exact", "area", *_MODE_DIMS)
    if input.dim() not in (3, 4, 5) or mode not in known:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
            f"the modes: {_MODES} (got {mode})"
        )
    if mode in _MODE_DIMS and input.dim() != _MODE_DIMS[mode]:
        raise NotImplementedError(
            f"Got {input.dim()}D input, but {mode} mode needs {_MODE_DIMS[mode]}D input"
        )
    in_sizes = list(input.shape[2:])
    if out is None:
        out = [math.floor(float(n) * s) for n, s in zip(in_sizes, scales)]
        if recompute_scale_factor:
            scales = None
    if scales is None:
        scales = [None] * dim
    if any(o <= 0 for o in out) or any(n <= 0 for n in in_sizes):
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input ({in_sizes}) "
            f"and output ({out})"
        )
    integer = not input.is_floating_point()
    if integer and (input.dtype != torch.uint8 or mode not in ("nearest", "nearest-exact")):
        base = "nearest" if mode.startswith("nearest") else mode
        kernel = f"upsample_{base}{dim}d" if mode != "bicubic" else "compute_indices_weights_cubic"
        name = _TENSOR_TYPE.get(str(input.dtype).removeprefix("torch."), str(input.dtype))
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")
    if integer:  # uint8 nearest: one-hot rows, exact in float64
        as_float = interpolate(input.to(torch.float64), out, None, mode)
        return as_float.to(input.dtype)
    dt = np.float64 if input.dtype == torch.float64 else np.float32
    mats = [
        _axis_matrix(mode, n, o, s, bool(align_corners), dt)
        for n, o, s in zip(in_sizes, out, scales)
    ]
    name = {
        "nearest": f"UpsampleNearest{dim}DBackward0",
        "nearest-exact": f"UpsampleNearestExact{dim}DBackward0",
        "area": f"AdaptiveAvgPool{dim}DBackward0",
        "linear": "UpsampleLinear1DBackward0",
        "bilinear": "UpsampleBilinear2DBackward0",
        "bicubic": "UpsampleBicubic2DBackward0",
        "trilinear": "UpsampleTrilinear3DBackward0",
    }[mode]
    return apply(_interp_f, name, (input,), (("mats", tuple(mats)),))


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated alias of :func:`interpolate` (warns, as PyTorch)."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _shuffle_f(x: Any, *, r: int, inverse: bool) -> Any:
    lead = x.shape[:-3]
    c, h, w = x.shape[-3:]
    k = len(lead)
    if not inverse:  # (*, C r², H, W) -> (*, C, H r, W r)
        y = fnp.reshape(x, lead + (c // (r * r), r, r, h, w))
        y = fnp.transpose(y, tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
        return fnp.reshape(y, lead + (c // (r * r), h * r, w * r))
    y = fnp.reshape(x, lead + (c, h // r, r, w // r, r))
    y = fnp.transpose(y, tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return fnp.reshape(y, lead + (c * r * r, h // r, w // r))


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C r², H, W)`` into ``(*, C, H r, W r)``."""
    r = operator.index(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    return apply(_shuffle_f, "PixelShuffleBackward0", (input,), (("r", r), ("inverse", False)))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H r, W r)`` into ``(*, C r², H, W)``."""
    r = operator.index(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for axis, what in ((-2, "height"), (-1, "width")):
        if input.shape[axis] % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {what} to be divisible by downscale_factor, but "
                f"input.size({axis})={input.shape[axis]} is not divisible by {r}"
            )
    return apply(_shuffle_f, "PixelUnshuffleBackward0", (input,), (("r", r), ("inverse", True)))


def _channel_shuffle_f(x: Any, *, groups: int) -> Any:
    n, c = x.shape[0], x.shape[1]
    rest = tuple(x.shape[2:])
    y = fnp.reshape(x, (n, groups, c // groups) + rest)
    return fnp.reshape(fnp.swapaxes(y, 1, 2), x.shape)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channel groups of ``(N, C, *)``: ``(N, g, C/g, *)`` transposed to
    ``(N, C/g, g, *)`` (ShuffleNet's channel shuffle)."""
    g = operator.index(groups)
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(input.shape)}"
        )
    if g <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{g}"
        )
    c = input.shape[1]
    if c % g:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {g} groups."
        )
    return apply(_channel_shuffle_f, "CloneBackward0", (input,), (("groups", g),))


def _no_native_channel_shuffle_derivative(grad: Tensor) -> None:
    raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle``'s values, PyTorch's kernel-level form: it has no derivative
    (backward through its result raises, as PyTorch's)."""
    out = channel_shuffle(input, groups)
    if out.requires_grad:
        out.register_hook(_no_native_channel_shuffle_derivative)
    return out
