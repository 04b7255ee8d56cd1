"""Conversion, dtype promotion, NumPy broadcasting and error helpers for ``funcgrad.numpy``.

Every public function normalises its operands with :func:`prep` (tracers, jax
arrays and Python scalars pass through; NumPy values become canonical-dtype NumPy
arrays; lists and tuples are refused as ``jax.numpy`` refuses them, except in the
functions that take one, such as ``asarray``), promotes them on JAX's lattice with
:func:`promote` (so Python scalars stay weakly typed), broadcasts them with
:func:`broadcast_args` and binds primitives. Errors name the function, the
operands' shapes and dtypes, and the user's line.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from funcgrad.core import dtypes
from funcgrad.core.axes import normalize_axes as normalize_axes
from funcgrad.core.axes import normalize_axis as normalize_axis
from funcgrad.core.axes import static_index
from funcgrad.core.errors import (
    BroadcastTypeError,
    BroadcastValueError,
    broadcast_error_type,
    user_frame,
    where,
)
from funcgrad.core.interp import Tracer, is_tracing, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.symbolic import same_shape
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import shape as sh

SCALARS = (bool, int, float, complex)
ArrayLike = Any


def is_scalar(x: Any) -> bool:
    """A Python scalar (weakly typed), not a NumPy scalar."""
    return type(x) in SCALARS


def is_array(x: Any) -> bool:
    return isinstance(x, (Tracer, jax.Array, np.ndarray, np.generic))


def here() -> str:
    """``"\\n  (in your code at file:line)"`` for the innermost user frame."""
    return where(user_frame())


def fmt(*xs: Any) -> str:
    """Operands as ``f32[2,3]`` (Python scalars as ``2.0 (weak f64[])``)."""
    out = []
    for x in xs:
        a = to_aval(x)
        s = a.str_short()
        out.append(f"{x!r} (weak {s})" if is_scalar(x) else s + ("{weak}" if a.weak_type else ""))
    return ", ".join(out)


def refusal(name: str, x: Any, pos: int = 0) -> TypeError:
    """JAX's error for a list or tuple where ``jax.numpy`` wants an array: "``name``
    requires ndarray or scalar arguments, got <class 'list'> at position ``pos``."."""
    return TypeError(
        f"{name} requires ndarray or scalar arguments, got {type(x)} at position {pos}.{here()}"
    )


def check_arraylike(name: str, *args: Any) -> None:
    """Refuse lists and tuples among ``args`` as ``jax.numpy``'s function ``name`` does
    (the position counts ``args``)."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise refusal(name, a, i)


def prep(x: Any, name: str = "funcgrad.numpy", pos: int = 0, sequences: bool = False) -> Any:
    """Normalise an operand: tracers, jax arrays and Python scalars pass; NumPy values
    become canonical-dtype NumPy arrays. A (nested) list or tuple is refused as
    ``jax.numpy`` refuses it (:func:`refusal`, naming ``name`` and ``pos``), unless
    ``sequences`` (``asarray``, ``array_equal``... the functions that take one): then it
    becomes an array (lists holding tracers are stacked)."""
    if isinstance(x, (Tracer, jax.Array)) or type(x) in SCALARS:
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        dt = _canon_or_raise(x.dtype, name)
        return np.asarray(x, dt)
    if isinstance(x, (list, tuple)):
        if not sequences:
            raise refusal(name, x, pos)
        flat = _flat(x)
        if any(isinstance(e, (Tracer, jax.Array)) for e in flat):
            return _stack([prep(e, name, sequences=True) for e in x], name)
        try:
            arr = np.asarray(x)
        except ValueError as e:
            raise ValueError(f"{name}: cannot convert a ragged sequence to an array{here()}") from e
        if arr.dtype == object:
            raise TypeError(f"{name}: cannot convert {x!r} to an array{here()}")
        if flat and any(type(e) not in SCALARS for e in flat):
            # NumPy values in a list: JAX's lattice over the elements (Python scalars weak)
            leaves = [prep(e, name, sequences=True) for e in flat]
            dt, _ = dtypes.result_type(*[(aval(e).dtype, type(e) in SCALARS) for e in leaves])
            return np.asarray(arr, dt)
        return np.asarray(arr, _canon_or_raise(arr.dtype, name))
    for t in SCALARS:  # subclasses of Python scalars (IntEnum, ...): their base type
        if isinstance(x, t):
            return t(x)
    if hasattr(x, "__jax_array__"):  # array-like objects that convert themselves to JAX
        return prep(x.__jax_array__(), name)
    raise TypeError(
        f"{name}: expected an array, a Python scalar or a (nested) list of them, got "
        f"{type(x).__name__}{here()}"
    )


def _stack(xs: list[Any], name: str) -> Any:
    """Operands of one shape stacked along a new leading axis (a list holding tracers)."""
    arrs = [as_array(a, name) for a in promote(name, *xs)]
    shape = aval(arrs[0]).shape
    if any(aval(a).shape != shape for a in arrs):
        raise ValueError(
            f"{name}: all input arrays must have the same shape, got {fmt(*arrs)}{here()}"
        )
    return sh.concatenate(*[sh.reshape(a, (1, *shape)) for a in arrs], dimension=0)


def _canon_or_raise(dt: np.dtype, name: str) -> np.dtype:
    if dt == jax.dtypes.float0:
        raise TypeError(
            f"Called {name} with a float0 array. float0s do not support any operations by "
            "design, because they are not compatible with non-trivial vector spaces (the "
            "tangent type of integers). Use np.zeros_like(arr, dtype=float) for a zeros "
            f"array.{here()}"
        )
    if dt.kind not in "biufc" and dt != dtypes.bfloat16:
        raise TypeError(
            f"JAX only supports number, bool, and string dtypes, got dtype {dt} ({name}: "
            f"funcgrad's arrays are numeric or bool){here()}"
        )
    return dtypes.canonicalize(dt)


def _flat(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        return [e for s in x for e in _flat(s)]
    return [x]


def as_array(x: Any, name: str, pos: int = 0, sequences: bool = False) -> Any:
    """Like :func:`prep`, but a Python scalar becomes a weakly typed 0-d array."""
    x = prep(x, name, pos, sequences)
    if type(x) in SCALARS:
        return ew.convert_element_type(x, dtypes.python_scalar_dtype(x), type(x) is not bool)
    return x


def aval(x: Any) -> Aval:
    return to_aval(x)


def user_dtype(dtype: Any, name: str) -> np.dtype:
    """Canonical dtype from a user ``dtype=`` argument (``int``/``float`` → defaults)."""
    if dtype is int:
        return dtypes.default_dtype(1)
    if dtype is float:
        return dtypes.default_dtype(2)
    if dtype is complex:
        return dtypes.default_dtype(3)
    if dtype is bool:
        return np.dtype("bool")
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name}: {dtype!r} is not a valid dtype{here()}") from None
    return _canon_or_raise(dt, name)


def result_dtype(*args: Any) -> tuple[np.dtype, bool]:
    """``(dtype, weak_type)`` of the JAX-lattice join of ``args``' avals."""
    return dtypes.result_type(*[(a.dtype, a.weak_type) for a in map(aval, args)])


