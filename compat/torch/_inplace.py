"""``torch.abs_``, ``torch.relu_``, ...: PyTorch's top-level in-place functions, each the
tensor method of that name called on ``input`` (same checks, node names and version
counters), with PyTorch's error for an ``input`` that is not a tensor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat._core.tensor import Tensor

#: the in-place methods PyTorch 2.13 also exposes as ``torch.<name>(input, ...)``
METHOD_NAMES = [
    "abs_",
    "acos_",
    "acosh_",
    "addmv_",
    "arccos_",
    "arccosh_",
    "arcsin_",
    "arcsinh_",
    "arctan_",
    "arctanh_",
    "asin_",
    "asinh_",
    "atan_",
    "atanh_",
    "ceil_",
    "clamp_",
    "clamp_max_",
    "clamp_min_",
    "clip_",
    "cos_",
    "cosh_",
    "deg2rad_",
    "detach_",
    "erf_",
    "erfc_",
    "exp2_",
    "exp_",
    "expm1_",
    "fill_",
    "fix_",
    "floor_",
    "frac_",
    "gcd_",
    "i0_",
    "lcm_",
    "ldexp_",
    "log10_",
    "log1p_",
    "log2_",
    "log_",
    "logit_",
    "nan_to_num_",
    "neg_",
    "negative_",
    "rad2deg_",
    "reciprocal_",
    "relu_",
    "round_",
    "rsqrt_",
    "sigmoid_",
    "sin_",
    "sinh_",
    "sqrt_",
    "square_",
    "tan_",
    "tanh_",
    "trunc_",
    "xlogy_",
    "zero_",
]
#: the ones ``torch.nn.functional`` defines (resolved lazily: ``nn`` loads on first use)
FUNCTIONAL_NAMES = ("celu_", "rrelu_", "selu_", "threshold_")


def _method_function(name: str) -> Callable[..., Any]:
    def function(input: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(...)``, as ``torch.{name}``."
    return function


FUNCTIONS = {name: _method_function(name) for name in METHOD_NAMES}
