"""PyTorch's ``TORCH_WARN_ONCE``: a warning given the first time only in a process, every
time under ``torch.set_warn_always(True)``. Low in the import order, so the tensor's own
conversions and the creation functions use it as the ops do."""

from __future__ import annotations

import warnings

__all__ = ["WARN_ALWAYS", "warn_once"]

_WARNED: set[str] = set()
#: ``torch.set_warn_always(True)``: every once-per-process warning warns every time
WARN_ALWAYS = [False]


def warn_once(key: str, message: str, stacklevel: int = 3) -> None:
    """A ``UserWarning`` the first time only, as PyTorch's ``TORCH_WARN_ONCE`` (every time
    under ``torch.set_warn_always(True)``); ``key`` names the warning."""
    if key not in _WARNED or WARN_ALWAYS[0]:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)