def convert(x: Any, dtype: np.dtype, weak: bool = False) -> Any:
    """``x`` (array or Python scalar) as ``dtype``, weakly typed iff ``weak``.

    Python scalars stay Python scalars when their own (weak, default-dtype) aval is
    already the target; host values are converted on the host.
    """
    dtype = np.dtype(dtype)
    if type(x) in SCALARS:
        if weak and dtype == dtypes.python_scalar_dtype(x) and type(x) is not bool:
            return x
        if weak and dtypes.kind(dtype) >= 1:
            if dtype == dtypes.default_dtype(2) and type(x) in (bool, int):
                return float(x)
            if dtype == dtypes.default_dtype(3) and type(x) in (bool, int, float):
                return complex(x)
            return ew.convert_element_type(x, dtype, True)
        return _host_scalar(x, dtype)
    a = aval(x)
    if isinstance(x, (np.ndarray, np.generic)):
        x = np.asarray(x, dtype)
        return ew.convert_element_type(x, dtype, True) if weak else x
    if a.dtype == dtype and a.weak_type == weak:
        return x
    return ew.convert_element_type(x, dtype, weak)


def _host_scalar(x: Any, dtype: np.dtype) -> np.ndarray:
    """A Python scalar as a 0-d array of ``dtype``; integers wrap around as in JAX."""
    if dtype.kind in "iub" and type(x) is int:
        return np.asarray(x).astype(dtype)
    return np.asarray(x, dtype)


def promote(name: str, *args: Any, to: str | None = None) -> list[Any]:
    """Promote ``args`` to one dtype on JAX's lattice (``to``: ``"inexact"`` or ``"numeric"``
    further maps the joined dtype as ``jnp``'s ``promote_args_inexact``/``_numeric`` do).

    Every operand is converted to the joined ``(dtype, weak_type)``, as ``jnp`` does (a
    Python scalar stays a Python scalar when that is already its own aval)."""
    args = [prep(a, name, i) for i, a in enumerate(args)]
    dtype, weak = result_dtype(*args)
    if to == "inexact":
        dtype = dtypes.to_inexact(dtype)
    elif to == "numeric":
        dtype = dtypes.to_numeric(dtype)
    return [convert(x, dtype, weak) for x in args]


def _broadcast(shapes: list[tuple]) -> tuple:
    """NumPy's broadcast of ``shapes`` (``ValueError`` if they do not broadcast), in
    Python so that a symbolic dimension's comparisons are guards
    (:mod:`funcgrad.core.symbolic`; ``np.broadcast_shapes`` reads them as plain ints)."""
    first = shapes[0]
    if all(same_shape(s, first) for s in shapes):
        return tuple(first)
    nd = max(len(s) for s in shapes)
    out = [1] * nd
    for s in shapes:
        off = nd - len(s)
        for i, d in enumerate(s):
            o = out[off + i]
            if d is o:  # (one symbolic dimension met again: no comparison, no guard)
                continue
            if o == 1:  # (first the output's 1s: a dimension taken compares with nothing)
                out[off + i] = d
                continue
            if d == 1 or d == o:
                continue
            raise ValueError(f"shapes {shapes} do not broadcast")
    return tuple(out)


