"""The ops of the array rows (``funcgrad.core.array_row``: ``tril``, ``triu``, ``flip``,
``roll``, ``fliplr``, ``flipud``, ``rot90``, ``diff``, ``kron``, ``trace``, ``diag``,
``diagflat``, ``count_nonzero``, ``vander``, ``trapezoid``, ``tile``, ``isin``, ...):
``torch.X``, ``Tensor.X``, ``Tensor.X_`` and ``out=``, generated from each row's
``TorchArrayForm``. Each op binds
PyTorch's parameters, checks and converts them by their kind, and computes the row's
``funcgrad.numpy`` function with the numpy parameters they pass (tensor operands as
arrays; the input cast to PyTorch's result dtype where the row says so); the node is the
row's."""

from __future__ import annotations

import inspect
import math
import operator
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation import tensor
from compat._core.ops._common import _c
from compat._core.optable import Sample, T, defop
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import numpy as fnp
from funcgrad._compat_contract import array_rows

#: op -> the row's funcgrad.numpy function
_FN = {r.name: r.function for r in array_rows()}
_INT64 = np.dtype(np.int64)


def _array_f(
    x: Any,
    *operands: Any,
    op: str,
    kwargs: tuple | None,
    tensors: tuple = (),
    dtype: Any = None,
    zeros: tuple | None = None,
) -> Any:
    """The row ``op``'s function of ``x`` (cast to ``dtype`` first where given) and the
    tensor ``operands`` (passed as the numpy parameters ``tensors``); ``x`` itself for no
    arguments (``None``: an empty input PyTorch copies unchecked); zeros of ``x``'s dtype
    and the shape ``zeros`` where given (``TorchArrayForm.empty_along``)."""
    if zeros is not None:
        return fnp.zeros(zeros, x.dtype)
    if kwargs is None:
        return x
    if dtype is not None:
        x = fnp.asarray(x, dtype)
    return _FN[op](x, **dict(kwargs), **dict(zip(tensors, operands)))


def _dims(value: Any, ndim: int, unique: bool) -> tuple[int, ...] | None:
    if value is None:
        return None
    dims = tuple(value) if isinstance(value, (list, tuple)) else (operator.index(value),)
    if ndim == 0 and not unique and dims:  # (roll: a 0-d tensor has no dimension to name)
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    out = tuple(_wrap_dim(operator.index(d), ndim) for d in dims)
    if unique and len(set(out)) != len(out):
        d = next(d for i, d in enumerate(out) if d in out[:i])
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return () if ndim == 0 else out  # (flip: a 0-d tensor's dim 0 or -1 names no axis)


def _type_error(name: str, param: str, pos: int, want: str, value: Any) -> TypeError:
    return TypeError(
        f"{name}(): argument '{param}' (position {pos}) must be {want}, not {type(value).__name__}"
    )


def _tensor_float(value: Tensor) -> float:
    """A 0-d tensor as a float argument: a complex one only when its imaginary part is 0."""
    v = np.asarray(value._st.array)[()]
    if np.iscomplexobj(v):
        if v.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        v = v.real
    return float(v)


def _type_name(v: Any) -> str:
    """A value's type as PyTorch's argument parser names it (``Tensor``, ``float``,
    ``numpy.float64``)."""
    t = type(v)
    if isinstance(v, Tensor) or t.__module__ == "builtins":
        return "Tensor" if isinstance(v, Tensor) else t.__name__
    return f"{t.__module__}.{t.__qualname__}"


def _int_list(name: str, pos: int, param: str, seq: Any) -> list[int]:
    """A sequence argument as PyTorch's parser reads a list of ints: its first element's
    type is checked (a bool, a float or a tensor other than a 0-d integer one refused:
    "found element of type ... at pos 0"), the others are unpacked as indices (a bool
    taken; a float refused with "failed to unpack the object at pos <argument position>")."""
    out = []
    for i, v in enumerate(seq):
        if isinstance(v, Tensor) and v.ndim == 0 and _dt.kind(v._npdtype) in "iu":
            v = v.item()
        elif not isinstance(v, (int, np.integer)) or (i == 0 and isinstance(v, bool)):
            if i == 0:
                raise TypeError(
                    f"{name}(): argument '{param}' (position {pos}) must be tuple of ints, but "
                    f"found element of type {_type_name(v)} at pos 0"
                )
            raise TypeError(
                f"{name}(): argument '{param}' failed to unpack the object at pos {pos} with "
                f'error "type must be tuple of ints,but got {_type_name(v)}"'
            )
        out.append(int(v))
    return out


