"""``nn.functional`` adaptive pooling beyond 2-D average: ``adaptive_avg_pool1d/3d`` and
``adaptive_max_pool1d/2d/3d`` (PyTorch's windows ``[floor(i n / o), ceil((i + 1) n / o))``).

Average pooling is separable (one constant averaging matrix per axis). Max pooling gathers
every window, padded to the longest one by repeating its last element, and takes the first
maximum in row-major window order, so the gradient goes to the element PyTorch picks.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _is_floating
from compat.torch.nn.functional.pooling import check_output, empty_output, save_indices
from compat.torch.nn.functional.upsampling import _axis_matrix, _interp_f, _Key
from funcgrad._compat_contract import compile_cache


def _sizes(fname: str, input: Tensor, output_size: Any, nd: int) -> tuple[int, ...]:
    """Check ``input`` and expand ``output_size`` (``None`` entries keep the input size)."""
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}"
        )
    spatial = list(input.shape[-nd:])
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            if nd == 1:  # (PyTorch's argument parser's words)
                raise RuntimeError(
                    f"{fname}() argument 'output_size' should contain one int (got "
                    f"{len(output_size)})"
                )
            if fname.startswith("adaptive_max"):
                raise RuntimeError(f"{fname}(): internal error: output_size.size() must be {nd}")
            raise RuntimeError(f"{fname}: output_size must be {nd}")
        sizes = [n if v is None else v for v, n in zip(output_size, spatial)]
    else:
        sizes = [output_size] * nd if output_size is not None else spatial
    sizes = [operator.index(s) for s in sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            "Trying to create tensor with negative dimension "
            f"{min(sizes)}: {[*input.shape[:-nd], *sizes]}"
        )
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{fname}(): Expected input to have non-zero size for non-batch dimensions, "
                f"but input has sizes {list(input.shape)} with dimension {i} being empty"
            )
    return tuple(sizes)


def _adaptive_avg(nd: int, input: Tensor, output_size: Any) -> Tensor:
    fname = f"adaptive_avg_pool{nd}d"
    sizes = _sizes(fname, input, output_size, nd)
    check_output(nd, input, sizes, avg=True)
    if not _is_floating(input):
        raise NotImplementedError(f"compat {fname} supports floating inputs only")
    if 0 in sizes:
        return empty_output("avg", nd, input, sizes)
    mats = tuple(
        _axis_matrix("area", n, o, None, False, np.float64)
        for n, o in zip(input.shape[-nd:], sizes)
    )
    return apply(_interp_f, f"AdaptiveAvgPool{nd}DBackward0", (input,), (("mats", mats),))


def adaptive_avg_pool1d(input: Tensor, output_size: int | tuple[int]) -> Tensor:
    """Average pooling of ``(N, C, L)`` or ``(C, L)`` to length ``output_size``."""
    return _adaptive_avg(1, input, output_size)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` to ``output_size``."""
    return _adaptive_avg(3, input, output_size)


@compile_cache.register_lru_kind("adaptive_pool_windows")
@functools.lru_cache(maxsize=256)
def _window_table(n: int, o: int) -> _Key:
    """``(o, k)`` input positions of each window, padded with the window's last position."""
    starts = [(i * n) // o for i in range(o)]
    ends = [-((-(i + 1) * n) // o) for i in range(o)]
    k = max(e - s for s, e in zip(starts, ends))
    return _Key(np.array([[min(s + j, e - 1) for j in range(k)] for s, e in zip(starts, ends)]))


def _adaptive_max_f(x: Any, *, tables: tuple[Any, ...], with_indices: bool) -> Any:
    nd = len(tables)
    lead = x.ndim - nd
    spatial = x.shape[lead:]
    tabs = [np.asarray(t).astype(np.int64) for t in tables]
    for i, t in enumerate(tabs):  # axis lead + 2 i becomes (o_i, k_i)
        axis = lead + 2 * i
        x = fnp.take(x, t.ravel(), axis=axis)
        x = fnp.reshape(x, x.shape[:axis] + t.shape + x.shape[axis + 1 :])
    outs = tuple(t.shape[0] for t in tabs)
    ks = tuple(t.shape[1] for t in tabs)
    perm = tuple(range(lead)) + tuple(lead + 2 * i for i in range(nd))
    perm = perm + tuple(lead + 2 * i + 1 for i in range(nd))
    win = fnp.reshape(fnp.transpose(x, perm), x.shape[:lead] + outs + (int(np.prod(ks)),))
    first = fnp.argmax(win, axis=-1)
    y = fnp.take_along_axis(win, first[..., None], axis=-1)[..., 0]
    if not with_indices:
        return y
    # flat input index of every window element, in the same (outs..., window) layout
    flat = np.zeros(outs + ks, dtype=np.int64)
    for i, t in enumerate(tabs):
        stride = int(np.prod(spatial[i + 1 :], dtype=np.int64))
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = t.shape
        flat = flat + t.reshape(shape) * stride
    flat = flat.reshape(outs + (-1,))
    idx = fnp.take_along_axis(
        fnp.broadcast_to(fnp.asarray(flat), win.shape), first[..., None], axis=-1
    )
    return y, idx[..., 0]


def _adaptive_max(nd: int, input: Tensor, output_size: Any, return_indices: bool) -> Any:
    fname = f"adaptive_max_pool{nd}d"
    sizes = _sizes(fname, input, output_size, nd)
    check_output(nd, input, sizes, avg=False)
    if 0 in sizes:
        out = empty_output("max", nd, input, sizes)
        if not return_indices:
            return out
        return out, torch.zeros(out.shape, dtype=torch.int64, device=input.device)
    tables = tuple(_window_table(n, o) for n, o in zip(input.shape[-nd:], sizes))
    static = (("tables", tables), ("with_indices", bool(return_indices)))
    result = apply(_adaptive_max_f, f"AdaptiveMaxPool{nd}DBackward0", (input,), static)
    # (PyTorch's 1-D form saves the 2-D kernel's indices: one more dim, of size 1)
    return save_indices(result, 2 if nd == 1 else None) if return_indices else result


def adaptive_max_pool1d(
    input: Tensor, output_size: int | tuple[int], return_indices: bool = False
) -> Any:
    """Max pooling of ``(N, C, L)`` or ``(C, L)`` to length ``output_size`` (optionally with
    the ``int64`` positions of the maxima)."""
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, H, W)`` or ``(C, H, W)`` to ``output_size`` (optionally with
    flat ``int64`` indices into ``H * W``)."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` to ``output_size``."""
    return _adaptive_max(3, input, output_size, return_indices)
