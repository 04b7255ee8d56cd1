"""``nn.functional`` layers and activations: ``linear``, ``relu``, ``gelu``, ``softmax``, ``dropout``."""

from __future__ import annotations

import math
import warnings
from typing import Any

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core.mutation import apply_inplace, inplace_result
from compat._core.tensor import apply
from compat.torch.nn import _fused
from compat.torch.nn.functional._utils import (
    Tensor,
    _to_dtype,
)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    if weight.ndim == 2 and input.ndim >= 1 and input.shape[-1] != weight.shape[1]:
        rows = math.prod(input.shape[:-1])
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
            f"{weight.shape[1]}x{weight.shape[0]})"
        )
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


def _leaky_relu_f(x: Any, *, slope: float) -> Any:
    return fnp.where(x > 0, x, x * slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere (one op, PyTorch's
    ``LeakyReluBackward0``, ``LeakyReluBackward1`` in place)."""
    if not isinstance(input, torch.Tensor):
        raise TypeError(
            f"leaky_relu(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    if not input.is_floating_point():
        raise NotImplementedError(f"\"leaky_relu\" not implemented for '{input.dtype}'")
    static = (("slope", float(negative_slope)),)
    if inplace:
        return apply_inplace(input, _leaky_relu_f, "LeakyReluBackward1", (), static)
    return apply(_leaky_relu_f, "LeakyReluBackward0", (input,), static)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    return torch.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return torch.tanh(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``."""
    if inplace:
        return inplace_result(input, silu, (), {})
    out = _fused.silu(input)
    return out if out is not None else input * torch.sigmoid(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh formula."""
    if approximate in ("none", "tanh"):
        out = _fused.gelu(input, approximate)
        if out is not None:
            return out
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

    The mask is drawn as PyTorch's CPU dropout draws it (``bernoulli_(1 - p)`` on a tensor
    like ``input``), so a seeded run zeroes the same elements; with ``training=False`` (or ``p == 0``) the input is returned as is.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if inplace:
        return inplace_result(input, dropout, (p, training), {})
    if p == 1.0:
        return input * 0.0
    keep = 1.0 - p
    with torch.no_grad():  # 0 where kept, 1 where dropped: ``draws < keep`` is the mask
        draws = 1.0 - torch.empty(tuple(input.shape), dtype=input.dtype).bernoulli_(keep)
    fused = _fused.scaled_mask_mul(input, draws, keep)
    if fused is not None:
        return fused
    with torch.no_grad():
        mask = _to_dtype(draws < keep, input.dtype) * (1.0 / keep)
    return input * mask


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A Gumbel-softmax sample: ``softmax((logits + g) / tau, dim)`` with ``g ~ Gumbel(0, 1)``.

    The noise is ``-log`` of ``empty_like(logits).exponential_()``, as PyTorch
    draws it, so a seeded run gives PyTorch's sample. ``hard=True`` returns the
    one-hot of the sample's argmax in the forward pass and the soft sample's
    gradient (straight-through). ``eps`` is deprecated and unused.
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    noise = -torch.empty_like(logits).exponential_().log()
    y_soft = ((logits + noise) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = torch.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
