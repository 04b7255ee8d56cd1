"""The creation ops of the creation rows (``funcgrad.core.creation_row``: ``zeros``,
``ones``, ``empty``, ``full`` and their ``*_like`` forms): ``torch.X`` (with ``out=``) and
``Tensor.new_X``, generated from each row's fill and ``TorchCreation``.

A creation op makes a new leaf on the host (NumPy fills it; no program runs), so its cost
is the argument checks and one ``np.full``: the generated functions do what the hand ones
did, in the same order. PyTorch's arguments after the size are keyword-only; its fill
value is a number (a 0-d tensor that requires no grad counts as one) that must fit the
result's dtype."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import out_arg as _out_arg
from compat._core.creation import _leaf, _scalar_fill_dtype, _size_args
from compat._core.tensor import Tensor
from funcgrad._compat_contract import FILL_VALUE, creation_rows

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
    kind = npd.kind
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


def _named(form: Any, row: Any, params: list[inspect.Parameter]) -> Any:
    form.__name__ = form.__qualname__ = row.name
    form.__doc__ = f"{row.doc.split('.')[0].split(';')[0]} (PyTorch's arguments; the row's form)."
    form.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
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


#: the rows' ``torch.X`` functions, by name
FORMS = {r.name: (_like(r) if r.like else _sized(r)) for r in creation_rows()}
#: the rows' ``Tensor.new_X`` methods, by name
NEW_METHODS = {f"new_{r.name}": _new_method(r) for r in creation_rows() if r.torch.new}
globals().update(FORMS)
