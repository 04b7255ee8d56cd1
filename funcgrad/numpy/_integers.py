"""Integer functions: bit shifts (``left_shift``, ``right_shift`` and their
``bitwise_left_shift``/``bitwise_right_shift`` names), ``bitwise_count`` and
``gcd``/``lcm``.

Composites of the ``bits`` primitives and other funcgrad.numpy functions (``gcd`` runs
Euclid's algorithm in a ``lax.while_loop``), so they trace.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import lax
from funcgrad.numpy import _creation, _reductions, _shape, _ufuncs
from funcgrad.numpy._core import ArrayLike, aval, check_kind, out, promote_broadcast
from funcgrad.primitives import bits
from funcgrad.primitives import elementwise as ew


def left_shift(x: ArrayLike, y: ArrayLike, /) -> Any:
    """Elementwise ``x << y`` on integers."""
    x, y = promote_broadcast("left_shift", x, y)
    check_kind("left_shift", "int", x)
    return out(bits.shift_left_p.bind(x, y))


def right_shift(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Elementwise ``x1 >> x2``: arithmetic for signed, logical for unsigned integers."""
    x, y = promote_broadcast("right_shift", x1, x2)
    check_kind("right_shift", "int", x)
    signed = np.issubdtype(aval(x).dtype, np.signedinteger)
    p = bits.shift_right_arithmetic_p if signed else bits.shift_right_logical_p
    return out(p.bind(x, y))


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def bitwise_count(x: ArrayLike, /) -> Any:
    """Number of set bits of ``abs(x)``, as ``uint8`` (NumPy's ``bitwise_count``)."""
    (x,) = promote_broadcast("bitwise_count", x)
    check_kind("bitwise_count", "intbool", x)
    if aval(x).dtype == np.bool_:
        return _creation.astype(x, np.uint8)
    a = ew.abs(x) if np.issubdtype(aval(x).dtype, np.signedinteger) else x
    return _creation.astype(bits.population_count_p.bind(a), np.uint8)


def gcd(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Elementwise greatest common divisor of integers (Euclid's algorithm in a loop)."""

    a, b = promote_broadcast("gcd", x1, x2)
    check_kind("gcd", "int", a, b)
    a, b = _shape.broadcast_arrays(_ufuncs.abs(a), _ufuncs.abs(b))

    def step(ab: tuple) -> tuple:
        p, q = ab
        zero = q == 0
        safe = _ufuncs.where(zero, _creation.ones_like(q), q)
        return _ufuncs.where(zero, p, q), _ufuncs.where(zero, q, _ufuncs.remainder(p, safe))

    g, _ = lax.while_loop(lambda ab: _reductions.any(ab[1] != 0), step, (a, b))
    return g


def lcm(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Elementwise least common multiple of integers (0 where either is 0)."""
    a, b = promote_broadcast("lcm", x1, x2)
    check_kind("lcm", "int", a, b)
    d = gcd(a, b)
    safe = _ufuncs.where(d == 0, _creation.ones_like(d), d)
    return _ufuncs.where(d == 0, _creation.zeros_like(d), _ufuncs.abs(a * (b // safe)))
