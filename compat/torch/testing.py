"""``torch.testing``: ``assert_close`` and ``make_tensor``.

``assert_close`` compares tensors, Python numbers and (nested) sequences and mappings of
them with PyTorch's default tolerances per dtype and its failure messages.
``make_tensor`` draws values uniformly from ``[low, high)`` with the per-dtype defaults
and the clamping, checks and error messages of PyTorch's; the random stream is compat's
(``torch.manual_seed`` makes it repeatable, not equal to PyTorch's draws).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from compat._core import creation as _creation
from compat._core.namespace import (
    Tensor,
    empty,
    finfo,
    iinfo,
    int64,
    randint,
    view_as_real,
)
from compat._core.namespace import (
    bool as _bool,
)

__all__ = ["assert_close", "make_tensor"]


def _bounds(
    dtype: Any, low: float | None, high: float | None, lo: float, hi: float,
    default: tuple[float, float],
) -> tuple[float, float]:  # fmt: skip
    """``low``/``high`` after PyTorch's defaults, checks and clamping to ``[lo, hi)``."""
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    inexact = dtype.is_floating_point or dtype.is_complex
    if low == high and inexact:
        warnings.warn(
            "Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
            "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lo or low >= hi:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lo}, {hi})"
        )
    low, high = min(max(low, lo), hi), min(max(high, lo), hi)
    if not inexact:  # randint's upper bound is exclusive: both bounds round up
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(
    *shape: int | Sequence[int],
    dtype: Any,
    device: Any = None,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format: Any = None,
) -> Any:
    """A tensor of ``shape`` and ``dtype`` with values drawn uniformly from ``[low, high)``
    (defaults: ``[0, 2)`` for ``bool``, ``[-9, 10)`` for integers clamped to the dtype's
    range, ``[-9, 9)`` for floating and complex types, real and imaginary parts alike)."""
    if len(shape) == 1 and isinstance(shape[0], Sequence):
        shape = tuple(shape[0])
    dims = tuple(int(s) for s in shape)  # type: ignore[arg-type]
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    exact = not (dtype.is_floating_point or dtype.is_complex)
    if requires_grad and exact:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, "
            f"but got dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(dims) > 1
    if noncontiguous:  # every other element of a last dimension twice as long
        dims = (*dims[:-1], 2 * dims[-1])
    if dtype is _bool:
        lo, hi = _bounds(dtype, low, high, 0, 2, (0, 2))
        result = randint(int(lo), int(hi), dims, device=device, dtype=dtype)
    elif exact:
        info = iinfo(dtype)
        top = info.max + (0 if dtype is int64 else 1)
        lo, hi = _bounds(dtype, low, high, info.min, top, (-9, 10))
        result = randint(int(lo), int(hi), dims, device=device, dtype=dtype)
    else:
        info = finfo(dtype)
        lo, hi = _bounds(dtype, low, high, info.min, info.max, (-9, 9))
        result = empty(dims, device=device, dtype=dtype)
        real = view_as_real(result) if dtype.is_complex else result
        if lo == hi:
            real.fill_(lo)
        elif hi - lo >= info.max:  # (uniform_ refuses a span beyond the dtype: halve it)
            real.uniform_(lo / 2, hi / 2).mul_(2)
        else:
            real.uniform_(lo, hi)
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        if exact:
            tiny: Any = 1
        else:
            tiny = finfo(dtype).tiny
            tiny = complex(tiny, tiny) if dtype.is_complex else tiny
        result[result == 0] = tiny
    if requires_grad:
        result.requires_grad_(True)
    return result


#: PyTorch's default ``(rtol, atol)`` per dtype name (exact comparison for the others)
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