def _repeats(name: str, pos: int, param: str, value: Any, input: Tensor) -> tuple[int, ...]:
    """A ``"repeats"`` argument (``tile``'s ``dims``) as the numpy form's counts: a list of
    ints (:func:`_int_list`; a bare int refused), aligned with the input's trailing
    dimensions, a negative size of the result refused with PyTorch's text and a negative
    count of an empty dimension 0."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(
            f"{name}(): argument '{param}' (position {pos}) must be tuple of ints, not "
            f"{_type_name(value)}"
        )
    reps = _int_list(name, pos, param, value)
    n = max(input.ndim, len(reps))
    reps = [1] * (n - len(reps)) + reps
    shape = [1] * (n - input.ndim) + list(input.shape)
    sizes = [s * r for s, r in zip(shape, reps)]
    bad = [d for d in sizes if d < 0]
    if bad:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad[0]}: {sizes}")
    return tuple(max(r, 0) for r in reps)  # (a negative count of an empty dimension: 0)


def _convert(name: str, pos: int, param: str, kind: str, value: Any, input: Tensor) -> Any:
    """A PyTorch argument of ``kind`` (``TorchParam.kind``) as the numpy form takes it (a
    ``"dim"`` checked for its type only: :func:`_array_op` wraps it after the checks of
    the input's dimensions, as PyTorch's kernels)."""
    if kind == "optional_int":  # (an optional int: no position said, a bool refused)
        if value is None:
            return None
        if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
            raise TypeError(f"{name}(): argument '{param}' must be int, not {type(value).__name__}")
        return operator.index(value)
    if kind in ("int", "dim"):  # (a bool is no int to PyTorch's parser)
        if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
            raise _type_error(name, param, pos, "int", value)
        return operator.index(value)
    if kind == "tensor":
        if value is not None and not isinstance(value, Tensor):
            raise _type_error(name, param, pos, "Tensor", value)
        return value
    if kind == "optional_float" and value is None:
        return None  # (the parameter's default: :func:`_array_op` puts it in)
    if kind in ("float", "optional_float"):
        if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
            return _tensor_float(value)  # (PyTorch takes a 0-d tensor as a number)
        if kind == "optional_float":  # (an optional double: a bool taken, no position said)
            if not isinstance(value, (int, float, np.number, np.bool_)):
                raise TypeError(
                    f"{name}(): argument '{param}' must be float, not {type(value).__name__}"
                )
        elif isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise _type_error(name, param, pos, "float", value)
        return float(value)
    if kind == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise _type_error(name, param, pos, "bool", value)
        return bool(value)
    if kind == "repeats":
        return _repeats(name, pos, param, value, input)
    if kind == "shifts":  # (a list of ints, or one int: not a bool)
        if isinstance(value, (list, tuple)):
            return tuple(_int_list(name, pos, param, value))
        if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
            raise TypeError(
                f"{name}(): argument '{param}' (position {pos}) must be tuple of ints, not "
                f"{type(value).__name__}"
            )
        return (operator.index(value),)
    if kind == "reduce_dims":  # (no dimension, or none named: every one)
        dims = _dims(value, input.ndim, True)
        return None if not dims and input.ndim else dims
    return _dims(value, input.ndim, kind == "unique_dims")


def _count(value: Any) -> int | None:
    """How many entries an int-or-sequence argument has (0 for ``None``; ``None`` for a
    value of another type, which its conversion refuses)."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        return len(value)
    return 1 if isinstance(value, int) and not isinstance(value, bool) else None


