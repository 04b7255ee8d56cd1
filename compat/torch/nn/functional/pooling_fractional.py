"""``nn.functional.fractional_max_pool2d``/``3d`` (and ``..._with_indices``): max pooling
over pseudo-random, overlapping windows (Graham, 2014) whose starts PyTorch derives from
one uniform sample per (batch, channel, dimension).

The starts along a dimension of input size ``n``, output size ``m`` and window ``k``
are ``floor((i + u) a) - floor(u a)`` for ``i < m - 1`` with ``a = (n - k) / (m - 1)``,
and ``n - k`` for the last, computed in the sample's dtype as PyTorch's kernels are (the
truncations then agree). The windows are gathered from the flattened planes, so the
values, the indices (flat within a plane) and the gradient (to each window's maximum)
are those of PyTorch.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

import compat.torch as torch
from compat.torch.nn.functional._arguments import Tensor

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(value: Any, nd: int) -> tuple:
    return tuple(value) if isinstance(value, Sequence) else (value,) * nd


def _sizes(value: Any, nd: int, what: str) -> tuple:
    """``kernel_size`` or ``output_size``: one int, or exactly ``nd`` (PyTorch's error)."""
    t = _tuple(value, nd)
    if len(t) != nd:
        ints = "Ints" if nd == 2 else "three Ints"
        raise RuntimeError(
            f"fractional_max_pool{nd}d: {what} must either be a single Int or tuple of {ints}"
        )
    return tuple(int(v) for v in t)


def _check_samples(samples: Tensor, n: int, c: int, nd: int) -> None:
    """PyTorch's checks of ``_random_samples`` (``N' x C x nd``, ``N' >= N``)."""
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}."
        )


def _starts(u: np.ndarray, n: int, m: int, k: int) -> np.ndarray:
    """The window starts for samples ``u`` (any shape): shape ``u.shape + (m,)``."""
    dt = u.dtype.type
    out = np.empty((*u.shape, m), np.int64)
    if m > 1:
        alpha = dt(n - k) / dt(m - 1)
        i = np.arange(m - 1, dtype=u.dtype)
        first = ((i + u[..., None]) * alpha).astype(np.int64)
        out[..., :-1] = first - (u * alpha).astype(np.int64)[..., None]
    if m > 0:
        out[..., -1] = n - k
    return out


def _pool(
    nd: int,
    input: Tensor,
    kernel_size: Any,
    output_size: Any,
    output_ratio: Any,
    samples: Tensor | None,
) -> tuple[Tensor, Tensor]:
    name = f"fractional_max_pool{nd}d"
    who = f"{name}()" if nd == 2 else f"{name}_out()"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    spatial = tuple(input.shape[-nd:])
    if output_size is None:
        if nd == 2 and isinstance(output_ratio, Sequence) and len(output_ratio) > 2:
            raise ValueError(
                f"{name} requires output_ratio to either be a single Int or tuple of Ints."
            )
        ratio = _tuple(output_ratio, nd)
        output_size = [int(s * r) for s, r in zip(spatial, ratio)]
    kernel = _sizes(kernel_size, nd, "kernel_size")
    out_size = _sizes(output_size, nd, "output_size")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}"
        )
    batched = input.dim() == nd + 2
    for i in range(1, input.dim()):  # (PyTorch checks from dimension 1, batched or not)
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{who}: Expected input to have non-zero size for non-batch dimensions, but "
                f"got{list(input.shape)} with dimension {i} being empty."
            )
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if samples is None:
        samples = torch.rand(n, c, nd, dtype=input.dtype)
    _check_samples(samples, n, c, nd)
    for axis, size, o, k in zip(_AXES[nd], spatial, out_size, kernel):
        if o + k - 1 > size:
            raise RuntimeError(f"{who}: pool {axis} {k} too large relative to input {axis} {size}")
    u = samples.detach().numpy()[:n]  # (PyTorch reads the first ``N`` rows)
    # PyTorch's sample order: (width, height) in 2-D, (time, height, width) in 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_starts(u[..., order[d]], spatial[d], out_size[d], kernel[d]) for d in range(nd)]
    # flat in-plane index of every window element: (N, C, *out_size, prod(kernel))
    strides = np.cumprod((1, *spatial[::-1]))[:-1][::-1]
    flat = np.zeros((n, c, *out_size, int(np.prod(kernel))), np.int64)
    for j, offs in enumerate(itertools.product(*(range(k) for k in kernel))):
        for d in range(nd):
            shape = [n, c] + [1] * nd
            shape[2 + d] = out_size[d]
            flat[..., j] += (starts[d] + offs[d]).reshape(shape) * strides[d]
    # (explicit sizes, not -1: an empty batch has no size to infer)
    idx = torch.tensor(flat.reshape(n, c, int(np.prod(flat.shape[2:]))))
    windows = x.reshape(n, c, int(np.prod(spatial))).gather(2, idx).reshape(*flat.shape)
    values, arg = windows.max(dim=-1)
    indices = torch.tensor(flat).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if not batched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def fractional_max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """2-D fractional max pooling of ``(N, C, H, W)`` or ``(C, H, W)``: the values and
    their flat indices in each ``H * W`` plane."""
    return _pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """2-D fractional max pooling (``output_size`` or ``output_ratio`` gives the output's
    height and width); the indices too with ``return_indices=True``."""
    out = _pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """3-D fractional max pooling of ``(N, C, T, H, W)`` or ``(C, T, H, W)``: the values
    and their flat indices in each ``T * H * W`` volume."""
    return _pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: Any,
    output_size: Any = None,
    output_ratio: Any = None,
    return_indices: bool = False,
    _random_samples: Tensor | None = None,
) -> Any:
    """3-D fractional max pooling; the indices too with ``return_indices=True``."""
    out = _pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return out if return_indices else out[0]
