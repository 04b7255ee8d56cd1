"""dtype handling: canonical dtypes (honouring ``jax_enable_x64``) and JAX's promotion lattice.

funcgrad follows JAX's type-promotion rules so that a program gives the same
dtypes traced, eager and compiled. Python scalars are *weakly typed*: they take
the dtype of the array they meet (``x * 2.0`` keeps ``x``'s float16).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import ml_dtypes
import numpy as np

bfloat16 = np.dtype(jax.numpy.bfloat16)

_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # V: bfloat16


try:  # (``jax.config.jax_enable_x64`` is a Python property reading this state: ~0.4 us
    # where the state's own ``value`` costs ~0.1 us; traces ask several times an equation)
    from jax._src.config import enable_x64 as _X64_STATE

    _X64_STATE.value  # noqa: B018  (the attribute this module reads: fail here, not later)
except (ImportError, AttributeError):  # pragma: no cover - another JAX layout
    _X64_STATE = None


@functools.lru_cache(maxsize=64)
def bit_width(dtype: np.dtype) -> int:
    """The number of bits of one element of ``dtype``: the format's width for the
    sub-byte types (``int4``: 4, ``float6_e2m3fn``: 6; NumPy's itemsize says 8), 8 for
    ``bool``."""
    dt = np.dtype(dtype)
    if dt == np.dtype(bool) or dt.kind == "c":
        return dt.itemsize * 8
    for info in (ml_dtypes.iinfo, ml_dtypes.finfo):  # (ml_dtypes' types have kind "V")
        try:
            return int(info(dt).bits)
        except ValueError:
            pass
    return dt.itemsize * 8


def x64_enabled() -> bool:
    """Whether 64-bit types are enabled (``jax_enable_x64``)."""
    if _X64_STATE is not None:
        return bool(_X64_STATE.value)
    return bool(jax.config.jax_enable_x64)


@functools.lru_cache(maxsize=256)
def x64_invariant(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is its own canonical dtype in both x64 modes (no 64-bit type)."""
    return _canonicalize(dtype, True) == _canonicalize(dtype, False)


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


def extreme(dtype: np.dtype, largest: bool) -> np.ndarray:
    """The greatest (``largest``) or least value of ``dtype`` as a 0-d array: ``True`` or
    ``False`` for bool, +-inf for inexact dtypes, the integer bounds otherwise (the
    identities of min and max reductions)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(largest)
    if is_inexact(dtype):
        return np.asarray(np.inf if largest else -np.inf, dtype)
    info = np.iinfo(dtype)
    return np.asarray(info.max if largest else info.min, dtype)


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


# JAX's type-promotion lattice (jax._src.dtypes._type_promotion_lattice, standard mode).
# Nodes are strong dtypes and the three weak Python-scalar kinds "i*", "f*", "c*".
_WEAK_NODES = {1: "i*", 2: "f*", 3: "c*"}


def _lattice(x64: bool) -> dict[Any, list[Any]]:
    d = np.dtype
    b, u8, u16, u32, u64 = d("bool"), d("uint8"), d("uint16"), d("uint32"), d("uint64")
    i8, i16, i32, i64 = d("int8"), d("int16"), d("int32"), d("int64")
    f16, f32, f64, c64, c128 = (
        d("float16"),
        d("float32"),
        d("float64"),
        d("complex64"),
        d("complex128"),
    )
    return {
        b: ["i*"],
        "i*": [u8, i8],
        u8: [i16, u16],
        u16: [i32, u32],
        u32: [i64, u64] if x64 else [i32, u64],
        u64: ["f*"],
        i8: [i16],
        i16: [i32],
        i32: [i64],
        i64: ["f*"],
        "f*": [bfloat16, f16, "c*"],
        bfloat16: [f32],
        f16: [f32],
        f32: [f64, c64],
        f64: [c128],
        "c*": [c64],
        c64: [c128],
        c128: [],
    }


@functools.lru_cache(maxsize=2)
def _upper_bounds(x64: bool) -> dict[Any, frozenset]:
    lat = _lattice(x64)
    ubs: dict[Any, frozenset] = {}
    for n in lat:
        seen, todo = {n}, [n]
        while todo:
            for m in lat[todo.pop()]:
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        ubs[n] = frozenset(seen)
    return ubs


@functools.lru_cache(maxsize=4096)
def _least_upper_bound(nodes: frozenset, x64: bool) -> Any:
    ubs = _upper_bounds(x64)
    try:
        cub = frozenset.intersection(*(ubs[n] for n in nodes))
    except KeyError as e:
        raise TypeError(f"unsupported dtype for type promotion: {e.args[0]}") from None
    for c in cub:
        if cub <= ubs[c]:
            return c
    raise TypeError(f"no common dtype for {sorted(map(str, nodes))}")  # pragma: no cover


def _node(dtype: np.dtype, weak: bool) -> Any:
    if weak and dtype != np.dtype("bool"):
        return _WEAK_NODES[kind(dtype)]
    return dtype


def _from_node(node: Any) -> np.dtype:
    return default_dtype({"i*": 1, "f*": 2, "c*": 3}[node]) if isinstance(node, str) else node


def result_type(*args: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Join ``(dtype, weak_type)`` pairs on JAX's lattice; returns ``(dtype, weak_type)``.

    Mirrors ``jax._src.dtypes.lattice_result_type`` (the rule ``jax.numpy`` functions
    use): Python scalars and weakly typed arrays take the other operands' dtype when
    those are strong, and the result is weak only if a weak kind wins.
    """
    if not args:
        raise ValueError("result_type needs at least one dtype")
    x64 = x64_enabled()
    dts = [np.dtype(d) for d, _ in args]
    weaks = [bool(w) for _, w in args]
    if len(dts) == 1:
        out, weak = dts[0], weaks[0]
    elif len(set(dts)) == 1 and not all(weaks):
        out, weak = dts[0], False
    elif all(weaks):
        out, weak = _from_node(_least_upper_bound(frozenset(dts), x64)), True
    else:
        node = _least_upper_bound(frozenset(_node(d, w) for d, w in zip(dts, weaks)), x64)
        out, weak = _from_node(node), isinstance(node, str)
    out = canonicalize(out)
    return out, weak and out != np.dtype("bool")


class DtypeJoinError(TypeError):
    """Operands that :func:`join_strict` cannot join: ``reason`` is ``"distinct"`` (two
    strongly typed operands of different dtypes) or ``"weak"`` (operand ``index``, weakly
    typed, is of a higher kind than the strong ``dtype``)."""

    def __init__(self, reason: str, dtype: np.dtype | None = None, index: int = -1) -> None:
        super().__init__(reason)
        self.reason, self.dtype, self.index = reason, dtype, index


def join_strict(*args: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """Join ``(dtype, weak_type)`` pairs of operands that must share one dtype (``jax.lax``'s
    rule for a primitive's operands): the strongly typed operands have one dtype and each
    weakly typed operand (a Python scalar) takes it when its kind is not higher; all weak
    operands join on the lattice, as :func:`result_type`. Raises :class:`DtypeJoinError`.

    When the operands are accepted the result is ``result_type(*args)`` (a weak operand of
    no higher kind never changes a strong dtype on JAX's lattice); the strong case is
    answered without walking the lattice, as primitives call this on every bind.
    """
    strong = {np.dtype(d) for d, w in args if not w}
    if len(strong) > 1:
        raise DtypeJoinError("distinct")
    if not strong:
        return result_type(*args)
    (dtype,) = strong
    k = kind(dtype)
    for i, (d, w) in enumerate(args):
        if w and kind(d) > k:
            raise DtypeJoinError("weak", dtype, i)
    return dtype, False


def to_inexact(dtype: np.dtype) -> np.dtype:
    """JAX's ``to_inexact_dtype``: bool and integers up to 32 bits → float32, 64-bit → float64."""
    if kind(dtype) >= 2:
        return dtype
    return canonicalize("float64" if dtype.itemsize == 8 else "float32")


def to_numeric(dtype: np.dtype) -> np.dtype:
    """JAX's ``to_numeric_dtype``: bool → int32, everything else unchanged."""
    return np.dtype("int32") if dtype == np.dtype("bool") else dtype