def _check_concat(t: Any, input: Tensor, operands: dict[str, Tensor], dim: int) -> None:
    """PyTorch's checks of tensor operands joined to ``input`` along ``dim`` (``concat``)."""
    for o in operands.values():
        if o.ndim != input.ndim:
            raise RuntimeError(t.concat[1])
        if any(a != b for i, (a, b) in enumerate(zip(o.shape, input.shape)) if i != dim):
            raise RuntimeError(t.concat[2])


def _node(t: Any, given: dict[str, Any], ndim: int) -> str | None:
    """The row's node for these arguments (``TorchArrayForm.nodes``; ``None``: none)."""
    for param, value, node in t.nodes:
        v = ndim if param == "ndim" else given[param]
        if v is value if value is None or isinstance(v, Tensor) else v == value:
            return node
    return t.grad_fn


def _check_bool(error: Any, input: Tensor, operands: list[Any]) -> None:
    """A row's refusal of bool inputs (``TorchArrayForm.bool_error``): the input's, or with
    tensor operands given (a pair's third entry) theirs too."""
    if isinstance(error, str):
        if input._npdtype == np.bool_:
            raise NotImplementedError(error)
        return
    exc, alone, with_operands = error
    given = [o for o in operands if isinstance(o, Tensor)]
    if any(o._npdtype == np.bool_ for o in (input, *given)):
        raise exc(with_operands if given else alone)


def _result_dtype(t: Any, input: Tensor) -> Any:
    """The dtype the row computes in (``TorchArrayForm.promote``; ``None``: the function's)."""
    kind = _dt.kind(input._npdtype)
    if t.promote == "int64" and kind in "biu":
        return None if input._npdtype == _INT64 else _INT64
    if t.promote == "default_float" and kind in "biu":
        return _dt.float_type(input._npdtype)
    return None


#: the most positional calls an array row's op remembers (:func:`_plain_key`)
_MEMO_SIZE = 256
_PLAIN = (int, bool, str, type(None))
_NUM = (int, float)


def _plain_key(args: tuple, operands: tuple, numbers: bool) -> tuple | None:
    """The arguments after the input with their types (``True`` is not ``1``), where each
    is a plain int, bool, string or ``None``, or a tuple or list of ints, and each at a
    tensor operand's position (``operands``) a tensor (its shape and dtype, which decide
    the checks) or, for a row taking ``numbers``, an int or float (its value); ``None`` for
    any other (a float argument, whose ``-0.0`` equals ``0.0``; a tensor elsewhere, whose
    value decides)."""
    key = []
    for i, a in enumerate(args[1:], 1):
        kind = type(a)
        if kind in _PLAIN:
            key.append((kind, a))
        elif (kind is tuple or kind is list) and all(type(e) is int for e in a):
            key.append((kind, tuple(a)))
        elif kind is Tensor and i in operands:
            arr = a._st.a  # (its shape and dtype, no ``Size`` built)
            key.append((kind, arr.shape, arr.dtype))
        elif kind is float and numbers and i in operands:
            key.append((kind, a))
        else:
            return None
    return tuple(key)


_NUMBERS = (int, float, complex, np.number, np.bool_)


def _as_tensors(name: str, t: Any, given: dict, tensors: list) -> dict:
    """``given`` with a number input or tensor operand as a 0-d tensor (``numbers``:
    PyTorch's Scalar overloads), refused as PyTorch's parser refuses a call no overload
    takes: no tensor at all, or a value that is neither."""
    names = [t.input, *(p for p, _ in tensors)]
    values = [given[n] for n in names]
    if not any(isinstance(v, Tensor) for v in values) or not all(
        isinstance(v, (Tensor, *_NUMBERS)) for v in values
    ):
        got = ", ".join(_type_name(v) for v in values)
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got})")
    return {**given, **{n: tensor(v) for n, v in zip(names, values) if not isinstance(v, Tensor)}}


def _int_like(value: Any) -> bool:
    """An int as PyTorch's parser reads one in a list of ints (a 0-d integer tensor too)."""
    if isinstance(value, Tensor):
        return value.ndim == 0 and _dt.kind(value._npdtype) in "iu"
    return isinstance(value, (int, np.integer))


