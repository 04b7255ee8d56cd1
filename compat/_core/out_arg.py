"""PyTorch's ``out=`` argument for every ``torch.X`` of the op table.

The op runs as usual and its result is written into ``out`` (resized when its shape
differs, with PyTorch's warning when ``out`` was not empty; cast to ``out``'s dtype
under PyTorch's rule); ``out`` is returned. As in PyTorch, ``out=`` does not
support automatic differentiation: it raises when the result would require grad.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core import numpy_names as _np_names
from compat._core import overlap as _overlap
from compat._core import views as _views
from compat._core.tensor import Tensor

#: names of first parameters that PyTorch types ``Tensor``
_TENSOR_FIRST = ("input", "condition", "A", "x")
_NUMBERS = (bool, int, float, complex, np.generic)
_TENSOR_OR_NUMBER = (Tensor, *_NUMBERS)


def _first_tensor_param(fn: Callable[..., Any]) -> str | None:
    """The name of ``fn``'s first parameter when PyTorch requires a Tensor there."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if not params or params[0].name not in _TENSOR_FIRST:
        return None
    if params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        return None
    return params[0].name


def _not_tensor(fn: str, name: str, pos: int | None, value: Any) -> TypeError:
    at = f" (position {pos})" if pos else ""
    return TypeError(f"{fn}(): argument '{name}'{at} must be Tensor, not {_gm.typename(value)}")


def with_out(
    fn: Callable[..., Any],
    *,
    number_first: bool = False,
    name: str | None = None,
    exact_out: str | None = None,
    out_tensors: bool = False,
    numpy_names: _np_names.Table | None = None,
    out_check: Callable[[tuple, dict[str, Any], Any], None] | None = None,
    takes_out: bool = True,
    overloads: bool = False,
    dtype_out: str | None = None,
) -> Callable[..., Any]:
    """``fn`` taking a keyword ``out=`` (a tensor, or a tuple for several results), with
    PyTorch's ``TypeError`` for a first argument that is not a Tensor (a Python number,
    unless ``number_first``: the op's row says PyTorch has a number overload) and for
    ``other=None``/a list/a string. Its errors say ``name`` (PyTorch's name of the op:
    ``linalg_inv`` for ``torch.linalg.inv``), else ``fn``'s. ``exact_out``: the op's
    ``out`` must have the result's dtype; the text of PyTorch's refusal (``OpDef.exact_out``).
    ``out_tensors``: with ``out=``, every operand must be a tensor (``OpDef.out_tensors``).
    ``numpy_names``: the NumPy keyword names ``fn`` also takes (``axis=`` for ``dim=``:
    :func:`compat._core.numpy_names.table`). ``out_check(args, kwargs, out)``: raises
    PyTorch's error for a form of the op its ``out=`` overload does not take or an ``out``
    it refuses (``OpDef.out_check``).
    ``takes_out=False``: PyTorch has no ``out=`` for the op (``OpDef.out``): ``out=`` is
    its parser's ``TypeError`` (:func:`_refusal`; ``overloads``: ``OpDef.overloads``), the
    other checks as above. ``dtype_out``: with ``dtype=`` given, ``out`` must be of that
    dtype; the text of PyTorch's refusal (``OpDef.dtype_out``)."""
    name = name or fn.__name__
    first = _first_tensor_param(fn)
    accepted = _TENSOR_OR_NUMBER if number_first else Tensor
    other = first is not None and _takes_other(fn)
    params = list(inspect.signature(fn).parameters) if out_tensors else []
    renames: _np_names.Table = numpy_names or {}
    aliases = renames.keys() if renames else None
    if not takes_out:

        @functools.wraps(fn)
        def without(*args: Any, **kwargs: Any) -> Any:
            if kwargs:
                if "out" in kwargs:
                    raise _refusal(name, args, kwargs, renames, overloads)
                if aliases is not None and not aliases.isdisjoint(kwargs):
                    kwargs = _np_names.rename(name, renames, args, kwargs)
            if first is not None:
                _check_first(name, first, accepted, other, args, kwargs)
            return fn(*args, **kwargs)

        return without

    @functools.wraps(fn)
    def f(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if kwargs and aliases is not None and not aliases.isdisjoint(kwargs):
            kwargs = _np_names.rename(name, renames, args, kwargs)
        if first is not None:
            x = args[0] if args else kwargs.get(first, _MISSING)
            if not isinstance(x, accepted) and x is not _MISSING:
                raise _not_tensor(name, first, 1 if args else None, x)
            given = len(args) > 1 or "other" in kwargs
            o = args[1] if len(args) > 1 else kwargs.get("other")
            if other and given and not isinstance(o, _TENSOR_OR_NUMBER):
                raise _not_tensor(name, "other", 2 if len(args) > 1 else None, o)
        if out is None:
            return fn(*args, **kwargs)
        if out_check is not None:
            out_check(args, kwargs, out)
        if dtype_out is not None and kwargs.get("dtype") is not None:
            _check_dtype_out(dtype_out, kwargs["dtype"], out)
        if out_tensors:
            _tensors_only(name, params, args, kwargs)
        result = fn(*args, **kwargs)
        if exact_out is not None:
            _check_exact(exact_out, result, out)
        if isinstance(out, Tensor) and isinstance(result, Tensor):
            _check_elementwise_overlap(out, result, (*args, *kwargs.values()))
        return write_out(name, result, out)

    return f


_MISSING = object()


def _check_first(
    name: str, first: str, accepted: Any, other: bool, args: tuple, kwargs: dict[str, Any]
) -> None:
    """:func:`with_out`'s checks of the first argument and ``other`` (for the ops without
    ``out=``: ``with_out``'s own wrapper has them inline, on every op's call path)."""
    x = args[0] if args else kwargs.get(first, _MISSING)
    if not isinstance(x, accepted) and x is not _MISSING:
        raise _not_tensor(name, first, 1 if args else None, x)
    given = len(args) > 1 or "other" in kwargs
    o = args[1] if len(args) > 1 else kwargs.get("other")
    if other and given and not isinstance(o, _TENSOR_OR_NUMBER):
        raise _not_tensor(name, "other", 2 if len(args) > 1 else None, o)


def _parser_type(value: Any) -> str:
    """A value's type as PyTorch's parser prints a call's arguments (``Tensor``, ``int``)."""
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, _dt.dtype):
        return "torch.dtype"
    return _gm.typename(value)


