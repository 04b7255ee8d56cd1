"""``torch.autograd.grad_mode``: the grad-mode context managers, and
``_unsafe_preserve_version_counter``."""

from __future__ import annotations

from typing import Any

from compat._core.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from compat._core.tensor import Tensor

__all__ = [
    "enable_grad",
    "inference_mode",
    "no_grad",
    "set_grad_enabled",
]


class _unsafe_preserve_version_counter:
    """Context manager: the version counters of ``tensors`` are what they were on entry
    when it exits (in-place changes inside are hidden from autograd's checks)."""

    def __init__(self, tensors: Tensor | tuple[Tensor, ...]) -> None:
        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)

    def __enter__(self) -> None:
        self.prev = [t._vc.v for t in self.tensors]

    def __exit__(self, *exc: Any) -> None:
        for t, v in zip(self.tensors, self.prev):
            t._vc.v = v
