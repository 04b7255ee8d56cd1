"""One behaviour for concrete and traced values: ``jax.Array`` meets funcgrad tracers.

Outside transforms funcgrad hands out plain ``jax.Array``s, so a concrete array
closed over by a traced function (a data set indexed by a loop counter,
``U[t]`` or ``U.at[t].set(v)`` inside ``fori_loop``/``scan``/``jit``/``vmap``/
``grad``) reaches JAX's own ``__getitem__``/``.at``/methods with a funcgrad
tracer as an argument, which JAX cannot read. This module routes exactly those
calls to funcgrad's implementation (the same one tracers use), so the concrete
array is lifted into the trace as a constant; a call with no funcgrad tracer
among its arguments goes to JAX unchanged.

Binary operators need nothing: JAX returns ``NotImplemented`` for operands it
does not know, and Python then calls the tracer's reflected operator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.core.interp import Tracer

#: array methods that take array-valued arguments, routed when one is a tracer
_METHODS = (
    "__getitem__",
    "dot",
    "clip",
    "take",
    "repeat",
    "reshape",
    "round",
    "sum",
    "prod",
    "mean",
    "max",
    "min",
    "cumsum",
    "cumprod",
    "astype",
)
#: ``.at[idx].<name>(...)`` update methods
_AT_METHODS = (
    "get",
    "set",
    "add",
    "subtract",
    "multiply",
    "mul",
    "divide",
    "power",
    "min",
    "max",
    "apply",
)


class _ArrayMeta(type):
    def __instancecheck__(cls, x: Any) -> bool:
        import jax

        return isinstance(x, (jax.Array, Tracer))

    def __subclasscheck__(cls, c: type) -> bool:
        import jax

        return issubclass(c, (jax.Array, Tracer))


class Array(metaclass=_ArrayMeta):
    """The type of funcgrad values, for ``isinstance`` checks: a concrete
    ``jax.Array`` or a funcgrad tracer (as ``jax.Array`` covers JAX's tracers)."""

    def __init__(self) -> None:
        raise TypeError("funcgrad.Array is not constructible; use funcgrad.numpy.asarray")


def has_tracer(x: Any) -> bool:
    """Whether a (nested tuple/list/dict/slice) argument holds a funcgrad tracer."""
    t = type(x)
    if t is Tracer:
        return True
    if t is tuple or t is list:
        return any(has_tracer(a) for a in x)
    if t is dict:
        return any(has_tracer(a) for a in x.values())
    if t is slice:
        return has_tracer(x.start) or has_tracer(x.stop) or has_tracer(x.step)
    return False


def _route(name: str, jax_impl: Callable, fg_impl: Callable) -> Callable:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if (args and has_tracer(args)) or (kwargs and has_tracer(kwargs)):
            return fg_impl(self, *args, **kwargs)
        return jax_impl(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = jax_impl.__doc__
    method.__wrapped__ = jax_impl  # type: ignore[attr-defined]
    return method


class _AtRef:
    """``array.at[idx]`` whose update methods go to funcgrad when the index or a
    value is a funcgrad tracer, and to JAX otherwise."""

    __slots__ = ("_array", "_idx", "_jax_at")

    def __init__(self, array: Any, idx: Any, jax_at: Any) -> None:
        self._array, self._idx, self._jax_at = array, idx, jax_at

    def __getattr__(self, name: str) -> Any:
        if name not in _AT_METHODS:
            return getattr(self._jax_at[self._idx], name)

        def update(*args: Any, **kwargs: Any) -> Any:
            if has_tracer(self._idx) or has_tracer(args) or has_tracer(kwargs):
                fg_at = _fg_at(self._array)
                return getattr(fg_at[self._idx], name)(*args, **kwargs)
            return getattr(self._jax_at[self._idx], name)(*args, **kwargs)

        return update

    def __repr__(self) -> str:
        return f"_AtRef({self._idx!r})"


class _At:
    __slots__ = ("_array", "_jax_at")

    def __init__(self, array: Any, jax_at: Any) -> None:
        self._array, self._jax_at = array, jax_at

    def __getitem__(self, idx: Any) -> _AtRef:
        return _AtRef(self._array, idx, self._jax_at)


_installed = False


def _no_at(array: Any) -> Any:
    raise RuntimeError("funcgrad.interop._jax_array.install() was not called")


#: ``funcgrad.numpy``'s ``.at`` (its indexing module installs it: this module sits below)
_fg_at: Callable[[Any], Any] = _no_at


def install(at: Callable[[Any], Any]) -> None:
    """Route ``jax.Array`` calls that receive funcgrad tracers to funcgrad (idempotent);
    ``at(array)`` is funcgrad's ``array.at`` (``funcgrad.numpy``'s, passed in by it)."""
    global _installed, _fg_at
    _fg_at = at
    if _installed:
        return
    from jax._src.array import ArrayImpl

    for name in _METHODS:
        jax_impl = getattr(ArrayImpl, name, None)
        fg_impl = getattr(Tracer, name, None)
        if jax_impl is None or fg_impl is None:
            continue
        setattr(ArrayImpl, name, _route(name, jax_impl, fg_impl))
    jax_at = ArrayImpl.at
    ArrayImpl.at = property(lambda self: _At(self, jax_at.fget(self)))  # type: ignore[method-assign]
    _installed = True