def _bind_error(name: str, sig: inspect.Signature, args: tuple, kwargs: dict) -> Any:
    """PyTorch's ``TypeError`` for a call ``sig`` cannot bind (too many positional
    arguments, a missing argument, an unknown or repeated keyword); ``None`` for another."""
    items = sig.parameters.items()
    positional = [n for n, q in items if q.kind is q.POSITIONAL_OR_KEYWORD]
    least = sum(sig.parameters[n].default is inspect.Parameter.empty for n in positional)
    if len(args) > len(positional):
        most = len(positional)
        takes = f"{most}" if least == most else f"from {least} to {most}"
        return TypeError(f"{name}() takes {takes} positional arguments but {len(args)} were given")
    given = {*positional[: len(args)], *kwargs}
    missing = [n for n, q in items if q.default is q.empty and n not in given]
    if missing:
        names = ", ".join(f'"{n}"' for n in missing)
        return TypeError(f"{name}() missing {len(missing)} required positional arguments: {names}")
    for k in kwargs:
        if k not in sig.parameters:
            return TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        if k in positional[: len(args)]:
            return TypeError(f"{name}() got multiple values for argument '{k}'")
    return None


def _array_op(row: Any) -> Any:
    t = row.torch
    name = row.name
    P = inspect.Parameter
    params = [P(t.input, P.POSITIONAL_OR_KEYWORD)]
    for p in t.params:
        default = P.empty if p.required else p.default
        params.append(
            P(
                p.name,
                P.KEYWORD_ONLY if p.keyword_only else P.POSITIONAL_OR_KEYWORD,
                default=default,
            )
        )
    sig = inspect.Signature(params)
    # (arguments converted in two phases, as PyTorch checks them: types first, then, after
    # the input's dimensions, the dimensions the arguments name)
    named = ("dims", "unique_dims", "reduce_dims")
    counts = [(p.name, p.count) for p in t.params if p.count is not None]
    distinct = [(p.name, p.distinct) for p in t.params if p.distinct is not None]
    numpy_of = {p.name: p.numpy for p in t.params}
    floors = [(p.name, p.at_least) for p in t.params if p.at_least is not None]
    dims = [(p.name, p.numpy) for p in t.params if p.kind == "dim"]
    tensors = [(p.name, p.numpy) for p in t.params if p.kind == "tensor"]
    tensor_names = {p for p, _ in tensors}
    operand_ndims = [(p.numpy, p.ndim) for p in t.params if p.kind == "tensor" and p.ndim]
    names = [q.name for q in params if q.kind is P.POSITIONAL_OR_KEYWORD]
    node_of = t.grad_fn or name  # (no node: the name is never recorded)
    defaults = {p.name: p.default for p in t.params if not p.required}
    keywords = {p.name: p.default for p in t.params if p.keyword_only}
    optional = [(p.name, p.numpy) for p in t.params if p.kind.startswith("optional_")]
    bool_errors = [(p.name, p.bool_error) for p in t.params if p.bool_error is not None]
    lengths = [(p.numpy, p.length) for p in t.params if p.length is not None]
    least = len(names) - len(set(defaults) - set(keywords))  # (positional ones a call needs)
    # (an input empty along ``empty_along``'s default dimension is remembered apart)
    along = defaults.get(t.empty_along)

    def empty(x: Tensor) -> bool:
        return along is not None and x.ndim > 0 and x.shape[along] == 0

    def form(first: int) -> Any:
        """The op, its errors naming the parameters' positions from ``first`` (2 for
        ``torch.X(input, ...)``; 1 for ``Tensor.X``, whose ``self`` PyTorch does not count)."""
        conv = [
            (p.name, p.numpy, p.kind, i + first)
            for i, p in enumerate(t.params)
            if p.kind not in named
        ]
        conv_dims = [
            (p.name, p.numpy, p.kind, i + first) for i, p in enumerate(t.params) if p.kind in named
        ]
        #: (ndim, dtype) -> (node, static) of a call with the input alone, whose checks and
        #: arguments depend on nothing else (filled once a call passed them)
        alone: dict[tuple[int, Any, bool], tuple[str, tuple]] = {}
        at = tuple(i for i, n in enumerate(names) if n in tensor_names)  # (operands, in order)
        #: (shape, dtype, typed arguments) -> (node, static, numbers' tensors) of a
        #: positional call whose arguments (:func:`_plain_key`) with the input's shape and
        #: dtype decide every check
        memo: dict[tuple, tuple[str, tuple, dict]] = {}

        def f(*args: Any, **kwargs: Any) -> Tensor:
            if not kwargs and args and type(args[0]) is Tensor:
                x = args[0]
                if len(args) == 1:
                    known = alone.get((x.ndim, x._npdtype, empty(x)))
                    if known is not None:
                        return apply(_array_f, known[0], args, known[1])
                else:
                    key = _plain_key(args, at, t.numbers)
                    arr = x._st.a
                    hit = None if key is None else memo.get((arr.shape, arr.dtype, key))
                    if hit is not None:
                        node, static, made = hit
                        if not at:
                            return apply(_array_f, node, (x,), static)
                        ops = [x]
                        for i in at:
                            o = made[i] if i in made else args[i] if i < len(args) else None
                            if o is not None:
                                ops.append(o)
                        return apply(_array_f, node, tuple(ops), static)
            if not kwargs and least <= len(args) <= len(names):  # (positional: no bind)
                given = {**defaults, **dict(zip(names, args))}
            else:
                try:
                    bound = sig.bind(*args, **kwargs)
                except TypeError as e:
                    raise _bind_error(name, sig, args, kwargs) or e from None
                bound.apply_defaults()
                given = bound.arguments
            if t.numbers:
                given = _as_tensors(name, t, given, tensors)
            input = given[t.input]
            if t.exclusive is not None:  # (both given, or one given as None: no overload)
                passed = {**dict(zip(names, args)), **kwargs}
                if all(given[p] is not None for p in t.exclusive) or any(
                    p in passed and passed[p] is None for p in t.exclusive
                ):
                    raise TypeError(f"{name}() received an invalid combination of arguments")
            if t.aligned is not None:  # (roll: one shift per dim, one shift for none; before
                # the dims are checked, as PyTorch)
                n_a, n_b = (_count(given[x]) for x in t.aligned)
                if n_a == 0:  # (no shift at all: PyTorch's words)
                    raise RuntimeError(f"`{t.aligned[0]}` required")
                if n_a != max(n_b, 1) and n_a is not None and n_b is not None:
                    raise RuntimeError(
                        f"{t.aligned[0]} and dimensions must align. {t.aligned[0]}: {n_a}, "
                        f"{t.aligned[1]}:{n_b}"
                    )
            kw = {n: _convert(name, i, p, kind, given[p], input) for p, n, kind, i in conv}
            for p, n in optional:  # (``None``: the parameter's default, or the numpy form's)
                if kw[n] is None:
                    kw[n] = defaults[p]
                    if kw[n] is None:
                        del kw[n]
            for p, _, kind, i in conv_dims:  # (a sequence's type is the arguments' parser's)
                v = given[p]
                if (kind == "unique_dims" and not isinstance(v, (list, tuple))) or (
                    kind == "dims" and isinstance(v, (bool, np.bool_))
                ):
                    raise _type_error(name, p, i, "tuple of ints", v)
            if t.empty_unchecked and isinstance(input, Tensor) and input.numel() == 0:
                # (after the parser's type checks)
                return apply(_array_f, node_of, (input,), (("op", name), ("kwargs", None)))
            for p, (count, text) in counts:
                seq = given[p]
                if isinstance(seq, (list, tuple)) and len(seq) != count:
                    raise RuntimeError(text.format(count=len(seq)))
            if t.scalar_error is not None and input.ndim == 0:
                raise IndexError(t.scalar_error.format(dim=given.get("dim")))
            if t.empty_along is not None:  # (zeros without that dimension, no node)
                d = _wrap_dim(operator.index(given[t.empty_along]), input.ndim)
                if input.shape[d] == 0:
                    shape = tuple(n for i, n in enumerate(input.shape) if i != d)
                    zeros = (("op", name), ("kwargs", ()), ("zeros", shape))
                    return apply(_array_f, name, (input.detach(),), zeros)
            if t.dtype_error is not None:
                kinds, text = t.dtype_error
                for o in (input, *(given[p] for p, _ in tensors)):
                    if isinstance(o, Tensor) and _dt.kind(o._npdtype) in kinds:
                        raise RuntimeError(text.format(dtype=_dt.scalar_type_name(o._npdtype)))
            if t.bool_error is not None:
                _check_bool(t.bool_error, input, [given[p] for p, _ in tensors])
            for p, text in bool_errors:
                if isinstance(given[p], (bool, np.bool_)):
                    raise RuntimeError(text)
            if t.ndim is not None:
                low, high, text = t.ndim
                if input.ndim < low or (high is not None and input.ndim > high):
                    raise RuntimeError(text.format(ndim=input.ndim))
            for p, (low, text) in floors:
                if kw.get(numpy_of[p]) is not None and kw[numpy_of[p]] < low:
                    raise RuntimeError(text.format(value=kw[numpy_of[p]]))
            for p, text in distinct:  # (before the dimensions are wrapped, as PyTorch)
                seq = given[p]
                if isinstance(seq, (list, tuple)) and len(set(seq)) != len(seq):
                    raise RuntimeError(text.format(*seq))
            for p, n, kind, i in conv_dims:
                kw[n] = _convert(name, i, p, kind, given[p], input)
            for _, n in dims:
                kw[n] = _wrap_dim(kw[n], input.ndim)
            operands = {n: kw.pop(n) for _, n in tensors}
            operands = {n: o for n, o in operands.items() if o is not None}
            for n, (dim, text) in lengths:
                o = operands.get(n)
                if o is not None and o.ndim == 1 and o.shape[0] != input.shape[kw[numpy_of[dim]]]:
                    raise RuntimeError(text)
            for n, (low, high, text) in operand_ndims:
                o = operands.get(n)
                if o is not None and (o.ndim < low or (high is not None and o.ndim > high)):
                    raise RuntimeError(text.format(ndim=o.ndim))
            if t.same_dtype is not None:
                for o in operands.values():
                    if o._npdtype != input._npdtype:
                        kinds = (_dt.scalar_type_name(x._npdtype) for x in (input, o))
                        raise RuntimeError(t.same_dtype.format(*kinds))
            if t.concat is not None and operands:
                _check_concat(t, input, operands, kw[numpy_of[t.concat[0]]])
            if t.aligned is not None and kw[numpy_of[t.aligned[1]]] is None:
                shifts = numpy_of[t.aligned[0]]
                kw[shifts] = kw[shifts][0]  # (the flattened tensor's one shift)
            static = (
                ("op", name),
                ("kwargs", tuple(kw.items())),
                ("tensors", tuple(operands)),
                ("dtype", _result_dtype(t, input)),
            )
            node = _node(t, given, input.ndim) if t.nodes else node_of
            operands = (input, *operands.values())
            if node is None:  # (PyTorch fills this case's result: no node)
                return apply(_array_f, name, tuple(o.detach() for o in operands), static)
            if len(args) == 1 and not kwargs and type(input) is Tensor and not t.empty_unchecked:
                alone[input.ndim, input._npdtype, empty(input)] = (node, static)
            elif not kwargs and args and type(args[0]) is Tensor:
                key = _plain_key(args, at, t.numbers)
                # (a number's tensor is reused only where no node can save it)
                made = {i: given[names[i]] for i in at if i < len(args) and type(args[i]) in _NUM}
                if key is not None and not (made and t.grad_fn is not None):
                    if len(memo) >= _MEMO_SIZE:
                        memo.clear()
                    memo[input._st.a.shape, input._npdtype, key] = (node, static, made)
            return apply(_array_f, node, operands, static)

        return f

    f = form(2)

    if t.python_bool:  # (allclose: a Python bool, where the row's function gives an array)
        tensor_f = f

        def f(*args: Any, **kwargs: Any) -> Any:
            return bool(tensor_f(*args, **kwargs))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{row.function.__doc__.splitlines()[0]} (PyTorch's arguments; the row's form)."
    f.__signature__ = sig  # type: ignore[attr-defined]
    kinds = [p.kind for p in t.params]
    samples = tuple(
        Sample(
            (shape,),
            args=tuple(T(a) if k == "tensor" and a is not None else a for k, a in zip(kinds, args)),
            grad=t.grad_fn is not None and t.torch_grad,
        )
        for shape, args in t.samples
    )
    method: Any = t.method
    if t.method_varargs is not None:  # (``x.flip(0, 1)`` as ``x.flip((0, 1))``)
        param = t.method_varargs
        required = next(p.required for p in t.params if p.name == param)
        as_method = form(1)  # (its errors count the parameters after ``self``, as PyTorch's)

        first = names[1] == param  # (then passed by position: no signature to bind)

        def method(self: Tensor, *values: Any, **kwargs: Any) -> Tensor:
            if values:  # (one value that is no int is the argument itself, refused as such)
                value = values[0] if len(values) == 1 and not _int_like(values[0]) else values
                if first and not kwargs:
                    return as_method(self, value)
                kwargs[param] = value
            elif required and param not in kwargs:
                raise TypeError(f'{name}() missing 1 required positional arguments: "{param}"')
            return as_method(self, **kwargs)

        method.__name__ = method.__qualname__ = name
        method.__doc__ = f.__doc__
    return defop(
        name,
        method=method,
        inplace=t.inplace,
        inplace_function=t.inplace_function,
        aliases=t.aliases,
        samples=samples,
        out=t.out,
        overloads=t.overloads,
        exact_out=t.exact_out,
    )(f)


