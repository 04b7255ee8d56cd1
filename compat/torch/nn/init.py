"""``nn.init``: in-place initialisers (``torch/nn/init.py``), drawing from ``torch.manual_seed``.

Each function overwrites its tensor under ``torch.no_grad()`` with values from
``torch.rand``/``torch.randn`` (so the generator ``torch.manual_seed`` seeds
decides them) and returns the tensor. The fan and gain arithmetic is
PyTorch's, so distributions match PyTorch's exactly (the draws themselves come
from compat's generator, not PyTorch's).

Example:
    >>> import math
    >>> import compat.torch as torch
    >>> w = torch.empty(3, 5)
    >>> _ = torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5))  # what nn.Linear does
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import compat.torch as torch

__all__ = [
    "calculate_gain",
    "constant",
    "constant_",
    "dirac",
    "dirac_",
    "eye",
    "eye_",
    "kaiming_normal",
    "kaiming_normal_",
    "kaiming_uniform",
    "kaiming_uniform_",
    "normal",
    "normal_",
    "ones_",
    "orthogonal",
    "orthogonal_",
    "sparse",
    "sparse_",
    "trunc_normal_",
    "uniform",
    "uniform_",
    "xavier_normal",
    "xavier_normal_",
    "xavier_uniform",
    "xavier_uniform_",
    "zeros_",
]

Tensor = Any


def _no_grad_copy_(tensor: Tensor, values: Tensor) -> Tensor:
    with torch.no_grad():
        tensor.copy_(values)
    return tensor


def _no_grad_uniform_(tensor: Tensor, a: float, b: float, generator: Any = None) -> Tensor:
    with torch.no_grad():  # Tensor.uniform_: PyTorch's draws after the same manual_seed
        return tensor.uniform_(a, b, generator=generator)


def _no_grad_normal_(tensor: Tensor, mean: float, std: float, generator: Any = None) -> Tensor:
    with torch.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (PyTorch's table: relu √2, tanh 5/3, ...)."""
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of shape ``(out, in, *receptive_field)``."""
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    num_input_fmaps = tensor.shape[1]
    num_output_fmaps = tensor.shape[0]
    receptive_field_size = 1
    for s in tuple(tensor.shape)[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _is_empty(tensor: Tensor) -> bool:
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return True
    return False


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from ``U(a, b)``."""
    return _no_grad_uniform_(tensor, a, b, generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from ``N(mean, std**2)``."""
    return _no_grad_normal_(tensor, mean, std, generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    with torch.no_grad():
        tensor.fill_(val)
    return tensor


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    with torch.no_grad():
        tensor.zero_()
    return tensor


def _xavier_std(tensor: Tensor, gain: float) -> float:
    """Glorot's standard deviation ``gain * sqrt(2 / (fan_in + fan_out))`` (both forms')."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    a = math.sqrt(3.0) * _xavier_std(tensor, gain)
    return _no_grad_uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    return _no_grad_normal_(tensor, 0.0, _xavier_std(tensor, gain), generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    """He's standard deviation ``gain / sqrt(fan)`` (both forms'; the fan checked first)."""
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He uniform: ``U(-bound, bound)`` with ``bound = gain * sqrt(3 / fan)``."""
    if _is_empty(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return _no_grad_uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """He normal: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``."""
    if _is_empty(tensor):
        return tensor
    return _no_grad_normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def _trunc_normal_by_redraw(
    tensor: Tensor, mean: float, std: float, lo: float, hi: float, gen: Any
) -> None:
    """Draw ``N(mean, std**2)``; redraw (a whole new draw, kept where out of range) until
    every value lies in ``[lo, hi]``: PyTorch's sampler when the range holds most mass."""
    result = tensor.normal_(mean, std, generator=gen)
    while True:
        out = (result < lo) | (result > hi)
        if not bool(out.any()):
            break
        result = torch.where(
            out, torch.empty_like(result).normal_(mean, std, generator=gen), result
        )
    if result is not tensor:
        tensor.copy_(result)


def _trunc_normal_by_rejection(
    tensor: Tensor, mean: float, std: float, a: float, b: float, gen: Any
) -> None:
    """Uniform proposals on ``[a, b]`` accepted with probability ``pdf(x) / pdf(mode)``
    (log-uniform test), pending places redrawn: PyTorch's sampler for a narrow range."""
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_ratio(x: Tensor) -> Tensor:
        return ((x - mean) / std).pow(2) * -0.5 - log_peak

    result = tensor.uniform_(a, b, generator=gen)
    pending = torch.empty_like(tensor).uniform_(generator=gen).log() > log_ratio(result)
    while bool(pending.any()):
        cand = torch.empty_like(tensor).uniform_(a, b, generator=gen)
        result = torch.where(pending, cand, result)
        accept = torch.empty_like(tensor).uniform_(generator=gen).log() > log_ratio(cand)
        pending = torch.where(pending, accept, pending)
    if result is not tensor:
        tensor.copy_(result)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Fill with draws from ``N(mean, std**2)`` truncated to ``[a, b]``, by PyTorch's two
    samplers (redrawing when ``[a, b]`` holds more than 30% of the mass, uniform proposals
    with rejection otherwise), so a seed gives PyTorch's values."""

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with torch.no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            # the bounds as the tensor's dtype holds them (the test of a value is exact)
            lo = tensor.new_tensor(a).item()
            hi = tensor.new_tensor(b).item()
            _trunc_normal_by_redraw(tensor, mean, std, lo, hi, generator)
        else:
            _trunc_normal_by_rejection(tensor, mean, std, a, b, generator)
    return tensor


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-d tensor with the identity matrix (ones on the main diagonal)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _no_grad_copy_(tensor, torch.eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-d convolution weight with the Dirac delta: within each of
    ``groups`` groups, output channel ``d`` has a one at input channel ``d``'s centre
    (for the first ``min(out_per_group, in)`` channels), zeros elsewhere."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tuple(tensor.shape)
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    centre = tuple(n // 2 for n in shape[2:])
    delta = np.zeros(shape, dtype=np.float64)
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            delta[(g * per_group + d, d, *centre)] = 1.0
    return _no_grad_copy_(tensor, torch.tensor(delta, dtype=tensor.dtype))


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix times ``gain``: the Q of a standard normal
    matrix's QR (its trailing dims flattened; transposed when wide), its columns' signs
    set by R's diagonal so that Q is uniformly distributed (Saxe et al. 2013)."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with torch.no_grad():
        flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if rows < cols:
            flat = flat.t()
        q, r = torch.linalg.qr(flat)
        q = q * torch.diag(r, 0).sign()
        if rows < cols:
            q = q.t()
        tensor.copy_(q.reshape(tensor.shape))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fill a 2-d tensor with ``N(0, std**2)`` draws, then zero ``ceil(sparsity * rows)``
    places of each column, picked by ``randperm`` (a dense tensor: Martens 2010)."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tuple(tensor.shape)
    zeros = math.ceil(sparsity * rows)
    with torch.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            tensor[torch.randperm(rows)[:zeros], col] = 0
    return tensor


def _deprecated(new: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The old name of ``new`` (without its trailing underscore): ``new`` with PyTorch's
    ``FutureWarning``."""
    old = new.__name__[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    deprecated_init.__name__ = old
    deprecated_init.__doc__ = f"Deprecated: use :func:`{new.__name__}`."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
