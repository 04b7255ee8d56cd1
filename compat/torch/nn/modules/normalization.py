"""``nn.LayerNorm``, ``nn.GroupNorm``, ``nn.RMSNorm`` and ``nn.LocalResponseNorm`` as in
``torch/nn/modules/normalization.py``."""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.nn import functional as F
from compat.torch.nn import init
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter

__all__ = ["GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]


def _empty(shape: tuple[int, ...], dtype: Any) -> Any:
    return torch.empty(shape) if dtype is None else torch.empty(shape, dtype=dtype)


def _affine_parameters(
    module: Module, affine: bool, bias: bool, shape: tuple[int, ...], dtype: Any
) -> None:
    """``module.weight`` and (with ``bias``) ``module.bias`` of ``shape`` when ``affine``;
    otherwise both registered as ``None``."""
    if affine:
        module.weight = Parameter(_empty(shape, dtype))
        if bias:
            module.bias = Parameter(_empty(shape, dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module, affine: bool) -> None:
    """``weight`` to ones, ``bias`` (if any) to zeros, when ``affine``."""
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dimensions; ``weight`` (ones) and
    ``bias`` (zeros) of that shape when ``elementwise_affine``.

    Example:
        >>> import compat.torch as torch
        >>> torch.nn.LayerNorm(4)(torch.randn(2, 3, 4)).shape
        torch.Size([2, 3, 4])
    """

    def __init__(
        self,
        normalized_shape: int | list[int] | tuple[int, ...],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.elementwise_affine, bias, self.normalized_shape, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``weight`` to ones, ``bias`` to zeros."""
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input: Any) -> Any:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dimensions,
    scaled by ``weight`` (ones) when ``elementwise_affine``; ``eps=None`` is the machine
    epsilon of the computation's dtype, as PyTorch."""

    def __init__(
        self,
        normalized_shape: int | list[int] | tuple[int, ...],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(_empty(self.normalized_shape, dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``weight`` to ones."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Any) -> Any:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class GroupNorm(Module):
    """Normalise ``num_groups`` groups of channels of ``(N, C, *)`` input; per-channel
    ``weight`` and ``bias`` when ``affine``."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, self.affine, bias, (num_channels,), dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """``weight`` to ones, ``bias`` to zeros."""
        _reset_affine(self, self.affine)

    def forward(self, input: Any) -> Any:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class LocalResponseNorm(Module):
    """Normalise each channel by its ``size`` neighbouring channels' mean square
    (``F.local_response_norm``; AlexNet's layer)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Any) -> Any:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
