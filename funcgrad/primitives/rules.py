"""Shared helpers for writing primitive rules (zeros, dims, examples)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.ad_util import (  # noqa: F401  (re-exported: rules are written with these)
    add_tangents,
    bdim_to_front,
    instantiate,
    moveaxis,
    zero_of,
    zeros_like_aval,
)
from funcgrad.core.interp import to_aval
from funcgrad.core.ir import Aval


def float_tangent_dtype(dtype: np.dtype) -> bool:
    return dtypes.is_inexact(dtype)


def batch_size(args: list, dims: list) -> int:
    for a, d in zip(args, dims):
        if d is not None:
            return to_aval(a).shape[d]
    raise ValueError("no batched argument")


def rand(rng: np.random.Generator, shape: tuple, dtype: str = "float64", lo=-2.0, hi=2.0):
    """Random test input (float in [lo, hi), or ints / bools)."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.uniform(lo, hi, size=shape).astype(dt)
    if dt.kind == "c":  # real and imaginary parts each in [lo, hi)
        re, im = rng.uniform(lo, hi, size=(2, *shape))
        return (re + 1j * im).astype(dt)
    if dt.kind in "iu":
        return rng.integers(int(lo), int(hi) + 1, size=shape).astype(dt)
    if dt.kind == "b":
        return rng.random(size=shape) < 0.5
    raise TypeError(dt)


def join_bilinear_dtypes(name: str, x: Aval, y: Aval, context: str) -> tuple[np.dtype, bool]:
    """Result dtype and weak type of a bilinear primitive (``dot_general``, convolution):
    the operands share one dtype, except that a weakly typed operand takes the other's
    when it fits (as in ``jax.lax``). ``context`` describes the operands for errors."""
    if not x.weak_type and not y.weak_type and x.dtype != y.dtype:
        raise TypeError(
            f"{name} requires operands of one dtype, got {context}; convert one of them first"
        )
    if x.weak_type != y.weak_type:
        strong, weak = (y, x) if x.weak_type else (x, y)
        if dtypes.kind(weak.dtype) > dtypes.kind(strong.dtype):
            raise TypeError(
                f"{name}: weakly typed operand {weak} does not fit dtype {strong.dtype}, "
                f"got {context}"
            )
        return strong.dtype, False
    return x.dtype, x.weak_type


#: dtype categories a primitive accepts, by ``dtypes.kind`` (0 bool, 1 integer, 2 real
#: floating, 3 complex), and how an error names them
_DTYPE_CATEGORIES: dict[str, tuple[Callable[[int, np.dtype], bool], str]] = {
    "inexact": (lambda k, d: k in (2, 3), "a floating (or complex) dtype"),
    "real_float": (lambda k, d: k == 2, "a real floating dtype"),
    "noncomplex": (lambda k, d: k in (1, 2), "a real (non-complex) numeric dtype"),
    "num": (lambda k, d: k in (1, 2, 3), "a numeric dtype"),
    "signed": (lambda k, d: k in (2, 3) or (k == 1 and d.kind == "i"), "a signed numeric dtype"),
    "int": (lambda k, d: k == 1, "an integer dtype"),
    "intbool": (lambda k, d: k in (0, 1), "an integer or bool dtype"),
    "any": (lambda k, d: True, ""),
}


def check_dtype(name: str, aval: Aval, allowed: str) -> None:
    """Raise ``TypeError`` unless ``aval``'s dtype is in the category ``allowed``
    (one of ``_DTYPE_CATEGORIES``: the one dtype check every primitive family uses)."""
    ok, need = _DTYPE_CATEGORIES[allowed]
    if not ok(dtypes.kind(aval.dtype), aval.dtype):
        raise TypeError(f"{name} requires {need}, got an operand of type {aval}")
