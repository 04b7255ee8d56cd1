"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Both are composites of public compat ops (``matmul``, ``softmax``,
``masked_fill``, ``where``), so gradients come from the recorded graph.
Semantics follow PyTorch 2.13's math path:

* ``scaled_dot_product_attention``: a boolean ``attn_mask`` marks the positions
  that TAKE PART (``True`` = attend); a float mask is added to the scores;
  ``is_causal`` with an ``attn_mask`` is a ``RuntimeError`` (PyTorch's math
  path; its no-grad fused CPU kernel combines the two instead); a row whose every score is
  ``-inf`` gives zeros (PyTorch's "safe softmax"), not NaN.
* ``multi_head_attention_forward``: boolean masks mark the positions that are
  MASKED OUT (``True`` = ignore), as in ``nn.MultiheadAttention``; with
  ``need_weights=True`` a fully masked row gives NaN (plain softmax), with
  ``need_weights=False`` zeros (it goes through ``scaled_dot_product_attention``),
  which is what PyTorch does.

Dropout draws from compat's generator (``torch.manual_seed``), so masks differ
from PyTorch's; compare in eval mode or with ``dropout_p=0``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
from compat._core.tensor import apply, known_value
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional.activation import dropout, linear

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

_NEG_INF = float("-inf")


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dim; rows that are all ``-inf`` give zeros instead of NaN."""
    dead = scores.amax(-1, keepdim=True) == _NEG_INF
    anydead = known_value(dead.any())  # None while pending (lazy): take the general path
    if anydead is not None and not anydead:
        return scores.softmax(-1)
    zero = torch.zeros((), dtype=scores.dtype)
    probs = torch.where(dead, zero, scores).softmax(-1)
    return torch.where(dead, zero, probs)


def _attention_f(
    q: Any, k: Any, v: Any, *mask: Any, causal: bool, scale: float, reps: tuple[int, int]
) -> Any:
    """Scaled dot-product attention as one program: the composed path's operations in
    its order (key/value heads repeated for grouped queries, scores, causal and given
    masks, softmax with all-masked rows zero, the weighted sum), so the results agree,
    in one executable and without reading a value."""
    if reps[0] > 1:
        k = fnp.repeat(k, reps[0], axis=-3)
    if reps[1] > 1:
        v = fnp.repeat(v, reps[1], axis=-3)
    scores = fnp.matmul(q, fnp.swapaxes(k, -1, -2)) * scale
    if causal:
        size = scores.shape[-2:]
        scores = fnp.where(fnp.tril(fnp.ones(size, dtype=bool)), scores, _NEG_INF)
    if mask:
        m = mask[0]
        scores = fnp.where(m, scores, _NEG_INF) if m.dtype == bool else scores + m
    dead = fnp.max(scores, axis=-1, keepdims=True) == _NEG_INF
    weights = fnn.softmax(fnp.where(dead, 0.0, scores), axis=-1)
    return fnp.matmul(fnp.where(dead, 0.0, weights), v)


def _fusable(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None, reps: tuple[int, int]
) -> bool:
    """Whether PyTorch 2.13 takes its fused CPU kernel, whose single node compat makes:
    4-D inputs with one batch size and one head size, non-empty sequences, and a mask
    that needs no gradient and broadcasts to the scores without growing them. (Other
    inputs run PyTorch's composite graph, which compat's composed path mirrors.)"""
    if not (query.dim() == key.dim() == value.dim() == 4):
        return False
    if not (query.shape[0] == key.shape[0] == value.shape[0]):
        return False
    if not (query.shape[1] == key.shape[1] * reps[0] == value.shape[1] * reps[1]):
        return False
    if not (query.shape[-1] == key.shape[-1] == value.shape[-1]):
        return False
    if query.shape[-2] == 0 or key.shape[-2] == 0:
        return False
    if attn_mask is None:
        return True
    if attn_mask.requires_grad:
        return False
    scores = (query.shape[0], query.shape[1], query.shape[2], key.shape[2])
    try:
        return np.broadcast_shapes(tuple(attn_mask.shape), scores) == scores
    except ValueError:
        return False


def _float_mask(mask: Tensor, dtype: Any, masked_when: bool) -> Tensor:
    """A bool mask as an additive float mask: ``-inf`` where ``mask == masked_when``."""
    zeros = torch.zeros(tuple(mask.shape), dtype=dtype)
    hit = mask if masked_when else mask.logical_not()
    return zeros.masked_fill(hit, _NEG_INF)


def _repeat_heads(t: Tensor, reps: int) -> Tensor:
    """``t.repeat_interleave(reps, dim=-3)`` through unsqueeze/expand/reshape."""
    if reps == 1:
        return t
    shape = tuple(t.shape)
    t = t.unsqueeze(-3)
    t = t.expand(*shape[:-2], reps, *shape[-2:])
    return t.reshape(*shape[:-3], shape[-3] * reps, *shape[-2:])


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(query @ key.mT * scale + mask) @ value`` over ``(..., L, E)`` / ``(..., S, E)``.

    ``scale`` defaults to ``1 / sqrt(E)``; ``enable_gqa`` lets ``key``/``value``
    have fewer heads (dim -3) than ``query``, each shared by a group of query heads.
    Dropout on the weights is applied whenever ``dropout_p > 0`` (as PyTorch: the
    function has no ``training`` flag).
    """
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' must be Tensor")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "scaled_dot_product_attention: query, key and value must be at least 2-D"
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    if not query.is_floating_point():
        raise RuntimeError("scaled_dot_product_attention: expected a floating point query")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            "scaled_dot_product_attention: query and key must have the same last dimension, "
            f"got {query.shape[-1]} and {key.shape[-1]}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            "scaled_dot_product_attention: key and value must have the same sequence length, "
            f"got {key.shape[-2]} and {value.shape[-2]}"
        )
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    reps = (1, 1)
    if enable_gqa and query.dim() >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk != 0 or hq % hv != 0:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in query"
            )
        reps = (hq // hk, hq // hv)
    if dropout_p == 0.0 and _fusable(query, key, value, attn_mask, reps):
        if attn_mask is not None and attn_mask.dtype != torch.bool:
            _check_mask_dtype(attn_mask, query)
        masks = () if attn_mask is None else (attn_mask,)  # needs no gradient here
        static = (("causal", bool(is_causal)), ("scale", factor), ("reps", reps))
        name = "ScaledDotProductFlashAttentionForCpuBackward0"
        return apply(_attention_f, name, (query, key, value, *masks), static)
    key = _repeat_heads(key, reps[0])
    value = _repeat_heads(value, reps[1])
    L, S = query.shape[-2], key.shape[-2]
    scores = torch.matmul(query, key.transpose(-2, -1)) * factor
    if is_causal:
        allowed = torch.ones((L, S), dtype=torch.bool).tril()
        scores = scores.masked_fill(allowed.logical_not(), _NEG_INF)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), _NEG_INF)
        else:
            _check_mask_dtype(attn_mask, query)
            scores = scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return torch.matmul(weights, value)


