"""Grad mode: per-thread switch deciding whether ops are recorded for backward.

``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` work as
context managers and as decorators, like PyTorch's.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = True


_state = _State()


def is_grad_enabled() -> bool:
    """Whether ops record a graph in this thread."""
    return _state.enabled


def _set(mode: bool) -> None:
    _state.enabled = bool(mode)


class _DecoratorContextManager:
    """Base for grad-mode context managers that also decorate functions and generators."""

    def __call__(self, func: Callable) -> Callable:
        if inspect.isclass(func):
            raise RuntimeError("grad-mode decorators cannot decorate classes")
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:  # pass exceptions into the generator
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value

            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: Any) -> None:
        raise NotImplementedError


class no_grad(_DecoratorContextManager):
    """Disable recording: results of ops have ``requires_grad=False``."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Enable recording inside a ``no_grad`` block."""

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)`` sets grad mode now (a function call) and restores the
    previous mode when used as a context manager exits."""

    def __init__(self, mode: bool) -> None:
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __call__(self, func: Callable) -> Callable:
        _state.enabled = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _state.enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad`` (compat has no separate inference tensors)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self.prev = _state.enabled
        if self.mode:
            _state.enabled = False

    def __exit__(self, *exc: Any) -> None:
        _state.enabled = self.prev

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)


def is_inference_mode_enabled() -> bool:
    return False
