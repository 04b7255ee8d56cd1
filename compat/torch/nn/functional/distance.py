"""``nn.functional`` distances and the losses built on them: ``pairwise_distance``,
``cosine_similarity``, ``normalize``, ``cosine_embedding_loss``, ``margin_ranking_loss``,
``hinge_embedding_loss``, ``triplet_margin_loss`` and ``pdist``, one compat op each
before reduction."""

from __future__ import annotations

from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional._dtype_names import _TENSOR_TYPE
from compat.torch.nn.functional._reduction import _apply_reduction, _resolve_reduction


def _check_reduction(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _pnorm(d: Any, p: float, axis: int, keepdims: bool = False) -> Any:
    """The ``p``-norm along ``axis`` (``p`` may be 0, inf or any positive number)."""
    a = fnp.abs(d)
    if p == 2.0:
        return fnp.sqrt(fnp.sum(a * a, axis=axis, keepdims=keepdims))
    if p == 1.0:
        return fnp.sum(a, axis=axis, keepdims=keepdims)
    if p == float("inf"):
        return fnp.max(a, axis=axis, keepdims=keepdims)
    if p == 0.0:
        return fnp.sum((a != 0).astype(d.dtype), axis=axis, keepdims=keepdims)
    return fnp.sum(a**p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _pairwise_f(x1: Any, x2: Any, *, p: float, eps: float, keepdim: bool) -> Any:
    d = x1 - x2 + eps
    if d.ndim == 0:
        return fnp.abs(d)
    return _pnorm(d, p, -1, keepdim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """``‖x1 - x2 + eps‖_p`` over the last dimension (of the broadcast shape)."""
    if p < 0:
        raise RuntimeError("pairwise_distance only supports non-negative p values")
    static = (("p", float(p)), ("eps", float(eps)), ("keepdim", bool(keepdim)))
    return apply(_pairwise_f, "NormBackward1", (x1, x2), static)


def _safe_norm(x: Any, axis: int) -> Any:
    """The 2-norm along ``axis`` (kept), with gradient 0 where it is 0 (PyTorch's norm
    backward), not NaN."""
    sq = fnp.sum(x * x, axis=axis, keepdims=True)
    zero = sq == 0
    return fnp.where(zero, fnp.zeros_like(sq), fnp.sqrt(fnp.where(zero, fnp.ones_like(sq), sq)))


def _cosine_f(x1: Any, x2: Any, *, dim: int, eps: float) -> Any:
    x1, x2 = fnp.broadcast_arrays(x1, x2)
    if x1.ndim == 0:
        return _cosine_f(fnp.reshape(x1, (1,)), fnp.reshape(x2, (1,)), dim=0, eps=eps)[()]
    # each norm is clamped at eps without gradient, as PyTorch does
    n1 = _safe_norm(x1, dim)
    n2 = _safe_norm(x2, dim)
    n1 = n1 + flax.stop_gradient(fnp.maximum(n1, eps) - n1)
    n2 = n2 + flax.stop_gradient(fnp.maximum(n2, eps) - n2)
    return fnp.sum((x1 / n1) * (x2 / n2), axis=dim)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``x1 · x2 / (max(‖x1‖, eps) max(‖x2‖, eps))`` along ``dim`` (inputs broadcast, then
    promoted to their common floating dtype)."""
    nd = max(x1.dim(), x2.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    common = torch.result_type(x1, x2)
    if not (common.is_floating_point or common.is_complex):
        raise RuntimeError(
            "expected common dtype to be floating point, yet common dtype is "
            f"{_TENSOR_TYPE.get(str(common).removeprefix('torch.'), str(common))}"
        )
    x1, x2 = x1.to(common), x2.to(common)
    static = (("dim", dim % nd), ("eps", float(eps)))
    return apply(_cosine_f, "SumBackward1", (x1, x2), static)


def _normalize_f(x: Any, *, p: float, dim: int, eps: float) -> Any:
    if x.ndim == 0:  # a 0-d input is its own 1-element vector
        return _normalize_f(fnp.reshape(x, (1,)), p=p, dim=0, eps=eps)[0]
    n = _pnorm(x, p, dim, keepdims=True)
    return x / fnp.maximum(n, eps)


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Any = None
) -> Tensor:
    """``input / max(‖input‖_p, eps)`` along ``dim``."""
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported by compat")
    nd = max(input.dim(), 1)
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    static = (("p", float(p)), ("dim", dim % nd), ("eps", float(eps)))
    return apply(_normalize_f, "DivBackward0", (input,), static)


def _cos_embed_f(x1: Any, x2: Any, y: Any, *, margin: float) -> Any:
    eps = 1e-12
    axis = x1.ndim - 1
    prod = fnp.sum(x1 * x2, axis=axis)
    m1 = fnp.sum(x1 * x1, axis=axis) + eps
    m2 = fnp.sum(x2 * x2, axis=axis) + eps
    cos = prod / fnp.sqrt(m1 * m2)
    zeros = fnp.zeros_like(cos)
    pos = fnp.where(y == 1, 1.0 - cos, zeros)
    hinge = cos - margin
    neg = fnp.where(y == -1, fnp.where(hinge > 0, hinge, zeros), zeros)
    return pos + neg


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(x1, x2)`` for ``target == 1``, ``max(0, cos(x1, x2) - margin)`` for ``-1``."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    t_dim = target.dim()
    if t_dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != input2.dim() or input1.dim() != t_dim + 1:
        if t_dim == 1:
            raise RuntimeError(
                f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                f"{list(input1.shape)} and {list(input2.shape)}."
            )
        raise RuntimeError(
            f"0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    loss = apply(
        _cos_embed_f,
        "CosineEmbeddingLossBackward0",
        (input1, input2, target.detach()),  # (compared only: no gradient, as PyTorch's)
        (("margin", float(margin)),),
    )
    return _apply_reduction(loss, reduction)


def _ranking_f(x1: Any, x2: Any, y: Any, *, margin: float) -> Any:
    z = -y * (x1 - x2) + margin
    return fnp.where(z >= 0, z, fnp.zeros_like(z))


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {torch.Size(input1.shape)}, input2: {torch.Size(input2.shape)}, "
            f"target: {torch.Size(target.shape)} "
        )
    loss = apply(
        _ranking_f, "ClampMinBackward0", (input1, input2, target), (("margin", float(margin)),)
    )
    return _apply_reduction(loss, reduction)


def _hinge_f(x: Any, y: Any, *, margin: float) -> Any:
    zeros = fnp.zeros_like(x + y)
    m = margin - x
    m = fnp.where(m >= 0, m, fnp.zeros_like(m))
    return fnp.where(y != 1, m, zeros) + fnp.where(y != -1, x, zeros)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    # (the target is compared only: out of the graph, as PyTorch's)
    loss = apply(_hinge_f, "AddBackward0", (input, target.detach()), (("margin", float(margin)),))
    return _apply_reduction(loss, reduction)


def _triplet_f(
    a: Any, pos: Any, neg: Any, *, margin: float, p: float, eps: float, swap: bool
) -> Any:
    axis = a.ndim - 1

    def dist(u: Any, v: Any) -> Any:
        return _pnorm(u - v + eps, p, axis)

    d_pos = dist(a, pos)
    d_neg = dist(a, neg)
    if swap:
        d_neg = fnp.minimum(d_neg, dist(pos, neg))
    z = margin + d_pos - d_neg
    return fnp.where(z >= 0, z, fnp.zeros_like(z))


def _check_triplet(margin: float, anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    """PyTorch's checks of the triplet losses: a positive margin, inputs of one rank."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs"
        )


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with the ``p``-norm
    distance of ``pairwise_distance``; ``swap`` uses ``min(d(a, n), d(p, n))``."""
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_triplet(margin, anchor, positive, negative)
    static = (("margin", float(margin)), ("p", float(p)), ("eps", float(eps)), ("swap", swap))
    loss = apply(_triplet_f, "TripletMarginLossBackward0", (anchor, positive, negative), static)
    return _apply_reduction(loss, reduction)


def _pdist_f(x: Any, *, p: float) -> Any:
    n, m = x.shape
    rows, cols = np.triu_indices(n, 1)
    diff = fnp.take(x, rows, axis=0) - fnp.take(x, cols, axis=0)
    if m == 0:
        return fnp.zeros((rows.size,), x.dtype)
    a = fnp.abs(diff)
    if p == 0.0:
        return fnp.sum((a != 0).astype(x.dtype), axis=-1)
    if p == 1.0:
        return fnp.sum(a, axis=-1)
    if p == float("inf"):
        return fnp.max(a, axis=-1)
    # |d|**p and the root with a zero gradient where they are 0 (PyTorch's), not NaN
    nonzero = a != 0
    safe_a = fnp.where(nonzero, a, fnp.ones_like(a))
    s = fnp.sum(fnp.where(nonzero, safe_a**p, fnp.zeros_like(a)), axis=-1)
    safe_s = fnp.where(s == 0, fnp.ones_like(s), s)
    return fnp.where(s == 0, fnp.zeros_like(s), safe_s ** (1.0 / p))


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distances between every pair of rows ``i < j`` of an ``(N, M)``
    input, as a vector of ``N (N - 1) / 2`` in row-major order (the upper triangle of
    ``cdist(input, input, p)``)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(_pdist_f, "PdistBackward0", (input,), (("p", float(p)),))


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Any = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` for any distance
    function ``d`` (``pairwise_distance`` by default; compat ops, so gradients flow through
    it); ``swap`` uses ``min(d(a, n), d(p, n))``."""
    _check_reduction(reduction)
    _check_triplet(margin, anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = torch.minimum(d_neg, distance(positive, negative))
    loss = torch.clamp_min(margin + d_pos - d_neg, 0)
    return _apply_reduction(loss, reduction)