def _check_mask_dtype(attn_mask: Tensor, query: Tensor) -> None:
    if attn_mask.dtype != query.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, "
            f"but got attn_mask.dtype: {attn_mask.dtype} and query.dtype: {query.dtype} "
            "instead."
        )


def _canonical_mask(mask: Tensor | None, name: str, other: Tensor | None, dtype: Any) -> Any:
    """MHA's masks as additive float masks (bool ``True`` = masked out)."""
    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return _float_mask(mask, dtype, masked_when=True)
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and other.dtype != mask.dtype:
        warnings.warn(
            f"Support for mismatched {name} and {'attn_mask' if name != 'attn_mask' else 'key_padding_mask'} "
            "is deprecated. Use same type for both instead.",
            UserWarning,
            stacklevel=3,
        )
    return mask


def _in_projection(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    E: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    separate: tuple[Tensor | None, Tensor | None, Tensor | None] | None,
) -> tuple[Tensor, Tensor, Tensor]:
    if separate is None:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight[:E], in_proj_weight[E : 2 * E], in_proj_weight[2 * E :]
    else:
        w_q, w_k, w_v = separate
        if w_q is None or w_k is None or w_v is None:
            raise AssertionError("use_separate_proj_weight is True but q/k/v_proj_weight is None")
    if in_proj_bias is None:
        b_q = b_k = b_v = None
    else:
        b_q, b_k, b_v = in_proj_bias[:E], in_proj_bias[E : 2 * E], in_proj_bias[2 * E :]
    if separate is None and q is k and k is v:
        return linear(q, in_proj_weight, in_proj_bias).chunk(3, -1)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _shape_check(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    key_padding_mask: Tensor | None,
    attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the attention inputs are batched (a 3-D ``query``, 2-D unbatched); ranks
    that do not fit together raise PyTorch's ``AssertionError``."""
    nd = query.dim()
    if nd not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {nd}-D query tensor"
        )
    kind = "batched (3-D)" if nd == 3 else "unbatched (2-D)"
    if key.dim() != nd or value.dim() != nd:
        raise AssertionError(
            f"For {kind} `query`, expected `key` and `value` to be {nd}-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != nd - 1:
        raise AssertionError(
            f"For {kind} `query`, expected `key_padding_mask` to be `None` or {nd - 1}-D but "
            f"found {key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(
                f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                f"{attn_mask.dim()}-D tensor instead"
            )
        expected = (num_heads, query.shape[0], key.shape[0])
        if nd == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(
                f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
            )
    return nd == 3


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention over sequence-first inputs ``(L, N, E)`` (or unbatched ``(L, E)``).

    Returns ``(attn_output, attn_weights)``; the weights are ``(N, L, S)``
    averaged over heads, ``(N, H, L, S)`` with ``average_attn_weights=False``,
    ``None`` with ``need_weights=False``.
    """
    batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    if key.shape[:2] != value.shape[:2]:
        raise AssertionError(
            f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    dtype = query.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask, dtype)
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, dtype)

    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k_proj, v_proj = _in_projection(
        query, key, value, embed_dim, in_proj_weight, in_proj_bias, separate
    )
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {tuple(attn_mask.shape)}, but should be "
                    f"{(bsz * num_heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k_proj = torch.cat([k_proj, bias_k.expand(1, bsz, embed_dim)])
        v_proj = torch.cat([v_proj, bias_v.expand(1, bsz, embed_dim)])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")

    # (L, N, E) -> (N * H, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static("k", static_k, bsz * num_heads, head_dim)
    if k is None:
        k = k_proj.reshape(k_proj.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = _static("v", static_v, bsz * num_heads, head_dim)
    if v is None:
        v = v_proj.reshape(v_proj.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = torch.cat([k, torch.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)], dim=1)
        v = torch.cat([v, torch.zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype)], dim=1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                f"{tuple(key_padding_mask.shape)}"
            )
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = torch.matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = torch.matmul(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, False)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    return out, None


def _static(name: str, given: Tensor | None, batch_heads: int, head_dim: int) -> Tensor | None:
    """A given ``static_k``/``static_v`` (``(N * H, S, head_dim)``, used in place of the
    projected key/value), its shape checked as PyTorch checks it."""
    if given is None:
        return None
    for axis, want in ((0, batch_heads), (2, head_dim)):
        if given.size(axis) != want:
            raise AssertionError(
                f"expecting static_{name}.size({axis}) of {want}, but got {given.size(axis)}"
            )
    return given


def _pad_last(mask: Tensor | None) -> Tensor | None:
    """Append one zero (= not masked) column to an additive float mask."""
    if mask is None:
        return None
    pad = torch.zeros((*tuple(mask.shape)[:-1], 1), dtype=mask.dtype)
    return torch.cat([mask, pad], dim=-1)
