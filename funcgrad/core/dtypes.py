"""dtype handling: canonical dtypes (honouring ``jax_enable_x64``) and JAX's promotion lattice.

funcgrad follows JAX's type-promotion rules so that a program gives the same
dtypes traced, eager and compiled. Python scalars are *weakly typed*: they take
the dtype of the array they meet (``x * 2.0`` keeps ``x``'s float16).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np

bfloat16 = np.dtype(jax.numpy.bfloat16)

_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # V: bfloat16


def x64_enabled() -> bool:
    """Whether 64-bit types are enabled (``jax_enable_x64``)."""
    return bool(jax.config.jax_enable_x64)


@functools.lru_cache(maxsize=256)
def _canonicalize(dtype: np.dtype, x64: bool) -> np.dtype:
    if x64:
        return dtype
    return {
        np.dtype("float64"): np.dtype("float32"),
        np.dtype("int64"): np.dtype("int32"),
        np.dtype("uint64"): np.dtype("uint32"),
        np.dtype("complex128"): np.dtype("complex64"),
    }.get(dtype, dtype)


def canonicalize(dtype: Any) -> np.dtype:
    """Map a requested dtype to the one the backend will use (64→32 bit without x64)."""
    if dtype is None:
        raise TypeError("dtype must not be None")
    dt = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
    return _canonicalize(dt, x64_enabled())


def kind(dtype: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex."""
    if dtype == bfloat16:
        return 2
    return _KIND_ORDER[dtype.kind]


def is_float(dtype: np.dtype) -> bool:
    return kind(dtype) == 2


def is_inexact(dtype: np.dtype) -> bool:
    return kind(dtype) >= 2


def is_integer(dtype: np.dtype) -> bool:
    return kind(dtype) == 1


def default_dtype(k: int) -> np.dtype:
    """Default dtype of a Python scalar kind."""
    return canonicalize(("bool", "int64", "float64", "complex128")[k])


def python_scalar_dtype(x: Any) -> np.dtype:
    if isinstance(x, bool):
        return np.dtype("bool")
    if isinstance(x, int):
        return default_dtype(1)
    if isinstance(x, float):
        return default_dtype(2)
    if isinstance(x, complex):
        return default_dtype(3)
    raise TypeError(f"not a Python scalar: {x!r}")


@functools.lru_cache(maxsize=1024)
def _promote_strong(a: np.dtype, b: np.dtype) -> np.dtype:
    if a == b:
        return a
    ka, kb = kind(a), kind(b)
    if ka != kb:
        hi, lo = (a, b) if ka > kb else (b, a)
        if kind(hi) == 3 and kind(lo) == 2:
            size = max(hi.itemsize, 2 * lo.itemsize)
            return np.dtype(f"complex{8 * size}")
        return hi
    if ka == 2 and bfloat16 in (a, b):
        return np.dtype("float32")
    if ka == 1 and {a.kind, b.kind} == {"u", "i"} and max(a.itemsize, b.itemsize) == 8:
        # JAX's lattice sends uint64 ∨ int64 to a (weak) float
        return np.dtype("float64")
    return np.promote_types(a, b)


def result_type(*args: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Join ``(dtype, weak_type)`` pairs on JAX's lattice; returns ``(dtype, weak_type)``."""
    strong = [d for d, w in args if not w]
    weak = [d for d, w in args if w]
    if strong:
        out = strong[0]
        for d in strong[1:]:
            out = _promote_strong(out, d)
        out_weak = False
        ints = [d for d in strong if kind(d) == 1]
        if (
            len(ints) >= 2
            and out.kind == "f"
            and {d.kind for d in ints} == {"u", "i"}
            and all(kind(d) == 1 for d in strong)
        ):
            out_weak = True
        for d in weak:
            if kind(d) > kind(out):
                out, out_weak = default_dtype(kind(d)), True
        return canonicalize(out), out_weak
    k = max(kind(d) for d in weak)
    if k == 0:
        return np.dtype("bool"), False
    return default_dtype(k), True
