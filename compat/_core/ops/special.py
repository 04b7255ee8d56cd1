"""``torch.special`` as op-table rows (``torch.special.erf``, ``xlogy``, ``gammainc``,
...), and ``polygamma``/``mvlgamma``, which PyTorch also has at the top level."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad as fg
from compat._core import dtypes as _dt
from compat._core.mutation import apply_inplace
from compat._core.ops import binary, unary
from compat._core.ops._common import _c
from compat._core.ops.binary import _require_tensors
from compat._core.ops.composite import logit
from compat._core.optable import Sample, defop, no_bf16_kernel
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp
from funcgrad._compat_contract import torch_rows
from funcgrad.scipy import special as fsp

_SP = {"module": "special", "method": False, "node_name": False}
#: a spelling of a row's op names the row's node, as PyTorch's does
_SP_ROW = {"module": "special", "method": False}

#: op -> (its function, its test domain: a ``(lo, hi)``, or the funcgrad primitive or
#: declared composite whose row declares it); torch.special's spellings of a row's op
#: (``expit``, ``erf``, ``exp2``, ...) are declared on the row instead (below)
_SPECIAL = {
    "entr": (fsp.entr, (0.1, 2)),
    "ndtr": (fsp.ndtr, (-2, 2)),
    "ndtri": (fsp.ndtri, (0.1, 0.9)),
    "log_ndtr": (fsp.log_ndtr, (-2, 2)),
    "i0e": (fsp.i0e, (-2, 2)),
    "i1": (fsp.i1, (-2, 2)),
    "i1e": (fsp.i1e, (-2, 2)),
}


def _tensors_only(op: Any, name: str) -> Any:
    """The binary ``op`` as ``torch.special.X``, whose refusal of a number PyTorch words
    with ``name`` (``special_gammainc(): argument 'other' ...``)."""

    def f(input: Any, other: Any) -> Tensor:
        _require_tensors(name, input, other)
        return op(input, other)

    f.__name__ = name
    f.__doc__ = op.__doc__
    f.__wrapped__ = op  # type: ignore[attr-defined]
    return f


def _spellings(p: Any) -> None:
    """``torch.special``'s spellings of the op row ``p`` declares (``TorchForm.special``:
    ``logistic``'s ``expit``, ``digamma``'s ``digamma`` and ``psi``, ``xlogy``): the row's
    ``torch.X`` itself, so its nodes, promotion and refusals."""
    t = p.torch
    op = getattr(unary if p.arity == 1 else binary, t.name or p.name)
    if t.tensors_only:
        op = _tensors_only(op, f"special_{t.special[0]}")
    shapes = ((2, 3),) if p.arity == 1 else ((2, 3), (3,))
    grad = t.input_derivative
    samples = tuple(Sample(shapes, domain=p.name, dtype=d, grad=grad) for d in ("float64", "int64"))
    defop(
        t.special[0],
        aliases=t.special[1:],
        grad_fn=t.grad_fn,
        samples=samples,
        number_first=t.number_first,
        **_SP_ROW,
    )(op)


for _p in torch_rows():
    if _p.torch.special:
        _spellings(_p)


#: special functions PyTorch has no bfloat16 kernel for
_NO_BF16 = ("ndtri", "log_ndtr")


def _special_f(x: Any, *, op: str, dtype: np.dtype) -> Any:
    if dtype == _dt.bfloat16.np:  # computed in float32 and rounded, as PyTorch's kernels
        return _SPECIAL[op][0](_c(x, np.dtype(np.float32))).astype(dtype)
    return _SPECIAL[op][0](_c(x, dtype))


def _special(op: str) -> Any:
    def f(input: Tensor) -> Tensor:
        dt = _dt.float_type(input._npdtype)
        return apply(
            _special_f, f"Special{op.capitalize()}Backward0", (input,), (("op", op), ("dtype", dt))
        )

    f.__name__ = op
    f.__doc__ = f"``torch.special.{op}`` elementwise."
    no_bf16 = no_bf16_kernel(f"{op}_cpu")
    return defop(
        op,
        samples=Sample(((2, 3),), domain=_SPECIAL[op][1]),
        bf16_error=no_bf16 if op in _NO_BF16 else None,
        **_SP,
    )(f)


for _op in _SPECIAL:
    _special(_op)
del _op, _p


@fg.custom_jvp
def _xlog1py_torch(x: Any, y: Any) -> Any:
    # PyTorch's derivatives: ``log1p(y)`` in ``x`` except 0 where ``x == 0`` and
    # ``y <= -1`` (JAX's is ``log1p(y)`` there too), ``x / (1 + y)`` in ``y``
    return fsp.xlog1py(x, y)


@_xlog1py_torch.defjvp
def _xlog1py_torch_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, y), (tx, ty) = primals, tangents
    dx = fnp.where((x == 0) & (y <= -1), fnp.zeros_like(y), fnp.log1p(y))
    return _xlog1py_torch(x, y), tx * dx + ty * x / (1 + y)


def _xlog1py_f(x: Any, y: Any, *, dtype: np.dtype) -> Any:
    return _xlog1py_torch(_c(x, dtype), _c(y, dtype))


@defop(samples=Sample(((2, 3), (3,)), domain=(0.5, 2)), number_first=True, **_SP)
def xlog1py(input: Any, other: Any) -> Tensor:
    """``input * log1p(other)``, 0 where ``input == 0`` (torch.special's only: there is no
    ``torch.xlog1py``, so no row's ``TorchForm`` declares it). PyTorch's node is
    ``...Backward1`` for a number ``input``, ``...Backward2`` for a number ``other``."""
    dt = _dt.float_type(_dt.result_type(input, other))
    form = 0 if isinstance(other, Tensor) else 2
    form = form if isinstance(input, Tensor) else 1
    node = f"SpecialXlog1PyBackward{form}"
    return apply(_xlog1py_f, node, (input, other), (("dtype", dt),))


@defop(name="logit", samples=Sample(((2, 3),), domain=(0.1, 0.9)), **_SP)
def special_logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``torch.special.logit`` is ``torch.logit``."""
    return logit(input, eps)


def _polygamma_f(x: Any, *, n: int, dtype: np.dtype) -> Any:
    return fsp.polygamma(n, _c(x, dtype))


def _check_n(n: int) -> None:
    """PyTorch's refusal of a negative order (funcgrad's ``polygamma`` gives NaN there)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def _polygamma_(self: Tensor, n: int) -> Tensor:
    """``Tensor.polygamma_(n)``: in ``self``'s float dtype, PyTorch's own node."""
    _check_n(n)
    if _dt.kind(self._npdtype) not in "fc":
        name = _dt.scalar_type_name(self._npdtype)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")
    static = (("n", int(n)), ("dtype", self._npdtype))
    return apply_inplace(self, _polygamma_f, "PolygammaBackward1", (), static)


@defop(
    method=lambda self, n: polygamma(n, self),
    inplace=_polygamma_,
    samples=Sample(((3,),), prefix=(1,), domain=(0.5, 3), method=False),
    node_name=False,
)
def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of the digamma function."""
    _check_n(n)
    dt = _dt.float_type(input._npdtype)
    return apply(_polygamma_f, "PolygammaBackward0", (input,), (("n", int(n)), ("dtype", dt)))


def _mvlgamma_f(x: Any, *, p: int, dtype: np.dtype) -> Any:
    x = _c(x, dtype)
    out = p * (p - 1) / 4 * math.log(math.pi)
    for j in range(p):
        out = out + fsp.gammaln(x - j / 2)
    return out


@defop(inplace=True, samples=Sample(((3,),), args=(2,), domain=(1.5, 3)), node_name=False)
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = np.asarray(input._st.array)
    if np.any(x <= (p - 1) / 2):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    dt = _dt.float_type(input._npdtype)
    return apply(_mvlgamma_f, "MvlgammaBackward0", (input,), (("p", int(p)), ("dtype", dt)))
