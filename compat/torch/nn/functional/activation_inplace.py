"""The in-place activation aliases of ``torch.nn.functional``: ``relu_``, ``elu_``, ...

Each is its activation with ``inplace=True``, with PyTorch's positional
signature (no ``inplace`` argument): ``input`` takes the result and is
returned, the graph node is the in-place one (``EluBackward1``, ...), and a
leaf that requires grad raises PyTorch's ``RuntimeError``. With a negative ``alpha``
(``elu_``, ``celu_``) or slope (``leaky_relu_``, ``rrelu_``) the input cannot be
recovered from the result, so, as PyTorch's, the backward pass through the result
raises, asking for the out-of-place form.
"""

from __future__ import annotations

import compat.torch as torch
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional.activation import (
    celu,
    elu,
    hardtanh,
    leaky_relu,
    relu,
    rrelu,
    selu,
)
from compat.torch.nn.functional.activation import threshold as _threshold


def _tensor(name: str, input: Tensor) -> Tensor:
    """``input``, or PyTorch's ``TypeError`` when it is not a Tensor."""
    if not isinstance(input, torch.Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input


_ELU_MSG = (
    "In-place elu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead."
)
_LEAKY_MSG = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
    "backward calculation with negative slope"
)


def _no_backward(out: Tensor, negative: bool, msg: str) -> Tensor:
    """``out``; when ``negative``, a gradient reaching it raises ``msg``."""
    if negative and out.requires_grad:

        def refuse(grad: Tensor) -> None:
            raise RuntimeError(msg)

        out.register_hook(refuse)
    return out


def relu_(input: Tensor) -> Tensor:
    """In-place ``relu``."""
    return relu(_tensor("relu_", input), inplace=True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``."""
    return _no_backward(elu(_tensor("elu_", input), alpha, inplace=True), alpha < 0, _ELU_MSG)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``."""
    return _no_backward(celu(_tensor("celu_", input), alpha, inplace=True), alpha < 0, _ELU_MSG)


def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``."""
    return selu(_tensor("selu_", input), inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``."""
    out = leaky_relu(_tensor("leaky_relu_", input), negative_slope, inplace=True)
    return _no_backward(out, negative_slope < 0, _LEAKY_MSG)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``."""
    return hardtanh(_tensor("hardtanh_", input), min_val, max_val, inplace=True)


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place ``rrelu`` (random slopes drawn as PyTorch draws them while ``training``)."""
    out = rrelu(_tensor("rrelu_", input), lower, upper, training, inplace=True)
    negative = lower < 0 if training else (lower + upper) / 2 < 0
    return _no_backward(out, negative, _LEAKY_MSG)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``: ``value`` where ``input <= threshold``."""
    return _threshold(_tensor("threshold_", input), threshold, value, inplace=True)
