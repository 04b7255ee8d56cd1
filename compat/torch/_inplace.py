"""``torch.abs_``, ``torch.relu_``, ...: PyTorch's top-level in-place functions, each the
tensor method of that name called on ``input`` (same checks, node names and version
counters), with PyTorch's error for an ``input`` that is not a tensor. Which methods
PyTorch also has as functions is said by their op-table rows (``inplace_function=``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat._core import ops as _ops  # noqa: F401  (declares the op table's rows)
from compat._core.optable import inplace_function_names
from compat._core.tensor import Tensor

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


#: one per op-table row declared with ``inplace_function=``
FUNCTIONS = {name: _method_function(name) for name in inplace_function_names()}
