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

import math
import operator
import warnings
from typing import Any

import numpy as np

import compat.torch as torch
from compat.torch.nn import _fused

__all__ = [
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "cross_entropy",
    "dropout",
    "gelu",
    "l1_loss",
    "leaky_relu",
    "linear",
    "log_softmax",
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


def _conv_arg(name: str, value: Any, nd: int) -> tuple[int, ...]:
    """An int or a sequence of 1 or ``nd`` ints, expanded to ``nd`` (PyTorch's ``expand_param``)."""
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    try:
        if any(isinstance(v, bool) for v in values):
            raise TypeError
        values = [operator.index(v) for v in values]
    except TypeError:
        raise TypeError(
            f"conv{nd}d(): argument '{name}' must be tuple of ints, not {value!r}"
        ) from None
    if len(values) == 1:
        values = values * nd
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
