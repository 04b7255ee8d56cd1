"""``torch.autograd.function``: custom differentiable operations (``Function``)."""

from __future__ import annotations

from compat._core.function import (
    BackwardCFunction,
    Function,
    FunctionCtx,
    FunctionMeta,
    InplaceFunction,
    once_differentiable,
)

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "FunctionMeta",
    "InplaceFunction",
    "once_differentiable",
]
