"""``nn.Linear``, ``nn.LazyLinear``, ``nn.Bilinear`` and ``nn.Identity``, initialised as
``torch/nn/modules/linear.py`` does."""

from __future__ import annotations

import math
from typing import Any

import compat.torch as torch
from compat.torch.nn import functional as F
from compat.torch.nn import init
from compat.torch.nn.modules.lazy import LazyModuleMixin
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter, UninitializedParameter

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]


class Identity(Module):
    """Returns its input unchanged; accepts (and ignores) any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``.

    ``weight`` is ``(out_features, in_features)``, initialised with
    ``kaiming_uniform_(a=sqrt(5))`` — uniform on ``±1/sqrt(in_features)`` — and
    ``bias`` uniform on the same bound, both drawn from the generator that
    ``torch.manual_seed`` seeds.

    Example:
        >>> import compat.torch as torch
        >>> torch.manual_seed(0)
        >>> layer = torch.nn.Linear(3, 2)
        >>> layer(torch.ones(4, 3)).shape
        torch.Size([4, 2])
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw ``weight`` and ``bias`` with PyTorch's default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Any) -> Any:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


def _empty(shape: tuple[int, ...], dtype: Any) -> Any:
    if dtype is None:
        return torch.empty(shape)
    return torch.empty(shape, dtype=dtype)


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dimension of its first input; it
    becomes a ``Linear`` then (``nn.modules.lazy``)."""

    cls_to_become = Linear

    def __init__(
        self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        """``Linear``'s initialisation, once the parameters have their shapes."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:
        """Materialise ``weight`` as ``(out_features, input.shape[-1])`` and ``bias``."""
        if self.has_uninitialized_params():
            with torch.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class NonDynamicallyQuantizableLinear(Linear):
    """A :class:`Linear` under the name PyTorch gives ``MultiheadAttention.out_proj``
    (pickled models and ``torch.load`` allow-lists name this class)."""


class Bilinear(Module):
    """``y = x1^T A x2 + b``: ``weight`` is ``(out_features, in1_features, in2_features)``,
    ``weight`` and ``bias`` drawn uniformly on ``±1/sqrt(in1_features)`` as PyTorch's."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in1_features, in2_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw ``weight`` and ``bias`` uniformly on ``±1/sqrt(in1_features)``."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Any, input2: Any) -> Any:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
