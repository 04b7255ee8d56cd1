"""The creation ops of the creation rows (``funcgrad.core.creation_row``: ``zeros``,
``ones``, ``empty``, ``full`` and their ``*_like`` forms): ``torch.X`` (with ``out=``) and
``Tensor.new_X``, generated from each row's fill and ``TorchCreation``; and of the computed
rows (``arange``, ``linspace``, ``logspace``, ``eye``): ``torch.X`` with ``out=``, from
each row's parameters (:class:`TorchArg`), inferred and refused dtypes and host values.

A creation op makes a new leaf on the host (NumPy fills it; no program runs), so its cost
is the argument checks and one ``np.full``: the generated functions do what the hand ones
did, in the same order. PyTorch's arguments after the size are keyword-only; its fill
value is a number (a 0-d tensor that requires no grad counts as one) that must fit the
result's dtype.

A computed row's values are made on the host with NumPy, as PyTorch's CPU kernels compute
them: ``arange`` as ``start + i * step`` in ``int64`` or ``double`` (``int64``'s bounds
truncated first), ``linspace``/``logspace`` from both ends (the first half counted from
``start``, the second back from ``end``) in the result's own type (``double`` for integers;
``logspace``'s powers in ``double``, or its complex type). Its parser follows PyTorch's: a
call that only one overload could take gets that overload's error (``arange(): argument
'end' (position 1) must be Number, not str``), others the "invalid combination" error."""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import out_arg as _out_arg
from compat._core.creation import _leaf, _scalar_fill_dtype, _size_args
from compat._core.tensor import Tensor
from funcgrad._compat_contract import COMPUTED, FILL_VALUE, REQUIRED, Creation, creation_rows

#: PyTorch's one layout (``torch.strided``), the only one a form takes
_STRIDED = (None, "torch.strided")
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


def _keywords(row: Any, kw: dict, size: tuple) -> tuple:
    """The size of a ``*size`` form given as ``size=``, after the keywords only some rows
    take (``memory_format``, ``pin_memory``) are checked: PyTorch's ``TypeError`` for
    others."""
    t = row.torch
    allowed = {"size"} if t.varargs else set()
    allowed |= {"memory_format"} if t.memory_format else set()
    allowed |= {"pin_memory"}
    for k in kw:
        if k not in allowed:
            raise TypeError(f"{row.name}() got an unexpected keyword argument '{k}'")
    if "size" in kw:
        if size:
            raise TypeError(f"{row.name}() got multiple values for argument 'size'")
        return (kw["size"],)
    return size


def _out_dtype(name: str, dtype: Any, out: Any, default: Any) -> np.dtype:
    """The result's dtype: ``dtype``, else ``out``'s, else ``default``; ``dtype`` and
    ``out``'s must agree (PyTorch's ``RuntimeError``)."""
    if out is None:
        return default if dtype is None else _dt.np_dtype(dtype)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if dtype is None:
        return out._npdtype
    npd = _dt.np_dtype(dtype)
    if npd != out._npdtype:
        raise RuntimeError(
            f"dtype {_dt.scalar_type_name(npd)} does not match dtype of out parameter "
            f"({_dt.scalar_type_name(out._npdtype)})"
        )
    return npd


def _nonnegative(size: tuple, text: str) -> tuple[int, ...]:
    """The size of a row whose refusal of a negative size is its own text
    (``TorchCreation.negative``)."""
    try:
        return _size_args(size)
    except RuntimeError:
        raise RuntimeError(text) from None


def _layout(name: str, layout: Any) -> None:
    if layout not in _STRIDED:
        raise RuntimeError(f"{name}(...) is not implemented for {layout} layout")


