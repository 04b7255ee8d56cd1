"""Symbolic zeros for tangents and cotangents that are known to be zero."""

from __future__ import annotations

from funcgrad.core.ir import Aval


class Zero:
    """A zero of the given aval, never materialised unless asked for."""

    __slots__ = ("aval",)

    def __init__(self, aval: Aval) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval})"


def is_zero(x: object) -> bool:
    return x is None or isinstance(x, Zero)
