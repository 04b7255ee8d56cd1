"""``nn.functional`` pooling names beyond the plain pools: ``max_unpool1d/2d/3d`` (the
inverse of max pooling with indices), the ``*_with_indices`` forms PyTorch exports and
``lp_pool1d/2d/3d`` (power-average pooling).

Unpooling scatters each input element to its flat position in the output plane (one
``MaxUnpool2DBackward0``/``MaxUnpool3DBackward0`` node; the 1-D form runs as 2-D, as
PyTorch's does). Its gradient reads the output gradient back at every index, duplicates
included, as PyTorch's backward does. ``lp_pool`` is PyTorch's composite:
``(sum over the window of x ** p) ** (1 / p)`` from an average pool.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core.tensor import apply, known_value
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _is_floating, _type_name
from compat.torch.nn.functional.activation import relu
from compat.torch.nn.functional.pooling import (
    _pool_arg,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from compat.torch.nn.functional.pooling_adaptive import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
)
from funcgrad import stop_gradient


def _unpool_f(x: Any, idx: Any, *, out: tuple[int, ...]) -> Any:

    nd = len(out)
    lead = x.shape[:-nd]
    planes = int(np.prod(lead, dtype=np.int64))
    per_plane = int(np.prod(x.shape[len(lead) :], dtype=np.int64))  # (not -1: 0 planes)
    xf = fnp.reshape(x, (planes, per_plane))
    idf = fnp.reshape(idx, (planes, per_plane)).astype(np.int64)
    size = int(np.prod(out, dtype=np.int64))
    # an index out of range (unchecked while its value is unknown) lands in a spare column
    idf = fnp.where((idf < 0) | (idf >= size), size, idf)
    rows = fnp.arange(planes)[:, None]
    zero = fnp.zeros((planes, size + 1), dtype=x.dtype)
    y = zero.at[rows, idf].set(stop_gradient(xf))  # the value: a repeated index keeps one
    added = zero.at[rows, idf].add(xf)  # the derivative: every index reads its gradient
    y = (y + (added - stop_gradient(added)))[:, :size]
    return fnp.reshape(y, tuple(lead) + tuple(out))


def _unpool_output_size(
    input: Tensor,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    output_size: Any,
) -> list[int]:
    """PyTorch's output size: the default ``(n - 1) * s + k - 2 p``, or ``output_size``
    (its last ``nd`` entries may follow a batch and channel size) within one stride of it."""
    nd = len(kernel)
    default = [
        (input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)
    ]
    if output_size is None:
        sizes = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
                f"has a length of '{len(output_size)}'"
            )
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})'
                )
        sizes = output_size
    for d in range(nd):
        if sizes[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{d}]={sizes[d]}"
            )
    return [int(s) for s in sizes]


def _unpool(
    nd: int, input: Tensor, indices: Tensor, out: list[int], values: np.ndarray | None
) -> Tensor:
    """``max_unpool2d``/``3d``'s kernel checks (in PyTorch's words, the index range where
    the ``values`` of ``indices`` are known), then the scatter."""
    if indices.dtype != torch.int64:
        raise RuntimeError(
            "elements in indices should be type int64"
            + (f" but got: {_type_name(indices)}" if nd == 2 else "")
        )
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, but got a "
            f"tensor with {input.dim()} dimensions."
        )
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have non-zero size "
                f"for non-batch dimensions, but got {list(input.shape)} with dimension {i} "
                "being empty."
            )
    if not _is_floating(input):
        raise NotImplementedError(f"\"max_unpool{nd}d\" not implemented for '{_type_name(input)}'")
    size = math.prod(out)
    if values is not None and values.size:
        values = np.asarray(values)
        bad = np.flatnonzero((values < 0) | (values >= size))
        if bad.size:
            raise RuntimeError(
                f"Found an invalid max index: {int(values.flat[bad[0]])} (output volumes are of "
                f"size {'x'.join(map(str, out))})"
            )
    name = f"MaxUnpool{nd}DBackward0"
    return apply(_unpool_f, name, (input, indices), (("out", tuple(out)),))


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of :func:`max_pool1d` with ``return_indices=True``: each value goes to
    its index in a zero ``(N, C, L_out)`` or ``(C, L_out)`` output."""
    kernel = _pool_arg("max_unpool1d", "kernel_size", kernel_size, 1)
    stride_ = kernel if stride is None else _pool_arg("max_unpool1d", "stride", stride, 1)
    pad = _pool_arg("max_unpool1d", "padding", padding, 1)
    out = _unpool_output_size(input, kernel, stride_, pad, output_size)
    y = _unpool(2, input.unsqueeze(-1), indices.unsqueeze(-1), [*out, 1], known_value(indices))
    return y.squeeze(-1)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of :func:`max_pool2d` with ``return_indices=True``: each value goes to
    its flat index into ``H_out * W_out``, the rest is zero.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> y, i = F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
        >>> F.max_unpool2d(y, i, 2)[0, 0, 1].tolist()
        [0.0, 5.0, 0.0, 7.0]
    """
    kernel = _pool_arg("max_unpool2d", "kernel_size", kernel_size, 2)
    stride_ = kernel if stride is None else _pool_arg("max_unpool2d", "stride", stride, 2)
    pad = _pool_arg("max_unpool2d", "padding", padding, 2)
    out = _unpool_output_size(input, kernel, stride_, pad, output_size)
    return _unpool(2, input, indices, out, known_value(indices))


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    output_size: Any = None,
) -> Tensor:
    """The inverse of :func:`max_pool3d` with ``return_indices=True`` (flat indices into
    ``D_out * H_out * W_out``)."""
    kernel = _pool_arg("max_unpool3d", "kernel_size", kernel_size, 3)
    stride_ = kernel if stride is None else _pool_arg("max_unpool3d", "stride", stride, 3)
    pad = _pool_arg("max_unpool3d", "padding", padding, 3)
    out = _unpool_output_size(input, kernel, stride_, pad, output_size)
    return _unpool(3, input, indices, out, known_value(indices))


def max_pool1d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """:func:`max_pool1d` and its indices, whatever ``return_indices`` says (as PyTorch)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """:func:`max_pool2d` and its indices, whatever ``return_indices`` says (as PyTorch)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(
    input: Tensor,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[Tensor, Tensor]:
    """:func:`max_pool3d` and its indices, whatever ``return_indices`` says (as PyTorch)."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool1d` and its indices, whatever ``return_indices`` says."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool2d` and its indices, whatever ``return_indices`` says."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(
    input: Tensor, output_size: Any, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """:func:`adaptive_max_pool3d` and its indices, whatever ``return_indices`` says."""
    return adaptive_max_pool3d(input, output_size, True)


_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
_MAX = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}


def _lp_pool(
    nd: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool
) -> Tensor:
    """PyTorch's composite: ``±inf`` norms are max pools of ``|x|``; otherwise the window
    sum of ``x ** p`` (an average times the window size, negative sums clamped to 0)
    to the power ``1 / p``."""
    size = math.prod(_pool_arg(f"lp_pool{nd}d", "kernel_size", kernel_size, nd))
    if isinstance(norm_type, (int, float)) and math.isinf(norm_type):
        if norm_type > 0:
            return _MAX[nd](input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -_MAX[nd](-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = _AVG[nd](input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (torch.sign(out) * relu(torch.abs(out))).mul(size).pow(1.0 / norm_type)


def lp_pool1d(
    input: Tensor,
    norm_type: float,
    kernel_size: int,
    stride: int | tuple[int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """Power-average pooling of ``(N, C, L)`` or ``(C, L)``: ``(sum x ** p) ** (1 / p)``
    over each window (``p = inf``: the maximum of ``|x|``)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(
    input: Tensor,
    norm_type: float,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """Power-average pooling of ``(N, C, H, W)`` or ``(C, H, W)``, as :func:`lp_pool1d`."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(
    input: Tensor,
    norm_type: float,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    ceil_mode: bool = False,
) -> Tensor:
    """Power-average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)``, as
    :func:`lp_pool1d`."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)
