"""Unary and ternary elementwise torch ops.

Float math (``exp``, ``log``, ``sigmoid``, ...: the rows of funcgrad's primitives that
declare a PyTorch form, and a few composites), rounding, ``isnan``-style
tests, ``where``, ``nonzero``, ``lerp``, ``addcmul``/``addcdiv`` (``clamp`` is in
``clamping.py``, with its in-place form).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from compat._core import dtypes as _dt
from compat._core.creation import tensor
from compat._core.mutation import inplace_result
from compat._core.ops import conventions as _conv
from compat._core.ops._common import _c, acc, coerce, warn_once
from compat._core.optable import Mask, Sample, defop
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp
from funcgrad._compat_contract import torch_rows


class _Float(NamedTuple):
    """A float op's row: its function of a float array, backward node, what the node saves
    (``"result"`` or the input: ``None``), test domain (the funcgrad primitive or declared
    composite whose row declares it), aliases, whether PyTorch has ``torch.X_``, and for
    the plain activations their ``nn.functional`` docstring and ``nn`` module."""

    fn: Callable[[Any], Any]
    grad_fn: str
    saves: str | None
    domain: str
    aliases: tuple[str, ...] = ()
    inplace_function: bool = True
    functional: str | None = None
    module: tuple[str, str] | None = None
    complex_error: tuple[type[Exception], str] | None = None


#: PyTorch's refusal of an operand: the exception type and its text (``{dtype}``: the
#: operand's dtype name)
Refusal = tuple[type[Exception], str]


def _refusal(spec: str | Refusal | None, default: type[Exception]) -> Refusal | None:
    """A row's ``complex_error``/``bool_error`` as a pair (a bare text is ``default``'s)."""
    return (default, spec) if isinstance(spec, str) else spec


def _complex_error(p: Any, generic: str) -> Refusal | None:
    """PyTorch's refusal of a complex operand for row ``p``: the row's own, else
    ``generic``'s ``NotImplementedError`` where the primitive takes real floats only, else
    none."""
    if p.torch.complex_error is not None:
        return _refusal(p.torch.complex_error, NotImplementedError)
    return (NotImplementedError, generic) if getattr(p, "allowed", "") == "real_float" else None


def _refuse(refusal: Refusal, dt: np.dtype) -> None:
    kind, message = refusal
    raise kind(message.format(dtype=_dt.scalar_type_name(dt)))


def _declared(p: Any) -> tuple[str, _Float]:
    """The op funcgrad's primitive row ``p`` declares with ``torch=`` (a ``TorchForm``)."""
    t = p.torch
    if t.promote != "default_float":
        raise ValueError(f"{p.name}: torch form promotion {t.promote!r} is not a float op's")
    row = _Float(
        p.bind,
        t.grad_fn,
        t.saves,
        p.name,
        t.aliases,
        t.inplace_function,
        t.functional,
        t.module,
        _complex_error(p, f"\"{t.name or p.name}_vml_cpu\" not implemented for '{{dtype}}'"),
    )
    return t.name or p.name, row


#: the float ops: every primitive row declaring a PyTorch form (``exp``, ``tanh``,
#: ``sigmoid`` as ``logistic``'s, ...), then every declared composite's (``exp2``, ``log2``,
#: ``i0``, ``reciprocal``, ...: ``funcgrad/primitives/composites.py``)
_UNARY: dict[str, _Float] = dict(
    _declared(p) for p in torch_rows() if p.arity == 1 and p.torch.promote != "keep"
)
#: op -> its function of a float array (what the traced function reads)
_FLOAT_FN = {op: row.fn for op, row in _UNARY.items()}


def _unary_float_f(x: Any, *, op: str, dtype: np.dtype) -> Any:
    # float16/bfloat16 in float32, rounded once, as PyTorch's kernels (a composite's
    # steps each rounded to float16 put ``sigmoid``, ``log2``, ``rsqrt`` 1 ulp off)
    m = acc(dtype)
    return _c(_FLOAT_FN[op](_c(_c(x, dtype), m)), dtype)


