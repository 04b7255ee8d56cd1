"""``nn.functional`` normalisation: batch, layer, group and instance norm, one node each.

As PyTorch's CPU kernels: a float16/bfloat16 input is normalised in float32 and the
result rounded once (``_fused.opmath``; its other operands join in float32), and its
parameters may be float32 ("mixed dtype": the result keeps the input's dtype), with
PyTorch's errors for the other dtype combinations (:func:`_check_param_dtypes`)."""

from __future__ import annotations

from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from compat._core import dtypes as _dt
from compat._core.ops._common import acc
from compat._core.tensor import apply
from compat.torch.nn import _fused
from compat.torch.nn.functional._arguments import Tensor


def _affine(y: Any, wb: tuple[Any, ...], has_weight: bool, shape: tuple[int, ...]) -> Any:
    """``y * weight + bias`` with each (if present) reshaped to ``shape``."""

    i = 0
    if has_weight:
        y = y * fnp.reshape(wb[0], shape)
        i = 1
    if len(wb) > i:
        y = y + fnp.reshape(wb[i], shape)
    return y


def _normalize(x: Any, axes: tuple[int, ...], eps: float) -> Any:
    """``(x - mean) * rsqrt(var + eps)`` over ``axes`` with the biased variance.

    A product with the reciprocal root, as PyTorch's kernels compute it: its derivative
    reads the centred input and the root, never the result, so the node saves no output
    and an in-place op on the result (``ReLU(inplace=True)`` after an ``InstanceNorm``)
    leaves the backward valid, as in PyTorch (a quotient's derivative reads the result).
    """

    mean = fnp.mean(x, axis=axes, keepdims=True)
    xc = x - mean
    var = fnp.mean(xc * xc, axis=axes, keepdims=True)
    return xc * flax.rsqrt(var + np.asarray(eps, dtype=x.dtype))