def _join_f(*xs: Any, shapes: tuple, axis: int, dtype: Any, new: bool) -> Any:
    """The tensors ``xs`` in ``dtype``, reshaped to ``shapes`` (a joining row's layout;
    ``None``: as they are), joined along ``axis`` (a new one for ``new``)."""
    arrays = [_c(x, dtype) for x in xs]
    if shapes is not None:
        arrays = [fnp.reshape(a, s) for a, s in zip(arrays, shapes)]
    return fnp.stack(arrays, axis=axis) if new else fnp.concatenate(arrays, axis=axis)


def _laid(layout: str, shapes: list[tuple[int, ...]]) -> tuple[list, int]:
    """The shapes a joining row's layout (``TorchJoinForm.layout``) gives the tensors, and
    the dimension it joins them along."""
    if layout == "h":
        out = [s or (1,) for s in shapes]
        return out, 0 if len(out[0]) == 1 else 1
    if layout == "v":
        return [(1,) * (2 - len(s)) + s if len(s) < 2 else s for s in shapes], 0
    if layout == "d":
        grown = {0: lambda s: (1, 1, 1), 1: lambda s: (1, s[0], 1), 2: lambda s: (*s, 1)}
        return [grown[len(s)](s) if len(s) < 3 else s for s in shapes], 2
    return [s if len(s) >= 2 else (math.prod(s), 1) for s in shapes], 1


