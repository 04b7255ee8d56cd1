"""``nn.functional``: stateless layers, activations and losses on compat Tensors.

Each function is a composite of the public compat ops (``matmul``,
``log_softmax``, comparisons, reductions), so its gradient comes from the
recorded graph like any user code. Signatures, defaults, reductions and the
ignore-index / label-smoothing arithmetic follow ``torch.nn.functional``.
``conv1d``/``conv2d`` are single compat ops (one ``ConvolutionBackward0`` node)
over funcgrad's ``conv_general_dilated`` primitive, with PyTorch's argument checks.

Example:
    >>> import compat.torch as torch
    >>> import compat.torch.nn.functional as F
    >>> logits = torch.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, torch.tensor([0]))
    >>> loss.backward()
"""

from __future__ import annotations

import itertools
import math
import operator
import warnings
from typing import Any

import numpy as np

import compat.torch as torch
from compat.torch.nn import _fused

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "group_norm",
    "instance_norm",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "max_pool1d",
    "max_pool2d",
    "mse_loss",
    "nll_loss",
    "one_hot",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "tanh",
]

Tensor = Any  # compat.torch.Tensor (kept loose so annotations never import the core)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """PyTorch's ``_Reduction.legacy_get_string`` for the deprecated arguments."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return ret


def _resolve_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    return reduction


def _apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _to_dtype(t: Tensor, dtype: Any) -> Tensor:
    """``t.to(dtype)``: used on masks built from comparisons (no gradient involved)."""
    if t.dtype == dtype:
        return t
    return t.to(dtype)


def _is_floating(t: Tensor) -> bool:
    is_fp = getattr(t, "is_floating_point", None)
    if is_fp is not None:
        return bool(is_fp())
    return t.dtype in (torch.float32, torch.float64)


def _check_targets(target: Tensor, n_classes: int, ignore_index: int) -> int:
    """Raise PyTorch's ``IndexError`` for out-of-range class targets; count the valid ones."""
    values = np.asarray(target.numpy())
    ignored = values == ignore_index
    bad = ~ignored & ((values < 0) | (values >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(values[bad].flat[0])} is out of bounds.")
    return int(values.size - np.count_nonzero(ignored))


def _class_mask(
    target: Tensor, n_classes: int, class_dim: int, ndim: int, dtype: Any, ignore_index: int
) -> Tensor:
    """One-hot of ``target`` along ``class_dim`` as a float mask (ignored targets: zero rows)."""
    shape = [1] * ndim
    shape[class_dim] = n_classes
    classes = torch.arange(n_classes).reshape(shape)
    hit = target.unsqueeze(class_dim) == classes
    if 0 <= ignore_index < n_classes:  # otherwise an ignored target matches no class anyway
        hit = hit & (classes != ignore_index)
    return _to_dtype(hit, dtype)


def _class_dim(input: Tensor) -> int:
    return 0 if input.dim() == 1 else 1


def _check_class_target_shape(input: Tensor, target: Tensor, class_dim: int) -> None:
    expected = tuple(s for i, s in enumerate(input.shape) if i != class_dim)
    if tuple(target.shape) != expected:
        if input.dim() >= 2 and (target.dim() < 1 or target.shape[0] != input.shape[0]):
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                f"({target.shape[0] if target.dim() else 0})."
            )
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")


