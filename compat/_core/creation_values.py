"""The values of the creation ops on the host, as PyTorch's CPU kernels make them: a fill
value checked (a number, PyTorch's refusal of one its dtype cannot hold), and the
computed rows' values (``compat/_core/creation_rows.py`` generates their forms).

``arange`` is ``start + i * step`` in ``int64`` or ``double`` (``int64``'s bounds truncated
first), ``linspace``/``logspace`` count from both ends (the first half from ``start``, the
second back from ``end``) in the result's own type (``double`` for integers; ``logspace``'s
powers in ``double``, or its complex type), with the kernels' roundings: fused multiply-adds,
``arange``'s 256-bit vector chunks, the C library's ``pow``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.tensor import Tensor

#: the C++ type names PyTorch's refusal of a fill value that does not fit says
_CPP = {
    "bool": "bool",
    "uint8": "uint8_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int",
    "int64": "int64_t",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
}


def _number(name: str, value: Any, pos: int) -> Any:
    """``fill_value`` as a Python or NumPy number (a 0-d tensor's value), with PyTorch's
    ``TypeError`` for anything else."""
    if type(value) is float:  # (the common case, at once)
        return value
    if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
        return np.asarray(value._st.array)[()]
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        if type(value) is int and not -(2**63) <= value < 2**64:
            raise OverflowError("int too big to convert")  # (PyTorch's Scalar)
        return value
    raise TypeError(
        f"{name}(): argument 'fill_value' (position {pos}) must be Number, not "
        f"{type(value).__name__}"
    )


def _overflow(npd: np.dtype) -> RuntimeError:
    cpp = _CPP.get(npd.name, npd.name)
    return RuntimeError(f"value cannot be converted to type {cpp} without overflow")


def _fmax(npd: np.dtype) -> float:
    """The largest finite value of a float dtype (remembered)."""
    m = _FMAX.get(npd)
    if m is None:
        m = _FMAX[npd] = float(_dt.finfo(_dt.from_np(npd)).max)
    return m


_FMAX: dict[np.dtype, float] = {}


def _fill_array(value: Any, shape: tuple[int, ...], npd: np.dtype) -> np.ndarray:
    """``shape`` filled with the number ``value`` in ``npd``, with PyTorch's refusal of a
    value the dtype cannot hold: a complex number with an imaginary part in a real dtype,
    a number beyond an integer or float type's range (a negative integer wraps into an
    unsigned type, and a float truncates into an integer one, as PyTorch's casts)."""
    kind = _dt.kind(npd)
    if kind == "f" and type(value) in (float, int):  # (the common case, at once)
        if value - value == 0 and abs(value) > (_FMAX.get(npd) or _fmax(npd)):  # (finite, beyond)
            raise _overflow(npd)
        return np.full(shape, value, npd)
    if kind in "bc":
        return np.full(shape, bool(value) if kind == "b" else value, npd)
    if isinstance(value, (complex, np.complexfloating)):
        if value.imag != 0:
            raise _overflow(npd)
        value = value.real
    if kind == "f":
        f = float(value)
        if f - f == 0 and abs(f) > _fmax(npd):
            raise _overflow(npd)
        return np.full(shape, value, npd)
    info = np.iinfo(npd)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        v = int(value)
        if not (info.min if kind == "i" else -info.max) <= v <= info.max:
            raise _overflow(npd)
        return np.full(shape, v % (1 << (8 * npd.itemsize)) if v < 0 and kind == "u" else v, npd)
    if not info.min <= float(value) <= info.max:  # (NaN too)
        raise _overflow(npd)
    return np.full(shape, value, npd)


def _value(v: Any) -> Any:
    """A parsed argument as a Python number (a 0-d tensor's or NumPy scalar's value)."""
    if isinstance(v, Tensor):
        return np.asarray(v._st.array)[()].item()
    return v.item() if isinstance(v, (np.generic, np.ndarray)) else v


def _ramp(name: str, npd: np.dtype, start: Any, end: Any, step: Any) -> np.ndarray:
    """``arange``'s values. The bounds are checked as doubles; ``int64`` counts its size in
    integers from the truncated bounds (a step truncated to 0: PyTorch's ``ValueError``),
    other dtypes in doubles. The values are ``start + i * step`` in ``int64`` (integer
    dtypes, bounds truncated) or fused in ``double``, then cast."""
    if any(isinstance(v, complex) for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type double without overflow")
    dstart, dend, dstep = float(start), float(end), float(step)
    if dstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(dstart) and math.isfinite(dend)):
        raise RuntimeError(f"unsupported range: {_num(start)} -> {_num(end)}")
    if not ((dstep > 0 and dend >= dstart) or (dstep < 0 and dend <= dstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    integral = _dt.kind(npd) in "iu"
    if integral:
        xstart, xend, xstep = (math.trunc(v) for v in (start, end, step))
    if npd == np.int64:
        if xstep == 0:
            raise ValueError("step must be nonzero")
        sgn = (xstep > 0) - (xstep < 0)
        size = abs(xend - xstart + xstep - sgn) // abs(xstep)  # (C's truncating division)
        size = size if (xend - xstart + xstep - sgn) * xstep >= 0 else -size
    else:
        size = math.ceil((dend - dstart) / dstep)
        if not 0 <= size <= 2**63 - 1:
            raise RuntimeError("invalid size, possible overflow?")
    if size * npd.itemsize > 2**63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{size}]")
    if integral:
        with np.errstate(over="ignore"):
            return (xstart + xstep * np.arange(size, dtype=np.int64)).astype(npd)
    values = _ramp_floats(dstart, dstep, size, npd)
    if max(abs(dstart), abs(dend)) <= (_FMAX.get(npd) or _fmax(npd)):
        return values.astype(npd)  # (every value within the bounds: no overflow to hide)
    return _to_float(values, npd)


def _ramp_floats(start: float, step: float, size: int, npd: np.dtype) -> np.ndarray:
    """A float ``arange`` of ``npd`` as PyTorch's CPU kernel computes it, before the cast to
    ``npd``: in its accumulation type (``double``; ``float`` for the half types), an element
    ``start + step * i`` fused (one rounding), but for the 256-bit vectors of its main loop (pairs of them, 32 bytes
    each): there the vector's first index ``c`` gives a base ``start + step * c`` rounded
    to the result's type, and its elements are ``base + step * k`` fused (rounded twice
    in ``float`` for the half types)."""
    acc = np.dtype(np.float32 if npd.itemsize == 2 else np.float64)
    wide = _WIDER[acc]
    a_start, a_step = wide(acc.type(start)), wide(acc.type(step))
    values = (a_start + a_step * np.arange(size, dtype=wide)).astype(acc)
    lanes = 32 // npd.itemsize
    vectorised = size // (2 * lanes) * 2 * lanes
    if vectorised:
        idx = np.arange(vectorised)
        k = idx % lanes
        base = values[idx - k].astype(npd).astype(acc)
        if npd.itemsize == 2:  # (the half types' vectors: two roundings in ``float``)
            values[:vectorised] = base + np.asarray(step, acc) * k.astype(acc)
        else:
            values[:vectorised] = (base.astype(wide) + a_step * k.astype(wide)).astype(acc)
    return values


def _num(v: Any) -> str:
    """A bound as PyTorch prints it in its range error (a double: ``inf``, ``0``, ``2.5``)."""
    return f"{float(v):g}"


def _end(npd: np.dtype, v: Any) -> Any:
    """A bound converted to the result's type with PyTorch's overflow check (its
    ``Scalar.to<T>()``), as a NumPy scalar."""
    return _fill_array(_value(v), (), npd)[()]


#: the type in which ``a + b * i`` of a float type rounds once, as the fused multiply-add
#: PyTorch's CPU kernels are compiled to (the product exact): double for float32, the x87
#: long double for double (exact for ``i`` below 2**11)
_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.longdouble}


def _halves(
    lo: Any, hi: Any, step: Any, steps: int, npd: np.dtype, fused: bool = True
) -> np.ndarray:
    """``lo + step * i`` for the first half of ``steps`` positions, ``hi - step * (steps -
    i - 1)`` for the rest, in ``npd``: fused (one rounding; ``fused=False``: two) for
    float32 and double and their complex types (part by part), each operation rounded for
    the half types (as ``c10::Half``'s operators)."""
    half = steps // 2
    i = np.arange(steps)
    n, back = i[:half], steps - 1 - i[half:]
    if npd.kind == "c":
        part = np.dtype(np.float32 if npd == np.complex64 else np.float64)
        out = np.empty(steps, npd)  # (the parts set: ``re + 1j * im`` makes NaN of inf)
        out.real = _halves(lo.real, hi.real, step.real, steps, part, fused)
        out.imag = _halves(lo.imag, hi.imag, step.imag, steps, part, fused)
        return out
    wide = _WIDER.get(npd) if fused else None
    with np.errstate(over="ignore", invalid="ignore"):
        if wide is None:
            return np.concatenate([lo + step * n.astype(npd), hi - step * back.astype(npd)])
        lo, hi, step = (np.asarray(v, wide) for v in (lo, hi, step))
        points = np.concatenate([lo + step * n.astype(wide), hi - step * back.astype(wide)])
        return points.astype(np.float64).astype(npd)


def _to_integer(values: np.ndarray, npd: np.dtype) -> np.ndarray:
    """Doubles truncated into an integer type as C++'s conversion on x86 does (through a
    32-bit integer but for 64-bit types: out of range gives its minimum, then wraps)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(np.int64 if npd.itemsize == 8 else np.int32).astype(npd)


def _to_float(values: np.ndarray, npd: np.dtype) -> np.ndarray:
    """Doubles rounded into a float type as C++'s conversion does (through ``float`` for
    the half types)."""
    with np.errstate(over="ignore"):
        return values.astype(np.float32).astype(npd) if npd.itemsize == 2 else values.astype(npd)


def _spaced(name: str, npd: np.dtype, start: Any, end: Any, steps: int) -> np.ndarray:
    """``linspace``'s values: ``steps`` points from ``start`` to ``end`` (PyTorch's step in
    the result's type, ``double`` for integers, whose points are truncated)."""
    if steps <= 1:
        return np.full((steps,), _end(npd, start) if steps else 0, npd)
    lo, hi = _end(npd, start), _end(npd, end)
    if _dt.kind(npd) in "iub":
        step = (float(hi) - float(lo)) / (steps - 1)
        points = _halves(float(lo), float(hi), step, steps, np.dtype(np.float64))
        return _to_integer(points, npd)
    return _halves(lo, hi, _step(lo, hi, steps, npd), steps, npd)