@_fused.opmath
def _batch_norm_train_f(x: Any, *wb: Any, eps: float, has_weight: bool) -> Any:
    axes = (0, *range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return _affine(_normalize(x, axes, eps), wb, has_weight, shape)


@_fused.opmath
def _batch_norm_eval_f(x: Any, mean: Any, var: Any, *wb: Any, eps: float, has_weight: bool) -> Any:

    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    inv = 1 / fnp.sqrt(fnp.reshape(var, shape) + np.asarray(eps, dtype=x.dtype))
    y = (x - fnp.reshape(mean, shape)) * inv
    return _affine(y, wb, has_weight, shape)


def _batch_stats_f(x: Any) -> Any:
    """Per-channel mean and unbiased variance (for the running statistics)."""

    x = fnp.asarray(x, acc(x.dtype))
    axes = (0, *range(2, x.ndim))
    n = x.size // x.shape[1]
    mean = fnp.mean(x, axis=axes)
    xc = x - fnp.reshape(mean, (1, x.shape[1]) + (1,) * (x.ndim - 2))
    var = fnp.sum(xc * xc, axis=axes) / np.asarray(max(n - 1, 0), dtype=x.dtype)
    return mean, var


def _check_param_dtypes(input: Tensor, *params: Tensor | None) -> None:
    """PyTorch's dtype rule for a normalisation's parameters (``params`` in its order:
    weight, bias, running mean, running variance): all of the input's dtype, or, when the
    first differs ("mixed dtype"), all float32 with a float16/bfloat16 input."""
    ps = [p for p in params if p is not None]
    if not ps:
        return
    x = input._npdtype
    if ps[0]._npdtype != x:
        if any(p._npdtype != np.float32 for p in ps):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if acc(x) == x:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for p in ps[1:]:
        if p._npdtype != x:
            raise RuntimeError(
                f"expected scalar type {_dt.scalar_type_name(x)} but found "
                f"{_dt.scalar_type_name(p._npdtype)}"
            )


def _wb(weight: Tensor | None, bias: Tensor | None) -> tuple[tuple[Any, ...], bool]:
    args = tuple(t for t in (weight, bias) if t is not None)
    return args, weight is not None


def _stats_without_grad(running_mean: Tensor | None, running_var: Tensor | None) -> None:
    """PyTorch's error for running statistics that require grad (``native_batch_norm``
    has no derivative for them, in training or evaluation)."""
    if not torch.is_grad_enabled():
        return
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t.requires_grad:
            raise RuntimeError(
                f"The function 'native_batch_norm' is not differentiable with respect to "
                f"argument '{name}'. This input cannot have requires_grad True."
            )


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
    _stats_without_grad(running_mean, running_var)
    _check_param_dtypes(input, weight, bias, running_mean, running_var)
    wb, has_weight = _wb(weight, bias)
    static = (("eps", float(eps)), ("has_weight", has_weight))
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        args = (input, running_mean, running_var, *wb)
        return apply(_batch_norm_eval_f, "NativeBatchNormBackward0", args, static)
    out = apply(_batch_norm_train_f, "NativeBatchNormBackward0", (input, *wb), static)
    # an empty batch has no statistics: the buffers stay as they are (PyTorch's)
    if (running_mean is not None or running_var is not None) and input.numel() > 0:
        with torch.no_grad():
            mean, var = apply(_batch_stats_f, "BatchStats", (input.detach(),))
            for buf, stat in ((running_mean, mean), (running_var, var)):
                if buf is not None:
                    buf.mul_(1.0 - momentum).add_(stat.to(buf.dtype), alpha=momentum)
    return out


@_fused.opmath
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
    _check_param_dtypes(input, weight, bias)
    wb, has_weight = _wb(weight, bias)
    static = (("k", k), ("eps", float(eps)), ("has_weight", has_weight))
    return apply(_layer_norm_f, "NativeLayerNormBackward0", (input, *wb), static)


def _rms_norm_f(x: Any, *w: Any, k: int, eps: float) -> Any:
    """PyTorch's composite: in float32 at least (half types upcast), ``x`` times the
    reciprocal root of the mean square over the last ``k`` axes plus ``eps``, times the
    weight, cast back to ``x``'s dtype."""

    dtype = x.dtype
    up = x if dtype.itemsize >= 4 else fnp.asarray(x, np.float32)
    axes = tuple(range(x.ndim - k, x.ndim))
    ms = fnp.mean(up * up, axis=axes, keepdims=True)
    y = up * flax.rsqrt(ms + np.asarray(eps, up.dtype))
    if w:
        y = y * w[0]
    return fnp.asarray(y, dtype)


def rms_norm(
    input: Tensor,
    normalized_shape: list[int] | tuple[int, ...],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dimensions,
    scaled by ``weight``; ``eps`` defaults to the machine epsilon of the computation's
    dtype (float32 for half types), as PyTorch. One op, named as PyTorch's top node."""

    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    k = len(shape)
    if weight is not None and list(weight.shape) != shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of "
            f"shape {list(weight.shape)} and normalized_shape = {shape}"
        )
    if input.dim() < k or list(input.shape[input.dim() - k :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={shape}, expected input with shape "
            f"[*{', '.join(map(str, shape))}], but got input of size{list(input.shape)}"
        )
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(
            f"\"rms_norm\" not implemented for '{_dt.scalar_type_name(input._npdtype)}'"
        )
    half = input.element_size() < 4
    if eps is None:
        eps = float(np.finfo(np.float32 if half else input._npdtype).eps)
    name = "ToCopyBackward0" if half else "MulBackward0"
    ws = () if weight is None else (weight,)
    return apply(_rms_norm_f, name, (input, *ws), (("k", k), ("eps", float(eps))))


@_fused.opmath
def _group_norm_f(x: Any, *wb: Any, groups: int, eps: float, has_weight: bool) -> Any:

    grouped = fnp.reshape(x, (x.shape[0], groups, x.size // max(x.shape[0] * groups, 1)))
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

    if input.dim() < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.dim()}"
        )
    channels = input.shape[1]
    size = [input.shape[0] * channels // num_groups, num_groups, *input.shape[2:]]
    if int(np.prod([size[0], *size[2:]])) == 1:  # one value per group: variance undefined
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )
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
    _check_param_dtypes(input, weight, bias)
    wb, has_weight = _wb(weight, bias)
    static = (("groups", int(num_groups)), ("eps", float(eps)), ("has_weight", has_weight))
    return apply(_group_norm_f, "NativeGroupNormBackward0", (input, *wb), static)


@_fused.opmath
def _instance_norm_f(x: Any, *wb: Any, eps: float, has_weight: bool) -> Any:
    axes = tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return _affine(_normalize(x, axes, eps), wb, has_weight, shape)


def _instance_stats_f(x: Any) -> Any:
    """Per-(sample, channel) mean and unbiased variance, each ``(N, C)``."""

    x = fnp.asarray(x, acc(x.dtype))
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
    _stats_without_grad(running_mean, running_var)
    _check_param_dtypes(input, weight, bias, running_mean, running_var)
    wb, has_weight = _wb(weight, bias)
    static = (("eps", float(eps)), ("has_weight", has_weight))
    if use_input_stats:
        out = apply(_instance_norm_f, "NativeBatchNormBackward0", (input, *wb), static)
    else:
        # copies (PyTorch's are repeats): the buffers are rewritten below
        args = (input, running_mean.clone(), running_var.clone(), *wb)
        out = apply(_batch_norm_eval_f, "NativeBatchNormBackward0", args, static)
    # an empty batch has no statistics: the buffers stay as they are (PyTorch's)
    if (running_mean is not None or running_var is not None) and input.numel() > 0:
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


def _lrn_f(x: Any, *, size: int, alpha: float, beta: float, k: float) -> Any:
    channels = x.shape[1]
    pads = [(0, 0)] * x.ndim
    pads[1] = (size // 2, (size - 1) // 2)
    sq = fnp.pad(x * x, pads)
    # the mean of the squares over the window of ``size`` channels around each channel
    total = sq[:, 0:channels]
    for i in range(1, size):
        total = total + sq[:, i : i + channels]
    return x / (total * (alpha / size) + k) ** beta


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """``x / (k + alpha * mean(x**2 over size neighbouring channels)) ** beta`` (AlexNet's
    normalisation), channels on dimension 1, the window zero-padded at the ends."""
    if input.dim() < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality                          input (got "
            f"{input.dim()} dimensions)"
        )
    if input.numel() == 0:
        return input
    static = (("size", int(size)), ("alpha", float(alpha)), ("beta", float(beta)), ("k", float(k)))
    return apply(_lrn_f, "DivBackward0", (input,), static)