# ---------------------------------------------------------------------------
# layers and activations
# ---------------------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    fused = _fused.linear(input, weight, bias)
    if fused is not None:
        return fused
    out = torch.matmul(input, weight.t())
    if bias is not None:
        out = out + bias
    return out


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise (gradient 0 at 0, as in PyTorch)."""
    if inplace and hasattr(input, "relu_"):
        return input.relu_()
    return torch.relu(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    return torch.where(input > 0, input, input * negative_slope)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    return torch.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return torch.tanh(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``."""
    return input * torch.sigmoid(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh formula."""
    if approximate == "tanh":
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * input * (1.0 + torch.tanh(c * (input + 0.044715 * input * input * input)))
    if approximate != "none":
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate}")
    erf = getattr(torch, "erf", None)
    if erf is None:
        raise NotImplementedError("gelu(approximate='none') needs torch.erf")
    return 0.5 * input * (1.0 + erf(input * (1.0 / math.sqrt(2.0))))


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``exp(input) / exp(input).sum(dim)``, computed stably."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = _to_dtype(input, dtype)
    return input.softmax(dim)


def log_softmax(
    input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """``input - logsumexp(input, dim)``."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = _to_dtype(input, dtype)
    return input.log_softmax(dim)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The mask is drawn with ``torch.rand`` from the generator ``torch.manual_seed``
    seeds; with ``training=False`` (or ``p == 0``) the input is returned as is.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = 1.0 - p
    with torch.no_grad():
        draws = torch.rand(tuple(input.shape), dtype=input.dtype)
    fused = _fused.scaled_mask_mul(input, draws, keep)
    if fused is not None:
        return fused
    with torch.no_grad():
        mask = _to_dtype(draws < keep, input.dtype) * (1.0 / keep)
    return input * mask


# ---------------------------------------------------------------------------
# convolutions
# ---------------------------------------------------------------------------

_TENSOR_TYPE = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "uint8": "Byte",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}
_SCALAR_NAME = {"Half": "c10::Half", "BFloat16": "c10::BFloat16"}


def _type_name(t: Tensor) -> str:
    return _TENSOR_TYPE.get(np.dtype(t._npdtype).name, str(t.dtype))


def _conv_f(
    x: Any,
    w: Any,
    *b: Any,
    stride: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    dilation: tuple[int, ...],
    groups: int,
    unbatched: bool,
) -> Any:
    import funcgrad.lax as flax
    import funcgrad.numpy as fnp

    if unbatched:
        x = fnp.expand_dims(x, 0)
    y = flax.conv_general_dilated(
        x, w, stride, padding, rhs_dilation=dilation, feature_group_count=groups
    )
    if b:
        y = y + fnp.reshape(b[0], (1, -1) + (1,) * len(stride))
    return fnp.squeeze(y, 0) if unbatched else y


def _int_list(value: Any, nd: int) -> list[int] | None:
    """An int or a sequence of ints as a list, one int repeated to ``nd``; ``None`` when an
    element is not an int (bools included, as PyTorch's int-list arguments reject them)."""
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    if any(isinstance(v, bool) for v in values):
        return None
    try:
        values = [operator.index(v) for v in values]
    except TypeError:
        return None
    return values * nd if len(values) == 1 else values


def _conv_arg(name: str, value: Any, nd: int) -> tuple[int, ...]:
    """An int or a sequence of 1 or ``nd`` ints, expanded to ``nd`` (PyTorch's ``expand_param``)."""
    values = _int_list(value, nd)
    if values is None:
        raise TypeError(f"conv{nd}d(): argument '{name}' must be tuple of ints, not {value!r}")
    if len(values) != nd:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {nd} values to match "
            f"the convolution dimensions, but got {name}={values}"
        )
    return tuple(values)


