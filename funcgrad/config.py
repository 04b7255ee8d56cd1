"""``funcgrad.config``: one place to set options, read like ``jax.config``.

funcgrad runs on JAX's runtime and follows its settings (``jax_enable_x64`` decides
funcgrad's canonical dtypes too), so ``jax_*`` options are JAX's own and are passed
through; options funcgrad owns are kept here and registered by the module that reads
them (:func:`define`).

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


def update(name: str, value: Any) -> None:
    """Set an option: funcgrad's own, or JAX's (``jax_enable_x64``, ``jax_platforms``...)."""
    if name in _OWN:
        _OWN[name] = value
        if name in _ON_CHANGE:
            _ON_CHANGE[name](value)
        return
    try:
        jax.config.update(name, value)
    except AttributeError:
        raise AttributeError(
            f"Unrecognized config option: {name} (funcgrad's options: {sorted(_OWN)}; "
            "other names are JAX's, see jax.config)"
        ) from None


def read(name: str) -> Any:
    """The current value of an option."""
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
