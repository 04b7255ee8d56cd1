"""Activation modules (``torch/nn/modules/activation.py``): each stores its options and
calls ``nn.functional``; ``PReLU`` holds its learned slope."""

from __future__ import annotations

import warnings
from typing import Any

import compat.torch as torch
from compat._core.optable import module_forms
from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter

# ``Sigmoid``, ``Tanh``, ...: the modules of the plain elementwise activations, from their
# op-table rows (``nn_module=``)
_DECLARED = module_forms(Module, F, __name__)
globals().update(_DECLARED)

__all__ = [
    *_DECLARED,
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "SELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "PReLU",
    "RReLU",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanhshrink",
    "Threshold",
]


class ReLU(Module):
    """``max(x, 0)`` elementwise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.silu(input)


class GELU(Module):
    """Gaussian error linear unit (``approximate='tanh'`` for the tanh formula)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Any) -> Any:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softmax(Module):
    """Softmax over ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax over ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


# PyTorch defines MultiheadAttention in this module; pickles and allow-lists name it here
from compat.torch.nn.modules.activation_attention import MultiheadAttention  # noqa: E402, F401


def _inplace(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class ELU(Module):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def forward(self, input: Any) -> Any:
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    """Scaled ELU with the self-normalising constants."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``."""

    def __init__(
        self,
        min_val: float = -1.0,
        max_val: float = 1.0,
        inplace: bool = False,
        min_value: float | None = None,
        max_value: float | None = None,
    ) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn(
                "keyword argument `min_value` is deprecated and rename to `min_val`",
                FutureWarning,
                stacklevel=2,
            )
            min_val = min_value
        if max_value is not None:
            warnings.warn(
                "keyword argument `max_value` is deprecated and rename to `max_val`",
                FutureWarning,
                stacklevel=2,
            )
            max_val = max_value
        if max_val <= min_val:
            raise AssertionError("max_val must be greater than min_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Simple(Module):
    """An activation without arguments (``inplace`` where PyTorch's takes it)."""

    _fn = "identity"

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        if self.inplace:
            return getattr(F, self._fn)(input, inplace=True)
        return getattr(F, self._fn)(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardswish(_Simple):
    """``x * relu6(x + 3) / 6``."""

    _fn = "hardswish"


class Hardsigmoid(_Simple):
    """``relu6(x + 3) / 6``."""

    _fn = "hardsigmoid"


class Mish(_Simple):
    """``x * tanh(softplus(x))``."""

    _fn = "mish"


class LogSigmoid(Module):
    """``log(sigmoid(x))``."""

    def forward(self, input: Any) -> Any:
        return F.logsigmoid(input)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input: Any) -> Any:
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input: Any) -> Any:
        return F.tanhshrink(input)


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold``."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Any) -> Any:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """``x ∓ lambd`` outside ``[-lambd, lambd]``, 0 inside."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Any) -> Any:
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """``x`` outside ``[-lambd, lambd]``, 0 inside."""

    def forward(self, input: Any) -> Any:
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """``x`` where ``x > threshold``, ``value`` elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace(self.inplace)}"


class PReLU(Module):
    """Leaky ReLU with a learned slope: one (``num_parameters=1``) or one per channel,
    initialised to ``init``."""

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        kw = {} if dtype is None else {"dtype": dtype}
        self.weight = Parameter(torch.full((num_parameters,), float(init), **kw))

    def reset_parameters(self) -> None:
        """Refill ``weight`` with ``init``."""
        with torch.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input: Any) -> Any:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomised leaky ReLU: slope drawn from ``[lower, upper]`` while training, their
    mean in eval mode."""

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace(self.inplace)}"


class GLU(Module):
    """``a * sigmoid(b)`` of the two halves of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x)`` over ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels of ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    def forward(self, input: Any) -> Any:
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3, _stacklevel=5)