def _conv(
    nd: int,
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: int,
) -> Tensor:
    """``torch.nn.functional.conv{nd}d``: argument checks in PyTorch's words, then one op."""
    from compat._core.tensor import apply  # the op-definition hook (see ``_fused``)

    name = f"conv{nd}d"
    for arg, value in (("input", input), ("weight", weight), ("bias", bias)):
        if not isinstance(value, torch.Tensor) and not (arg == "bias" and value is None):
            raise TypeError(
                f"{name}(): argument '{arg}' must be Tensor, not {type(value).__name__}"
            )
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    unbatched = input.dim() == nd + 1
    in_shape = [1, *input.shape] if unbatched else list(input.shape)
    if weight.dim() != nd + 2:
        raise RuntimeError(
            f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input {in_shape}, "
            f"but got {weight.dim()}-dimensional weight of size {list(weight.shape)} instead"
        )
    stride = _conv_arg("stride", stride, nd)
    dilation = _conv_arg("dilation", dilation, nd)
    if isinstance(groups, bool) or not hasattr(groups, "__index__"):
        raise TypeError(f"{name}(): argument 'groups' must be int, not {type(groups).__name__}")
    groups = operator.index(groups)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # PyTorch puts the odd element of the total padding at the end
            totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pads = tuple((t // 2, t - t // 2) for t in totals)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        sym = _conv_arg("padding", padding, nd)
        if any(p < 0 for p in sym):
            raise RuntimeError("negative padding is not supported")
        pads = tuple((p, p) for p in sym)
    w_shape = list(weight.shape)
    if in_shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {w_shape}, expected input{in_shape} to have "
            f"{weight.shape[1] * groups} channels, but got {in_shape[1]} channels instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{w_shape}] instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(
            f"Given weight of size {w_shape}, expected bias to be 1-dimensional with "
            f"{weight.shape[0]} elements, but got bias of size {list(bias.shape)} instead"
        )
    padded = [n + lo + hi for n, (lo, hi) in zip(in_shape[2:], pads)]
    window = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    if any(k > n for k, n in zip(window, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, window))}). Kernel size can't be greater than "
            "actual input size"
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"Input type (torch.{_type_name(input)}Tensor) and weight type "
            f"(torch.{_type_name(weight)}Tensor) should be the same"
        )
    if bias is not None and bias.dtype != input.dtype:
        a, b = _type_name(input), _type_name(bias)
        raise RuntimeError(
            f"Input type ({_SCALAR_NAME.get(a, a.lower())}) and bias type "
            f"({_SCALAR_NAME.get(b, b.lower())}) should be the same"
        )
    if input.dtype == torch.bool:
        raise NotImplementedError(f"\"slow_conv{nd}d_cpu\" not implemented for 'Bool'")
    args = (input, weight) if bias is None else (input, weight, bias)
    static = (
        ("stride", stride),
        ("padding", pads),
        ("dilation", dilation),
        ("groups", groups),
        ("unbatched", unbatched),
    )
    return apply(_conv_f, "ConvolutionBackward0", args, static)


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int] = 1,
    padding: str | int | tuple[int] = 0,
    dilation: int | tuple[int] = 1,
    groups: int = 1,
) -> Tensor:
    """1-D convolution (cross-correlation) of ``(N, C_in, L)`` or ``(C_in, L)`` input with a
    ``(C_out, C_in / groups, k)`` weight; ``padding`` is an int, a 1-tuple, ``'valid'`` or
    ``'same'``."""
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: str | int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    groups: int = 1,
) -> Tensor:
    """2-D convolution (cross-correlation) of ``(N, C_in, H, W)`` or ``(C_in, H, W)`` input
    with a ``(C_out, C_in / groups, kH, kW)`` weight; ``padding`` is an int, a pair,
    ``'valid'`` or ``'same'``.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> F.conv2d(torch.ones(1, 2, 5, 5), torch.ones(3, 2, 3, 3), padding="same").shape
        torch.Size([1, 3, 5, 5])
    """
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


# ---------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------


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
    if input.dim() not in (nd + 1, nd + 2) or any(s == 0 for s in input.shape[-nd - 1 :]):
        if fname == "avg_pool1d":
            raise RuntimeError(
                f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for "
                "argument #1 'self' (while checking arguments for avg_pool1d)"
            )
        if fname.startswith("max_pool"):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(input.shape)}"
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
    """Max pooling whose gradient goes to the first maximum of each window (as PyTorch's)."""
    import funcgrad.numpy as fnp

    nd = len(kernel)
    spatial = tuple(x.shape[-nd:])
    dt = np.dtype(x.dtype)
    fill = -np.inf if dt.kind == "f" else np.iinfo(dt).min
    pads = _pool_pads(spatial, kernel, stride, padding, dilation, out)
    xp = fnp.pad(x, [(0, 0)] * (x.ndim - nd) + pads, constant_values=fill)
    win = fnp.stack(_windows(xp, kernel, stride, dilation, out), axis=0)
    n_win = win.shape[0]
    first = fnp.argmax(win, axis=0)  # the first maximum in window order
    if dt.kind == "f":  # a NaN wins, and PyTorch's kernel keeps the last NaN it meets
        nan = fnp.isnan(win)
        last_nan = (n_win - 1) - fnp.argmax(fnp.flip(nan, axis=0), axis=0)
        first = fnp.where(fnp.any(nan, axis=0), last_nan, first)
    hit = fnp.reshape(fnp.arange(n_win), (n_win,) + (1,) * (win.ndim - 1)) == first[None]
    y = fnp.sum(fnp.where(hit, win, fnp.zeros_like(win)), axis=0)
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
    from compat._core.tensor import apply

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
    name = "MaxPool2DWithIndicesBackward0" if nd == 2 or return_indices else "MaxPool1DBackward0"
    return apply(_max_pool_f, name, (input,), static)


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
    import funcgrad.numpy as fnp

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
    from compat._core.tensor import apply

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
    return apply(_avg_pool_f, "AvgPool2DBackward0", (input,), static)


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