def _check_cat(name: str, shapes: list[tuple[int, ...]], dim: int) -> tuple[list[int], int]:
    """PyTorch's ``cat`` checks of the tensors' shapes (a 1-d empty tensor skipped): the
    indices of the tensors joined and the wrapped dimension."""
    first = shapes[0]
    if first and first != (0,) and shapes.count(first) == len(shapes):  # (alike: all kept)
        return list(range(len(shapes))), _wrap_dim(dim, len(first))
    for i, s in enumerate(shapes):
        if not s:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    keep = [i for i, s in enumerate(shapes) if s != (0,)]
    if not keep:  # (only 1-d empty tensors: their join, whatever the dimension)
        return list(range(len(shapes))), 0
    ref = shapes[keep[0]]
    d = _wrap_dim(dim, len(ref))
    for i in keep:
        s = shapes[i]
        if len(s) != len(ref):
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {len(ref)} and {len(s)}"
            )
        for k, (a, b) in enumerate(zip(ref, s)):
            if k != d and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size {a} "
                    f"but got size {b} for tensor number {keep.index(i)} in the list."
                )
    return keep, d


def _join_op(row: Any) -> Any:
    """``torch.X(tensors, [dim=0,] *, out=None)`` of a joining row (``TorchJoinForm``)."""
    t = row.torch
    name = t.name or row.name
    empty = (
        "torch.cat(): expected a non-empty list of Tensors"
        if name == "cat"
        else (f"{name} expects a non-empty TensorList")
    )
    node = t.grad_fn

    layout, new = t.layout, t.new_dim
    positional = t.dim is not None  # (the one argument a call may give after the tensors)

    def f(tensors: Any, *args: Any, **kwargs: Any) -> Tensor:
        if kwargs or len(args) > positional or (args and type(args[0]) is not int):
            dim = _join_dim(name, t, args, kwargs)
        else:
            dim = args[0] if args else 0
        if not isinstance(tensors, (list, tuple)):
            raise TypeError(
                f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                f"{type(tensors).__name__}"
            )
        shapes = []
        for i, x in enumerate(tensors):
            if not isinstance(x, Tensor):
                raise TypeError(
                    f"expected Tensor as element {i} in argument 0, but got {type(x).__name__}"
                )
            shapes.append(tuple(x.shape))
        if not tensors:  # (PyTorch's cat refuses with a ValueError, the others not)
            raise (ValueError if name == "cat" else RuntimeError)(empty)
        laid = None
        if new:
            d = _wrap_dim(dim, len(shapes[0]) + 1)
            for i, s in enumerate(shapes):
                if s != shapes[0]:
                    raise RuntimeError(
                        f"stack expects each tensor to be equal size, but got {list(shapes[0])} "
                        f"at entry 0 and {list(s)} at entry {i}"
                    )
            joined = tensors
        else:
            if layout is not None:
                shapes, dim = _laid(layout, shapes)
            keep, d = _check_cat(name, shapes, dim)
            joined = tensors if len(keep) == len(tensors) else [tensors[i] for i in keep]
            if layout is not None:  # (the prepared shapes, which the kernel reshapes to)
                laid = tuple(shapes[i] for i in keep)
        static = (
            ("shapes", laid),
            ("axis", d),
            ("dtype", _dt.result_type(*tensors)),  # (a skipped tensor promotes too)
            ("new", new),
        )
        return apply(_join_f, node, joined, static)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{row.function.__doc__.splitlines()[0]} (PyTorch's arguments; the row's form)."
    P = inspect.Parameter
    params = [P("tensors", P.POSITIONAL_OR_KEYWORD)]
    params += [P(t.dim, P.POSITIONAL_OR_KEYWORD, default=0)] if t.dim is not None else []
    f.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    samples = tuple(
        Sample((), args=([T(s) for s in shapes], *dims), method=False) for shapes, dims in t.samples
    )
    return defop(name, method=False, aliases=t.aliases, samples=samples)(f)


