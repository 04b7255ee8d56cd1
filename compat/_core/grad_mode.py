"""Grad mode and inference mode: per-thread switches deciding whether ops are recorded.

``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` work as
context managers and as decorators, like PyTorch's (``torch/utils/_contextlib.py``):
``no_grad`` and ``enable_grad`` also decorate without parentheses, generator functions
keep the mode around each step only, and decorating a class warns and wraps its
constructor.

Two per-thread flags, as in PyTorch's ``AutogradState``: grad mode (what
``is_grad_enabled()`` reports) and inference mode. An op is recorded only when grad
mode is on and inference mode is off (``_state.record``): ``enable_grad()`` inside
``inference_mode()`` turns grad mode on but records nothing, as in PyTorch. Tensors made
while inference mode is on are *inference tensors* (``Tensor._inference``).
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings
from collections.abc import Callable
from typing import Any

_CLASS_DECORATION = (
    "Decorating classes is deprecated and will be disabled in future versions. You should "
    "only decorate functions or methods. To preserve the current behavior of class "
    "decoration, you can directly decorate the `__init__` method and nothing else."
)


class _State(threading.local):
    def __init__(self) -> None:
        self.enabled = True
        self.inference = False
        #: ``enabled and not inference``: whether ops record a graph (read by ``apply``)
        self.record = True


_state = _State()


def is_grad_enabled() -> bool:
    """Whether grad mode is on in this thread."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    """Whether inference mode is on in this thread."""
    return _state.inference


def _set(mode: bool) -> None:
    _state.enabled = mode = bool(mode)
    _state.record = mode and not _state.inference


def _set_both(enabled: bool, inference: bool) -> None:
    _state.enabled = enabled
    _state.inference = inference
    _state.record = enabled and not inference


def typename(value: Any) -> str:
    """The type name PyTorch's argument errors print (``int``, ``numpy.bool``)."""
    t = type(value)
    if t.__module__ == "builtins":
        return t.__qualname__
    return f"{t.__module__}.{t.__qualname__}"


def check_bool(fn: str, name: str, value: Any) -> None:
    """PyTorch's ``TypeError`` for a non-``bool`` first argument of ``fn``."""
    if not isinstance(value, bool):
        raise TypeError(
            f"{fn}(): argument '{name}' (position 1) must be bool, not {typename(value)}"
        )


def _wrap_generator(make: Callable[[], Any], func: Callable) -> Callable:
    """``func`` (a generator function) with the context ``make()`` entered around each step
    only, so the caller's mode is in force between steps."""

    @functools.wraps(func)
    def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
        gen = func(*args, **kwargs)
        try:
            with make():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make():
                        gen.close()
                    raise
                except BaseException as e:  # pass exceptions into the generator
                    with make():
                        response = gen.throw(e)
                else:
                    with make():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value

    return gen_wrapper


class _DecoratorContextManager:
    """Base for grad-mode context managers that also decorate functions and generators."""

    def __call__(self, func: Callable) -> Callable:
        if inspect.isclass(func):
            warnings.warn(_CLASS_DECORATION, FutureWarning, stacklevel=2)
            cls = func

            def func(*args: Any, **kwargs: Any) -> Any:
                return cls(*args, **kwargs)

        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)

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


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """A context manager that also decorates without parentheses (``@torch.no_grad``)."""

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable recording: results of ops have ``requires_grad=False``."""

    def __init__(self, orig_func: Callable | None = None) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _set(False)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Enable recording inside a ``no_grad`` block."""

    def __init__(self, orig_func: Callable | None = None) -> None:
        self.prev = True

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _set(True)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)`` sets grad mode now (a function call) and restores the
    previous mode when used as a context manager exits."""

    def __init__(self, mode: bool) -> None:
        check_bool("set_grad_enabled", "enabled", mode)
        self.prev = _state.enabled
        self.mode = mode
        _set(mode)

    def __call__(self, func: Callable) -> Callable:
        _set(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _set(self.mode)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev)

    def __repr__(self) -> str:
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    __str__ = __repr__

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Inference mode: nothing is recorded, and tensors made inside are inference tensors
    (they cannot be saved for backward or updated in place outside inference mode).

    ``inference_mode(False)`` turns inference mode off and grad mode on inside it (as
    PyTorch's ``InferenceMode(false)``); ``@inference_mode`` decorates without parentheses.
    """

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self._prev: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        self._prev.append((_state.enabled, _state.inference))
        _set_both(not self.mode, self.mode)

    def __exit__(self, *exc: Any) -> None:
        _set_both(*self._prev.pop())

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)