def _adaptive_matrix(n: int, o: int) -> np.ndarray:
    """0/1 matrix ``(o, n)`` selecting PyTorch's adaptive windows
    ``[floor(i * n / o), ceil((i + 1) * n / o))``."""
    m = np.zeros((o, n))
    for i in range(o):
        start = (i * n) // o
        end = -((-(i + 1) * n) // o)
        m[i, start:end] = 1.0
    return m


def _adaptive_avg_f(x: Any, *, out: tuple[int, int]) -> Any:
    import funcgrad.numpy as fnp

    h, w = x.shape[-2:]
    mh = _adaptive_matrix(h, out[0])
    mw = _adaptive_matrix(w, out[1])
    div = np.multiply.outer(mh.sum(1), mw.sum(1)).astype(x.dtype)
    total = fnp.matmul(fnp.matmul(mh.astype(x.dtype), x), mw.T.astype(x.dtype))
    return total / div


def adaptive_avg_pool2d(input: Tensor, output_size: int | tuple[int | None, ...] | None) -> Tensor:
    """Average pooling to a fixed ``output_size`` (``None`` keeps that input size).

    Output cell ``i`` averages input rows ``floor(i * H / out) .. ceil((i + 1) * H / out)``
    (PyTorch's windows, any sizes); one op, two matmuls with constant 0/1 matrices.
    """
    from compat._core.tensor import apply

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
    if not _is_floating(input):
        raise NotImplementedError("compat adaptive_avg_pool2d supports floating inputs only")
    return apply(_adaptive_avg_f, "AdaptiveAvgPool2DBackward0", (input,), (("out", tuple(sizes)),))


# ---------------------------------------------------------------------------
# normalisation
# ---------------------------------------------------------------------------


def _affine(y: Any, wb: tuple[Any, ...], has_weight: bool, shape: tuple[int, ...]) -> Any:
    """``y * weight + bias`` with each (if present) reshaped to ``shape``."""
    import funcgrad.numpy as fnp

    i = 0
    if has_weight:
        y = y * fnp.reshape(wb[0], shape)
        i = 1
    if len(wb) > i:
        y = y + fnp.reshape(wb[i], shape)
    return y


def _normalize(x: Any, axes: tuple[int, ...], eps: float) -> Any:
    """``(x - mean) / sqrt(var + eps)`` over ``axes`` with the biased variance."""
    import funcgrad.numpy as fnp

    mean = fnp.mean(x, axis=axes, keepdims=True)
    xc = x - mean
    var = fnp.mean(xc * xc, axis=axes, keepdims=True)
    return xc / fnp.sqrt(var + np.asarray(eps, dtype=x.dtype))


def _batch_norm_train_f(x: Any, *wb: Any, eps: float, has_weight: bool) -> Any:
    axes = (0, *range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return _affine(_normalize(x, axes, eps), wb, has_weight, shape)


def _batch_norm_eval_f(x: Any, mean: Any, var: Any, *wb: Any, eps: float, has_weight: bool) -> Any:
    import funcgrad.numpy as fnp

    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    inv = 1 / fnp.sqrt(fnp.reshape(var, shape) + np.asarray(eps, dtype=x.dtype))
    y = (x - fnp.reshape(mean, shape)) * inv
    return _affine(y, wb, has_weight, shape)


def _batch_stats_f(x: Any) -> Any:
    """Per-channel mean and unbiased variance (for the running statistics)."""
    import funcgrad.numpy as fnp

    axes = (0, *range(2, x.ndim))
    n = x.size // x.shape[1]
    mean = fnp.mean(x, axis=axes)
    xc = x - fnp.reshape(mean, (1, x.shape[1]) + (1,) * (x.ndim - 2))
    var = fnp.sum(xc * xc, axis=axes) / np.asarray(max(n - 1, 0), dtype=x.dtype)
    return mean, var


def _wb(weight: Tensor | None, bias: Tensor | None) -> tuple[tuple[Any, ...], bool]:
    args = tuple(t for t in (weight, bias) if t is not None)
    return args, weight is not None


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalisation over every dimension but the channels (dim 1).

    ``training=True`` normalises with the batch statistics (biased variance) and, when
    running buffers are given, updates them in place without recording gradients:
    ``running = (1 - momentum) * running + momentum * batch`` with the *unbiased*
    batch variance. ``training=False`` normalises with the running buffers.
    """
    from compat._core.tensor import apply

    if training:
        size = list(input.shape)
        if int(np.prod([size[0], *size[2:]])) == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"torch.Size({size})"
            )
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or more input (got {input.dim()}D input)")
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    wb, has_weight = _wb(weight, bias)
    static = (("eps", float(eps)), ("has_weight", has_weight))
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        args = (input, running_mean, running_var, *wb)
        return apply(_batch_norm_eval_f, "NativeBatchNormBackward0", args, static)
    out = apply(_batch_norm_train_f, "NativeBatchNormBackward0", (input, *wb), static)
    if running_mean is not None or running_var is not None:
        with torch.no_grad():
            mean, var = apply(_batch_stats_f, "BatchStats", (input.detach(),))
            for buf, stat in ((running_mean, mean), (running_var, var)):
                if buf is not None:
                    buf.mul_(1.0 - momentum).add_(stat.to(buf.dtype), alpha=momentum)
    return out


def _layer_norm_f(x: Any, *wb: Any, k: int, eps: float, has_weight: bool) -> Any:
    axes = tuple(range(x.ndim - k, x.ndim))
    return _affine(_normalize(x, axes, eps), wb, has_weight, tuple(x.shape[x.ndim - k :]))


def layer_norm(
    input: Tensor,
    normalized_shape: list[int] | tuple[int, ...],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dimensions (biased variance), then
    scale by ``weight`` and shift by ``bias`` (each of shape ``normalized_shape``)."""
    from compat._core.tensor import apply

    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    k = len(shape)
    if k == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
            "least one element, but got normalized_shape = []"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(t.shape)} and normalized_shape = {shape}"
            )
    if input.dim() < k or list(input.shape[input.dim() - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    wb, has_weight = _wb(weight, bias)
    static = (("k", k), ("eps", float(eps)), ("has_weight", has_weight))
    return apply(_layer_norm_f, "NativeLayerNormBackward0", (input, *wb), static)


def _group_norm_f(x: Any, *wb: Any, groups: int, eps: float, has_weight: bool) -> Any:
    import funcgrad.numpy as fnp

    grouped = fnp.reshape(x, (x.shape[0], groups, -1))
    y = fnp.reshape(_normalize(grouped, (2,), eps), x.shape)
    return _affine(y, wb, has_weight, (1, x.shape[1]) + (1,) * (x.ndim - 2))


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each sample's channel groups (``num_groups`` of them) over their channels
    and spatial positions, then apply the per-channel ``weight`` and ``bias``."""
    from compat._core.tensor import apply

    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    channels = input.shape[1]
    if channels % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={num_groups}"
        )
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != channels):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(t.shape)} and input of shape "
                f"{list(input.shape)}"
            )
    wb, has_weight = _wb(weight, bias)
    static = (("groups", int(num_groups)), ("eps", float(eps)), ("has_weight", has_weight))
    return apply(_group_norm_f, "NativeGroupNormBackward0", (input, *wb), static)


# ---------------------------------------------------------------------------
# embedding
# ---------------------------------------------------------------------------


def _embedding_f(idx: Any, weight: Any, *, padding_idx: int | None) -> Any:
    import funcgrad.numpy as fnp
    from funcgrad import stop_gradient

    if padding_idx is not None:  # the padding row gets no gradient
        rows = fnp.reshape(fnp.arange(weight.shape[0]) == padding_idx, (-1, 1))
        weight = fnp.where(rows, stop_gradient(weight), weight)
    return fnp.take(weight, idx, axis=0)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; the ``padding_idx`` row's
    gradient is zero. ``max_norm``, ``scale_grad_by_freq`` and ``sparse`` are not
    supported (``NotImplementedError``)."""
    from compat._core.tensor import apply

    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    for name, value in (
        ("max_norm", max_norm is not None),
        ("scale_grad_by_freq", scale_grad_by_freq),
        ("sparse", sparse),
    ):
        if value:
            raise NotImplementedError(f"compat embedding does not support {name} yet")
    if input.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_type_name(input)}Tensor instead (while checking "
            "arguments for embedding)"
        )
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    values = np.asarray(input.numpy())
    if values.size and (values.min() < 0 or values.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    static = (("padding_idx", None if padding_idx is None else int(padding_idx)),)
    return apply(_embedding_f, "EmbeddingBackward0", (input, weight), static)


# ---------------------------------------------------------------------------
# losses
# ---------------------------------------------------------------------------


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error ``(input - target) ** 2``, reduced as ``reduction`` says."""
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({_size(target)}) that is different to the input size "
            f"({_size(input)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    fused = _fused.mse_loss(input, target, weight, reduction)
    if fused is not None:
        return fused
    diff = input - target
    loss = diff * diff
    if weight is not None:
        loss = loss * weight
    return _apply_reduction(loss, reduction)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Mean absolute error ``|input - target|``."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    return _apply_reduction((input - target).abs(), reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Sigmoid + binary cross entropy in one stable formula."""
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({_size(target)}) must be the same as input size ({_size(input)})"
        )
    reduction = _resolve_reduction(size_average, reduce, reduction)
    # log(1 + exp(-|x|)) + max(-x, 0) = -log(sigmoid(x)), stably.
    log_sig_neg = (1.0 + (-input.abs()).exp()).log() + torch.relu(-input)
    if pos_weight is not None:
        log_weight = (pos_weight - 1.0) * target + 1.0
        loss = (1.0 - target) * input + log_weight * log_sig_neg
    else:
        loss = (1.0 - target) * input + log_sig_neg
    if weight is not None:
        loss = loss * weight
    return _apply_reduction(loss, reduction)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood of class-index ``target`` under log-probabilities ``input``.

    ``input`` is ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``; targets equal to
    ``ignore_index`` contribute nothing, and ``'mean'`` divides by the summed
    weight of the other targets (their count without ``weight``).
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    class_dim = _class_dim(input)
    n_classes = input.shape[class_dim]
    _check_class_target_shape(input, target, class_dim)
    n_valid = _check_targets(target, n_classes, ignore_index)
    fused = _fused.cross_entropy(
        input, target, weight, class_dim, ignore_index, reduction, 0.0, from_logits=False
    )
    if fused is not None:
        return fused
    mask = _class_mask(target, n_classes, class_dim, input.dim(), input.dtype, ignore_index)
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        mask = mask * weight.reshape(shape)
    picked = (input * mask).sum(class_dim)
    if reduction == "none":
        return -picked
    if reduction == "sum":
        return -picked.sum()
    if weight is None:
        return picked.sum() * (-1.0 / n_valid) if n_valid else picked.sum() * float("nan")
    return -picked.sum() / mask.sum()


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between logits ``input`` and ``target``.

    ``target`` holds class indices (an integer tensor of ``input``'s shape
    without the class dimension) or class probabilities (a floating tensor of
    ``input``'s shape). ``label_smoothing`` mixes the target with the uniform
    distribution, as PyTorch does.
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = _class_dim(input)
    n_classes = input.shape[class_dim]
    w_shape = [1] * input.dim()
    w_shape[class_dim] = n_classes
    w = weight.reshape(w_shape) if weight is not None else None

    if _is_floating(target):  # class probabilities
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError(
                "Expected floating point target to have the same shape as input: "
                f"target {list(target.shape)}, input {list(input.shape)}"
            )
        if label_smoothing > 0.0:
            target = target * (1.0 - label_smoothing) + label_smoothing / n_classes
        prod = input.log_softmax(class_dim) * target
        if w is not None:
            prod = prod * w
        per_sample = -prod.sum(class_dim)
        if reduction == "mean":
            n = input.numel() // n_classes if input.dim() > 1 else 1
            return per_sample.sum() * (1.0 / n)
        return _apply_reduction(per_sample, reduction)

    _check_class_target_shape(input, target, class_dim)
    _check_targets(target, n_classes, ignore_index)
    fused = _fused.cross_entropy(
        input, target, weight, class_dim, ignore_index, reduction, label_smoothing, True
    )
    if fused is not None:
        return fused
    logp = input.log_softmax(class_dim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    # Smoothing term: the (weighted) mean over classes of -log p, ignored targets zeroed.
    smooth = -(logp * w).sum(class_dim) if w is not None else -logp.sum(class_dim)
    valid = _to_dtype(target != ignore_index, input.dtype)
    smooth = smooth * valid
    if reduction == "mean":
        if w is not None:
            mask = _class_mask(target, n_classes, class_dim, input.dim(), input.dtype, ignore_index)
            smooth = smooth.sum() / (mask * w).sum()
        else:
            smooth = smooth.sum() / valid.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / n_classes)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """``int64`` one-hot encoding with a new last dimension of size ``num_classes``."""
    values = np.asarray(tensor.numpy())
    if values.size and values.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if values.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(values.max()) + 1
    elif values.size and values.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    eq = tensor.unsqueeze(-1) == torch.arange(num_classes)
    return _to_dtype(eq, torch.int64)


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


# ---------------------------------------------------------------------------
# instance normalisation
# ---------------------------------------------------------------------------


def _instance_norm_f(x: Any, *wb: Any, eps: float, has_weight: bool) -> Any:
    axes = tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return _affine(_normalize(x, axes, eps), wb, has_weight, shape)


def _instance_stats_f(x: Any) -> Any:
    """Per-(sample, channel) mean and unbiased variance, each ``(N, C)``."""
    import funcgrad.numpy as fnp

    axes = tuple(range(2, x.ndim))
    n = x.size // (x.shape[0] * x.shape[1])
    mean = fnp.mean(x, axis=axes)
    xc = x - fnp.reshape(mean, mean.shape + (1,) * (x.ndim - 2))
    var = fnp.sum(xc * xc, axis=axes) / np.asarray(max(n - 1, 0), dtype=x.dtype)
    return mean, var


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise every channel of every sample of ``(N, C, *)`` input over its positions.

    ``use_input_stats=True`` uses each instance's statistics (biased variance) and, when
    running buffers are given, updates them without recording gradients as PyTorch does:
    each sample updates its own copy (``(1 - momentum) * running + momentum * stat``, with
    the unbiased variance) and the buffer becomes the mean of the copies.
    ``use_input_stats=False`` normalises with the running buffers. The result is one
    ``NativeBatchNormBackward0`` node under a ``ViewBackward0``, like PyTorch's graph.
    """
    from compat._core.tensor import apply

    if use_input_stats:
        size = list(input.shape)
        if int(np.prod(size[2:])) == 1:
            raise ValueError(
                "Expected more than 1 spatial element when training, got input size "
                f"torch.Size({size})"
            )
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError(
            "Expected running_mean and running_var to be defined when use_input_stats is false"
        )
    if input.dim() == 0:  # PyTorch reads sizes 0 and 1 of the input
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.dim() == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    n, channels = input.shape[0], input.shape[1]
    # PyTorch runs batch_norm on a (1, N * C, *) view with every vector repeated N times.
    for name, t in (
        ("running_mean", running_mean),
        ("running_var", running_var),
        ("weight", weight),
        ("bias", bias),
    ):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {n * channels} elements not {t.numel() * n}")
    wb, has_weight = _wb(weight, bias)
    static = (("eps", float(eps)), ("has_weight", has_weight))
    if use_input_stats:
        out = apply(_instance_norm_f, "NativeBatchNormBackward0", (input, *wb), static)
    else:
        # copies (PyTorch's are repeats): the buffers are rewritten below
        args = (input, running_mean.clone(), running_var.clone(), *wb)
        out = apply(_batch_norm_eval_f, "NativeBatchNormBackward0", args, static)
    if running_mean is not None or running_var is not None:
        with torch.no_grad():
            if use_input_stats:
                stats = apply(_instance_stats_f, "InstanceStats", (input.detach(),))
            for i, buf in enumerate((running_mean, running_var)):
                if buf is None:
                    continue
                copies = buf.unsqueeze(0).repeat(n, 1)
                if use_input_stats:
                    copies = copies * (1.0 - momentum) + stats[i].to(buf.dtype) * momentum
                buf.copy_(copies.mean(0))
    return out.view(tuple(input.shape))
