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

A computed row's values are made on the host as PyTorch's CPU kernels make them
(``compat/_core/creation_values.py``). Its parser follows PyTorch's: a call that only one
overload could take gets that overload's error (``arange(): argument 'end' (position 1)
must be Number, not str``), others the "invalid combination" error."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation import (
    _finish,
    _layout,
    _leaf,
    _out_dtype,
    _scalar_fill_dtype,
    _size_args,
    is_meta,
)
from compat._core.creation_values import (
    _diagonal,
    _fill_array,
    _log_spaced,
    _number,
    _ramp,
    _spaced,
    _value,
)
from compat._core.tensor import Tensor
from funcgrad._compat_contract import (
    COMPUTED,
    FILL_VALUE,
    REQUIRED,
    Creation,
    MetaArray,
    creation_rows,
)


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


def _nonnegative(size: tuple, text: str) -> tuple[int, ...]:
    """The size of a row whose refusal of a negative size is its own text
    (``TorchCreation.negative``)."""
    try:
        return _size_args(size)
    except RuntimeError:
        raise RuntimeError(text) from None


def _size(name: str, size: Any) -> tuple[int, ...]:
    """A ``full``-style size: one sequence (PyTorch's ``TypeError`` for an int)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
            f"{type(size).__name__}"
        )
    return _size_args((size,))


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
            made = MetaArray(shape, npd) if is_meta(device) else _fill_array(fill, shape, npd)
            result = _leaf(made, requires_grad, device)
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
            made = MetaArray(shape, npd) if is_meta(device) else np.full(shape, value, npd)
            result = _leaf(made, requires_grad, device)
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
        shape = tuple(input.shape)
        if fill_arg:
            fill = _number(name, args[0] if args else fill_value, 2)
        if is_meta(where):  # (no values made)
            return _leaf(MetaArray(shape, npd), requires_grad, where)
        if fill_arg:
            return _leaf(_fill_array(fill, shape, npd), requires_grad, where)
        return _leaf(np.full(shape, value, npd), requires_grad, where)

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


def _complex_ends(name: str, inferred: np.dtype, npd: np.dtype) -> None:
    """PyTorch's refusal of complex ends for a real dtype (``linspace(0, 1j, 5,
    dtype=torch.float)``)."""
    if inferred.kind == "c" and npd.kind != "c":
        part = "double" if inferred == np.complex128 else "float"
        raise RuntimeError(
            f"torch.{name}(): inferred dtype c10::complex<{part}> can't be safely cast to "
            f"passed dtype {_dt.scalar_type_name(npd)}"
        )


def _into_out(values: np.ndarray, out: Tensor, warn: bool) -> np.ndarray:
    """A 1-d result shaped for ``out``: PyTorch keeps ``out``'s shape where it has the
    result's number of elements, and resizes it otherwise (``arange`` warns then, but for an
    empty ``out``)."""
    n, size = out.numel(), values.size
    if n == size:
        return values.reshape(tuple(out.shape))
    if warn and n:
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out.shape)} is {n} which "
            f"does not match the computed number of elements {size}. Note that this may occur "
            "as a result of rounding error. The out tensor will be resized to a tensor of shape "
            f"({size},).",
            UserWarning,
            stacklevel=3,
        )
    return values


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
            if spaced:
                _complex_ends(name, _default_dtype(row, values), npd)
        if t.refused and (not spaced or values[2] > 1):
            _refuse(name, npd, t.refused)
        made = values_of(name, npd, *values)
        if out is not None and t.values != "diagonal":
            made = _into_out(made, out, warn=t.values == "ramp")
        result = _leaf(made, requires_grad, device)
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