def _size(name: str, size: Any) -> tuple[int, ...]:
    """A ``full``-style size: one sequence (PyTorch's ``TypeError`` for an int)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
            f"{type(size).__name__}"
        )
    return _size_args((size,))


def _finish(name: str, result: Tensor, out: Any) -> Tensor:
    """``result``, or ``out`` holding it (resized without PyTorch's warning for other
    ops' outs: a creation op's ``out`` takes any shape)."""
    if out is None:
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return _out_arg.write_out(name, result, out)


def _sized(row: Any) -> Any:
    """``torch.X(*size, *, out=None, dtype=None, layout=None, device=None,
    requires_grad=False, ...)`` or ``torch.full(size, fill_value, *, ...)``."""
    name, value = row.name, row.value
    negative = row.torch.negative

    if row.fill == FILL_VALUE:

        def form(
            size: Any,
            fill_value: Any,
            *,
            out: Any = None,
            dtype: Any = None,
            layout: Any = None,
            device: Any = None,
            requires_grad: bool = False,
            **kw: Any,
        ) -> Tensor:
            if kw:
                _keywords(row, kw, ())
            if layout is not None:
                _layout(name, layout)
            shape = _size(name, size)
            fill = _number(name, fill_value, 2)
            if out is None:
                npd = _scalar_fill_dtype(fill_value) if dtype is None else _dt.np_dtype(dtype)
            else:
                npd = _out_dtype(name, dtype, out, None)
            result = _leaf(_fill_array(fill, shape, npd), requires_grad, device)
            return result if out is None else _finish(name, result, out)

    else:

        def form(  # type: ignore[misc]
            *size: Any,
            out: Any = None,
            dtype: Any = None,
            layout: Any = None,
            device: Any = None,
            requires_grad: bool = False,
            **kw: Any,
        ) -> Tensor:
            if kw:
                size = _keywords(row, kw, size)
            if layout is not None:
                _layout(name, layout)
            shape = _size_args(size) if negative is None else _nonnegative(size, negative)
            if out is None and dtype is None:
                npd = _dt.get_default_dtype().np
            else:
                npd = _out_dtype(name, dtype, out, _dt.get_default_dtype().np)
            result = _leaf(np.full(shape, value, npd), requires_grad, device)
            return result if out is None else _finish(name, result, out)

    return _named(form, row, _torch_params(row))


def _like(row: Any) -> Any:
    """``torch.X_like(input, [fill_value,] *, dtype=None, layout=None, device=None,
    requires_grad=False, memory_format=None)``."""
    name, value = row.name, row.value
    fill_arg = row.fill == FILL_VALUE

    def form(
        input: Any,
        *args: Any,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        **kw: Any,
    ) -> Tensor:
        if len(args) != fill_arg and not (fill_arg and "fill_value" in kw and not args):
            _arity(name, fill_arg, args)
        if kw:
            kw = dict(kw)
            fill_value = kw.pop("fill_value") if fill_arg and not args else None
            _keywords(row, kw, ())
        else:
            fill_value = None
        if not isinstance(input, Tensor):
            raise TypeError(
                f"{name}(): argument 'input' (position 1) must be Tensor, not "
                f"{type(input).__name__}"
            )
        if layout is not None:
            _layout(name, layout)
        npd = input._npdtype if dtype is None else _dt.np_dtype(dtype)
        where = input.device if device is None else device
        if fill_arg:
            fill = _number(name, args[0] if args else fill_value, 2)
            return _leaf(_fill_array(fill, tuple(input.shape), npd), requires_grad, where)
        return _leaf(np.full(tuple(input.shape), value, npd), requires_grad, where)

    return _named(form, row, _torch_params(row))


def _arity(name: str, fill_arg: bool, args: tuple) -> None:
    """Python's ``TypeError`` for a ``*_like`` call with the wrong positional count."""
    if fill_arg and not args:
        raise TypeError(f'{name}() missing 1 required positional arguments: "fill_value"')
    want = 1 + fill_arg
    noun = "argument" if want == 1 else "arguments"
    raise TypeError(f"{name}() takes {want} positional {noun} but {1 + len(args)} were given")