def _unary_float(op: str) -> Any:
    row = _UNARY[op]
    name, saves, complex_error = row.grad_fn, row.saves, row.complex_error

    def f(input: Tensor) -> Tensor:
        dt = _dt.float_type(input._npdtype)
        if complex_error is not None and dt.kind == "c":
            _refuse(complex_error, dt)
        return apply(_unary_float_f, name, (input,), (("op", op), ("dtype", dt)), saves)

    f.__name__ = op
    f.__doc__ = f"Elementwise ``{op}`` (integer inputs give the default float dtype)."
    domain = row.domain
    samples = (Sample(((2, 3),), domain=domain), Sample(((4,),), domain=domain, dtype="int64"))
    return defop(
        op,
        inplace=True,
        inplace_function=row.inplace_function,
        aliases=row.aliases,
        grad_fn=name,
        samples=samples,
        functional=row.functional,
        nn_module=row.module,
    )(f)


for _op in _UNARY:
    globals()[_op] = _unary_float(_op)


def _nan_as(fn: Any, value: float, x: Any) -> Any:
    """``fn(x)``, ``value`` where ``x`` is NaN."""
    y = fn(x)
    if fnp.issubdtype(fnp.result_type(x), fnp.floating):
        y = fnp.where(fnp.isnan(x), fnp.asarray(value, fnp.result_type(y)), y)
    return y


def _kept(p: Any) -> Any:
    """The op of a primitive row whose PyTorch form keeps the input's dtype
    (``promote="keep"``: ``neg``, ``abs``, ``sign``, ``floor``, ``ceil``): the row's numpy
    form, which treats integers and bools as PyTorch does (``floor`` of an integer is
    itself), after PyTorch's own refusals (``neg`` of a bool: ``TorchForm.bool_error``).
    A row with no node (``signbit``: a bool result) is compared by value only; a row
    whose form is its input (``TorchForm.same``: ``positive``) returns it."""
    t = p.torch
    op, name, saves = t.name or p.name, t.grad_fn or t.name or p.name, t.saves
    numpy_form = getattr(fnp, p.public["numpy"][0])
    if t.nan_value is not None:  # (PyTorch's kernel: a number at NaN, not NaN)
        numpy_form = functools.partial(_nan_as, numpy_form, t.nan_value)
    complex_error = _complex_error(p, f"{op} is not supported for complex inputs")
    bool_error = _refusal(t.bool_error, RuntimeError)

    def f(input: Tensor) -> Tensor:
        if complex_error is not None and input._npdtype.kind == "c":
            _refuse(complex_error, input._npdtype)
        if bool_error is not None and input._npdtype == np.bool_:
            _refuse(bool_error, input._npdtype)
        if t.same:
            return input
        if t.bool_kept and input._npdtype == np.bool_:
            return input.clone()
        return apply(numpy_form, name, (input,), (), saves)

    f.__name__ = op
    f.__doc__ = f"Elementwise ``{op}`` (the input's dtype kept)."
    inplace = _refusing_complex(f, _INPLACE_COMPLEX[op]) if op in _INPLACE_COMPLEX else t.inplace
    out_check = _bool_out(op) if op in _BOOL_OUT else None
    domain = p.name
    grad = t.grad_fn is not None
    samples = (
        Sample(((2, 3),), domain=domain, grad=grad),
        Sample(((4,),), dtype="int64", grad=False),
    )
    return defop(
        op,
        inplace=inplace,
        inplace_function=t.inplace_function if t.inplace else False,
        aliases=t.aliases,
        grad_fn=t.grad_fn,
        samples=samples,
        out=op not in _NO_OUT,
        out_check=out_check,
    )(f)


#: the kept-dtype unary ops whose ``torch.X`` PyTorch declares without an ``out=`` overload
_NO_OUT = frozenset({"isnan", "isinf", "isfinite", "isreal", "positive"})
#: the ops whose ``out=`` PyTorch takes of dtype bool only (its result is a bool)
_BOOL_OUT = frozenset({"isposinf", "isneginf"})
#: PyTorch's refusal of a complex ``self`` of ``Tensor.X_`` (its result is real)
_INPLACE_COMPLEX = {"abs": "In-place abs is not supported for complex tensors."}


def _bool_out(op: str) -> Callable[[tuple, dict, Any], None]:
    """PyTorch's refusal of an ``out=`` of another dtype than bool for ``op``."""

    def check(args: tuple, kwargs: dict[str, Any], out: Any) -> None:
        if isinstance(out, Tensor) and out._npdtype != np.bool_:
            raise RuntimeError(f"{op} does not support non-boolean outputs.")

    return check


def _refusing_complex(f: Callable[..., Tensor], message: str) -> Callable[..., Tensor]:
    """``Tensor.X_`` from ``f``, refusing a complex ``self`` with PyTorch's ``message``."""

    def inplace(self: Tensor) -> Tensor:
        if self._npdtype.kind == "c":
            raise RuntimeError(message)
        return inplace_result(self, f, (), {})

    inplace.__name__ = f"{f.__name__}_"
    return inplace


