"""Helpers shared by ``nn.functional``'s modules: reductions, class-target checks, casts."""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

import compat.torch as torch
from compat._core.tensor import known_value

Tensor = Any  # compat.torch.Tensor (kept loose so annotations never import the core)


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    """PyTorch's ``_Reduction.legacy_get_string`` for the deprecated arguments."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return ret


def _resolve_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    return reduction


def _apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _to_dtype(t: Tensor, dtype: Any) -> Tensor:
    """``t.to(dtype)``: used on masks built from comparisons (no gradient involved)."""
    if t.dtype == dtype:
        return t
    return t.to(dtype)


def _is_floating(t: Tensor) -> bool:
    is_fp = getattr(t, "is_floating_point", None)
    if is_fp is not None:
        return bool(is_fp())
    return t.dtype in (torch.float32, torch.float64)


def _check_targets(target: Tensor, n_classes: int, ignore_index: int) -> int | None:
    """Raise PyTorch's ``IndexError`` for out-of-range class targets; count the valid ones
    (``None``: the values are not known, inside ``torch.func.vmap``)."""
    values = known_value(target)
    if values is None:
        return None
    ignored = values == ignore_index
    bad = ~ignored & ((values < 0) | (values >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(values[bad].flat[0])} is out of bounds.")
    return int(values.size - np.count_nonzero(ignored))


def _class_mask(
    target: Tensor, n_classes: int, class_dim: int, ndim: int, dtype: Any, ignore_index: int
) -> Tensor:
    """One-hot of ``target`` along ``class_dim`` as a float mask (ignored targets: zero rows)."""
    shape = [1] * ndim
    shape[class_dim] = n_classes
    classes = torch.arange(n_classes).reshape(shape)
    hit = target.unsqueeze(class_dim) == classes
    if 0 <= ignore_index < n_classes:  # otherwise an ignored target matches no class anyway
        hit = hit & (classes != ignore_index)
    return _to_dtype(hit, dtype)


def _class_dim(input: Tensor) -> int:
    return 0 if input.dim() == 1 else 1


def _check_class_target_shape(input: Tensor, target: Tensor, class_dim: int) -> None:
    expected = tuple(s for i, s in enumerate(input.shape) if i != class_dim)
    if tuple(target.shape) != expected:
        if input.dim() >= 2 and (target.dim() < 1 or target.shape[0] != input.shape[0]):
            raise ValueError(
                f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                f"({target.shape[0] if target.dim() else 0})."
            )
        raise RuntimeError(f"Expected target size {list(expected)}, got {list(target.shape)}")


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


_TENSOR_TYPE = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "int8": "Char",
    "uint8": "Byte",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}
_SCALAR_NAME = {"Half": "c10::Half", "BFloat16": "c10::BFloat16"}


def _type_name(t: Tensor) -> str:
    return _TENSOR_TYPE.get(np.dtype(t._npdtype).name, str(t.dtype))


def _int_list(value: Any, nd: int) -> list[int] | None:
    """An int or a sequence of ints as a list, one int repeated to ``nd``; ``None`` when an
    element is not an int (bools included, as PyTorch's int-list arguments reject them)."""
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    if any(isinstance(v, bool) for v in values):
        return None
    try:
        values = [operator.index(v) for v in values]
    except TypeError:
        return None
    return values * nd if len(values) == 1 else values
