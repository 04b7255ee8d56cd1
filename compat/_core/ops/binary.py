"""Binary torch ops: arithmetic with PyTorch's type promotion, comparisons, logical and
bitwise ops."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

import funcgrad as fg
from compat._core import dtypes as _dt
from compat._core.ops import conventions as _conv
from compat._core.ops import incomplete_gamma as _igamma
from compat._core.ops._common import _LOW, _c, acc, alpha_check, coerce, sub_check, warn_once
from compat._core.ops.spectral import _complex_of, check_parts
from compat._core.ops.unary import trunc
from compat._core.optable import Mask, Sample, defop
from compat._core.saved import declare as _declare_saved
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp
from funcgrad._compat_contract import is_tracing, torch_rows
from funcgrad.scipy import special as fsp

#: funcgrad's binary primitive rows and their PyTorch forms (``torch=``), by torch name
_ROWS = {p.torch.name or p.name: p for p in torch_rows() if p.arity == 2}
_DECLARED = {op: p.torch for op, p in _ROWS.items()}


def _complex_refusal(p: Any) -> tuple[type[Exception], str] | None:
    """PyTorch's refusal of complex operands for binary row ``p``: the row's
    ``TorchForm.complex_error`` (``{dtype}``: PyTorch's dtype name), else its kernel's
    ``NotImplementedError`` where the row takes real floats only (``atan2``, ``hypot``)."""
    t = p.torch
    spec = t.complex_error
    if spec is None and getattr(p, "allowed", "") == "real_float":
        spec = f"\"{t.name or p.name}_cpu\" not implemented for '{{dtype}}'"
    return (NotImplementedError, spec) if isinstance(spec, str) else spec


def _refuse_complex(refusal: tuple[type[Exception], str] | None, dt: np.dtype) -> None:
    """Raise ``refusal`` (``_complex_refusal``'s) if the result dtype ``dt`` is complex."""
    if refusal is not None and _dt.kind(dt) == "c":
        raise refusal[0](refusal[1].format(dtype=_dt.scalar_type_name(dt)))


#: the primitive rows' ops compat implements by hand (``alpha=``, ``rounding_mode=``, the
#: operator fast path): the others are generated as the composites' (``nextafter``)
_HAND: set[str] = set()


def _row(op: str, promote: str) -> dict[str, Any]:
    """``defop``'s aliases and node for the op a primitive row declares; ``promote`` is how
    the implementation types its result (``TorchForm.promote``), checked against the row."""
    _HAND.add(op)
    t = _DECLARED[op]
    if t.promote != promote:
        raise ValueError(
            f"{op}: its row says promote={t.promote!r}, its implementation {promote!r}"
        )
    return {"aliases": t.aliases, "grad_fn": t.grad_fn, "number_first": t.number_first}


#: ``pow``'s three nodes and ``fmod``'s two, as their rows declare them: all tensors,
#: a number ``other`` (the exponent), a number ``input`` (the base)
POW_NODES = (_DECLARED["pow"].grad_fn, _DECLARED["pow"].scalar_other, _DECLARED["pow"].scalar_input)
_FMOD_NODES = (_DECLARED["fmod"].grad_fn, _DECLARED["fmod"].scalar_other)


#: the node ``_binary`` gives each kernel (a dict read on every call)
_BIN_NAMES: dict[Any, str] = {}
#: PyTorch's refusal of a complex result for the kernels whose rows say one
_REFUSED: dict[Any, tuple[type[Exception], str]] = {}


def _kernel(op: str | None = None, *, node: str | None = None) -> Any:
    """Register the decorated kernel under the node of ``op``'s primitive row (or ``node``,
    for compat's composites)."""

    def register(fn: Any) -> Any:
        _BIN_NAMES[fn] = node if op is None else _DECLARED[op].grad_fn
        refusal = None if op is None else _complex_refusal(_ROWS[op])
        if refusal is not None:
            _REFUSED[fn] = refusal
        return fn

    return register


@_kernel("add")
def _add_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    # (PyTorch's add kernel takes a number as ``dtype``: float16 adds float16(0.1))
    return _c(x, dtype) + _c(y, dtype)


def _add_alpha_f(x: Any, y: Any, a: Any, *, dtype: np.dtype) -> Any:
    # float16/bfloat16: ``x + alpha * y`` of ``dtype`` values in float32, rounded once
    # (PyTorch's fused multiply-add; the product of two of them is exact in float32)
    m = acc(dtype)
    x, y, a = (_c(_c(v, dtype), m) for v in (x, y, a))
    return _c(x + y * a, dtype)


@_kernel("sub")
def _sub_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return _c(x, dtype) - _c(y, dtype)


def _sub_alpha_f(x: Any, y: Any, a: Any, *, dtype: np.dtype) -> Any:
    m = acc(dtype)
    x, y, a = (_c(_c(v, dtype), m) for v in (x, y, a))
    return _c(x - y * a, dtype)


def _weak(x: Any) -> bool:
    """Whether kernel operand ``x`` is a Python number (a weakly typed value), not a
    tensor's."""
    return type(x) in (int, float) or bool(getattr(getattr(x, "aval", None), "weak_type", 0))


@_kernel("mul")
def _mul_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    # float16/bfloat16: in float32 (PyTorch's opmath), a number or 0-d tensor taken as
    # float32 (not rounded to ``dtype`` first: ``half * 0.1``), the product rounded once
    m = acc(dtype)
    return _c(_c(x, m) * _c(y, m), dtype)


@_kernel("div")
def _div_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    m = acc(dtype)
    if _weak(x) and dtype.kind in "fV":
        # ``2.0 / t`` is PyTorch's ``t.reciprocal() * 2.0``: two roundings
        return _c(_c(_c(1 / _c(y, dtype), dtype), m) * _c(x, m), dtype)
    # float16/bfloat16: the divisor (a number too) as float32, the quotient rounded once
    return _c(_c(_c(x, dtype), m) / _c(y, m), dtype)


def _divtrunc_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    """``div(rounding_mode='trunc')`` of float16/bfloat16 by one number (a Python number
    or a one-element tensor): the quotient truncated in float32, then rounded (PyTorch's
    scalar-divisor kernel; rounding first moves ``2047.7`` to ``2048``)."""
    m = acc(dtype)
    return _c(fnp.trunc(_c(_c(x, dtype), m) / _c(y, m)), dtype)


def _divtrunc_rounded_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    """``div(rounding_mode='trunc')`` of float16/bfloat16 tensors: the float32 quotient
    rounded to the dtype, then truncated (PyTorch's vectorised CPU kernel)."""
    m = acc(dtype)
    return fnp.trunc(_c(_c(_c(x, dtype), m) / _c(y, m), dtype))


@_kernel(node="FloorDivideBackward0")
def _floordiv_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    m = acc(dtype)
    return _c(fnp.floor_divide(_c(x, m), _c(y, m)), dtype)


@_kernel("maximum")
def _maximum_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.maximum(_c(x, dtype), _c(y, dtype))


@_kernel("minimum")
def _minimum_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.minimum(_c(x, dtype), _c(y, dtype))


@_kernel("atan2")
def _atan2_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return _conv.atan2(_c(x, dtype), _c(y, dtype))


def _torch_power(x: Any, y: Any) -> Any:
    """``x ** y`` with PyTorch's derivative convention: no gradient to ``x`` where
    ``y == 0`` (funcgrad, like JAX, gives ``0 * x**-1``, NaN at ``x == 0``). The base
    seen by ``power`` is ``x`` with its gradient stopped there, and the select drops
    the NaN instead of multiplying it by 0."""
    base = fnp.where(fnp.equal(y, 0), fg.stop_gradient(x), x)
    return fnp.power(base, y)


def _pow_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    x, y = _c(x, dtype), _c(y, dtype)
    if _dt.kind(dtype) in "iub":
        return fnp.power(x, y) if not isinstance(y, int) else x**y
    if _dt.kind(dtype) == "f":
        return _conv.power(x, y)
    return _torch_power(x, y)


_F16 = np.dtype(np.float16)


def _ipow_f(x: Any, *, n: int, dtype: np.dtype) -> Any:
    if dtype == _F16:  # PyTorch's ``pow`` of float16: in float32, rounded once
        return _c(fnp.power(_c(x, acc(dtype)), n), dtype)
    return fnp.power(_c(x, dtype), n)


_CMP = {
    "eq": fnp.equal,
    "ne": fnp.not_equal,
    "lt": fnp.less,
    "le": fnp.less_equal,
    "gt": fnp.greater,
    "ge": fnp.greater_equal,
}


def _cmp_f(x: Any, y: Any, *, op: str, dtype: np.dtype) -> Any:
    return _CMP[op](_c(x, dtype), _c(y, dtype))


def _logical_f(x: Any, y: Any, *, op: str) -> Any:
    f = {"and": fnp.logical_and, "or": fnp.logical_or, "xor": fnp.logical_xor}[op]
    return f(x, y)


def _bitwise_f(x: Any, y: Any, *, op: str, dtype: np.dtype) -> Any:
    f = {"and": fnp.bitwise_and, "or": fnp.bitwise_or, "xor": fnp.bitwise_xor}[op]
    return f(_c(x, dtype), _c(y, dtype))


_BF16 = _dt.bfloat16.np


def _fast_dtype(a: Any, b: Any) -> np.dtype | None:
    """The promoted dtype for the common cases (same dtypes; float tensor with a Python
    number), without the general rule."""
    if isinstance(a, Tensor):
        # a jax array's aval is a faster read than its dtype (as in ``apply``); a storage
        # may also hold a NumPy array (an autograd.Function's saved values)
        da = getattr(a._st.a, "aval", a._st.a).dtype
        tb = type(b)
        if tb is float or tb is int:
            k = da.kind  # bfloat16's is "V"
            return da if k == "f" or (tb is int and k in "iu") or da == _BF16 else None
        if isinstance(b, Tensor):
            return da if getattr(b._st.a, "aval", b._st.a).dtype == da else None
    elif isinstance(b, Tensor):
        return _fast_dtype(b, a)
    return None


def _nonzero_divisor(b: Any, dt: np.dtype) -> None:
    """PyTorch's CPU error for an integer division or remainder by zero (NumPy's gives 0):
    the divisor is read on the host (not while tracing: values unknown)."""
    if _dt.kind(dt) not in "iu":
        return
    if isinstance(b, Tensor):
        if is_tracing() or not b.numel() or np.all(np.asarray(b._st.array)):
            return
    elif b != 0:
        return
    raise RuntimeError("ZeroDivisionError")


def _binary(fn: Any, a: Any, b: Any, *, true_div: bool = False, name: str | None = None) -> Tensor:
    dt = _fast_dtype(a, b)
    if dt is None:
        a, b = coerce(a), coerce(b)
        if fn is _sub_f:
            sub_check(a, b)
        dt = _dt.result_type(a, b)
    elif fn is _sub_f and dt.kind == "b":
        sub_check(a, b)
    if true_div and _dt.kind(dt) not in "fc":
        dt = _dt.float_type(dt)
    elif fn is _floordiv_f and dt.kind in "iub":
        if dt.kind == "b":
            raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
        _nonzero_divisor(b, dt)
    if dt.kind == "c" and fn in _REFUSED:
        _refuse_complex(_REFUSED[fn], dt)
    if name is None:
        name = _BIN_NAMES.get(fn, fn.__name__)
    return apply(fn, name, (a, b), (("dtype", dt),))


def alpha_overload(name: str, other: Any, positional: tuple, alpha: Any) -> tuple:
    """``(other, alpha)`` of ``add``/``sub`` called any way PyTorch's parser takes:
    ``alpha`` as a third positional argument, or the deprecated ``(input, alpha, other)``
    order (with its warning, once)."""
    if not positional:
        return other, alpha
    if len(positional) > 1 or not (type(alpha) is int and alpha == 1):
        raise TypeError(f"{name}() received an invalid combination of arguments")
    if isinstance(positional[0], Tensor) and not isinstance(other, Tensor):
        warn_once(
            "deprecated_overload",
            f"This overload of {name} is deprecated:\n\t{name}(Tensor input, Number alpha, "
            "Tensor other, *, Tensor out = None)\nConsider using one of the following "
            f"signatures instead:\n\t{name}(Tensor input, Tensor other, *, Number alpha = 1, "
            "Tensor out = None)",
        )
        return positional[0], other
    return other, positional[0]


@defop(
    **_row("add", "result_type"),
    samples=(
        Sample(((2, 3), (3,))),
        Sample(((2, 3), (2, 3)), kwargs=(("alpha", 0.5),)),
        Sample(((3,),), args=(1.5,)),
        Sample(((3,), (3,)), dtype="int64", grad=False),
    ),
)
def add(input: Any, other: Any, *positional: Any, alpha: Any = 1) -> Tensor:
    other, alpha = alpha_overload("add", other, positional, alpha)
    if type(alpha) is int and alpha == 1:
        return _binary(_add_f, input, other)
    a, b = coerce(input), coerce(other)
    dt = _dt.result_type(a, b)
    alpha_check(dt, alpha)
    if alpha == 1:
        return _binary(_add_f, a, b)
    return apply(_add_alpha_f, _BIN_NAMES[_add_f], (a, b, alpha), (("dtype", dt),))


@defop(
    **_row("sub", "result_type"),
    samples=(Sample(((2, 3), (3,))), Sample(((2, 3), (2, 3)), kwargs=(("alpha", 2),))),
)
def sub(input: Any, other: Any, *positional: Any, alpha: Any = 1) -> Tensor:
    other, alpha = alpha_overload("sub", other, positional, alpha)
    if type(alpha) is int and alpha == 1:
        return _binary(_sub_f, input, other)
    a, b = coerce(input), coerce(other)
    sub_check(a, b)
    dt = _dt.result_type(a, b)
    alpha_check(dt, alpha)
    if alpha == 1:
        return _binary(_sub_f, a, b)
    return apply(_sub_alpha_f, _BIN_NAMES[_sub_f], (a, b, alpha), (("dtype", dt),))


@defop(
    out=False,
    overloads=True,
    method=False,
    grad_fn="RsubBackward0",
    samples=(
        Sample(((2, 3), (3,))),
        Sample(((2, 3), (2, 3)), kwargs=(("alpha", 2),)),
        Sample(((3,),), args=(1.5,)),
        Sample(((3,),), args=(2,), kwargs=(("alpha", 0.5),)),
    ),
)
def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input`` (``torch.rsub``): ``RsubBackward1`` when ``other`` is a
    number, as PyTorch names the node."""
    name = "RsubBackward0" if isinstance(other, Tensor) else "RsubBackward1"
    if type(alpha) is int and alpha == 1:
        return _binary(_sub_f, other, input, name=name)
    a, b = coerce(input), coerce(other)
    sub_check(b, a)
    dt = _dt.result_type(a, b)
    alpha_check(dt, alpha)
    if alpha == 1:
        return _binary(_sub_f, b, a, name=name)
    return apply(_sub_alpha_f, name, (b, a, alpha), (("dtype", dt),))


@defop(
    **_row("mul", "result_type"),
    samples=(Sample(((2, 3), (2, 1))), Sample(((3,),), args=(2,))),
)
def mul(input: Any, other: Any) -> Tensor:
    return _binary(_mul_f, input, other)


@defop(
    **_row("div", "default_float"),
    samples=(
        Sample(((2, 3), (3,)), domain=(0.5, 2)),
        Sample(((3,), (3,)), dtype="int64", domain=(1, 5), grad=False),
        Sample(((4,), (4,)), kwargs=(("rounding_mode", "floor"),), domain=(0.5, 3), grad=False),
        Sample(
            ((4,), (4,)),
            kwargs=(("rounding_mode", "trunc"),),
            dtype="int64",
            domain=(-5, 5),
            grad=False,
        ),
    ),
)
def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is None:
        return _binary(_div_f, input, other, true_div=True)
    if rounding_mode == "floor":
        return _binary(_floordiv_f, input, other)
    if _fast_dtype(input, other) in _LOW or _dt.result_type(coerce(input), coerce(other)) in _LOW:
        one = not isinstance(other, Tensor) or other.numel() == 1
        return _binary(
            _divtrunc_f if one else _divtrunc_rounded_f, input, other, name="TruncBackward0"
        )
    dt = _dt.result_type(coerce(input), coerce(other))
    _nonzero_divisor(other, dt)
    q = _binary(_div_f, input, other, true_div=True)
    r = trunc(q)
    return r if _dt.kind(dt) == "f" else r.to(_dt.from_np(dt))


@defop(
    **_row("pow", "result_type"),
    samples=(
        Sample(((3,), (3,)), domain=(0.5, 2)),
        Sample(((3,),), args=(3,)),
        Sample(((3,),), args=(2.5,), domain=(0.5, 2)),
    ),
)
def pow(input: Any, exponent: Any) -> Tensor:
    input, exponent = coerce(input), coerce(exponent)
    if (
        isinstance(input, Tensor)
        and isinstance(exponent, int)
        and not isinstance(exponent, bool)
        and (exponent >= 0 or _dt.kind(input._npdtype) in "fc")
    ):
        dt = _dt.result_type(input, exponent)
        return apply(_ipow_f, POW_NODES[1], (input,), (("n", exponent), ("dtype", dt)))
    dt = _dt.result_type(input, exponent)
    if not isinstance(input, Tensor):  # pow(number, tensor)
        name = POW_NODES[2]
    else:
        name = POW_NODES[0] if isinstance(exponent, Tensor) else POW_NODES[1]
    return apply(_pow_f, name, (input, exponent), (("dtype", dt),))


# ``grad_fn._saved_<name>`` of pow's nodes (``PowBackward0``'s exponent is a static int)
_declare_saved(POW_NODES[0], "self", "exponent")
_declare_saved(POW_NODES[2], "self", "exponent")


def _compare(op: str, a: Any, b: Any) -> Tensor:
    a, b = coerce(a), coerce(b)
    dt = _dt.result_type(a, b)
    return apply(_cmp_f, op, (a, b), (("op", op), ("dtype", dt)))


@defop(
    inplace=True,
    **_row("eq", "result_type"),
    samples=Sample(((4,), (4,)), dtype="int64", grad=False),
)
def eq(input: Any, other: Any) -> Tensor:
    return _compare("eq", input, other)


@defop(
    inplace=True,
    **_row("ne", "result_type"),
    samples=Sample(((4,), (4,)), dtype="int64", grad=False),
)
def ne(input: Any, other: Any) -> Tensor:
    return _compare("ne", input, other)


@defop(inplace=True, **_row("lt", "result_type"), samples=Sample(((2, 3), (3,)), grad=False))
def lt(input: Any, other: Any) -> Tensor:
    return _compare("lt", input, other)


@defop(inplace=True, **_row("le", "result_type"), samples=Sample(((2, 3), (3,)), grad=False))
def le(input: Any, other: Any) -> Tensor:
    return _compare("le", input, other)


@defop(inplace=True, **_row("gt", "result_type"), samples=Sample(((2, 3), (3,)), grad=False))
def gt(input: Any, other: Any) -> Tensor:
    return _compare("gt", input, other)


@defop(inplace=True, **_row("ge", "result_type"), samples=Sample(((2, 3), (3,)), grad=False))
def ge(input: Any, other: Any) -> Tensor:
    return _compare("ge", input, other)


@defop(**_row("maximum", "result_type"), samples=Sample(((2, 3), (3,))))
def maximum(input: Tensor, other: Tensor) -> Tensor:
    return _binary(_maximum_f, input, other)


@defop(**_row("minimum", "result_type"), samples=Sample(((2, 3), (3,))))
def minimum(input: Tensor, other: Tensor) -> Tensor:
    return _binary(_minimum_f, input, other)


@defop(inplace=True, **_row("atan2", "default_float"), samples=Sample(((2, 3), (3,))))
def atan2(input: Tensor, other: Tensor) -> Tensor:
    return _binary(_atan2_f, input, other, true_div=True)


@defop(
    inplace=True,
    samples=Sample(((4,), (4,)), dtype="int64", domain=(1, 5), grad=False),
    number_first=True,
)
def floor_divide(input: Any, other: Any) -> Tensor:
    return _binary(_floordiv_f, input, other)


@defop(inplace=True, samples=Sample((Mask((4,)), Mask((4,))), grad=False))
def logical_and(input: Tensor, other: Tensor) -> Tensor:
    return apply(_logical_f, "logical_and", (coerce(input), coerce(other)), (("op", "and"),))


@defop(inplace=True, samples=Sample((Mask((4,)), Mask((4,))), grad=False))
def logical_or(input: Tensor, other: Tensor) -> Tensor:
    return apply(_logical_f, "logical_or", (coerce(input), coerce(other)), (("op", "or"),))


@defop(inplace=True, samples=Sample((Mask((4,)), Mask((4,))), grad=False))
def logical_xor(input: Tensor, other: Tensor) -> Tensor:
    return apply(_logical_f, "logical_xor", (coerce(input), coerce(other)), (("op", "xor"),))


def _bitwise(op: str, a: Any, b: Any) -> Tensor:
    """``bitwise_{op}`` (and ``&``, ``|``, ``^``): integers and bools, as the row's
    ``allowed="intbool"``; PyTorch's kernel refuses floats and complex numbers."""
    a, b = coerce(a), coerce(b)
    dt = _dt.result_type(a, b)
    if _dt.kind(dt) not in "biu":
        raise NotImplementedError(
            f"\"bitwise_{op}_cpu\" not implemented for '{_dt.scalar_type_name(dt)}'"
        )
    return apply(_bitwise_f, f"bitwise_{op}", (a, b), (("op", op), ("dtype", dt)))


_FMOD_REFUSAL = _complex_refusal(_ROWS["fmod"])


def _fmod_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return fnp.fmod(_c(x, dtype), _c(y, dtype))


@defop(
    inplace=True,
    **_row("fmod", "result_type"),
    samples=(
        Sample(((2, 3), (3,)), domain=(0.5, 3)),
        Sample(((4,), (4,)), dtype="int64", domain=(-5, 5), grad=False),
    ),
)
def fmod(input: Any, other: Any) -> Tensor:
    """C's ``fmod``: the remainder has the dividend's sign (``remainder``: the divisor's)."""
    a, b = coerce(input), coerce(other)
    dt = _dt.result_type(a, b)
    _refuse_complex(_FMOD_REFUSAL, dt)
    if dt == np.bool_:
        raise NotImplementedError("\"fmod_cpu\" not implemented for 'Bool'")
    _nonzero_divisor(b, dt)
    name = _FMOD_NODES[0] if isinstance(b, Tensor) else _FMOD_NODES[1]
    return apply(_fmod_f, name, (a, b), (("dtype", dt),))


def _composite_fn(p: Any) -> Any:
    """A declared composite's function of two tensors of one dtype: its numpy form, or its
    ``scipy.special`` form (``xlogy``): broadcasting operands (the row's own function takes
    operands broadcast already)."""
    if "numpy" in p.public:
        return getattr(fnp, p.public["numpy"][0])
    return getattr(fsp, p.public["scipy.special"][0])


def _logaddexp_complex(x: Any, y: Any) -> Any:
    """PyTorch's ``logaddexp`` of complex operands: the one of larger real part (``x`` on a
    tie) plus ``log1p(exp(other - it))``, the imaginary part not wrapped (NumPy's, the
    row's, wraps it into [-pi, pi)); NaN in either gives NaN in both parts; two infinite
    real parts of one sign give ``y`` (-inf) or ``log(exp(x) + exp(y))`` (+inf)."""
    first_lower = fnp.real(x) < fnp.real(y)
    hi, lo = fnp.where(first_lower, y, x), fnp.where(first_lower, x, y)
    out = hi + fnp.log1p(fnp.exp(lo - hi))
    lo_re = fnp.real(lo)
    both_inf = fnp.isinf(lo_re) & (lo_re == fnp.real(hi))
    # (the +inf branch on its own operands only: no overflow, nor its NaN gradient, elsewhere)
    lo_inf, hi_inf = fnp.where(both_inf, lo, 0), fnp.where(both_inf, hi, 0)
    inf = fnp.where(lo_re < 0, lo, fnp.log(fnp.exp(lo_inf) + fnp.exp(hi_inf)))
    out = fnp.where(both_inf, inf, out)
    nan = fnp.asarray(builtins.complex(np.nan, np.nan), out.dtype)
    return fnp.where(fnp.isnan(x) | fnp.isnan(y), nan, out)


@fg.custom_jvp
def xlogy_torch(x: Any, y: Any) -> Any:
    """``xlogy`` with PyTorch's derivatives: ``log(y)`` in ``x`` except 0 where ``x == 0``
    and ``y <= 0`` (JAX's, the row's, is ``log(y)`` there too: -inf or NaN), ``x / y`` in
    ``y``; the values are the row's. (PyTorch's ``xlogy(grad, y)`` is also 0 where the
    gradient is 0 and ``log(y)`` infinite: here a zero tangent times -inf is NaN.)"""
    return fsp.xlogy(x, y)


@xlogy_torch.defjvp
def _xlogy_torch_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, y), (tx, ty) = primals, tangents
    dx = fnp.where((x == 0) & (y <= 0), fnp.zeros_like(y), fnp.log(y))
    return xlogy_torch(x, y), tx * dx + ty * x / y


#: PyTorch's own function of complex operands where the row's (NumPy's) differs
_TORCH_COMPLEX = {"logaddexp": _logaddexp_complex}
#: ... and of real operands (its derivative differs; ``igamma``'s values at the edges)
_TORCH_REAL = {"xlogy": xlogy_torch, **_igamma.TORCH_REAL}


def _float_binary_f(x: Any, y: Any, *, op: str, dtype: np.dtype) -> Any:
    f = (_TORCH_COMPLEX if dtype.kind == "c" else _TORCH_REAL).get(op)
    x, y = _c(x, dtype), _c(y, dtype)
    if op in _OPMATH:  # (float16/bfloat16 in float32, rounded once)
        m = acc(dtype)
        return _c((f or _FLOAT_BINARY[op])(_c(x, m), _c(y, m)), dtype)
    return (f or _FLOAT_BINARY[op])(x, y)


#: the composites PyTorch computes float16/bfloat16 of in float32 and rounds once (its
#: ``xlogy`` rounds ``log(y)`` to the dtype first; ``nextafter`` steps in the dtype)
_OPMATH = frozenset({"hypot", "logaddexp", "logaddexp2"})


def _require_tensors(
    name: str, input: Any, other: Any, names: tuple[str, str] = ("input", "other")
) -> None:
    """PyTorch's ``TypeError`` for an op taking tensors only, given a number (``names``:
    its parameters')."""
    for pos, (arg, what) in enumerate(zip((input, other), names), 1):
        if not isinstance(arg, Tensor):
            raise TypeError(
                f"{name}(): argument '{what}' (position {pos}) must be Tensor, "
                f"not {type(arg).__name__}"
            )


def _complex_f(re: Any, im: Any, *, dtype: np.dtype) -> Any:
    part = np.finfo(dtype).dtype  # (parts written: ``re + 1j * im`` loses -0.0, makes NaN)
    return fg.lax.complex(*fnp.broadcast_arrays(fnp.asarray(re, part), fnp.asarray(im, part)))


_COMPLEX = _DECLARED["complex"]


@defop(
    **_row("complex", "same"),
    method=_COMPLEX.method,
    samples=Sample(((2, 3), (3,)), grad=False, method=False),
)
def complex(real: Tensor, imag: Tensor) -> Tensor:
    """``real + 1j * imag`` from tensors of one float dtype (the ``complex`` row's PyTorch
    form: its node, tensors only, no method; PyTorch's kernel refusals; Python's ``complex``
    is ``builtins.complex`` in this module)."""
    check_parts(complex.__name__, real, imag, ("real", "imag"))
    dtype = _complex_of(real._npdtype)
    return apply(_complex_f, _COMPLEX.grad_fn, (real, imag), (("dtype", dtype),))


#: PyTorch's node of a form it has no derivative for (``derivatives.yaml``'s
#: ``not_implemented``: ``remainder(2, x)``), a row's ``scalar_input``/``scalar_other``
_NOT_IMPLEMENTED = "torch::autograd::NotImplemented"


def _refuse_backward(r: Tensor, op: str) -> Tensor:
    """``r``, whose node raises PyTorch's error when backward reaches it."""

    def refuse(grad_outputs: Any) -> None:
        raise RuntimeError(f"derivative for aten::{op} is not implemented")

    if r.grad_fn is not None:
        r.grad_fn.register_prehook(refuse)
    return r


def _float_binary(op: str, p: Any, domain: tuple[float, float] | str) -> Any:
    """The op of a binary composite row ``p`` (its ``TorchForm``: ``p.torch``): PyTorch's
    promotion of the operands, integers to the default float unless the row keeps them
    (``fmax``), PyTorch's refusal of complex ones (of any but integers for a row of
    integers, ``gcd``; of integers too for a real-only row keeping them, ``nextafter``),
    and the row's node for a number ``other`` or ``input``
    (``xlogy(x, 2.0)``, ``xlogy(2.0, x)``), or PyTorch's refusal of a number."""
    t = p.torch
    name, keep_int = t.grad_fn, t.promote == "result_type"
    scalar_name = t.scalar_other or name  # (``remainder(x, 2.0)``)
    scalar_input = t.scalar_input or name
    refusal = _complex_refusal(p)
    # the result kinds its kernel takes: integers for a row of integers (``gcd``), floats for
    # a real-only row keeping PyTorch's promotion (``nextafter``: no integer made a float)
    allowed = getattr(p, "allowed", "")
    kinds = "iu" if allowed == "int" else "f" if allowed == "real_float" and keep_int else None

    def f(input: Any, other: Any) -> Tensor:
        if t.tensors_only:
            _require_tensors(op, input, other)
        a, b = coerce(input), coerce(other)
        dt = _dt.result_type(a, b)
        _refuse_complex(refusal, dt)
        if kinds is not None and _dt.kind(dt) not in kinds:
            kernel = f'"{t.kernel or op}_cpu" not implemented for '
            raise NotImplementedError(f"{kernel}'{_dt.scalar_type_name(dt)}'")
        if not keep_int:
            dt = _dt.float_type(dt)
        elif op == "remainder":
            if dt == np.bool_:
                raise NotImplementedError("\"remainder_cpu\" not implemented for 'Bool'")
            _nonzero_divisor(b, dt)
        node = scalar_input if not isinstance(a, Tensor) else name
        node = node if isinstance(b, Tensor) else scalar_name
        r = apply(_float_binary_f, node or op, (a, b), (("op", op), ("dtype", dt)))
        return _refuse_backward(r, op) if node == _NOT_IMPLEMENTED else r

    f.__name__ = op
    f.__doc__ = f"Elementwise ``{op}`` with PyTorch's type promotion."
    grad = bool(name) and t.input_derivative  # (none where PyTorch has none: igamma's input)
    samples = () if kinds == "iu" else (Sample(((2, 3), (3,)), domain=domain, grad=grad),)
    if keep_int and kinds != "f":  # (positive integers: no zero divisor)
        samples += (Sample(((4,), (4,)), dtype="int64", domain=(1, 5), grad=False),)
    return defop(
        op,
        inplace=t.inplace,
        inplace_function=t.inplace_function,
        grad_fn=name,
        samples=samples,
        number_first=t.number_first,
    )(f)


def _heaviside_f(x: Any, v: Any, *, dtype: np.dtype) -> Any:
    x, v = _c(x, dtype), _c(v, dtype)
    return fnp.where(x == 0, v, (x > 0).astype(dtype))


def _heaviside_out(args: tuple, kwargs: dict[str, Any], out: Any) -> None:
    """PyTorch refuses a complex ``out`` of ``heaviside`` as a complex operand."""
    if isinstance(out, Tensor) and out._npdtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")


@defop(
    inplace=True,
    samples=Sample(((4,), (4,)), dtype="int64", grad=False),
    out_check=_heaviside_out,
)
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """PyTorch's step function: ``values`` where ``input == 0``, else ``input > 0``. It is
    not ``numpy.heaviside``'s row (NaN gives 0 here, NaN there; tensors of one dtype)."""
    if not isinstance(values, Tensor):
        raise TypeError(
            "heaviside(): argument 'values' (position 2) must be Tensor, not "
            f"{type(values).__name__}"
        )
    if input._npdtype.kind == "c" or values._npdtype.kind == "c":  # (checked first)
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input._npdtype != values._npdtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    dt = input._npdtype
    return apply(_heaviside_f, "HeavisideBackward0", (input, values), (("dtype", dt),))


def _bitwise_op(op: str) -> Any:
    def f(input: Any, other: Any) -> Tensor:
        return _bitwise(op, input, other)

    f.__name__ = f"bitwise_{op}"
    samples = Sample(((4,), (4,)), dtype="int64", domain=(-8, 8), grad=False)
    return defop(
        f"bitwise_{op}", inplace=True, **_row(f"bitwise_{op}", "result_type"), samples=samples
    )(f)


bitwise_and = _bitwise_op("and")
bitwise_or = _bitwise_op("or")
bitwise_xor = _bitwise_op("xor")


# (last: every hand kernel above has claimed its row, ``_HAND``)
#: op -> its function of two operands of one dtype: the declared composites' (``hypot``,
#: ``logaddexp``, ``fmax``, ``remainder``, ...: ``funcgrad/primitives/composites.py``;
#: ``xlogy``: ``funcgrad/scipy/special.py``; ``gcd``: ``funcgrad/numpy/_integers.py``) and
#: the numpy forms of the primitive rows compat has no kernel of its own for (``nextafter``)
_FLOAT_BINARY = {
    p.torch.name or p.name: _composite_fn(p)
    for p in torch_rows()
    if p.arity == 2 and (p.torch.name or p.name) not in _HAND
}

for _p in torch_rows():
    if _p.arity == 2 and (_p.torch.name or _p.name) not in _HAND:
        globals()[_p.torch.name or _p.name] = _float_binary(_p.torch.name or _p.name, _p, _p.name)
del _p