for _p in torch_rows():
    if _p.arity == 1 and _p.torch.promote == "keep" and "numpy" in _p.public:
        globals()[_p.torch.name or _p.name] = _kept(_p)
#: ``round``'s row (its nodes: ``decimals=`` is ``scalar_other``'s; real floats only, as
#: PyTorch's kernel); the op is below
_ROUND_ROW = next(p for p in torch_rows() if p.name == "round")
_ROUND = _ROUND_ROW.torch
_ROUND_COMPLEX = _complex_error(_ROUND_ROW, "\"round_vml_cpu\" not implemented for '{dtype}'")


def _square_f(x: Any) -> Any:
    return x * x


def _round_f(x: Any) -> Any:
    return fnp.round(x)


@defop(
    out=False,
    inplace=True,
    inplace_function=True,
    grad_fn="ReluBackward0",
    samples=Sample(((2, 3),)),
)
def relu(input: Tensor) -> Tensor:
    return apply(_conv.relu, "ReluBackward0", (input,), saves="result")


#: ``square`` is ``pow(input, 2)``: the node of pow's row for a number exponent
_POW_NUMBER_NODE = next(p.torch.scalar_other for p in torch_rows() if p.name == "pow")


@defop(inplace=True, inplace_function=True, grad_fn=_POW_NUMBER_NODE, samples=Sample(((2, 3),)))
def square(input: Tensor) -> Tensor:
    return pow(input, 2)


@defop(
    inplace=True,
    inplace_function=_ROUND.inplace_function,
    grad_fn=_ROUND.grad_fn,
    samples=(
        Sample(((2, 3),), domain="round"),
        Sample(((4,),), kwargs=(("decimals", 1),), domain="round"),
    ),
)
def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """Round half to even (to ``decimals`` places: ``round.decimals``, its own node)."""
    if _ROUND_COMPLEX is not None and input._npdtype.kind == "c":
        _refuse(_ROUND_COMPLEX, input._npdtype)
    if decimals:
        static = (("decimals", int(decimals)),)
        return apply(_round_dec_f, _ROUND.scalar_other, (input,), static)
    return apply(_round_f, _ROUND.grad_fn, (input,))


def _round_dec_f(x: Any, *, decimals: int) -> Any:
    return fnp.round(x, decimals)


def _logical_not_f(x: Any) -> Any:
    return fnp.logical_not(x)


@defop(inplace=True, samples=Sample((Mask((2, 3)),), grad=False))
def logical_not(input: Tensor) -> Tensor:
    return apply(_logical_not_f, "logical_not", (input,))


def _invert_f(x: Any) -> Any:
    return fnp.invert(x)


@defop(inplace=True, samples=Sample(((5,),), dtype="int64", grad=False))
def bitwise_not(input: Tensor) -> Tensor:
    """Bitwise NOT of integers, logical NOT of bools (PyTorch's kernel refuses the rest)."""
    if _dt.kind(input._npdtype) not in "biu":
        raise NotImplementedError(
            f"\"bitwise_not_cpu\" not implemented for '{_dt.scalar_type_name(input._npdtype)}'"
        )
    return apply(_invert_f, "bitwise_not", (input,))


def _nonzero_out(args: tuple, kwargs: dict[str, Any], out: Any) -> None:
    """PyTorch's refusals of ``nonzero(..., out=)``: with ``as_tuple``, or a non-long out."""
    if kwargs.get("as_tuple"):
        raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
    if isinstance(out, Tensor) and out._npdtype != np.int64:
        raise RuntimeError(
            "nonzero: Expected out tensor to have scalar type Long but got scalar type"
            + _dt.scalar_type_name(out._npdtype)
        )


@defop(samples=Sample(((5,),), dtype="int64", grad=False), out_check=_nonzero_out)
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    """The indices of the nonzero elements: one row per element (one column per dim), or
    with ``as_tuple`` one index tensor per dim. A 0-d input is read as PyTorch (and
    NumPy's ``atleast_1d``) reads it: rows of no columns, and one index tensor of zeros."""
    a = np.asarray(input._st.array)
    if a.ndim == 0:
        n = int(bool(a))
        if as_tuple:
            return (tensor(np.zeros(n, np.int64)),)
        return tensor(np.zeros((n, 0), np.int64))
    idx = np.nonzero(a)
    if as_tuple:
        return tuple(tensor(i.astype(np.int64)) for i in idx)
    return tensor(np.stack(idx, axis=-1).astype(np.int64))