def _step(lo: Any, hi: Any, steps: int, npd: np.dtype) -> Any:
    """``(hi - lo) / (steps - 1)`` in ``npd``, a complex difference divided part by part (by
    a real, as ``c10::complex``'s division by a number)."""
    d = hi - lo
    if npd.kind != "c":
        return d / npd.type(steps - 1)
    part = d.real.dtype.type
    return npd.type(complex(d.real / part(steps - 1), d.imag / part(steps - 1)))


def _log_spaced(
    name: str, npd: np.dtype, start: Any, end: Any, steps: int, base: float
) -> np.ndarray:
    """``logspace``'s values: ``base`` to the powers from the bounds in the result's type,
    those computed in ``double`` (unfused) and raised with the C library's ``pow`` (in the
    complex type for a complex one, as ``exp(e * log(base))``; ``float`` ``base`` for
    integers, whose powers are truncated)."""
    kind = _dt.kind(npd)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if steps <= 1:
            if not steps:
                return np.zeros((0,), npd)
            if kind == "c":  # (a real exponent: the real ``pow``, as PyTorch's)
                e = complex(_value(start))
                p = _pow(base, e.real) if e.imag == 0 else np.power(complex(base), e)
                return np.full((1,), p, npd)
            exps = np.array([float(_value(start))])
        else:
            lo, hi = _end(npd, start), _end(npd, end)
            if kind == "c":
                exps = _halves(lo, hi, _step(lo, hi, steps, npd), steps, npd, fused=False)
                return np.exp(exps * np.log(npd.type(base))).astype(npd)  # (``std::pow``'s)
            # (the bounds' difference in their type, the step and exponents in double)
            step = (
                float(hi - lo) / (steps - 1)
                if kind == "f"
                else (float(hi) - float(lo)) / (steps - 1)
            )
            f64 = np.dtype(np.float64)
            exps = _halves(float(lo), float(hi), step, steps, f64, fused=False)
        b = float(np.float32(base)) if kind in "iu" else float(base)
        powers = np.fromiter((_pow(b, e) for e in exps.tolist()), np.float64, len(exps))
    if kind == "b":
        return powers != 0
    return _to_integer(powers, npd) if kind in "iu" else _to_float(powers, npd)


def _pow(b: float, e: float) -> float:
    """The C library's ``pow`` (NumPy's vectorised one differs in the last bit), with its
    infinities where Python's raises."""
    try:
        return math.pow(b, e)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


def _diagonal(name: str, npd: np.dtype, n: int, m: Any) -> np.ndarray:
    """``eye``'s values: ones on the main diagonal of ``n x m`` (``m`` omitted: ``n``)."""
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    m = n if m is None else m
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return np.eye(n, m, dtype=npd)
