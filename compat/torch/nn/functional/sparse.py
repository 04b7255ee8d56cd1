"""``nn.functional.embedding`` (one ``EmbeddingBackward0`` node) and ``one_hot``."""

from __future__ import annotations

from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.numpy as fnp
from compat._core.tensor import apply, known_value
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _to_dtype, _type_name
from compat.torch.nn.functional.embedding_bag import _renorm_rows
from compat.torch.nn.functional.embedding_rows import embedding_rows
from funcgrad import stop_gradient


def _embedding_f(idx: Any, weight: Any, *padding_idx: Any) -> Any:

    if padding_idx:  # the padding row gets no gradient (the index an argument, not a
        # constant: one program serves every padding index)
        rows = fnp.reshape(fnp.arange(weight.shape[0]) == padding_idx[0], (-1, 1))
        weight = fnp.where(rows, stop_gradient(weight), weight)
    return fnp.take(weight, idx, axis=0)


def padding_index(padding_idx: int | None, num_embeddings: int, name: str = "Padding_idx") -> Any:
    """``padding_idx`` checked against ``num_embeddings`` (PyTorch's ``AssertionError``,
    ``name`` spelt as the caller's message spells it) and counted from the start."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < max(num_embeddings, 1):
        raise AssertionError(f"{name} must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; the ``padding_idx`` row's
    gradient is zero. ``max_norm`` first rescales, in place and without gradient, the rows
    ``input`` names whose ``norm_type``-norm exceeds it (PyTorch's ``embedding_renorm_``);
    ``scale_grad_by_freq`` divides each use's gradient by its index's count in ``input``;
    ``sparse=True`` gives ``weight`` a sparse COO gradient (:mod:`.embedding_rows`)."""

    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = padding_index(padding_idx, weight.shape[0])
    if input.dtype not in (torch.int64, torch.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{_type_name(input)}Tensor instead (while checking "
            "arguments for embedding)"
        )
    values = known_value(input)
    if values is not None and values.size and (values.min() < 0 or values.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    if sparse or scale_grad_by_freq:
        rows = embedding_rows(weight, input.reshape(-1), padding_idx, scale_grad_by_freq, sparse)
        return rows.reshape(*input.shape, weight.shape[1])
    args = (input, weight) if padding_idx is None else (input, weight, int(padding_idx))
    return apply(_embedding_f, "EmbeddingBackward0", args)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """``int64`` one-hot encoding with a new last dimension of size ``num_classes``."""
    values = known_value(tensor)
    if values is None and num_classes != -1:  # inside torch.func.vmap: no value checks
        return _to_dtype(
            tensor.unsqueeze(-1) == torch.arange(num_classes, device=tensor.device), torch.int64
        )
    values = np.asarray(tensor.numpy())
    if values.size and values.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if values.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(values.max()) + 1
    elif values.size and values.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    eq = tensor.unsqueeze(-1) == torch.arange(num_classes, device=tensor.device)
    return _to_dtype(eq, torch.int64)