#: op -> the numpy form of its ternary row (``where``), a function of its condition and
#: two cases of one dtype
_TERNARY_FN: dict[str, Callable[..., Any]] = {}
#: the ops a ternary row's call with its first operand alone is (``TorchForm``'s row's
#: ``alone``: ``torch.where(condition)`` is ``nonzero(condition, as_tuple=True)``)
_ALONE = {"nonzero": nonzero}


def _ternary_f(c: Any, x: Any, y: Any, *, op: str, dtype: np.dtype) -> Any:
    return _TERNARY_FN[op](c, _c(x, dtype), _c(y, dtype))


def _ternary(p: Any) -> Any:
    """The op of a ternary row ``p`` (``where``): PyTorch's refusal of a condition that is
    not bool (``TorchForm.condition_error``, where the numpy form tests it against zero),
    PyTorch's promotion of the two cases (numbers taken), the row's node; its first operand
    alone is the row's ``alone`` op's tuple of indices, and ``Tensor.X``'s ``self`` the
    operand ``TorchForm.method_self`` says (``Tensor.where(condition, other)``)."""
    t = p.torch
    op = t.name or p.name
    _TERNARY_FN[op] = getattr(fnp, p.public["numpy"][0])
    alone = _ALONE[p.alone] if p.alone is not None else None
    if t.method_self not in (0, 1):
        raise ValueError(f"{op}: a ternary method's self is its first or second operand")

    def f(condition: Tensor, input: Any = None, other: Any = None) -> Any:
        if input is None and other is None and alone is not None:
            return alone(condition, as_tuple=True)
        input, other = coerce(input), coerce(other)
        dt = _dt.result_type(input, other)
        if t.condition_error is not None and condition._npdtype != np.bool_:
            _refuse((RuntimeError, t.condition_error), condition._npdtype)
        static = (("op", op), ("dtype", dt))
        return apply(_ternary_f, t.grad_fn, (condition, input, other), static, t.saves)

    def method(self: Tensor, condition: Tensor, other: Any) -> Any:
        return f(condition, self, other)

    f.__name__ = method.__name__ = method.__qualname__ = op
    f.__doc__ = f"``{op}`` of a bool condition and two operands (PyTorch's promotion)."
    return defop(
        op,
        method=method if t.method_self == 1 else True,
        inplace=t.inplace,
        inplace_function=t.inplace_function if t.inplace else False,
        aliases=t.aliases,
        grad_fn=t.grad_fn,
        samples=Sample((Mask((2, 3)), (2, 3), (3,)), method=t.method_self == 0),
        exact_out="Expected out type to be {want} but got {got}",
        out_tensors=True,
    )(f)


for _p in torch_rows():  # (``clamp``'s row, of optional bounds: ``clamping.py``)
    if _p.arity == 3 and _p.numpy_promotion == "condition":
        globals()[_p.torch.name or _p.name] = _ternary(_p)


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _lerp_f(x: Any, y: Any, w: Any, *, dtype: np.dtype) -> Any:
    """PyTorch's lerp: ``x + w * (y - x)`` where ``|w| < 0.5``, else
    ``y - (y - x) * (1 - w)`` (exact at ``w = 1``); float16/bfloat16 in float32, rounded
    once (``y - x`` of float16 values overflows no more); float32 with its vector kernel's
    fused multiply-adds."""
    m = acc(dtype)
    x, y, w = _c(_c(x, dtype), m), _c(_c(y, dtype), m), _c(w, m)
    d, v = y - x, 1 - w
    if m == _F32:  # PyTorch's fused multiply-adds: float32 products are exact in float64
        x, y, w, d, v = (_c(t, _F64) for t in (x, y, w, d, v))
    return _c(_c(fnp.where(fnp.abs(w) < 0.5, x + w * d, y - d * v), m), dtype)


def lerp_check(input: Tensor, end: Any, weight: Any) -> None:
    """PyTorch's lerp does not promote: ``end`` (and a weight tensor of one or more
    dimensions) must have ``input``'s dtype (compat promoted the result)."""
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t._npdtype != input._npdtype and (name == "end" or t.ndim):
            raise RuntimeError(
                f"expected dtype {_dt.type_meta_name(input._npdtype)} for `{name}` "
                f"but got dtype {_dt.type_meta_name(t._npdtype)}"
            )