def _torch_params(row: Any) -> list[inspect.Parameter]:
    """PyTorch's parameters of a row's ``torch.X``, for its signature."""
    P = inspect.Parameter
    t = row.torch
    if row.like:
        params = [P("input", P.POSITIONAL_OR_KEYWORD)]
    elif t.varargs:
        params = [P("size", P.VAR_POSITIONAL)]
    else:
        params = [P("size", P.POSITIONAL_OR_KEYWORD)]
    if row.fill == FILL_VALUE:
        params.append(P("fill_value", P.POSITIONAL_OR_KEYWORD))
    keywords = ["out"] if t.out else []
    keywords += ["dtype", "layout", "device", "requires_grad"]
    keywords += ["pin_memory"]
    keywords += ["memory_format"] if t.memory_format else []
    defaults = {"requires_grad": False, "pin_memory": False}
    return params + [P(k, P.KEYWORD_ONLY, default=defaults.get(k)) for k in keywords]


def _named(form: Any, row: Any, params: list[inspect.Parameter], validate: bool = True) -> Any:
    """``form`` named and documented as ``row``'s ``torch.X``; ``validate=False`` for a
    signature Python could not declare (``arange(start=0, end, step=1)``)."""
    form.__name__ = form.__qualname__ = row.name
    form.__doc__ = f"{row.doc.split('.')[0].split(';')[0]} (PyTorch's arguments; the row's form)."
    form.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        params, __validate_parameters__=validate
    )
    form.__module__ = __name__
    return form


def _new_method(row: Any) -> Any:
    """``Tensor.new_X(*size, *, dtype=None, device=None, requires_grad=False, layout=None,
    pin_memory=False)`` (``new_full(size, fill_value, *, ...)``): ``torch.X`` in ``self``'s
    dtype and device unless given."""
    f = FORMS[row.name]

    if row.fill == FILL_VALUE:

        def new(
            self: Tensor,
            size: Any,
            fill_value: Any,
            *,
            dtype: Any = None,
            device: Any = None,
            requires_grad: bool = False,
            layout: Any = None,
            pin_memory: bool = False,
        ) -> Tensor:
            return f(
                _size(f"new_{row.name}", size),
                fill_value,
                dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device,
                requires_grad=requires_grad,
                layout=layout,
            )

    else:

        def new(  # type: ignore[misc]
            self: Tensor,
            *size: Any,
            dtype: Any = None,
            device: Any = None,
            requires_grad: bool = False,
            layout: Any = None,
            pin_memory: bool = False,
            **kw: Any,
        ) -> Tensor:
            return f(
                *size,
                dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device,
                requires_grad=requires_grad,
                layout=layout,
                **kw,
            )

    new.__name__ = new.__qualname__ = f"new_{row.name}"
    new.__doc__ = f"``torch.{row.name}`` in ``self``'s dtype and device unless given."
    return new


#: PyTorch's keyword-only parameters of every computed row's form, with their types as its
#: "invalid combination" error lists them
_KEYWORDS = (
    ("out", "Tensor out = None"),
    ("dtype", "torch.dtype dtype = None"),
    ("layout", "torch.layout layout = None"),
    ("device", "torch.device device = None"),
    ("pin_memory", "bool pin_memory = False"),
    ("requires_grad", "bool requires_grad = False"),
)
#: the name PyTorch's errors give a parameter kind
_KIND = {"number": "Number", "scalar": "Number", "int": "int", "float": "float"}
#: a value no parameter was given
_MISSING = object()


def _type_name(v: Any) -> str:
    """A value's type as PyTorch's parser names it."""
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, _dt.dtype):
        return "torch.dtype"
    name = type(v).__name__
    return "torch.memory_format" if name == "memory_format" else name


def _accepts(kind: str, v: Any) -> bool:
    """Whether PyTorch's parser takes ``v`` for a parameter of ``kind``."""
    if isinstance(v, Tensor):
        if kind == "scalar":
            return True  # (any tensor: its dimensions are checked after parsing)
        if v.ndim != 0 or (kind == "number" and v.requires_grad):
            return False
        return kind != "int" or _dt.kind(v._npdtype) in "iu"
    if kind == "int":
        return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
    if kind == "float":
        return isinstance(v, (int, float, np.integer, np.floating, np.bool_))
    return isinstance(v, (int, float, complex, np.number, np.bool_))


