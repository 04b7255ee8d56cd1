"""``nn.functional.embedding_bag``: sums, means or maxima of bags of embedding rows, one
``EmbeddingBagBackward0`` node.

Bags are contiguous runs of ``input`` that start at ``offsets`` (a 2-D input is one bag
per row). Each element's bag comes from a ``searchsorted`` of its position in
``offsets``; the rows are then reduced per bag by segment sums (scatter-adds). ``max``
takes the maximum per bag and feature, then re-reads the first element attaining it, so
the gradient goes where PyTorch's kernel sends it (the first maximum, not a split between
ties). Empty bags and bags of padding only give zeros, as PyTorch.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core.tensor import apply, known_value
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _is_floating, _type_name
from compat.torch.nn.functional.embedding_rows import embedding_rows
from funcgrad import stop_gradient

_MODES = {"sum": 0, "mean": 1, "max": 2}
_FAST_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _bag_f(
    idx: Any,
    offsets: Any,
    weight: Any,
    *extra: Any,
    mode: str,
    num_bags: int,
    padded: bool,
    last_to_end: bool = False,
    count_to_end: bool = False,
    gathered: bool = False,
) -> Any:

    n = idx.shape[0]
    pos = fnp.arange(n)
    # the bag of each element; elements past the last bag (include_last_offset) and
    # padding entries go to segment ``num_bags``, which the segment ops drop
    seg = fnp.searchsorted(offsets.astype(np.int64), pos, side="right") - 1
    if last_to_end and num_bags > 0:
        # the last bag runs to the end of the input, whatever the last offset says
        # (``offsets=[0, 3, 3]`` over 4 indices: bag 1 holds index 3)
        seg = fnp.minimum(seg, num_bags - 1)
    keep = seg < num_bags
    # ``extra``: the padding index (an argument, not a constant: one program serves every
    # padding index), then the per-sample weights, each when given
    psw = extra[1:] if padded else extra
    if padded:
        keep = keep & (idx != extra[0])
    seg = fnp.where(keep, seg, num_bags)
    # ``gathered``: ``weight`` holds the rows already (``weight[idx]``, sparse gradients)
    rows = weight if gathered else fnp.take(weight, fnp.clip(idx, 0, weight.shape[0] - 1), axis=0)
    if psw:
        rows = rows * psw[0][:, None]
    dim = weight.shape[1]
    # per-bag reductions by scatter, with one spare row for the dropped elements
    zeros = fnp.zeros((num_bags + 1, dim), dtype=weight.dtype)
    if mode == "sum":
        return zeros.at[seg].add(rows)[:num_bags]
    count = zeros[:, :1].at[seg].add(keep.astype(weight.dtype)[:, None])[:num_bags]
    if count_to_end and num_bags > 0:
        # PyTorch's index-select mean with include_last_offset: the last bag's sum stops at
        # the last offset, its size counts the indices to the end of the input
        ends = fnp.concatenate([offsets[1:num_bags].astype(np.int64), np.asarray([n])])
        count = fnp.maximum(ends - offsets[:num_bags].astype(np.int64), 0)
        count = count.astype(weight.dtype)[:, None]
    if mode == "mean":
        total = zeros.at[seg].add(rows)[:num_bags]
        return total / fnp.maximum(count, np.asarray(1, dtype=weight.dtype))
    top = stop_gradient(fnp.full_like(zeros, -np.inf).at[seg].max(rows))
    hit = (rows == fnp.take(top, seg, axis=0)) & keep[:, None]
    cand = fnp.where(hit, pos[:, None], n)
    first = fnp.full((num_bags + 1, dim), n, dtype=cand.dtype).at[seg].min(cand)[:num_bags]
    if n == 0:
        return fnp.zeros((num_bags, weight.shape[1]), dtype=weight.dtype)
    first = fnp.clip(first, 0, n - 1)
    picked = fnp.take_along_axis(rows, first, axis=0)
    return fnp.where(count > 0, picked, fnp.zeros((), dtype=weight.dtype))


def _renorm_rows(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: in place and without gradient, scale each row that
    ``input`` names whose ``norm_type``-norm exceeds ``max_norm`` to ``max_norm``."""
    with torch.no_grad():
        rows = torch.unique(input.reshape(-1))
        if rows.numel() == 0:
            return
        norms = torch.linalg.vector_norm(weight[rows], ord=norm_type, dim=-1, keepdim=True)
        scale = torch.where(norms > max_norm, max_norm / (norms + 1e-7), torch.ones_like(norms))
        # through ``.data``: the rescaling is not differentiated, in forward mode either
        # (a dual weight keeps its tangent, as PyTorch's ``embedding_renorm_`` does)
        data = weight.data
        data[rows] = data[rows] * scale


def _type_str(value: Any) -> str:
    """``str(type(value))`` as PyTorch prints it (a compat Tensor is its ``torch.Tensor``)."""
    return "<class 'torch.Tensor'>" if isinstance(value, torch.Tensor) else str(type(value))