def _refusal(
    name: str, args: tuple, kwargs: dict[str, Any], names: _np_names.Table, overloads: bool
) -> TypeError:
    """PyTorch's parser's ``TypeError`` for ``out=`` given to an op without it: "X() got an
    unexpected keyword argument" naming the first keyword no parameter has (a NumPy name
    counts as one only where a signature matched); for an op of several signatures
    (``overloads``), the first line of its "invalid combination of arguments", the
    keywords printed as PyTorch prints them, the last given first (compat does not list
    the signatures)."""
    if not overloads:
        bad = next(k for k in kwargs if k == "out" or k in names)
        return TypeError(f"{name}() got an unexpected keyword argument '{bad}'")
    got = [_parser_type(a) for a in args]
    got += [f"{k}={_parser_type(v)}" for k, v in reversed(kwargs.items())]
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), but "
        f"expected one of:\n * (the signatures of torch.{name}, none of which takes these)"
    )


def _check_elementwise_overlap(out: Tensor, result: Tensor, args: tuple) -> None:
    """PyTorch's error for an input overlapping ``out`` in part, where its
    ``TensorIterator`` makes it: ops whose result has the broadcast shape of their tensor
    inputs (elementwise ones; reductions and matmul do not check)."""
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    if not shapes or tuple(out.shape) != tuple(result.shape):
        return
    try:
        if tuple(np.broadcast_shapes(*shapes)) != tuple(result.shape):
            return
    except ValueError:
        return
    _overlap.check_partial(out, args)


def _tensors_only(name: str, params: list[str], args: tuple, kwargs: dict) -> None:
    """PyTorch's ``TypeError`` for an operand of an ``out=`` call that is not a tensor (a
    number, or missing: the overload wants every operand)."""
    for i, p in enumerate(params):
        v = args[i] if i < len(args) else kwargs.get(p)
        if v is None:
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got an out= call "
                f"without '{p}'"
            )
        if not isinstance(v, Tensor):
            raise _not_tensor(name, p, i + 1 if i < len(args) else None, v)


def _takes_other(fn: Callable[..., Any]) -> bool:
    """Whether ``fn``'s second parameter is PyTorch's ``other`` (a Tensor or a number)."""
    params = list(inspect.signature(fn).parameters)
    return len(params) > 1 and params[1] == "other"


def _check_dtype_out(text: str, dtype: Any, out: Any) -> None:
    """PyTorch's refusal (``text``) of an ``out`` whose dtype is not the ``dtype=`` given."""
    if not isinstance(out, Tensor) or not isinstance(dtype, _dt.dtype):
        return  # (the op's own checks word these)
    want, got = _dt.np_dtype(dtype), out._npdtype
    if want != got:
        raise RuntimeError(
            text.format(
                want=_dt.scalar_type_name(want),
                got=_dt.scalar_type_name(got),
                want_c=_dt.type_meta_name(want),
                got_c=_dt.type_meta_name(got),
            )
        )