def _value(v: Any) -> Any:
    """A parsed argument as a Python number (a 0-d tensor's or NumPy scalar's value)."""
    if isinstance(v, Tensor):
        return np.asarray(v._st.array)[()].item()
    return v.item() if isinstance(v, (np.generic, np.ndarray)) else v


class _Parser:
    """PyTorch's parsing of one computed row's positional parameters."""

    def __init__(self, row: Creation) -> None:
        t = row.torch
        self.name = row.name
        self.args = t.args
        self.names = tuple(a.name for a in t.args)
        self.leading = t.leading_default
        # a call of one argument has one overload that can take it where the row has at
        # most one required parameter (``arange(end)``, ``eye(n)``); otherwise, and for
        # every other count, several (PyTorch's ``linspace`` has four of three arguments)
        self.single = sum(a.default is REQUIRED for a in t.args) <= 1
        #: the types a parameter takes at once (plain Python numbers), its default, and
        #: how many leading parameters a call must give
        self.fast = tuple(frozenset({int} if a.kind == "int" else {int, float}) for a in t.args)
        self.defaults = tuple(None if a.default is REQUIRED else a.default for a in t.args)
        self.least = max((i + 1 for i, a in enumerate(t.args) if a.default is REQUIRED), default=0)
        params = ", ".join(f"{_KIND[a.kind]} {a.name}" for a in t.args)
        keywords = ", ".join(text for _, text in _KEYWORDS)
        self.overload = f" * ({params}, *, {keywords})"

    def invalid(self, args: tuple, kw: dict) -> TypeError:
        """PyTorch's error for a call no overload takes."""
        got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kw.items()]
        return TypeError(
            f"{self.name}() received an invalid combination of arguments - got "
            f"({', '.join(got)}), but expected one of:\n{self.overload}\n"
        )

    def parse(self, args: tuple, kw: dict, keywords: dict) -> list[Any]:
        """The positional parameters' values (``None`` for an omitted optional one)."""
        names = self.names
        n = len(args)
        if not kw:  # (positional plain numbers, the common call, at once)
            given = (self.defaults[0], *args) if self.leading and n == 1 else args
            fast = self.fast
            if self.least <= len(given) <= len(names) and all(
                type(v) in fast[i] for i, v in enumerate(given)
            ):
                return [*given, *self.defaults[len(given) :]]
        shift = self.leading and n == 1 and names[1] not in kw
        if shift:
            args = (_MISSING, args[0])  # (``arange(5)``: the one argument is ``end``)
        given = dict(zip(names, args))
        specific = self.single and n + len(kw) + len(keywords) == 1
        if n > len(names) or any(k not in names or k in given for k in kw):
            raise self.invalid(args[-n:] if n else (), {**kw, **keywords})
        given.update(kw)
        values = []
        for i, a in enumerate(self.args):
            v = given.get(a.name, _MISSING)
            if v is _MISSING:
                if a.default is REQUIRED:
                    if specific:
                        raise TypeError(
                            f'{self.name}() missing 1 required positional arguments: "{a.name}"'
                        )
                    raise self.invalid(args[-n:] if n else (), {**kw, **keywords})
                values.append(a.default)
            elif _accepts(a.kind, v):
                values.append(v if a.kind == "scalar" else _value(v))
            elif specific:
                raise TypeError(
                    f"{self.name}(): argument '{a.name}' (position {i + 1 - shift}) must be "
                    f"{_KIND[a.kind]}, not {_type_name(v)}"
                )
            else:
                raise self.invalid(args[-n:] if n else (), {**kw, **keywords})
        return values


def _refuse(name: str, npd: np.dtype, refused: str) -> None:
    """PyTorch's ``NotImplementedError`` for a dtype the row's kernel has no code for."""
    if npd.kind in refused:
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{_dt.scalar_type_name(npd)}'"
        )


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
        re = _halves(lo.real, hi.real, step.real, steps, part, fused)
        return (re + 1j * _halves(lo.imag, hi.imag, step.imag, steps, part, fused)).astype(npd)
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


