"""``torch.autograd.grad_mode``: the grad-mode context managers, PyTorch's thread-local
engine switches (multithreaded backward, the gradient layout contract) and
``_unsafe_preserve_version_counter``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from compat._core import views as _views
from compat._core.grad_mode import (
    _DecoratorContextManager,
    enable_grad,
    inference_mode,
    no_grad,
    set_grad_enabled,
)
from compat._core.tensor import Tensor

__all__ = [
    "enable_grad",
    "inference_mode",
    "no_grad",
    "set_grad_enabled",
    "set_multithreading_enabled",
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


def is_view_replay_enabled() -> bool:
    """Whether views regenerated after an in-place change are named after their view op."""
    return _views.REPLAY[0]


def _set_view_replay_enabled(mode: bool) -> None:
    _views.REPLAY[0] = bool(mode)


class _force_original_view_tracking:
    """Switch view replay to ``mode`` now (a call) or for a ``with`` block (restored on
    exit), as PyTorch's."""

    def __init__(self, mode: bool) -> None:
        self.prev = is_view_replay_enabled()
        _set_view_replay_enabled(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        _set_view_replay_enabled(self.prev)


class _EngineSwitches(threading.local):
    """PyTorch's thread-local engine settings compat keeps: compat's backward always runs
    on the calling thread and accumulates gradients in the parameter's own layout, so
    the settings change nothing here but are read back as set (``is_...``)."""

    def __init__(self) -> None:
        self.multithreading = True
        self.grad_layout = True


_switches = _EngineSwitches()


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is enabled (``set_multithreading_enabled``)."""
    return _switches.multithreading


class _SwitchContext(_DecoratorContextManager):
    """Set a thread-local engine switch now (a call) and restore it when a ``with`` block
    exits; also a decorator, as PyTorch's."""

    _attr = ""
    #: the name PyTorch's refusal of a non-bool says (its C++ setter's)
    _setter = ""
    #: used as a decorator, the switch is first restored (PyTorch's layout policy; its
    #: multithreading switch has no such ``__call__`` and stays set)
    _restore_on_decorate = True

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(
                f"{self._setter}(): argument 'enabled' (position 1) must be bool, "
                f"not {type(mode).__name__}"
            )
        self.prev = getattr(_switches, self._attr)
        self.mode = mode
        setattr(_switches, self._attr, mode)

    def __call__(self, func: Callable) -> Callable:
        if self._restore_on_decorate:
            setattr(_switches, self._attr, self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        setattr(_switches, self._attr, self.mode)

    def __exit__(self, *exc: Any) -> None:
        setattr(_switches, self._attr, self.prev)

    def clone(self) -> _SwitchContext:
        return self.__class__(self.mode)


class set_multithreading_enabled(_SwitchContext):
    """Enable or disable multithreaded backward (thread-local). compat's backward runs on
    the calling thread either way (PyTorch's does too for CPU tensors)."""

    _attr = "multithreading"
    _setter = "set_multithreading_enabled"
    _restore_on_decorate = False


class enforce_grad_layout_policy(_SwitchContext):
    """Whether the engine enforces the gradient layout contract (accumulated gradients
    strided as their parameters), thread-local. compat's accumulated gradients always
    follow the contract, so relaxing it changes nothing."""

    _attr = "grad_layout"
    _setter = "set_grad_layout_enforcement_enabled"

    def __init__(self, enable: bool = True) -> None:
        super().__init__(enable)