def _check_exact(text: str, result: Any, out: Any) -> None:
    """PyTorch's refusal (``text``) of an ``out`` whose dtype is not the result's."""
    if not isinstance(result, Tensor) or not isinstance(out, Tensor):
        return  # (``write_out`` words these refusals)
    want, got = result._npdtype, out._npdtype
    if want != got:
        raise RuntimeError(
            text.format(
                want=_dt.scalar_type_name(want),
                got=_dt.scalar_type_name(got),
                want_c=_dt.type_meta_name(want),
                got_c=_dt.type_meta_name(got),
            )
        )


def _tuple_dtype_error(name: str, i: int, want: np.dtype, got: np.dtype) -> str:
    """PyTorch's error for output ``i`` of an op of several outputs (values and indices)
    given an ``out`` tensor of another dtype: such ops never cast into their outputs (a
    single output is cast by the same-kind rule)."""
    st, tm = _dt.scalar_type_name, _dt.type_meta_name
    part = ("values", "indices")[min(i, 1)]
    if name == "kthvalue":
        return (
            "output values must be of same type as input"
            if i == 0
            else "output indices must be of scalar type Long"
        )
    if name == "mode":
        return f"expected scalar type '{st(want)}' but got '{st(got)}' for {part} output"
    if name in ("cummax", "cummin"):
        return f"expected scalar_type {st(want)} but found {st(got)}"
    if name in ("median", "nanmedian"):
        if i == 0:
            return (
                "Expected tensor for 'values' to have the same type as tensor for argument #2 "
                f"'self'; but type torch.{st(got)}Tensor does not equal torch.{st(want)}Tensor "
                "(while checking arguments for median)"
            )
        return (
            "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
            f"torch.{st(got)}Tensor instead (while checking arguments for median)"
        )
    if name == "frexp":
        if i == 0:
            return f"torch.frexp() expects mantissa to have dtype {tm(want)} but got {tm(got)}"
        return f"torch.frexp() expects exponent to have int dtype but got {tm(got)}"
    return f"Expected out tensor to have dtype {tm(want)}, but got {tm(got)} instead"


def write_out(name: str, result: Any, out: Any) -> Any:
    """Write ``result`` (a tensor or tuple of tensors) into ``out``; returns ``out``."""
    results = result if isinstance(result, tuple) else (result,)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(results) != len(outs):
        raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(results)} Tensors")
    for r, o in zip(results, outs):
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(o).__name__}")
        if not isinstance(r, Tensor):
            raise TypeError(f"{name}() does not return a tensor, so it takes no out= argument")
    if len(results) > 1:  # (checked before any output is written, as PyTorch's)
        order = range(len(results))  # (median checks its indices first)
        for i in reversed(order) if name in ("median", "nanmedian") else order:
            r, o = results[i], outs[i]
            if r._npdtype != o._npdtype:
                raise RuntimeError(_tuple_dtype_error(name, i, r._npdtype, o._npdtype))
    for r, o in zip(results, outs):
        if _gm._state.record and (r.requires_grad or o.requires_grad):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        if "_fw" in r.__dict__ or "_fw" in o.__dict__:  # a forward-AD tangent
            raise NotImplementedError(
                f"Trying to use forward AD with {name}_out that does not support it because it is "
                "an out= function"
            )
        if _dt.category(r._npdtype) > _dt.category(o._npdtype):
            raise RuntimeError(
                f"result type {_dt.scalar_type_name(r._npdtype)} can't be cast to the desired "
                f"output type {_dt.scalar_type_name(o._npdtype)}"
            )
        if tuple(o.shape) != tuple(r.shape) and o.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(o.shape)}, which does not match the required output shape "
                f"{list(r.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).",
                UserWarning,
                stacklevel=3,
            )
        if o._view is not None:  # PyTorch's error for an out whose elements overlap
            _views.check_inplace(o, False)
            if tuple(o.shape) != tuple(r.shape):
                raise NotImplementedError(
                    f"{name}(): compat cannot resize a view given as out= (shape "
                    f"{list(o.shape)}, result {list(r.shape)}); PyTorch grows it over its "
                    "storage. Pass a tensor of the result's shape, or one that is not a view"
                )
        value = r if r._npdtype == o._npdtype else r.to(_dt.from_np(o._npdtype))
        o._set_data_inplace(value._st.array)
    if isinstance(out, (tuple, list)) and isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)(*outs)
    return out