def _join_dim(name: str, t: Any, args: tuple, kwargs: dict) -> int:
    """The dimension argument of a joining op's call (``dim``, or ``axis`` where the row
    takes it; 0 by default), with PyTorch's ``TypeError`` for a wrong one."""
    names = (t.dim, "axis") if t.axis else (t.dim,)
    if t.dim is None:
        names = ()
    if len(args) > len(names[:1]):
        most = 1 + len(names[:1])
        raise TypeError(
            f"{name}() takes {most} positional argument{'s' * (most > 1)} but {1 + len(args)} "
            "were given"
        )
    for k in kwargs:
        if k not in names:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    if len(kwargs) + len(args) > 1:
        raise TypeError(f"{name}() got multiple values for argument '{t.dim}'")
    dim = args[0] if args else next(iter(kwargs.values()), 0)
    if isinstance(dim, bool) or not hasattr(dim, "__index__"):
        raise TypeError(f"{name}(): argument '{t.dim}' must be int, not {type(dim).__name__}")
    return operator.index(dim)


for _row in array_rows():
    _make = _join_op if hasattr(_row.torch, "layout") else _array_op
    globals()[_row.torch.name or _row.name if hasattr(_row.torch, "layout") else _row.name] = _make(
        _row
    )
del _row, _make
