"""``clamp`` (``clip``), ``clamp_min`` and ``clamp_max``, and ``clamp``'s own in-place form.

``clamp`` is funcgrad's ``clamp`` row's PyTorch form (``funcgrad/primitives/composites.py``:
one row for ``lax.clamp``, numpy's ``clip`` and this op), which gives its names and nodes
(``ClampBackward0`` for tensor bounds, ``ClampBackward1`` for numbers) and says why its
function is its own: PyTorch's derivative includes the bounds (1 where ``lo <= x <= hi``,
none where ``lo > hi``), where lax's has none at a bound and numpy's splits a tie.

``Tensor.clamp_`` is not the out-of-place ``clamp`` written back (``inplace=True``): it
computes the clamp in ``self``'s dtype under one node (``clamp``'s for its bounds: PyTorch's
``ClampBackward0`` for a tensor bound, where compat named ``ClampBackward1``), so the row
declares it (``inplace=inplace_clamp``), next to the function whose values it shares.
It lives here rather than in ``unary.py`` because ``inplace.py`` builds on ``unary.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.mutation import apply_inplace
from compat._core.ops._common import _c, coerce
from compat._core.optable import Sample, defop
from compat._core.tensor import Tensor, apply
from funcgrad import numpy as fnp
from funcgrad._compat_contract import torch_rows
from funcgrad.lax import stop_gradient

#: the ``clamp`` row's PyTorch form: names and nodes
_ROW = next(p.torch for p in torch_rows() if p.name == "clamp")


def _node(min: Any, max: Any) -> str:
    """The node of a clamp with these bounds: tensor bounds' or number bounds'."""
    tensor_bound = isinstance(min, Tensor) or isinstance(max, Tensor)
    return _ROW.grad_fn if tensor_bound else _ROW.scalar_other


def _clamp_f(x: Any, lo: Any, hi: Any, *, has_lo: bool, has_hi: bool, dtype: np.dtype) -> Any:
    # PyTorch's value min(max(x, lo), hi) and derivative: x's where lo <= x <= hi (bounds
    # included), lo's where x < lo < hi, hi's where x > hi or lo > hi; none where x < lo ==
    # hi (the value is then both bounds: PyTorch gives neither a derivative)
    y = _c(x, dtype)
    tie = None
    if has_lo:
        lo = _c(lo, dtype)
        if has_hi:
            tie = (y < lo) & (lo == _c(hi, dtype))
        y = fnp.where(y < lo, lo, y)
    if has_hi:
        hi = _c(hi, dtype)
        y = fnp.where(y > hi, hi, y)
    return y if tie is None else fnp.where(tie, stop_gradient(y), y)


def _ip_clamp_f(x: Any, lo: Any, hi: Any, *, has_lo: bool, has_hi: bool, dtype: np.dtype) -> Any:
    return _c(_clamp_f(x, lo, hi, has_lo=has_lo, has_hi=has_hi, dtype=dtype), dtype)


_NO_BOUND = "torch.clamp: At least one of 'min' or 'max' must not be None"


def _check_bounds(name: str, min: Any, max: Any) -> None:
    """PyTorch's ``TypeError`` for a tensor bound beside a number bound (its overloads take
    two tensors or two numbers)."""
    kinds = {isinstance(b, Tensor) for b in (min, max) if b is not None}
    if len(kinds) == 2:
        got = ", ".join("Tensor" if isinstance(b, Tensor) else type(b).__name__ for b in (min, max))
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got (Tensor, {got}), but "
            "expected one of: (Tensor input, Tensor min = None, Tensor max = None) or "
            "(Tensor input, Number min = None, Number max = None)"
        )


def inplace_clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """``Tensor.clamp_`` (and ``clip_``): the clamped values in ``self``'s dtype."""
    _check_bounds("clamp_", min, max)
    if min is None and max is None:
        raise RuntimeError(_NO_BOUND)
    lo = coerce(min) if min is not None else 0
    hi = coerce(max) if max is not None else 0
    return apply_inplace(
        self,
        _ip_clamp_f,
        _node(lo, hi),
        (lo, hi),
        (("has_lo", min is not None), ("has_hi", max is not None), ("dtype", self._npdtype)),
    )


@defop(
    inplace=inplace_clamp,
    inplace_function=True,
    aliases=_ROW.aliases,
    grad_fn=_ROW.grad_fn,
    samples=(
        Sample(((6,),), args=(-0.5, 0.7)),
        Sample(((6,), (6,)), kwargs=()),
        Sample(((2, 3),), kwargs=(("max", 0.3),)),
    ),
)
def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    _check_bounds("clamp", min, max)
    return _clamp(input, min, max, None)


def _clamp(input: Tensor, min: Any, max: Any, name: str | None) -> Tensor:
    if min is None and max is None:
        raise RuntimeError(_NO_BOUND)
    lo = coerce(min) if min is not None else 0
    hi = coerce(max) if max is not None else 0
    dt = _dt.result_type(input, *(v for v in (min, max) if v is not None))
    name = _node(lo, hi) if name is None else name
    return apply(
        _clamp_f,
        name,
        (input, lo, hi),
        (("has_lo", min is not None), ("has_hi", max is not None), ("dtype", dt)),
    )


@defop(
    inplace=True,
    inplace_function=True,
    grad_fn="ClampMinBackward0",
    samples=Sample(((6,),), args=(0.1,)),
)
def clamp_min(input: Tensor, min: Any) -> Tensor:
    return _clamp(input, min, None, "ClampMinBackward0")


@defop(
    inplace=True,
    inplace_function=True,
    grad_fn="ClampMaxBackward0",
    samples=Sample(((6,),), args=(0.1,)),
)
def clamp_max(input: Tensor, max: Any) -> Tensor:
    return _clamp(input, None, max, "ClampMaxBackward0")
