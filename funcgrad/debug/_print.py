"""``funcgrad.debug.print`` and ``funcgrad.debug.callback`` (JAX's ``jax.debug`` ones);
see :mod:`funcgrad.debug`."""

from __future__ import annotations

import string
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core.interp import to_aval
from funcgrad.primitives.effects import debug_callback
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["callback", "print"]


class _FlatCallback:
    """``fun`` on the flat dynamic leaves, with the static leaves put back; equal
    (and hashing equal) for equal functions and statics, so programs that call the
    same thing cache as one."""

    def __init__(self, fun: Callable, extra: tuple, in_tree: Any, statics: tuple) -> None:
        self.fun, self.extra, self.in_tree, self.statics = fun, extra, in_tree, statics

    def _key(self) -> tuple:
        return (self.fun, self.extra, self.in_tree, self.statics)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _FlatCallback):
            return False
        try:
            return bool(self._key() == other._key())
        except Exception:  # statics whose == is not a bool (arrays)
            return self is other

    def __hash__(self) -> int:
        try:
            return hash(self._key())
        except TypeError:
            return id(self)

    def __call__(self, *dyn: Any) -> None:
        static = dict(self.statics)
        it = iter(dyn)
        n = len(static) + len(dyn)
        leaves = [static[i] if i in static else next(it) for i in range(n)]
        args, kwargs = tree_unflatten(self.in_tree, leaves)
        self.fun(*self.extra, *args, **kwargs)


def _split(args: tuple, kwargs: dict) -> tuple[list, Any, tuple]:
    leaves, in_tree = tree_flatten((args, kwargs))
    dyn, statics = [], []
    for i, x in enumerate(leaves):
        try:
            to_aval(x)
            dyn.append(x)
        except (TypeError, ValueError):
            statics.append((i, x))
    return dyn, in_tree, tuple(statics)


def _check_options(name: str, ordered: Any, partitioned: Any) -> None:
    if not isinstance(ordered, bool):
        raise TypeError(f"{name}: ordered must be a bool, got {ordered!r}")
    if partitioned:
        raise NotImplementedError(f"{name}: partitioned=True is not supported by funcgrad")


def callback(
    callback: Callable[..., None] | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Call ``callback(*args, **kwargs)`` with the runtime values of the arrays in
    ``args``/``kwargs`` (other leaves are passed as they are), eagerly or from inside
    any transform. ``ordered=True`` keeps the order of ordered callbacks under ``jit``.
    With ``callback=None`` returns a function taking ``(callback, *args, **kwargs)``
    (JAX's two-call form)."""
    _check_options("debug.callback", ordered, partitioned)

    def call(fn: Callable[..., None], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(fn):
            raise TypeError(
                "first argument to funcgrad.debug.callback must be callable, "
                f"but got an object of type {type(fn)}"
            )
        dyn, in_tree, statics = _split(c_args, c_kwargs)
        debug_callback(_FlatCallback(fn, (), in_tree, statics), *dyn, ordered=ordered)

    if callback is not None:
        call(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return call


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting traced values."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `funcgrad.debug.print`: {unused}")
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused_kw:
            # an f-string formats its fields at once: the keyword arguments go unused
            raise ValueError(
                f"Unused keyword arguments to `funcgrad.debug.print`: {unused_kw}. You may "
                'be passing an f-string (f"{x}"), which formats at once; pass a regular '
                "format string and the values as arguments."
            )


def _format_print(
    fmt: str, printoptions: tuple, has_placeholders: bool, *args: Any, **kwargs: Any
) -> None:
    if has_placeholders:
        with np.printoptions(**dict(printoptions)):
            msg = fmt.format(*args, **kwargs)
    else:
        msg = " ".join((fmt, *(str(a) for a in args)))
    sys.stdout.write(msg + "\n")


def print(
    fmt: str | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Print ``fmt.format(*args, **kwargs)`` with the runtime values of the arrays,
    eagerly or from inside any transform (under ``vmap``: once per element). Without
    placeholders, the arguments are appended separated by spaces. With ``fmt=None``
    returns a function taking ``(fmt, *args, **kwargs)`` (JAX's two-call form)."""
    _check_options("debug.print", ordered, partitioned)

    def call(f: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not isinstance(f, str):
            raise TypeError(f"debug.print: fmt must be a str, got {type(f).__name__}")
        if not skip_format_check:
            _FormatChecker().format(f, *c_args, **c_kwargs)
        has_placeholders = False
        if f:
            _, field, *_ = next(iter(string.Formatter().parse(f)))
            has_placeholders = field is not None
        if not has_placeholders and c_kwargs:
            raise ValueError("debug.print: keyword arguments need placeholders in the format")
        dyn, in_tree, statics = _split(c_args, c_kwargs)
        opts = tuple(np.get_printoptions().items())
        fn = _FlatCallback(_format_print, (f, opts, has_placeholders), in_tree, statics)
        debug_callback(fn, *dyn, ordered=ordered)

    if fmt is not None:
        call(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return call