def _check_values(idx: Tensor, offsets: Tensor, num_weights: int, fast_path: bool) -> None:
    """PyTorch's value checks (in its words) where the values are known; the out-of-range
    index message is its float32 sum/mean kernel's (``fast_path``) or its generic one's."""
    values, offs = known_value(idx), known_value(offsets)
    if offs is not None and offs.size:
        offs = np.asarray(offs)
        if offs[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {int(offs[0])}"
            )
        n = idx.shape[0]
        if offs[-1] > n:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] "
                f"of {int(offs[-1])}"
            )
        if np.any(np.diff(offs) < 0):
            raise RuntimeError("embedding_bag: offsets have to be non-decreasing")
    if values is not None and values.size:
        values = np.asarray(values)
        bad = np.flatnonzero((values < 0) | (values >= num_weights))
        if bad.size and not fast_path:
            raise RuntimeError(
                "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
                f"{int(values[bad[0]])}"
            )
        if bad.size:
            raise RuntimeError(
                f"Index {int(bad[0])} of input takes value {int(values[bad[0]])} which is not "
                f"in the valid range [0, {num_weights})"
            )


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """Sums, means or maxima (``mode``) of bags of ``weight`` rows picked by ``input``.

    A 1-D ``input`` holds the bags one after the other, each starting at its entry of
    ``offsets`` (with ``include_last_offset`` the last entry ends the last bag); a 2-D
    ``input`` is one bag per row. ``per_sample_weights`` (``mode='sum'`` only) scales each
    row; ``padding_idx`` entries are left out (not counted by the mean); ``max_norm``
    renormalises the rows used, in place, first. Empty bags give zeros.
    ``sparse`` as in :func:`embedding` (not with ``max``); ``scale_grad_by_freq`` raises
    ``NotImplementedError``.

    Example:
        >>> import compat.torch as torch
        >>> import compat.torch.nn.functional as F
        >>> w = torch.arange(6.0).reshape(3, 2)
        >>> F.embedding_bag(torch.tensor([0, 2, 1]), w, torch.tensor([0, 2]), mode="sum")
        tensor([[4., 6.],
                [2., 3.]])
    """
    if weight.dtype == torch.long and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. "
            "Usage `embedding_bag(weight, input, ...)` is deprecated, "
            "and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}"
        )
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{_type_str(offsets)}"
            )
        offsets = torch.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    for arg, t in (("indices", input), ("offsets", offsets)):
        if t.dtype not in (torch.int64, torch.int32):
            raise RuntimeError(
                f"Expected tensor for argument #1 '{arg}' to have one of the following scalar "
                f"types: Long, Int; but got torch.{_type_name(t)}Tensor instead (while "
                "checking arguments for embedding_bag)"
            )
    if not _is_floating(weight):
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar "
            f"types: Half, BFloat16, Float, Double; but got torch.{_type_name(weight)}Tensor "
            "instead (while checking arguments for embedding_bag)"
        )
    if scale_grad_by_freq:
        # PyTorch's CPU kernel divides the k-th distinct index's gradient by the count of
        # the k-th smallest index (not its own): no formula worth copying
        raise NotImplementedError("compat embedding_bag does not support scale_grad_by_freq")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            f"argument #1 'per_sample_weights'; but type torch.{_type_name(weight)}Tensor does "
            f"not equal torch.{_type_name(per_sample_weights)}Tensor (while checking arguments "
            "for embedding_bag)"
        )
    num_weights = weight.shape[0]
    if padding_idx is not None:
        if not -num_weights <= padding_idx < num_weights:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{num_weights} through "
                f"{num_weights - 1}, but got {padding_idx}"
            )
        padding_idx = int(padding_idx) % num_weights
    _check_values(input, offsets, num_weights, mode != "max" and weight.dtype == torch.float32)
    num_bags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    # include_last_offset: PyTorch's index-select kernel (sum or mean of float32, float16 or
    # bfloat16 rows, no padding_idx) ends the last bag at the last offset; its other
    # kernels end it at the end of the input
    fast = mode != "max" and padding_idx is None and weight.dtype in _FAST_DTYPES
    static = (("mode", mode), ("num_bags", max(num_bags, 0)), ("padded", padding_idx is not None),
              ("last_to_end", bool(include_last_offset) and not fast),
              ("count_to_end", bool(include_last_offset) and fast))  # fmt: skip
    table = weight
    if sparse:  # the rows, the weight's gradient sparse
        table = embedding_rows(weight, input, padding_idx, False, True)
        static = (*static, ("gathered", True))
    args = (input, offsets, table)
    if padding_idx is not None:
        args = (*args, padding_idx)
    if per_sample_weights is not None:
        args = (*args, per_sample_weights)
    return apply(_bag_f, "EmbeddingBagBackward0", args, static)