def _default_dtype(row: Creation, values: list[Any]) -> np.dtype:
    """The dtype of a call without ``dtype=`` or ``out=`` (``TorchCreation.inferred``)."""
    default = _dt.get_default_dtype().np
    if row.torch.inferred == "arguments":
        numbers = [v for v in values if not isinstance(v, Tensor)]
        return default if any(isinstance(v, float) for v in numbers) else np.dtype(np.int64)
    if any(isinstance(_value(v), complex) for v in values[:2]):
        return np.dtype(np.complex128 if default == np.float64 else np.complex64)
    return default


def _scalar_ends(name: str, values: list[Any]) -> None:
    """PyTorch's refusal of tensor bounds with dimensions (``linspace``'s ``Tensor`` start)."""
    dims = [v.ndim if isinstance(v, Tensor) else 0 for v in values[:2]]
    if any(dims):
        raise RuntimeError(
            f"{name} only supports 0-dimensional start and end tensors, but got start with "
            f"{dims[0]} dimension(s) and end with {dims[1]} dimension(s)."
        )


def _computed(row: Creation) -> Any:
    """``torch.X(<the row's parameters>, *, out=None, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False)``."""
    name, t = row.name, row.torch
    parser = _Parser(row)
    values_of = {
        "ramp": _ramp,
        "spaced": _spaced,
        "log_spaced": _log_spaced,
        "diagonal": _diagonal,
    }[t.values or ""]
    spaced = t.values in ("spaced", "log_spaced")
    leading = t.leading_default

    def form(
        *args: Any,
        out: Any = None,
        dtype: Any = None,
        layout: Any = None,
        device: Any = None,
        pin_memory: bool = False,
        requires_grad: bool = False,
        **kw: Any,
    ) -> Tensor:
        if leading and len(args) == 1 and type(args[0]) is int and not kw and out is dtype is None:
            # (``arange(n)``, the common call, at once: ``int64`` values from 0)
            if args[0] < 0:
                raise RuntimeError("upper bound and lower bound inconsistent with step sign")
            if layout is not None:
                _layout(name, layout)
            return _leaf(np.arange(args[0], dtype=np.int64), requires_grad, device)
        keywords = {
            k: v
            for k, v in (("out", out), ("dtype", dtype), ("layout", layout), ("device", device))
            if v is not None
        }
        values = parser.parse(args, kw, keywords)
        if layout is not None:
            _layout(name, layout)
        if spaced:
            _scalar_ends(name, values)
            if values[2] < 0:
                raise RuntimeError("number of steps must be non-negative")
        if out is None and dtype is None:
            npd = _default_dtype(row, values)
        else:
            npd = _out_dtype(name, dtype, out, _default_dtype(row, values))
        if t.refused and (not spaced or values[2] > 1):
            _refuse(name, npd, t.refused)
        result = _leaf(values_of(name, npd, *values), requires_grad, device)
        return result if out is None else _finish(name, result, out)

    P = inspect.Parameter
    params = [
        P(
            a.name,
            P.POSITIONAL_OR_KEYWORD,
            **({} if a.default is REQUIRED else {"default": a.default}),
        )
        for a in t.args
    ]
    params += [
        P(k, P.KEYWORD_ONLY, default=False if k in ("pin_memory", "requires_grad") else None)
        for k, _ in _KEYWORDS
    ]
    return _named(form, row, params, validate=not t.leading_default)


#: the rows' ``torch.X`` functions, by name
FORMS = {
    r.name: _computed(r) if r.fill == COMPUTED else _like(r) if r.like else _sized(r)
    for r in creation_rows()
}
#: the rows' ``Tensor.new_X`` methods, by name
NEW_METHODS = {f"new_{r.name}": _new_method(r) for r in creation_rows() if r.torch.new}
globals().update(FORMS)
