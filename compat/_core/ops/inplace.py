"""In-place torch ops through ``apply_inplace``, with PyTorch's result-type cast check.

``add_``/``mul_``/..., ``fill_``, ``copy_``, ``addcmul_``/``addcdiv_``,
``lerp_`` and the random fills (``uniform_``, ``normal_``, ``bernoulli_``).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from compat._core import creation
from compat._core import dtypes as _dt
from compat._core import overlap as _overlap
from compat._core import rng as _rng
from compat._core import tensor_checks as _tc
from compat._core.mutation import apply_inplace, inplace_result
from compat._core.ops._common import _c, alpha_check, coerce, sub_check
from compat._core.ops.binary import (
    _DECLARED,
    POW_NODES,
    _add_alpha_f,
    _add_f,
    _div_f,
    _mul_f,
    _sub_alpha_f,
    _sub_f,
    _torch_power,
)
from compat._core.ops.unary import (
    _addcdiv_f,
    _addcmul_f,
    _lerp_f,
    check_addcdiv_dtype,
    lerp_check,
)
from compat._core.optable import Sample, defop
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp
from funcgrad._compat_contract import MetaArray


def _inplace_dtype_check(self: Tensor, dt: np.dtype) -> None:
    if _dt.category(dt) > _dt.category(self._npdtype):
        raise RuntimeError(
            f"result type {_dt.scalar_type_name(dt)} can't be cast to the desired "
            f"output type {_dt.scalar_type_name(self._npdtype)}"
        )


#: the out-of-place kernels of ``x.op_(y)`` (float16/bfloat16 computed in float32 as
#: PyTorch's: ``half.mul_(0.1)`` multiplies by float32(0.1))
_KERNELS = {"add": _add_f, "sub": _sub_f, "mul": _mul_f, "div": _div_f}


def _ip_binary_f(x: Any, y: Any, *, op: str, dtype: np.dtype, out: np.dtype) -> Any:
    if op in _KERNELS:
        r = _KERNELS[op](x, y, dtype=dtype)
        return _c(fnp.broadcast_to(r, r.shape), out)
    x, y = _c(x, dtype), _c(y, dtype)
    r = {
        "pow": _torch_power if _dt.kind(dtype) in "fc" else fnp.power,
        "maximum": fnp.maximum,
        "minimum": fnp.minimum,
    }[op](x, y)
    return _c(fnp.broadcast_to(r, r.shape), out)


def _ip_alpha_f(x: Any, y: Any, a: Any, *, op: str, dtype: np.dtype, out: np.dtype) -> Any:
    return _c((_add_alpha_f if op == "add" else _sub_alpha_f)(x, y, a, dtype=dtype), out)


def inplace_binary(self: Tensor, op: str, other: Any, alpha: Any = 1) -> Tensor:
    other = coerce(other)
    _overlap.check_partial(self, (other,))  # (PyTorch's error for a partial overlap)
    if op == "sub":
        sub_check(self, other)
    dt = _dt.result_type(self, other)
    if op == "div":
        dt = _dt.float_type(dt)
    if op in ("add", "sub") and not (type(alpha) is int and alpha == 1):
        alpha_check(dt, alpha)
    _inplace_dtype_check(self, dt)
    static = (("op", op), ("dtype", dt), ("out", self._npdtype))
    if alpha != 1:
        return apply_inplace(
            self, _ip_alpha_f, f"{op.capitalize()}Backward0", (other, alpha), static
        )
    node = _IP_NODES.get(op, op)
    if op == "pow" and isinstance(other, Tensor):  # ``x.pow_(tensor)``: the all-tensor node
        node = POW_NODES[0]
    return apply_inplace(self, _ip_binary_f, node, (other,), static)


#: ``inplace_binary``'s node names: the binary primitive rows' (``torch=``), and ``pow``'s
#: node of a number exponent (its row's ``scalar_other``)
_IP_NODES = {op: t.grad_fn for op, t in _DECLARED.items() if t.grad_fn is not None}
_IP_NODES["pow"] = POW_NODES[1]


def _ip_fill_f(x: Any, v: Any, *, dtype: np.dtype) -> Any:
    return fnp.broadcast_to(_c(v, dtype), x.shape)


def inplace_fill(self: Tensor, value: Any) -> Tensor:
    value = coerce(value)
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(
            "fill_ only supports 0-dimension value tensor but got tensor with "
            f"{value.ndim} dimensions."
        )
    node = "FillBackward3" if isinstance(value, Tensor) else "FillBackward2"
    return apply_inplace(self, _ip_fill_f, node, (value,), (("dtype", self._npdtype),))


def inplace_zero(self: Tensor) -> Tensor:
    """``fill_(0)``."""
    return inplace_fill(self, 0)


def _inplace_only(name: str, f: Any, sample: Sample) -> None:
    """The row of an op PyTorch has only in place: ``Tensor.X_`` and ``torch.X_``."""
    defop(name, function=False, method=False, inplace=f, inplace_function=True, samples=sample)(f)


_inplace_only("fill", inplace_fill, Sample(((2, 3),), args=(1.5,), grad=False))
_inplace_only("zero", inplace_zero, Sample(((2, 3),), grad=False))
_inplace_only("detach", Tensor.detach_, Sample(((2, 3),), grad=False))


def _ip_copy_f(x: Any, src: Any, *, dtype: np.dtype) -> Any:
    return fnp.broadcast_to(_c(src, dtype), x.shape)


def inplace_copy(self: Tensor, src: Any) -> Tensor:
    src = coerce(src)
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    shape = _tc._infer_size(tuple(self.shape), tuple(src.shape))
    if isinstance(shape, str):  # PyTorch's errors for a source that does not broadcast
        raise RuntimeError(shape)
    if shape != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}"
        )
    _overlap.check_partial(self, (src,))
    return apply_inplace(
        self, _ip_copy_f, "torch::autograd::CopyBackwards", (src,), (("dtype", self._npdtype),)
    )


def _ip_addc_f(x: Any, a: Any, b: Any, v: Any, *, op: str, dtype: np.dtype) -> Any:
    f = _addcmul_f if op == "mul" else _addcdiv_f
    return _c(f(x, a, b, v, dtype=dtype), dtype)


def inplace_addc(self: Tensor, op: str, t1: Tensor, t2: Tensor, value: Any) -> Tensor:
    if op == "div":
        check_addcdiv_dtype(t1, t2)
    _overlap.check_partial(self, (t1, t2, value))
    return apply_inplace(
        self,
        _ip_addc_f,
        f"Addc{op}Backward0",
        (t1, t2, value),
        (("op", op), ("dtype", self._npdtype)),
    )


def _ip_lerp_f(x: Any, e: Any, w: Any, *, dtype: np.dtype) -> Any:
    return _c(_lerp_f(x, e, w, dtype=dtype), dtype)


def inplace_lerp(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    lerp_check(self, end, weight)
    _overlap.check_partial(self, (end, weight))
    return apply_inplace(
        self, _ip_lerp_f, "LerpBackward0", (end, coerce(weight)), (("dtype", self._npdtype),)
    )


def _check_random_args(kind: str, a: Any, b: Any) -> None:
    """PyTorch's errors for a distribution's parameters out of range (compat drew values,
    or divided by zero); ``uniform_``'s, which depend on the dtype, are ``rng.uniform``'s."""
    msg = None
    if kind == "exponential" and not a > 0.0:
        msg = f"exponential_ expects lambda > 0.0, but found lambda={a:g}"
    elif kind == "cauchy" and not b > 0.0:
        msg = f"cauchy_ expects sigma > 0.0, but found sigma={b:g}"
    elif kind == "geometric" and not 0.0 < a < 1.0:
        msg = f"geometric_ expects p to be in (0, 1), but got p={a:g}"
    elif kind == "bernoulli" and not isinstance(a, Tensor) and not 0.0 <= a <= 1.0:
        msg = f"bernoulli_ expects p to be in [0, 1], but got p={a:g}"
    elif kind == "log_normal" and not b > 0.0:
        msg = f"log_normal_ expects std > 0.0, but found std={b:g}"
    elif kind == "normal" and not b >= 0.0:
        msg = f"normal expects std >= 0.0, but found std {b:g}"
    if msg is not None:
        raise RuntimeError(msg)


def inplace_random(self: Tensor, kind: str, a: Any, b: Any, generator: Any = None) -> Tensor:
    """``uniform_``/``normal_``/``bernoulli_``/``exponential_``/``cauchy_``/``log_normal_``/
    ``geometric_``/``random_``: new values drawn as PyTorch's CPU kernels draw them (see
    ``compat._core.rng``), recorded as a copy of a constant so no gradient flows to the
    old values."""

    _check_random_args(kind, a, b)
    gen = creation._gen(generator)
    shape = tuple(self.shape)
    npd = self._npdtype
    if self.is_meta:  # no values: nothing drawn, the generator stays (as PyTorch's)
        return inplace_copy(self, creation._leaf(MetaArray(shape, npd), False, "meta"))
    if kind == "uniform":
        vals = _rng.uniform(gen, shape, npd, a, b)
    elif kind == "normal":
        vals = _rng.normal(gen, shape, npd, a, b)
    elif kind == "bernoulli":
        if isinstance(a, Tensor):
            p = np.broadcast_to(np.asarray(a._st.array), shape)
            vals = _rng.bernoulli_tensor(gen, p)
        else:
            vals = _rng.bernoulli_scalar(gen, shape, a)
    elif kind == "exponential":
        vals = _rng.exponential(gen, shape, a)
    elif kind == "cauchy":
        vals = _rng.cauchy(gen, shape, a, b)
    elif kind == "log_normal":
        vals = _rng.log_normal(gen, shape, a, b)
    elif kind == "geometric":
        vals = _rng.geometric(gen, shape, a)
    elif kind == "random":
        if a is None and b is None:
            vals = _rng.random_full(gen, shape, npd)
        else:
            vals = _rng.random_from_to(gen, shape, npd, a, b)
    else:
        raise ValueError(kind)
    src = creation._leaf(np.asarray(vals, npd), False)
    return inplace_copy(self, src)


def _fill_diag_f(x: Any, v: Any, *, wrap: bool, dtype: np.dtype) -> Any:
    rows, cols = x.shape[0], x.shape[1]
    n = rows if wrap else builtins.min(rows, cols)
    r = np.arange(n)
    if wrap and rows > cols:
        keep = [i for i in range(rows) if (i % (cols + 1)) < cols]
        r = np.asarray(keep)
        c = r % (cols + 1)
    else:
        c = r
    return x.at[r, c].set(_c(v, dtype))


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Fill the main diagonal (all dims of equal size for more than 2 dims) in place."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")

    def out_of_place(x: Tensor, v: Any) -> Tensor:
        if x.ndim > 2:
            n = x.shape[0]
            idx = tuple(np.arange(n) for _ in range(x.ndim))
            return apply(
                _fill_nd_f,
                "FillBackward0",
                (x, coerce(v), *[np.asarray(i) for i in idx]),
                (("dtype", x._npdtype),),
            )
        return apply(
            _fill_diag_f,
            "FillBackward0",
            (x, coerce(v)),
            (("wrap", bool(wrap)), ("dtype", x._npdtype)),
        )

    return inplace_result(self, out_of_place, (fill_value,), {})


def _fill_nd_f(x: Any, v: Any, *idx: Any, dtype: np.dtype) -> Any:
    return x.at[tuple(idx)].set(_c(v, dtype))