@defop(
    inplace=True,
    grad_fn="LerpBackward0",
    samples=(Sample(((2, 3), (3,)), args=(0.3,)), Sample(((2, 3), (2, 3), (2, 3)))),
)
def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    lerp_check(input, end, weight)
    dt = _dt.result_type(input, end)
    weight = coerce(weight)
    name = "LerpBackward1" if isinstance(weight, Tensor) else "LerpBackward0"
    return apply(_lerp_f, name, (input, coerce(end), weight), (("dtype", dt),))


def _addcmul_f(x: Any, a: Any, b: Any, v: Any, *, dtype: np.dtype) -> Any:
    # float16/bfloat16 in float32, ``value`` not rounded to ``dtype``, rounded once
    m = acc(dtype)
    x, a, b = (_c(_c(t, dtype), m) for t in (x, a, b))
    return _c(x + _c(v, m) * a * b, dtype)


def _addcdiv_f(x: Any, a: Any, b: Any, v: Any, *, dtype: np.dtype) -> Any:
    # PyTorch's order, ``x + value * a / b``; float16/bfloat16 in float32 as ``addcmul``
    m = acc(dtype)
    x, a, b = (_c(_c(t, dtype), m) for t in (x, a, b))
    return _c(x + _c(v, m) * a / b, dtype)


@defop(
    inplace=True,
    grad_fn="AddcmulBackward0",
    samples=Sample(((2, 3), (3,), (2, 1)), kwargs=(("value", 0.5),)),
)
def addcmul(
    input: Tensor, tensor1: Any, tensor2: Tensor, *deprecated: Tensor, value: Any = 1
) -> Tensor:
    """``input + value * tensor1 * tensor2`` (also PyTorch's deprecated positional
    ``addcmul(input, value, tensor1, tensor2)``, with its warning)."""
    tensor1, tensor2, value = value_overload("addcmul", tensor1, tensor2, deprecated, value)
    dt = _dt.result_type(input, tensor1, tensor2)
    return apply(_addcmul_f, "AddcmulBackward0", (input, tensor1, tensor2, value), (("dtype", dt),))


def value_overload(
    name: str, tensor1: Any, tensor2: Any, deprecated: tuple, value: Any, method: bool = False
) -> tuple:
    """``(tensor1, tensor2, value)`` of ``addcmul``/``addcdiv`` called either way: PyTorch
    still takes the old ``(value, tensor1, tensor2)`` order, with a warning (once)."""
    if not deprecated:
        return tensor1, tensor2, value
    if len(deprecated) > 1 or isinstance(tensor1, Tensor) or value != 1:
        raise TypeError(f"{name}() received an invalid combination of arguments")
    head = "" if method else "Tensor input, "
    tail = "" if method else ", *, Tensor out = None"
    new_tail = "" if method else ", Tensor out = None"
    warn_once(
        "deprecated_overload",  # (one warning for all of them, as PyTorch)
        f"This overload of {name} is deprecated:\n\t{name}({head}Number value, Tensor tensor1, "
        f"Tensor tensor2{tail})\nConsider using one of the following signatures instead:\n"
        f"\t{name}({head}Tensor tensor1, Tensor tensor2, *, Number value = 1{new_tail})",
    )
    return tensor2, deprecated[0], tensor1


def check_addcdiv_dtype(tensor1: Any, tensor2: Any) -> None:
    """PyTorch's refusal of ``addcdiv`` of two integer (or bool) tensors (compat gave a
    float result)."""
    kinds = [_dt.kind(t._npdtype) if isinstance(t, Tensor) else "f" for t in (tensor1, tensor2)]
    if all(k in "biu" for k in kinds):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
            "for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )


@defop(
    inplace=True,
    grad_fn="AddcdivBackward0",
    samples=Sample(((2, 3), (3,), (2, 1)), kwargs=(("value", 0.5),), domain=(0.5, 2)),
)
def addcdiv(
    input: Tensor, tensor1: Any, tensor2: Tensor, *deprecated: Tensor, value: Any = 1
) -> Tensor:
    """``input + value * tensor1 / tensor2`` (also PyTorch's deprecated positional
    ``addcdiv(input, value, tensor1, tensor2)``, with its warning)."""
    tensor1, tensor2, value = value_overload("addcdiv", tensor1, tensor2, deprecated, value)
    check_addcdiv_dtype(tensor1, tensor2)
    dt = _dt.result_type(input, tensor1, tensor2)
    return apply(_addcdiv_f, "AddcdivBackward0", (input, tensor1, tensor2, value), (("dtype", dt),))
