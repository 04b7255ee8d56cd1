"""PyTorch's NumPy-style keyword names for the op table's ops (``torch.sum(x, axis=1)``).

PyTorch's argument parser takes, for every op it binds in C++, NumPy's name of four
parameters besides PyTorch's own: ``axis`` for ``dim``, ``keepdims`` for ``keepdim``,
``x``/``a``/``x1`` for ``input`` and ``x2`` for ``other``. Code ported from NumPy
relies on them (``x.mean(axis=0, keepdims=True)``). A parameter given twice (``dim=``
and ``axis=``, or ``dim`` by position and ``axis=``) is a ``TypeError`` naming the
NumPy keyword, as PyTorch's. Ops PyTorch writes in Python (``torch.norm``,
``Tensor.split``) take their own names only: their rows say so
(``OpDef.numpy_names``).

A row's table (:func:`table`) is read from its implementation's signature once, at
import; a call renames its keywords (:func:`rename`) only when one of them is a NumPy
name, so calls without them cost one set test.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

#: PyTorch's parameter name -> the NumPy names its argument parser also takes
_NUMPY_NAMES = {
    "dim": ("axis",),
    "keepdim": ("keepdims",),
    "input": ("x", "a", "x1"),
    "other": ("x2",),
}

#: a row's table: NumPy name -> (PyTorch's name, its position or ``None`` for keyword-only)
Table = dict[str, tuple[str, int | None]]


def table(fn: Callable[..., Any], *, method: bool = False) -> Table:
    """The NumPy names ``fn``'s parameters take (none for a name ``fn`` has itself);
    ``method``: ``fn`` is a ``Tensor`` method, whose ``input`` is ``self``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return {}
    own = {p.name for p in params}
    out: Table = {}
    for i, p in enumerate(params):
        if p.name not in _NUMPY_NAMES or (method and p.name == "input"):
            continue
        positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        for alias in _NUMPY_NAMES[p.name]:
            if alias not in own:
                out[alias] = (p.name, i if positional else None)
    return out


def rename(name: str, names: Table, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with its NumPy names replaced by PyTorch's; a ``TypeError`` as PyTorch's
    for a parameter given twice (by its name, by position or by another NumPy name)."""
    out = dict(kwargs)
    for alias in kwargs:
        if alias not in names:
            continue
        param, pos = names[alias]
        if param in out or (pos is not None and len(args) > pos):
            raise TypeError(f"{name}() got an unexpected keyword argument '{alias}'")
        out[param] = out.pop(alias)
    return out


def accepting(fn: Callable[..., Any], names: Table, name: str) -> Callable[..., Any]:
    """``fn`` also taking the NumPy names of ``names`` (``fn`` itself when there are none)."""
    if not names:
        return fn
    keys = names.keys()

    @functools.wraps(fn)
    def f(*args: Any, **kwargs: Any) -> Any:
        if kwargs and not keys.isdisjoint(kwargs):
            kwargs = rename(name, names, args, kwargs)
        return fn(*args, **kwargs)

    return f
