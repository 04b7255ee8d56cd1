"""``funcgrad.config``: one place to set options, read like ``jax.config``.

funcgrad runs on JAX's runtime and follows its settings (``jax_enable_x64`` decides
funcgrad's canonical dtypes too), so ``jax_*`` options are JAX's own and are passed
through. Every knob funcgrad and compat own is an option here, registered by the
module that reads it: :func:`define` for an option kept in this module,
:func:`bind` for one whose value lives in an attribute its module reads on a hot path
(a policy object's field, a module constant): setting the option sets the attribute,
reading it reads the attribute. :func:`options` lists them all (the table of
``docs/configuration.md``).

    >>> import funcgrad as fg
    >>> fg.config.update("jax_enable_x64", True)
    >>> fg.config.jax_enable_x64
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

_OWN: dict[str, Any] = {}
_DOCS: dict[str, str] = {}
_ON_CHANGE: dict[str, Callable[[Any], None]] = {}
#: options whose value is an attribute of another object: name -> (object, attribute)
_BOUND: dict[str, tuple[Any, str]] = {}
_CHECK: dict[str, Callable[[Any], Any]] = {}


def define(
    name: str, default: Any, doc: str, on_change: Callable[[Any], None] | None = None
) -> None:
    """Register an option funcgrad owns (its default and what it does); ``on_change``
    is called with each new value (and with the current one now)."""
    _OWN.setdefault(name, default)
    _DOCS[name] = doc
    if on_change is not None:
        _ON_CHANGE[name] = on_change
        on_change(_OWN[name])


def bind(
    name: str,
    obj: Any,
    attr: str,
    doc: str,
    check: Callable[[Any], Any] | None = None,
) -> None:
    """Register an option whose value is ``obj.attr`` (read where it is used, at the cost
    of an attribute read). ``check(value)`` validates a new value and returns it (by
    default: of the current value's type, an int accepted for a float)."""
    if name in _OWN:
        raise ValueError(f"config option {name!r} is defined twice")
    _BOUND[name] = (obj, attr)
    _DOCS[name] = doc
    _CHECK[name] = check if check is not None else _same_type(name, getattr(obj, attr))


def _same_type(name: str, default: Any) -> Callable[[Any], Any]:
    kind = type(default)

    def check(value: Any) -> Any:
        if kind is float and type(value) is int:
            return float(value)
        ok = isinstance(value, kind) and (kind is bool or type(value) is not bool)
        if default is None or isinstance(default, dict):
            ok = value is None or isinstance(value, dict)
        if not ok:
            raise TypeError(
                f"config option {name} takes a {kind.__name__}, got {value!r} "
                f"({type(value).__name__})"
            )
        return value

    return check


def options() -> dict[str, tuple[Any, str]]:
    """Every option funcgrad and compat own: ``{name: (current value, what it does)}``."""
    return {n: (read(n), _DOCS[n]) for n in sorted({*_OWN, *_BOUND})}


def update(name: str, value: Any) -> None:
    """Set an option: funcgrad's own, or JAX's (``jax_enable_x64``, ``jax_platforms``...)."""
    if name in _BOUND:
        obj, attr = _BOUND[name]
        setattr(obj, attr, _CHECK[name](value))
        return
    if name in _OWN:
        if name in _ON_CHANGE:  # (first: a value it refuses is not recorded)
            _ON_CHANGE[name](value)
        _OWN[name] = value
        return
    try:
        jax.config.update(name, value)
    except AttributeError:
        raise AttributeError(
            f"Unrecognized config option: {name} (funcgrad's options: "
            f"{sorted({*_OWN, *_BOUND})}; "
            "other names are JAX's, see jax.config)"
        ) from None


def read(name: str) -> Any:
    """The current value of an option."""
    if name in _BOUND:
        obj, attr = _BOUND[name]
        return getattr(obj, attr)
    if name in _OWN:
        return _OWN[name]
    return getattr(jax.config, name)


def __getattr__(name: str) -> Any:
    """``fg.config.jax_enable_x64`` reads the option, as ``jax.config.jax_enable_x64``."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return read(name)
    except AttributeError:
        raise AttributeError(f"Unrecognized config option: {name}") from None