class _Mismatch(AssertionError):
    """A failed comparison; ``where`` is the path of the item in nested containers."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.message, self.where = message, where


def _tolerances(dtype_name: str, rtol: float | None, atol: float | None) -> tuple[float, float]:
    if rtol is None:
        return _TOLERANCES.get(dtype_name, (0.0, 0.0))
    return rtol, atol  # type: ignore[return-value]


def _diffs(a: np.ndarray, e: np.ndarray, equal_nan: bool, rtol: float, atol: float) -> Any:
    """Which elements differ, and the absolute and relative differences."""
    with np.errstate(all="ignore"):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        close |= a == e  # infinities of the same sign
        abs_diff = np.abs(a - e)
        rel_diff = abs_diff / np.abs(e)
    return ~close, abs_diff, rel_diff


def _compare_tensors(
    actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool,
    check_dtype: bool, msg: Any,
) -> None:  # fmt: skip
    if actual.shape != expected.shape:
        raise _Mismatch(
            f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}."
        )
    if check_dtype and actual.dtype != expected.dtype:
        raise _Mismatch(
            f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}."
        )
    name = str(expected.dtype).removeprefix("torch.")
    rtol, atol = _tolerances(name, rtol, atol)
    exact = not (expected.dtype.is_floating_point or expected.dtype.is_complex)
    work = np.float32 if exact or name in ("float16", "bfloat16") else None
    a, e = (np.asarray(t.detach().cpu().float().numpy() if name == "bfloat16" else
                       t.detach().cpu().numpy()) for t in (actual, expected))  # fmt: skip
    if work is not None:
        a, e = a.astype(work), e.astype(work)
    bad, abs_diff, rel_diff = _diffs(a, e, equal_nan, rtol, atol)
    if not bad.any():
        return
    kind = "equal" if exact else "close"
    if msg is not None:
        raise _Mismatch(msg if isinstance(msg, str) else msg(f"Tensor-likes are not {kind}!"))
    allowed = ("", "") if exact else (f" (up to {atol} allowed)", f" (up to {rtol} allowed)")
    if a.ndim == 0:  # a scalar: its differences as Python numbers
        x, y = a.item(), e.item()
        diff = abs(x - y)
        rel = diff / abs(y) if y != 0 else (math.inf if diff else math.nan)
        raise _Mismatch(_scalar_message(kind, y, x, diff, rel, allowed))

    def at(values: np.ndarray) -> str:
        flat = values.ravel()
        i = int(np.argmax(np.isnan(flat))) if np.isnan(flat).any() else int(np.argmax(flat))
        value = flat[i].item()
        index = tuple(int(k) for k in np.unravel_index(i, a.shape))
        return f"{_number(value, exact)} at index {index}"

    n = int(bad.sum())
    raise _Mismatch(
        f"Tensor-likes are not {kind}!\n\n"
        f"Mismatched elements: {n} / {a.size} ({100 * n / a.size:.1f}%)\n"
        f"Greatest absolute difference: {at(abs_diff)}{allowed[0]}\n"
        f"Greatest relative difference: {at(rel_diff)}{allowed[1]}"
    )


def _number(value: float, exact: bool) -> str:
    if exact and math.isfinite(value) and value == int(value):
        return str(int(value))
    return repr(float(value))


def _scalar_message(kind: str, expected: Any, actual: Any, abs_diff: Any, rel_diff: Any,
                    allowed: tuple[str, str]) -> str:  # fmt: skip
    return (
        f"Scalars are not {kind}!\n\nExpected {expected} but got {actual}.\n"
        f"Absolute difference: {abs_diff}{allowed[0]}\n"
        f"Relative difference: {rel_diff}{allowed[1]}"
    )


def _compare_numbers(
    actual: Any, expected: Any, rtol: float | None, atol: float | None, equal_nan: bool, msg: Any
) -> None:
    exact = not isinstance(expected, (float, complex)) and not isinstance(actual, (float, complex))
    rtol, atol = (0.0, 0.0) if exact and rtol is None else _tolerances(
        "complex128" if isinstance(expected, complex) else "float64", rtol, atol)  # fmt: skip
    bad = _diffs(np.asarray(actual), np.asarray(expected), equal_nan, rtol, atol)[0]
    if not bad:
        return
    kind = "equal" if exact else "close"
    if msg is not None:
        raise _Mismatch(msg if isinstance(msg, str) else msg(f"Scalars are not {kind}!"))
    allowed = ("", "") if exact else (f" (up to {atol} allowed)", f" (up to {rtol} allowed)")
    a_d = abs(actual - expected)
    r_d = a_d / abs(expected) if expected != 0 else math.inf
    raise _Mismatch(_scalar_message(kind, expected, actual, a_d, r_d, allowed))


def _compare(actual: Any, expected: Any, where: str, opts: dict[str, Any]) -> None:
    numbers = (int, float, complex)
    try:
        if isinstance(actual, Tensor) and isinstance(expected, Tensor):
            _compare_tensors(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"],
                             opts["check_dtype"], opts["msg"])  # fmt: skip
            return
        if actual is None and expected is None:
            return
        if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
            # two NumPy arrays compare as the tensors they make, as PyTorch's
            _compare_tensors(_creation.tensor(actual), _creation.tensor(expected),
                             opts["rtol"], opts["atol"], opts["equal_nan"],
                             opts["check_dtype"], opts["msg"])  # fmt: skip
            return
        if isinstance(actual, numbers) and isinstance(expected, numbers):
            _compare_numbers(actual, expected, opts["rtol"], opts["atol"], opts["equal_nan"],
                             opts["msg"])  # fmt: skip
            return
    except _Mismatch as e:
        raise _Mismatch(e.message, where) from None
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        missing = sorted(set(expected) - set(actual), key=str)
        extra = sorted(set(actual) - set(expected), key=str)
        if missing or extra:
            raise _Mismatch(
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {missing}\n"
                f"Additional keys in the actual mapping: {extra}",
                where,
            )
        for k in expected:
            _compare(actual[k], expected[k], f"{where}[{k!r}]", opts)
        return
    seq = (list, tuple)
    if isinstance(actual, seq) and isinstance(expected, seq):
        if len(actual) != len(expected):
            raise _Mismatch(
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", where
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, f"{where}[{i}]", opts)
        return
    raise TypeError(
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}."
    )


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close: tensors of the
    same shape and dtype within ``atol + rtol * |expected|`` elementwise (PyTorch's
    defaults per dtype; exact for integers and booleans), numbers likewise, sequences and
    mappings item by item."""
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}."
        )
    opts = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_dtype": check_dtype,
            "msg": msg}  # fmt: skip
    try:
        _compare(actual, expected, "", opts)
    except _Mismatch as e:
        text = e.message
        if e.where and msg is None:
            text += f"\n\nThe failure occurred for item {e.where}"
        raise AssertionError(text) from None
