"""``nn.functional`` pooling: max, average and adaptive average pooling, one node each."""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from compat._core import dtypes as _dt
from compat._core.tensor import _saved_entry, apply
from compat.torch.autograd import Function
from compat.torch.nn.functional._arguments import Tensor, _int_list
from compat.torch.nn.functional._dtype_names import _is_floating, _type_name


def _pool_arg(fname: str, name: str, value: Any, nd: int, default: Any = None) -> tuple[int, ...]:
    """An int or a sequence of 1 or ``nd`` ints, expanded to ``nd`` (``None``/``[]`` → default)."""
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0):
        value = default
    values = _int_list(value, nd)
    if values is None:
        raise TypeError(
            f"{fname}(): argument '{name}' must be tuple of ints, not {type(value).__name__}"
        )
    if len(values) != nd:
        if nd == 1:
            raise RuntimeError(f"{fname}() {name} must be either a single int or a 1-tuple")
        raise RuntimeError(f"{fname}: {name} must either be a single int, or a tuple of two ints")
    return tuple(values)


def _pool_out_size(n: int, k: int, pad: int, s: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's ``pooling_output_shape``: the last window must start inside the input or
    its left padding."""
    out = (n + 2 * pad - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + pad:
        out -= 1
    return out


def _pool_check(
    fname: str,
    input: Tensor,
    nd: int,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool,
) -> tuple[int, ...]:
    """PyTorch's pooling shape checks (in its words); returns the output spatial size.

    ``fname == "max_pool1d"`` follows PyTorch's own 1-D kernel (``check_max_pool1d``),
    used without ``return_indices``; the others follow ``pool2d_shape_check``.
    """
    if not isinstance(input, torch.Tensor):
        raise TypeError(f"{fname}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if fname == "max_pool1d":
        if input.dim() not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
            raise RuntimeError(
                "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
                f"size for input, but got:{list(input.shape)}"
            )
        for what, value in (("kernel_size", kernel[0]), ("stride", stride[0])):
            if value <= 0:
                raise RuntimeError(
                    f"max_pool1d() {what} must be greater than zero, but got {value}"
                )
        if padding[0] < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {padding[0]}")
        if padding[0] > kernel[0] // 2:
            raise RuntimeError(
                "max_pool1d() padding should be at most half of kernel size, but got "
                f"padding={padding[0]} and kernel_size={kernel[0]}"
            )
        if dilation[0] <= 0:
            raise RuntimeError(
                f"max_pool1d() dilation must be greater than zero, but got {dilation[0]}"
            )
        n = input.shape[-1]
        out1 = _pool_out_size(n, kernel[0], padding[0], stride[0], dilation[0], ceil_mode)
        if out1 <= 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out1}")
        return (out1,)
    # PyTorch names both sizes of its 2-D kernel (1-D pooling runs as 2-D)
    ks, ss, ds = ((1, *v) if nd == 1 else v for v in (kernel, stride, dilation))
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(
            f"kernel size should be greater than zero, but got kH: {ks[0]} kW: {ks[1]}"
        )
    if any(s < 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {ss[0]} dW: {ss[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(
            f"dilation should be greater than zero, but got dilationH: {ds[0]} dilationW: {ds[1]}"
        )
    bad_rank = input.dim() not in (nd + 1, nd + 2)
    if bad_rank or any(s == 0 for s in input.shape[-nd - 1 :]):
        shape = list(input.shape)
        if fname == "avg_pool1d" or (fname == "max_pool1d_indices" and bad_rank):
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for "
                f"argument #1 'self' (while checking arguments for {fname[:10]})"
            )
        if fname.startswith("max_pool") and bad_rank:
            lo, hi = (4, 5) if nd == 3 else (3, 4)
            raise RuntimeError(f"non-empty {lo}D or {hi}D (batch mode) tensor expected for input")
        if fname == "max_pool3d":
            # (PyTorch 2.13 names non-batch dimension 0, whichever is empty)
            raise RuntimeError(
                "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch "
                f"dimensions to have positive length, but input has a shape of {shape} and "
                "non-batch dimension 0 has length zero!"
            )
        if fname == "max_pool1d_indices":  # (run as 2-D: the shape PyTorch reports)
            shape.insert(-1, 1)
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{shape}"
        )
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={d}"
            )
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        (kh, kw), (ph, pw) = ks[-2:], ((0, *padding) if nd == 1 else padding)
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}"
        )
    spatial = tuple(input.shape[-nd:])
    out = tuple(
        _pool_out_size(n, k, p, s, d, ceil_mode)
        for n, k, p, s, d in zip(spatial, kernel, padding, stride, dilation)
    )
    if any(o <= 0 for o in out):
        planes = input.shape[-nd - 1]
        ins, outs = ((1, *spatial), (1, *out)) if nd == 1 else (spatial, out)
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, (planes, *ins)))}). Calculated output size: "
            f"({'x'.join(map(str, (planes, *outs)))}). Output size is too small"
        )
    return out


def _windows(
    xp: Any,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    out: tuple[int, ...],
) -> list[Any]:
    """The strided slices of the padded array ``xp``, one per kernel offset (row-major)."""
    nd = len(kernel)
    lead = (slice(None),) * (xp.ndim - nd)
    slices = []
    for offs in itertools.product(*(range(k) for k in kernel)):
        idx = tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, s, n in zip(offs, dilation, stride, out)
        )
        slices.append(xp[lead + idx])
    return slices


def _pool_pads(
    spatial: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    out: tuple[int, ...],
) -> list[tuple[int, int]]:
    """Low/high padding so every window (incl. ``ceil_mode``'s overhanging ones) is in range."""
    pads = []
    for n, k, s, p, d, o in zip(spatial, kernel, stride, padding, dilation, out):
        need = (o - 1) * s + d * (k - 1) + 1
        pads.append((p, max(need - n - p, 0)))
    return pads


def _max_pool_f(
    x: Any,
    *,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    dilation: tuple[int, ...],
    out: tuple[int, ...],
    with_indices: bool,
) -> Any:
    """Max pooling whose gradient goes to the element PyTorch's kernel picks: the last NaN
    of a window that has one, else its first maximum (row-major window order).

    The maximum comes from ``reduce_window_max`` (held out of the derivative); the chosen
    offset of each window from one comparison per offset; the result is that offset's
    strided slice, taken by ``select_n``, whose derivative routes the gradient. Nothing
    window-sized is stacked: every pass is output-sized."""

    nd = len(kernel)
    lead = x.ndim - nd
    spatial = tuple(x.shape[-nd:])
    dt = np.dtype(x.dtype)
    fill = -np.inf if _dt.kind(dt) == "f" else np.iinfo(dt).min
    pads = _pool_pads(spatial, kernel, stride, padding, dilation, out)
    xp = fnp.pad(x, [(0, 0)] * lead + pads, constant_values=fill)
    wins = _windows(xp, kernel, stride, dilation, out)
    n_win = len(wins)
    top = flax.stop_gradient(
        flax.reduce_window(
            xp,
            fill,
            flax.max,
            (1,) * lead + kernel,
            (1,) * lead + stride,
            window_dilation=(1,) * lead + dilation,
        )
    )
    # the first offset attaining the maximum (the last one needs no test) ...
    first = fnp.full(top.shape, n_win - 1, dtype=np.int32)
    for k in range(n_win - 2, -1, -1):
        first = fnp.where(wins[k] == top, np.int32(k), first)
    if _dt.kind(dt) == "f":  # ... unless a NaN is in the window: its last NaN
        for k, w in enumerate(wins):
            first = fnp.where(fnp.isnan(w), np.int32(k), first)
    y = flax.select_n(first, *wins) if n_win > 1 else wins[0]
    if not with_indices:
        return y
    # flat index (per channel) of the chosen element in the unpadded input
    flat = fnp.zeros(first.shape, dtype=np.int64)
    rem = first.astype(np.int64)
    for i in reversed(range(nd)):
        off = rem % kernel[i]
        rem = rem // kernel[i]
        shape = [1] * first.ndim
        shape[first.ndim - nd + i] = out[i]
        pos = fnp.reshape(fnp.arange(out[i], dtype=np.int64), shape) * stride[i]
        pos = pos - padding[i] + off * dilation[i]
        flat = flat + pos * int(np.prod(spatial[i + 1 :], dtype=np.int64))
    return y, flat


def _max_pool(
    nd: int,
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
) -> Any:

    fname = f"max_pool{nd}d"
    kernel = _pool_arg(fname, "kernel_size", kernel_size, nd)
    stride_ = _pool_arg(fname, "stride", stride, nd, default=kernel)
    pad = _pool_arg(fname, "padding", padding, nd)
    dil = _pool_arg(fname, "dilation", dilation, nd)
    # PyTorch checks max_pool1d in its own words, unless it runs it as 2-D for the indices
    check = "max_pool1d_indices" if nd == 1 and return_indices else fname
    out = _pool_check(check, input, nd, kernel, stride_, pad, dil, ceil_mode)
    if input.dtype == torch.bool:
        raise RuntimeError(f"\"max_pool{nd}d\" not implemented for 'Bool'")
    static = (
        ("kernel", kernel),
        ("stride", stride_),
        ("padding", pad),
        ("dilation", dil),
        ("out", out),
        ("with_indices", bool(return_indices)),
    )
    # PyTorch runs 1-D pooling with indices through its 2-D kernel
    if nd == 3:
        name = "MaxPool3DWithIndicesBackward0"
    elif nd == 2 or return_indices:
        name = "MaxPool2DWithIndicesBackward0"
    else:
        name = "MaxPool1DBackward0"
    result = apply(_max_pool_f, name, (input,), static)
    if not return_indices:
        return result
    # (PyTorch's 1-D pooling saves the 2-D kernel's indices: one more dim, of size 1)
    return save_indices(result, 2 if nd == 1 else None)


def save_indices(result: tuple, one_at: int | None = None) -> tuple:
    """``(output, indices)`` of a max pooling whose node now counts ``indices`` among its
    saved tensors, as PyTorch's node saves them: ``indices`` modified in place, backward
    raises PyTorch's version error (compat's backward recomputes the positions from the
    input, which stays saved: the check alone is added). ``one_at``: a dim of size 1 the
    saved tensor's shape has there from the end (the shape PyTorch's message names)."""
    out, indices = result
    node = out._gfn
    if node is not None and node._saved is not None:
        # (an entry of the tensor itself: PyTorch's message names no node for indices)
        entry = _saved_entry(indices)
        if one_at is not None:
            vc, ver, shape, *rest = entry
            k = len(shape) + 1 - one_at
            entry = (vc, ver, (*shape[:k], 1, *shape[k:]), *rest)
        node._saved = [*node._saved, entry]
    return result


def max_pool1d(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    dilation: int | tuple[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``; padding counts as ``-inf``.

    The gradient of each window goes to its first maximum (PyTorch's choice, not an even
    split between ties); ``return_indices=True`` also returns the flat ``int64`` positions.
    """
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)``; padding counts as ``-inf``.

    One op (``MaxPool2DWithIndicesBackward0``): the window elements are stacked, the first
    maximum in row-major window order is selected, so ties send the whole gradient to it
    as PyTorch does. ``return_indices=True`` also returns ``int64`` indices into ``H * W``.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2).flatten().tolist()
        [5.0, 7.0, 13.0, 15.0]
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    dilation: int | tuple[int, int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``, as :func:`max_pool2d`
    (one op, ``MaxPool3DWithIndicesBackward0``; indices into ``D * H * W``)."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_divisor(
    spatial: tuple[int, ...],
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    out: tuple[int, ...],
    count_include_pad: bool,
) -> np.ndarray:
    """Each window's divisor as PyTorch counts it: the window clipped to the padded input
    (``count_include_pad``) or to the input itself, separably per dimension."""
    div = np.ones((), dtype=np.int64)
    for n, k, s, p, o in zip(spatial, kernel, stride, padding, out):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        div = np.multiply.outer(div, size)
    return div


#: the half types PyTorch's CPU average pools accumulate in float32, rounding once
_HALF = (np.dtype(np.float16), np.dtype(_dt.bfloat16.np))


def _in_float32(f: Any) -> Any:
    """``f`` of a float16/bfloat16 ``x`` computed in float32 and rounded once at the end, as
    PyTorch's kernels do (summing a window in the half type loses the small values)."""

    def run(x: Any, **static: Any) -> Any:
        if x.dtype not in _HALF:
            return f(x, **static)
        return f(x.astype(np.float32), **static).astype(x.dtype)

    run.__name__ = run.__qualname__ = f.__name__
    return run


@_in_float32
def _avg_pool_f(
    x: Any,
    *,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    padding: tuple[int, ...],
    out: tuple[int, ...],
    count_include_pad: bool,
    divisor_override: int | None,
) -> Any:

    nd = len(kernel)
    spatial = tuple(x.shape[-nd:])
    ones = (1,) * nd
    pads = _pool_pads(spatial, kernel, stride, padding, ones, out)
    xp = fnp.pad(x, [(0, 0)] * (x.ndim - nd) + pads)
    wins = _windows(xp, kernel, stride, ones, out)
    total = wins[0]
    for w in wins[1:]:
        total = total + w
    if divisor_override is not None:
        return total / np.asarray(divisor_override, dtype=x.dtype)
    div = _avg_divisor(spatial, kernel, stride, padding, out, count_include_pad)
    return total / div.astype(x.dtype)


def _avg_pool(
    nd: int,
    input: Tensor,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:

    fname = f"avg_pool{nd}d"
    kernel = _pool_arg(fname, "kernel_size", kernel_size, nd)
    stride_ = _pool_arg(fname, "stride", stride, nd, default=kernel)
    pad = _pool_arg(fname, "padding", padding, nd)
    out = _pool_check(fname, input, nd, kernel, stride_, pad, (1,) * nd, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if not _is_floating(input):
        raise NotImplementedError(
            f"compat {fname} supports floating inputs only (integer average pooling is not "
            "implemented)"
        )
    static = (
        ("kernel", kernel),
        ("stride", stride_),
        ("padding", pad),
        ("out", out),
        ("count_include_pad", bool(count_include_pad)),
        ("divisor_override", None if divisor_override is None else int(divisor_override)),
    )
    name = "AvgPool3DBackward0" if nd == 3 else "AvgPool2DBackward0"
    return apply(_avg_pool_f, name, (input,), static)


def avg_pool1d(
    input: Tensor,
    kernel_size: int | tuple[int],
    stride: int | tuple[int] | None = None,
    padding: int | tuple[int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)`` (zero padding; the divisor counts
    padding when ``count_include_pad``, as PyTorch)."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(
    input: Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``.

    Window sums divided by PyTorch's divisor: ``divisor_override`` if given, else the window
    clipped to the padded input (``count_include_pad=True``) or to the input itself.
    """
    return _avg_pool(
        2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def avg_pool3d(
    input: Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``, as :func:`avg_pool2d`."""
    return _avg_pool(
        3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def _adaptive_matrix(n: int, o: int) -> np.ndarray:
    """0/1 matrix ``(o, n)`` selecting PyTorch's adaptive windows
    ``[floor(i * n / o), ceil((i + 1) * n / o))``."""
    m = np.zeros((o, n))
    for i in range(o):
        start = (i * n) // o
        end = -((-(i + 1) * n) // o)
        m[i, start:end] = 1.0
    return m


@_in_float32
def _adaptive_avg_f(x: Any, *, out: tuple[int, int]) -> Any:

    h, w = x.shape[-2:]
    mh = _adaptive_matrix(h, out[0])
    mw = _adaptive_matrix(w, out[1])
    div = np.multiply.outer(mh.sum(1), mw.sum(1)).astype(x.dtype)
    total = fnp.matmul(fnp.matmul(mh.astype(x.dtype), x), mw.T.astype(x.dtype))
    return total / div


def check_output(nd: int, input: Tensor, sizes: tuple[int, ...], avg: bool) -> None:
    """PyTorch's refusals before its adaptive kernels run: an output too large to count
    in 64 bits (compat would try to build its windows), then an input type its kernels
    lack (integers and bool; for max pooling complex too; an average to one cell is
    PyTorch's ``mean``, with its message)."""
    lead = list(input.shape[:-nd])
    shape = [*lead, 1, *sizes] if nd == 1 else [*lead, *sizes]
    numel = int(np.prod(shape, dtype=object))
    if avg and numel >= 2**63:
        raise RuntimeError("numel: integer multiplication overflow")
    if numel * input._npdtype.itemsize >= 2**63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={shape}")
    kind = "avg" if avg else "max"
    kernel = f"adaptive_{kind}_pool2d" if nd <= 2 else f"adaptive_{kind}_pool3d_cpu"
    name = "Bool" if input.dtype == torch.bool else _type_name(input)
    if avg and not (_is_floating(input) or input.is_complex()):
        if all(s == 1 for s in sizes):
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {name}"
            )
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")
    if not avg and not _is_floating(input):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


class _EmptyAdaptiveOutput(Function):
    """An adaptive pooling to an empty output: PyTorch's empty result; its backward raises
    as PyTorch's backward kernels do for an empty ``grad_output``."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, shape: tuple, message: str) -> Tensor:
        ctx.message = message
        return input.new_zeros(shape)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        raise RuntimeError(ctx.message)


def empty_output(kind: str, nd: int, input: Tensor, sizes: tuple[int, ...]) -> Tensor:
    """The output of ``adaptive_{kind}_pool{nd}d`` when ``sizes`` holds a zero (1-D pooling
    named and shaped as the 2-D kernel PyTorch runs it with)."""
    shape = (*input.shape[:-nd], *sizes)
    kernel_nd, kernel_shape = (2, (*input.shape[:-1], 1, sizes[0])) if nd == 1 else (nd, shape)
    dim = next(i for i in range(1, len(kernel_shape)) if kernel_shape[i] == 0)
    message = (
        f"adaptive_{kind}_pool{kernel_nd}d_backward(): Expected grad_output to have non-zero "
        f"size for non-batch dimensions, but grad_output has sizes {list(kernel_shape)} with "
        f"dimension {dim} being empty"
    )
    return _EmptyAdaptiveOutput.apply(input, shape, message)


def adaptive_avg_pool2d(input: Tensor, output_size: int | tuple[int | None, ...] | None) -> Tensor:
    """Average pooling to a fixed ``output_size`` (``None`` keeps that input size).

    Output cell ``i`` averages input rows ``floor(i * H / out) .. ceil((i + 1) * H / out)``
    (PyTorch's windows, any sizes); one op, two matmuls with constant 0/1 matrices.
    """

    if not isinstance(input, torch.Tensor):
        raise TypeError(
            f"adaptive_avg_pool2d(): argument 'input' must be Tensor, not {type(input).__name__}"
        )
    if isinstance(output_size, (tuple, list)):
        if len(input.shape) <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        sizes = [
            d if v is None else v for v, d in zip(output_size, input.shape[-len(output_size) :])
        ]
    else:
        sizes = [output_size] * 2 if output_size is not None else list(input.shape[-2:])
    if len(sizes) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    sizes = [operator.index(s) for s in sizes]
    if input.dim() not in (3, 4):
        raise RuntimeError(
            f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}"
        )
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            "Trying to create tensor with negative dimension "
            f"{min(sizes)}: {[*input.shape[:-2], *sizes]}"
        )
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(input.shape)} with dimension {i} being "
                "empty"
            )
    check_output(2, input, tuple(sizes), avg=True)
    if not _is_floating(input):
        raise NotImplementedError("compat adaptive_avg_pool2d supports floating inputs only")
    if 0 in sizes:
        return empty_output("avg", 2, input, tuple(sizes))
    return apply(_adaptive_avg_f, "AdaptiveAvgPool2DBackward0", (input,), (("out", tuple(sizes)),))
