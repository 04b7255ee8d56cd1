"""``torch.utils._python_dispatch``: ``TorchDispatchMode`` over compat's ops.

A subclass's ``__torch_dispatch__(func, types, args, kwargs)`` sees each compat op
called while the mode is entered, ``func`` being its ``torch.ops.aten`` overload; see
:mod:`compat._core.dispatch_mode`.
"""

from __future__ import annotations

from typing import Any

from compat._core import aten as _aten  # noqa: F401  (names the ops modes are handed)
from compat._core import dispatch_mode as _dm

__all__ = ["TorchDispatchMode"]


class TorchDispatchMode:
    """A context manager whose ``__torch_dispatch__`` intercepts compat's ops."""

    def __init__(self, _dispatch_key: Any = None) -> None:
        pass

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchDispatchMode:
        _dm.push(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _dm.pop(self)

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchDispatchMode:
        return cls(*args, **kwargs)


def _get_current_dispatch_mode() -> Any:
    """The innermost dispatch mode entered (whose handler is not running), or ``None``."""
    return _dm.current()
