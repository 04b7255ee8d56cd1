"""Plain-Python list helpers JAX's test files import from ``jax._src.util`` (own code):
they are test utilities, not JAX functionality, so the swap provides them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def safe_zip(*args: Iterable[Any]) -> list[tuple[Any, ...]]:
    """``zip`` that insists on equal lengths."""
    lists = [list(a) for a in args]
    if len({len(x) for x in lists}) > 1:
        raise ValueError(f"length mismatch: {[len(x) for x in lists]}")
    return list(zip(*lists))


def safe_map(f: Callable[..., Any], *args: Iterable[Any]) -> list[Any]:
    """``map`` that insists on equal lengths."""
    return [f(*xs) for xs in safe_zip(*args)]


def foreach(f: Callable[..., Any], *args: Iterable[Any]) -> None:
    """Call ``f`` on the elements of equal-length sequences, for its effects."""
    for xs in safe_zip(*args):
        f(*xs)


def unzip2(pairs: Iterable[tuple[Any, Any]]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Two tuples from a sequence of pairs."""
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


def split_list(args: Sequence[Any], ns: Sequence[int]) -> list[list[Any]]:
    """``args`` cut into pieces of the lengths ``ns`` and the rest."""
    out, rest = [], list(args)
    for n in ns:
        out.append(rest[:n])
        rest = rest[n:]
    out.append(rest)
    return out


def tuple_update(t: tuple[Any, ...], idx: int, val: Any) -> tuple[Any, ...]:
    """``t`` with element ``idx`` replaced by ``val``."""
    return (*t[:idx], val, *t[idx + 1 :])


def subvals(seq: Iterable[Any], replace: Iterable[tuple[int, Any]]) -> tuple[Any, ...]:
    """``seq`` as a tuple with the elements at the given positions replaced."""
    out = list(seq)
    for i, v in replace:
        out[i] = v
    return tuple(out)


def curry(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` taking its arguments in two calls: ``curry(f)(a)(b) == f(a, b)`` (keywords
    too; a decorator factory written as one function: pjit_test's ``check_1d_2d_mesh``)."""
    return functools.partial(functools.partial, f)
