"""``torch._masked_softmax``: the softmax kernel of PyTorch's transformer fast path, with
the ``True`` entries of a boolean mask left out of each row (they come out 0; a row
masked whole is 0/0, NaN, as PyTorch's CPU kernel gives).

``mask_type`` says how the mask lines up with a 4-D ``(B, H, L, L)`` input: 2 (the
default mask) has the input's shape, 1 (``src_key_padding_mask``) is ``(B, L)`` over the
last axis, 0 (``src_mask``) is ``(L, L)`` over the last two. Any other mask or input
rank is read as type 2. Checks and their order are PyTorch's: the mask's dtype, its
shape, ``dim``, the input's dtype, then ``mask_type`` itself. Loaded on first access
(``compat.torch.__getattr__``)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core.ops._common import _c, acc
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad import nn as fnn
from funcgrad import numpy as fnp

NAMES = ("_masked_softmax",)

_TYPES = "Mask Type should be 0 (src_mask) or 1 (src_key_padding_mask), or 2 (default_mask)"


def _masked_softmax_f(x: Any, mask: Any, *, axis: int, dtype: np.dtype) -> Any:
    """Softmax of ``x`` along ``axis`` over the entries ``mask`` leaves in, in float32
    for the half types (rounded once, as PyTorch's kernel accumulates)."""
    if x.size == 0:
        return x
    wide = _c(x, acc(dtype))
    return _c(fnn.softmax(fnp.where(mask, -np.inf, wide), axis=axis), dtype)


def _full_mask(input: Tensor, mask: Tensor, mask_type: Any) -> Tensor:
    """``mask`` spread to ``input``'s shape by its ``mask_type`` (PyTorch's checks)."""
    shape = tuple(input.shape)
    if mask.dim() != 2 or input.dim() != 4:
        mask_type = 2
    if mask_type == 2:
        if tuple(mask.shape) != shape:
            raise RuntimeError("For mask_type == 2 mask shape should match input shape")
        return mask
    b, _, rows, cols = shape
    if mask_type == 1:
        # (PyTorch's fast path reads a padding mask of L = size(2) along the last axis:
        # compat asks that axis to be L as well rather than read past it)
        if tuple(mask.shape) != (b, rows) or cols != rows:
            raise RuntimeError("For mask_type == 1 mask shape should be (B, L)")
        return mask.reshape(b, 1, 1, rows).expand(*shape)
    if mask_type == 0:
        if tuple(mask.shape) != (rows, rows) or cols != rows:
            raise RuntimeError("For mask_type == 0 mask shape should be (L, L)")
        return mask.reshape(1, 1, rows, rows).expand(*shape)
    return mask  # (an undefined or unknown type: refused after the dim and dtype checks)


def _masked_softmax(
    input: Tensor, mask: Tensor, dim: int | None = None, mask_type: int | None = None
) -> Tensor:
    """Softmax of ``input`` along ``dim`` (the last by default) with ``mask``'s ``True``
    entries left out; ``mask_type`` 0, 1 or 2 as the module says. Differentiable in
    ``input`` (masked entries get no gradient)."""
    for i, (arg, v) in enumerate((("input", input), ("mask", mask)), 1):
        if not isinstance(v, Tensor):
            raise TypeError(
                f"_masked_softmax(): argument '{arg}' (position {i}) must be Tensor, not "
                f"{type(v).__name__}"
            )
    for i, (arg, v) in enumerate((("dim", dim), ("mask_type", mask_type)), 3):
        if v is not None and (isinstance(v, builtins.bool) or not isinstance(v, int)):
            raise TypeError(
                f"_masked_softmax(): argument '{arg}' (position {i}) must be int, not "
                f"{type(v).__name__}"
            )
    if mask.dtype != _dt.bool:
        raise RuntimeError("Mask should be a boolean tensor")
    full = _full_mask(input, mask, mask_type)
    if mask.dim() != 2 or input.dim() != 4:
        mask_type = 2
    axis = _wrap_dim(input.dim() - 1 if dim is None else dim, input.dim())
    dt = input._npdtype
    if _dt.kind(dt) != "f":
        raise NotImplementedError(
            f"\"masked_softmax\" not implemented for '{_dt.scalar_type_name(dt)}'"
        )
    if mask_type is None:
        raise RuntimeError("Mask Type should be defined")
    if mask_type not in (0, 1, 2):
        raise RuntimeError(_TYPES)
    static = (("axis", axis if input.dim() else ()), ("dtype", dt))
    return apply(_masked_softmax_f, "MaskedSoftmaxBackward0", (input, full), static)
