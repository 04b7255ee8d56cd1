"""Conversion, dtype promotion and NumPy broadcasting for ``funcgrad.numpy``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.errors import user_frame, where
from funcgrad.core.interp import Tracer, to_aval
from funcgrad.core.ir import Aval
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh

_SCALARS = (bool, int, float, complex)
ArrayLike = Any


def is_array(x: Any) -> bool:
    return isinstance(x, (Tracer, jax.Array, np.ndarray, np.generic))


def prep(x: Any, name: str = "funcgrad.numpy") -> Any:
    """Normalise an input: tracers, jax arrays and Python scalars pass; NumPy
    arrays and nested lists become canonical-dtype NumPy arrays."""
    if isinstance(x, (Tracer, jax.Array)) or type(x) in _SCALARS:
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        dt = dtypes.canonicalize(x.dtype)
        return x if x.dtype == dt else np.asarray(x, dt)
    if isinstance(x, (list, tuple)):
        if any(isinstance(e, Tracer) for e in _flat(x)):
            from funcgrad.numpy._shape import stack

            return stack([prep(e, name) for e in x])
        arr = np.asarray(x)
        if arr.dtype == object:
            raise TypeError(f"{name}: cannot convert {x!r} to an array")
        return np.asarray(arr, dtypes.canonicalize(arr.dtype))
    if isinstance(x, _SCALARS):  # subclasses such as np.float64 handled above; bool subclasses
        return x
    raise TypeError(
        f"{name}: expected an array, a Python scalar or a (nested) list of them, got "
        f"{type(x).__name__}{where(user_frame())}"
    )


def _flat(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        return [e for s in x for e in _flat(s)]
    return [x]


def aval(x: Any) -> Aval:
    return to_aval(x)


def result_dtype(*args: Any) -> tuple[np.dtype, bool]:
    return dtypes.result_type(*[(a.dtype, a.weak_type) for a in map(aval, args)])


def cast(x: Any, dtype: np.dtype, weak: bool = False) -> Any:
    """Convert ``x`` (array or scalar) to ``dtype``."""
    if type(x) in _SCALARS:
        if dtypes.kind(dtype) >= dtypes.kind(dtypes.python_scalar_dtype(x)) and (
            weak or dtype == dtypes.python_scalar_dtype(x)
        ):
            return x
        return np.asarray(x, dtype)
    a = aval(x)
    if a.dtype == dtype and a.weak_type == weak:
        return x
    if isinstance(x, np.ndarray | np.generic):
        return np.asarray(x, dtype)
    return ew.convert_element_type(x, dtype, weak)


def promote(name: str, *args: Any) -> list[Any]:
    """Promote ``args`` to their common dtype (JAX's lattice)."""
    args = [prep(a, name) for a in args]
    dtype, weak = result_dtype(*args)
    out = []
    for x in args:
        if type(x) in _SCALARS:
            out.append(x)  # weak scalars take the other operand's dtype in the primitive
        else:
            a = aval(x)
            if a.dtype != dtype:
                x = cast(x, dtype, weak and a.weak_type)
            out.append(x)
    if all(type(x) in _SCALARS for x in out):
        out = [np.asarray(x, dtype) if not weak else x for x in out]
    return out


def broadcast_shapes(name: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        shown = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(
            f"{name}: operands could not be broadcast together with shapes {shown}"
            f"{where(user_frame())}"
        ) from None


def broadcast_to_shape(x: Any, shape: tuple[int, ...]) -> Any:
    a = aval(x)
    if a.shape == shape:
        return x
    nd = len(shape)
    dims = tuple(range(nd - a.ndim, nd))
    for d, s in zip(dims, a.shape):
        if s != 1 and s != shape[d]:
            raise ValueError(f"cannot broadcast an array of shape {a.shape} to shape {shape}")
    # drop size-1 dims that expand, then broadcast
    keep = [i for i, s in enumerate(a.shape) if s == shape[dims[i]]]
    if len(keep) != a.ndim:
        x = sh.reshape(x, tuple(a.shape[i] for i in keep))
        dims = tuple(dims[i] for i in keep)
    return sh.broadcast_in_dim(x, shape, dims)


def broadcast_args(name: str, *args: Any) -> list[Any]:
    """NumPy broadcasting of array operands (0-d operands broadcast inside primitives)."""
    shapes = [aval(a).shape for a in args]
    out_shape = broadcast_shapes(name, *shapes)
    return [
        a if s == out_shape or (s == () and type(a) in _SCALARS) else broadcast_to_shape(a, out_shape)
        for a, s in zip(args, shapes)
    ]


def promote_broadcast(name: str, *args: Any) -> list[Any]:
    return broadcast_args(name, *promote(name, *args))


def normalize_axis(axis: int, ndim: int, name: str) -> int:
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(
            f"{name}: axis {axis} is out of bounds for an array of dimension {ndim}"
            f"{where(user_frame())}"
        )
    return int(axis) % max(ndim, 1)


def normalize_axes(axis: Any, ndim: int, name: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        return (normalize_axis(axis, ndim, name),)
    axes = tuple(normalize_axis(a, ndim, name) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {axis}")
    return axes


def to_device(x: Any) -> Any:
    """Outside a trace, hand NumPy values to the device as jax arrays."""
    if isinstance(x, (np.ndarray, np.generic)):
        return jax.device_put(x)
    return x
