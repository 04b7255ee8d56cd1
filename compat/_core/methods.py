"""Tensor operators and methods, installed on :class:`~compat._core.tensor.Tensor`."""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import ops as O
from compat._core import shape_ops as S
from compat._core import transfer as T_
from compat._core.tensor import Tensor


def _r(f: Any) -> Any:
    return lambda self, other: f(O.coerce(other), self)


def _type(self: Tensor, dtype: Any = None) -> Any:
    if dtype is None:
        return "torch." + {
            "float32": "FloatTensor",
            "float64": "DoubleTensor",
            "int64": "LongTensor",
            "int32": "IntTensor",
            "bool": "BoolTensor",
            "float16": "HalfTensor",
        }.get(self._npdtype.name, self._npdtype.name)
    return S.to_dtype(self, dtype)


def _max_m(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return O.max(self, dim, keepdim)


def _min_m(self: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    return O.min(self, dim, keepdim)


def _new(
    self: Tensor, fill: Any, size: tuple, dtype: Any, requires_grad: bool, device: Any = None
) -> Tensor:
    from compat._core.creation import _factory

    where = self.device if device is None else device
    return _factory(fill, size, dtype or self.dtype, requires_grad, where)


def _setitem(self: Tensor, idx: Any, value: Any) -> None:
    S.setitem(self, idx, value)


def _iop(op: str) -> Any:
    def f(self: Tensor, other: Any) -> Tensor:
        return O.inplace_binary(self, op, other)

    return f


def _ipm(op: str) -> Any:
    def f(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        return O.inplace_binary(self, op, other, alpha)

    return f


def _div_(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode is not None:
        return self.copy_(O.div(self, other, rounding_mode=rounding_mode))
    return O.inplace_binary(self, "div", other)


def _unary_ip(fn: str) -> Any:
    def f(self: Tensor) -> Tensor:
        return O.inplace_unary(self, fn)

    return f


def install() -> None:
    T = Tensor
    ops = {
        "__add__": O.add,
        "__radd__": _r(O.add),
        "__sub__": O.sub,
        "__rsub__": _r(O.sub),
        "__mul__": O.mul,
        "__rmul__": _r(O.mul),
        "__truediv__": O.div,
        "__rtruediv__": _r(O.div),
        "__floordiv__": O.floor_divide,
        "__rfloordiv__": _r(O.floor_divide),
        "__mod__": O.remainder,
        "__rmod__": _r(O.remainder),
        "__pow__": O.pow,
        "__rpow__": _r(O.pow),
        "__matmul__": O.matmul,
        "__rmatmul__": _r(O.matmul),
        "__lt__": O.lt,
        "__le__": O.le,
        "__gt__": O.gt,
        "__ge__": O.ge,
        "__eq__": O.eq,
        "__ne__": O.ne,
        "__neg__": O.neg,
        "__pos__": lambda self: self,
        "__abs__": O.abs,
        "__and__": lambda a, b: O._bitwise("and", a, b),
        "__or__": lambda a, b: O._bitwise("or", a, b),
        "__xor__": lambda a, b: O._bitwise("xor", a, b),
        "__rand__": lambda a, b: O._bitwise("and", b, a),
        "__ror__": lambda a, b: O._bitwise("or", b, a),
        "__invert__": O.bitwise_not,
        "__getitem__": S.getitem,
        "__setitem__": _setitem,
        "__iadd__": _iop("add"),
        "__isub__": _iop("sub"),
        "__imul__": _iop("mul"),
        "__itruediv__": _iop("div"),
    }
    for name, f in ops.items():
        setattr(T, name, f)
    T.__hash__ = object.__hash__  # type: ignore[assignment]

    methods = {
        # math
        "add": O.add,
        "sub": O.sub,
        "subtract": O.sub,
        "mul": O.mul,
        "multiply": O.mul,
        "div": O.div,
        "divide": O.div,
        "true_divide": O.div,
        "pow": O.pow,
        "floor_divide": O.floor_divide,
        "remainder": O.remainder,
        "fmod": O.remainder,
        "eq": O.eq,
        "ne": O.ne,
        "lt": O.lt,
        "le": O.le,
        "gt": O.gt,
        "ge": O.ge,
        "greater": O.gt,
        "less": O.lt,
        "maximum": O.maximum,
        "minimum": O.minimum,
        "atan2": O.atan2,
        "logical_and": O.logical_and,
        "logical_or": O.logical_or,
        "logical_xor": O.logical_xor,
        "logical_not": O.logical_not,
        "neg": O.neg,
        "negative": O.neg,
        "abs": O.abs,
        "absolute": O.abs,
        "sign": O.sign,
        "relu": O.relu,
        "square": O.square,
        "floor": O.floor,
        "ceil": O.ceil,
        "round": O.round,
        "trunc": O.trunc,
        "clamp": O.clamp,
        "clip": O.clamp,
        "clamp_min": O.clamp_min,
        "clamp_max": O.clamp_max,
        "lerp": O.lerp,
        "addcmul": O.addcmul,
        "addcdiv": O.addcdiv,
        "isnan": O.isnan,
        "isinf": O.isinf,
        "isfinite": O.isfinite,
        "where": lambda self, cond, other: O.where(cond, self, other),
        "bitwise_not": O.bitwise_not,
        # reductions
        "sum": O.sum,
        "mean": O.mean,
        "prod": O.prod,
        "max": _max_m,
        "min": _min_m,
        "amax": O.amax,
        "amin": O.amin,
        "argmax": O.argmax,
        "argmin": O.argmin,
        "var": O.var,
        "std": O.std,
        "any": O.any,
        "all": O.all,
        "logsumexp": O.logsumexp,
        "softmax": O.softmax,
        "log_softmax": O.log_softmax,
        "cumsum": O.cumsum,
        "cumprod": O.cumprod,
        "norm": O.norm,
        # linear algebra
        "matmul": O.matmul,
        "mm": O.mm,
        "bmm": O.bmm,
        "mv": O.mv,
        "dot": O.dot,
        "outer": O.outer,
        "ger": O.outer,
        # shape
        "reshape": S.reshape,
        "view": S.view,
        "flatten": S.flatten,
        "permute": S.permute,
        "transpose": S.transpose,
        "swapaxes": S.transpose,
        "t": S.t,
        "unsqueeze": S.unsqueeze,
        "squeeze": S.squeeze,
        "expand": S.expand,
        "expand_as": S.expand_as,
        "broadcast_to": S.broadcast_to,
        "repeat": S.repeat,
        "flip": S.flip,
        "tril": S.tril,
        "triu": S.triu,
        "split": S.split,
        "chunk": S.chunk,
        "unbind": S.unbind,
        "gather": S.gather,
        "take_along_dim": S.gather,
        "index_select": S.index_select,
        "masked_fill": S.masked_fill,
        "masked_fill_": S.masked_fill_,
        "view_as": lambda self, other: S.reshape(self, *other.shape),
        "reshape_as": lambda self, other: S.reshape(self, *other.shape),
        "contiguous": lambda self, memory_format=None: self,
        "is_contiguous": lambda self, memory_format=None: True,
        "clone": S.clone,
        # dtype / device
        "to": T_.to,
        "type": _type,
        "float": lambda self: S.to_dtype(self, _dt.float32),
        "double": lambda self: S.to_dtype(self, _dt.float64),
        "half": lambda self: S.to_dtype(self, _dt.float16),
        "long": lambda self: S.to_dtype(self, _dt.int64),
        "int": lambda self: S.to_dtype(self, _dt.int32),
        "bool": lambda self: S.to_dtype(self, _dt.bool),
        "type_as": lambda self, other: S.to_dtype(self, other.dtype),
        "cpu": T_.cpu,
        "cuda": T_.cuda,
        "xpu": T_.xpu,
        "new_zeros": lambda self, *size, dtype=None, device=None, requires_grad=False: _new(
            self, 0, size, dtype, requires_grad, device
        ),
        "new_ones": lambda self, *size, dtype=None, device=None, requires_grad=False: _new(
            self, 1, size, dtype, requires_grad, device
        ),
        "new_full": lambda self, size, fill_value, dtype=None, device=None, requires_grad=False: (
            _new(self, fill_value, (size,), dtype, requires_grad, device)
        ),
        "new_empty": lambda self, *size, dtype=None, device=None, requires_grad=False: _new(
            self, 0, size, dtype, requires_grad, device
        ),
        "new_tensor": lambda self, data, dtype=None, device=None, requires_grad=False: __import__(
            "compat._core.creation", fromlist=["tensor"]
        ).tensor(
            data,
            dtype=dtype or self.dtype,
            device=self.device if device is None else device,
            requires_grad=requires_grad,
        ),
        # in-place
        "add_": _ipm("add"),
        "sub_": _ipm("sub"),
        "mul_": _iop("mul"),
        "div_": _div_,
        "pow_": _iop("pow"),
        "clamp_": O.inplace_clamp,
        "clip_": O.inplace_clamp,
        "zero_": lambda self: O.inplace_fill(self, 0),
        "fill_": O.inplace_fill,
        "copy_": lambda self, src, non_blocking=False: O.inplace_copy(self, src),
        "addcmul_": lambda self, t1, t2, *, value=1: O.inplace_addc(self, "mul", t1, t2, value),
        "addcdiv_": lambda self, t1, t2, *, value=1: O.inplace_addc(self, "div", t1, t2, value),
        "lerp_": O.inplace_lerp,
        "maximum_": _iop("maximum"),
        "minimum_": _iop("minimum"),
        "uniform_": lambda self, a=0.0, b=1.0, *, generator=None: O.inplace_random(
            self, "uniform", a, b, generator
        ),
        "normal_": lambda self, mean=0.0, std=1.0, *, generator=None: O.inplace_random(
            self, "normal", mean, std, generator
        ),
        "bernoulli_": lambda self, p=0.5, *, generator=None: O.inplace_random(
            self, "bernoulli", p, 0.0, generator
        ),
    }
    for fn in (
        "neg",
        "exp",
        "sqrt",
        "relu",
        "abs",
        "log",
        "sigmoid",
        "tanh",
        "floor",
        "ceil",
        "round",
        "trunc",
        "sin",
        "cos",
        "reciprocal",
        "rsqrt",
        "square",
        "sign",
    ):
        methods[fn + "_"] = _unary_ip(fn)
    for name in (
        "exp",
        "log",
        "log2",
        "log10",
        "log1p",
        "expm1",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "sigmoid",
        "sqrt",
        "rsqrt",
        "erf",
        "reciprocal",
    ):
        methods[name] = getattr(O, name)
    for name, f in methods.items():
        setattr(T, name, f)
    T.T = property(lambda self: S.permute(self, *reversed(range(self.ndim))))
    T.mT = property(lambda self: S.transpose(self, -2, -1))
    T.H = T.T
    T.real = property(lambda self: self)
    T.is_sparse = False
    T.layout = "torch.strided"


def _np_scalar(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x
