"""Embedding rows whose weight gradient is PyTorch's ``sparse=True`` one (a sparse COO
tensor) or is scaled by the inverse frequency of each index (``scale_grad_by_freq``).

``weight[idx]`` for a flat ``idx``, as one autograd ``Function``: its backward gives the
weight the gradient rows themselves, at the indices that picked them (``padding_idx``
entries left out), either as a sparse COO tensor of ``weight``'s size (uncoalesced: a
repeated index keeps one entry per use, as PyTorch's ``embedding_sparse_backward``) or
added into a dense zero table. ``embedding`` and ``embedding_bag`` reduce these rows; the
rows' cotangent is then exactly what PyTorch's sparse kernels store as values.
"""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.autograd import Function
from compat.torch.nn.functional._arguments import Tensor


class EmbeddingRows(Function):
    """``weight[idx]`` (``idx`` flat) with the gradient described in the module docstring."""

    @staticmethod
    def forward(
        ctx: Any,
        weight: Tensor,
        idx: Tensor,
        padding_idx: int | None,
        scale_grad_by_freq: bool,
        sparse: bool,
    ) -> Tensor:
        ctx.save_for_backward(idx)
        ctx.options = (tuple(weight.shape), padding_idx, scale_grad_by_freq, sparse)
        return weight.index_select(0, idx)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple:
        (idx,) = ctx.saved_tensors
        shape, padding_idx, scale_grad_by_freq, sparse = ctx.options
        if scale_grad_by_freq and sparse:
            raise RuntimeError(
                "embedding_backward: scale_grad_by_freq not supported with sparse gradients"
            )
        idx = idx.long()
        if scale_grad_by_freq and idx.numel():
            counts = torch.bincount(idx, minlength=shape[0])[idx]
            grad = grad / counts.unsqueeze(1).to(grad.dtype)
        if padding_idx is not None:
            keep = idx != padding_idx
            idx, grad = idx[keep], grad[keep]
        if sparse:  # (copies: the gradient must not alias the input or grad_output, which
            # PyTorch's AccumulateGrad copies when they are shared)
            g = torch.sparse_coo_tensor(idx.unsqueeze(0).clone(), grad.clone(), shape)
        else:
            g = torch.zeros(shape, dtype=grad.dtype, device=grad.device).index_add(0, idx, grad)
        return g, None, None, None, None


def embedding_rows(
    weight: Tensor, idx: Tensor, padding_idx: int | None, scale_grad_by_freq: bool, sparse: bool
) -> Tensor:
    """The rows ``weight[idx]`` (``idx`` flat, its values checked by the caller)."""
    return EmbeddingRows.apply(weight, idx, padding_idx, scale_grad_by_freq, sparse)