def broadcast_shapes(name: str, *args: Any, elementwise: bool = False) -> tuple[int, ...]:
    """NumPy's broadcast of the operands' shapes; a clear error naming ``name`` otherwise
    (a ``ValueError``; for ``elementwise`` operations the type ``jnp``'s raise, see
    :func:`~funcgrad.core.errors.broadcast_error_type`)."""
    shapes = [aval(a).shape for a in args]
    try:
        return _broadcast(shapes)
    except ValueError:
        err = broadcast_error_type(shapes) if elementwise else BroadcastValueError
        # JAX's sentence first (its tests match its start), then the operands
        if err is BroadcastTypeError:
            head = f"{name} got incompatible shapes for broadcasting: "
            head += ", ".join(map(str, shapes)) + "."
        else:
            head = f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}"
        e = err(f"{head} ({name}: operands {fmt(*args)}){here()}")
        e.shapes = tuple(tuple(s) for s in shapes)
        raise e from None


def broadcast_to_shape(x: Any, shape: tuple[int, ...], name: str = "broadcast_to") -> Any:
    """Broadcast ``x`` to ``shape`` by NumPy's rules (one ``broadcast_in_dim``)."""
    a = aval(x)
    shape = tuple(shape)
    if same_shape(a.shape, shape) and type(x) not in SCALARS:
        return x
    nd = len(shape)
    if a.ndim > nd:
        raise ValueError(
            f"Cannot broadcast to shape with fewer dimensions: arr_shape={a.shape} "
            f"shape={shape} ({name}: an operand {fmt(x)}){here()}"
        )
    dims = tuple(range(nd - a.ndim, nd))
    for d, s in zip(dims, a.shape):
        if s is not shape[d] and s != 1 and s != shape[d]:
            raise ValueError(
                f"Incompatible shapes for broadcasting: {a.shape} and requested shape "
                f"{shape} ({name}: an operand {fmt(x)}){here()}"
            )
    keep = [i for i, s in enumerate(a.shape) if s == shape[dims[i]]]
    if len(keep) != a.ndim:
        x = sh.reshape(x, tuple(a.shape[i] for i in keep))
        dims = tuple(dims[i] for i in keep)
    return sh.broadcast_in_dim(x, shape, dims)


def broadcast_args(name: str, *args: Any) -> list[Any]:
    """NumPy broadcasting; 0-d operands are left for the primitives to broadcast."""
    out_shape = broadcast_shapes(name, *args, elementwise=True)
    out = []
    for a in args:
        s = aval(a).shape
        out.append(
            a if not s or same_shape(s, out_shape) else broadcast_to_shape(a, out_shape, name)
        )
    return out


def promote_broadcast(name: str, *args: Any, to: str | None = None) -> list[Any]:
    return broadcast_args(name, *promote(name, *args, to=to))


def check_kind(name: str, allowed: str, *args: Any) -> None:
    """Raise a ``TypeError`` naming ``name`` unless every operand's dtype is ``allowed``
    (``"intbool"``, ``"int"``, ``"num"`` (not bool), ``"real"`` (not complex))."""
    for x in args:
        k = dtypes.kind(aval(x).dtype)
        ok = {"intbool": k <= 1, "int": k == 1, "num": k >= 1, "real": k <= 2}[allowed]
        if not ok:
            need = {
                "intbool": "integer or bool",
                "int": "integer",
                "num": "numeric (not bool)",
                "real": "real (not complex)",
            }[allowed]
            raise TypeError(f"{name}: requires {need} operands, got {fmt(*args)}{here()}")


#: a static Python int from an argument (the numpy modules' name for it)
index = static_index


def unsupported(what: str) -> NotImplementedError:
    """The error for a NumPy feature funcgrad does not implement."""
    return NotImplementedError(f"funcgrad.numpy does not support {what}{here()}")


def out(x: Any) -> Any:
    """Results outside a transform are ``jax.Array``s (NumPy / Python values are put on the
    device, Python scalars as weakly typed arrays); tracers pass through."""
    if isinstance(x, (Tracer, jax.Array)):
        return x
    if type(x) in SCALARS:
        return as_array(x, "funcgrad.numpy")
    if isinstance(x, (np.ndarray, np.generic)):
        if is_tracing():
            return x
        return jax.device_put(np.asarray(x))
    return x


def out_array(x: Any) -> Any:
    """:func:`out`, except that a NumPy value made while tracing is a ``jax.Array`` too, as
    :func:`funcgrad.numpy.asarray` gives it: a constructor's result has the Array API
    there (``arange(4.0).at[1].set(v)`` under ``jit``), as ``jnp``'s does."""
    if isinstance(x, (np.ndarray, np.generic)):
        return jax.device_put(np.asarray(x))
    return out(x)


def to_device(x: Any) -> Any:
    """Outside a trace, hand NumPy values to the device as jax arrays."""
    return out(x)
