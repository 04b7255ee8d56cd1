"""PyTorch's ``TORCH_WARN_ONCE``: a warning given the first time only in a process, every
time under ``torch.set_warn_always(True)``; and ``TORCH_WARN``'s place: the user's line.
Low in the import order, so the tensor's own conversions and the creation functions use it
as the ops do."""

from __future__ import annotations

import sys
import warnings

__all__ = ["WARN_ALWAYS", "warn_once", "warn_user"]

_WARNED: set[str] = set()
#: ``torch.set_warn_always(True)``: every once-per-process warning warns every time
WARN_ALWAYS = [False]


def warn_once(key: str, message: str, stacklevel: int = 3) -> None:
    """A ``UserWarning`` the first time only, as PyTorch's ``TORCH_WARN_ONCE`` (every time
    under ``torch.set_warn_always(True)``); ``key`` names the warning."""
    if key not in _WARNED or WARN_ALWAYS[0]:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


def warn_user(msg: str) -> None:
    """Warn ``msg`` from the first caller outside compat and funcgrad (Python's default
    filter then shows one warning per line of user code, as PyTorch's do)."""
    f, level = sys._getframe(0), 1
    while f is not None and f.f_globals.get("__name__", "").startswith(("compat.", "funcgrad.")):
        f, level = f.f_back, level + 1
    warnings.warn(msg, UserWarning, stacklevel=level)
