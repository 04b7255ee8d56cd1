"""Scaled dot-product attention with ``jax.nn.dot_product_attention``'s signature,
layout (``BTNH``: batch, sequence, heads, head dim) and masking rules, written with
``funcgrad.numpy`` so it differentiates and batches like any composite."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.nn._activations import _logsumexp, _softmax
from funcgrad.numpy._core import ArrayLike
from funcgrad.primitives.calls import stop_gradient


def _as_4d(t: Any) -> Any:
    t = fnp.asarray(t)
    return t.reshape((1,) * (4 - t.ndim) + t.shape) if t.ndim < 4 else t


def _check(t: Any, shape: Sequence[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for want, got in zip(shape, t.shape):
        if want != -1 and want != got:
            raise ValueError(f"{name} shape should be {tuple(shape)}: but got {t.shape}")


def _large_negative(dtype: np.dtype) -> Any:
    # finite even after the float32 softmax cast (capped at float32's range, as JAX)
    big = min(float(np.finfo(dtype).max), float(np.finfo(np.float32).max))
    return np.asarray(-0.7 * big, dtype)


def _grouped(t: Any, k: int, g: int) -> Any:
    """A ``(B, N|1, T, S)`` bias or mask as ``(B, K|1, G|1, T, S)``."""
    if t is None:
        return None
    b, n, tt, s = t.shape
    if n == 1:
        return t.reshape((b, 1, 1, tt, s))
    return t.reshape((b, k, g, tt, s))


def _combined_mask(
    t: int,
    s: int,
    mask: Any,
    is_causal: bool,
    q_len: Any,
    kv_len: Any,
    window: tuple[int, int] | None,
) -> Any:
    """The boolean ``(B|1, K|1, G|1, T, S)`` mask of allowed logits, or ``None``."""
    combined = mask
    qi = np.arange(t)[:, None]
    kj = np.arange(s)[None, :]
    static = np.ones((t, s), bool)
    if is_causal:
        static &= kj <= qi
    if window is not None:
        left, right = window
        static &= (qi <= kj + left) & (qi >= kj - right)
    if is_causal or window is not None:
        st = fnp.asarray(static)[None, None, None]
        combined = st if combined is None else fnp.logical_and(combined, st)
    if q_len is not None or kv_len is not None:
        pad = fnp.ones((1, t, s), bool)
        if q_len is not None:
            pad = fnp.logical_and(pad, fnp.arange(t)[None, :, None] < q_len[:, None, None])
        if kv_len is not None:
            pad = fnp.logical_and(pad, fnp.arange(s)[None, None, :] < kv_len[:, None, None])
        pad = pad[:, None, None]
        combined = pad if combined is None else fnp.logical_and(combined, pad)
    return combined


def dot_product_attention(
    query: ArrayLike,
    key: ArrayLike,
    value: ArrayLike,
    bias: ArrayLike | None = None,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: ArrayLike | None = None,
    key_value_seq_lengths: ArrayLike | None = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
) -> Any:
    """``softmax(scale · Q Kᵀ + bias, masked) V`` over ``BTNH`` arrays (3-D inputs get a
    leading batch axis of 1); ``K`` key/value heads serve ``N = K·G`` query heads
    (grouped-query attention). Logits and softmax run in at least float32.

    Args:
        query: ``(B, T, N, H)``.
        key: ``(B, S, K, H)``.
        value: ``(B, S, K, H)``.
        bias: added to the logits, broadcastable ``(B|1, N|1, T, S)``.
        mask: boolean, ``True`` where a query may attend, ``(B|1, N|1, T, S)``.
        scale: the logits' factor, ``1/sqrt(H)`` by default.
        is_causal: mask keys after each query position.
        query_seq_lengths: int32 ``(B,)`` valid query lengths.
        key_value_seq_lengths: int32 ``(B,)`` valid key/value lengths.
        local_window_size: ``(left, right)`` (or one int for both) positions each
            query sees around its own.
        implementation: ``None`` or ``"xla"`` (the only one here).
        return_residual: also return the logsumexp of the logits, ``(B, T, N)``.
    """
    if implementation not in (None, "xla"):
        if implementation == "cudnn":
            raise NotImplementedError(
                "dot_product_attention: implementation='cudnn' is not available in funcgrad"
            )
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = fnp.asarray(query).shape
    q, k, v = _as_4d(query), _as_4d(key), _as_4d(value)
    bias = _as_4d(bias) if bias is not None else None
    mask = _as_4d(mask) if mask is not None else None
    q_len = fnp.asarray(query_seq_lengths) if query_seq_lengths is not None else None
    kv_len = fnp.asarray(key_value_seq_lengths) if key_value_seq_lengths is not None else None
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, kh, h = k.shape
    _check(v, [b, s, kh, h], k.dtype, "value")
    _check(q, [b, -1, -1, h], k.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_len, [b], np.dtype("int32"), "query_seq_lengths")
    _check(kv_len, [b], np.dtype("int32"), "key_value_seq_lengths")
    t, n = q.shape[1], q.shape[2]
    if n % kh != 0:
        raise ValueError(
            f"The number of query heads must be a multiple of key/value heads, but got {n} vs {kh}"
        )
    g = n // kh
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale
    logits_dt = np.promote_types(q.dtype, np.float32)

    qg = fnp.asarray(q.reshape((b, t, kh, g, h)), logits_dt)
    logits = fnp.einsum("btkgh,bskh->bkgts", qg, fnp.asarray(k, logits_dt))
    logits = logits * np.asarray(scale_val, logits_dt)
    if bias is not None:
        logits = fnp.asarray(logits + _grouped(bias, kh, g), logits_dt)
    allowed = _combined_mask(
        t, s, _grouped(mask, kh, g), is_causal, q_len, kv_len, local_window_size
    )
    if allowed is not None:
        logits = fnp.where(allowed, logits, _large_negative(logits_dt))
    logits32 = fnp.asarray(logits, np.float32)
    probs = fnp.asarray(_softmax(logits32, axis=-1), k.dtype)
    enc = fnp.einsum("bkgts,bskh->btkgh", probs, v).reshape((b, t, n, h))
    if q_len is not None:
        keep = fnp.arange(t)[None, :] < q_len[:, None]
        enc = enc * fnp.asarray(keep, enc.dtype)[:, :, None, None]
    enc = enc.reshape(out_shape)
    if return_residual:
        lse = fnp.asarray(_logsumexp(logits32, axis=-1), k.dtype)  # (b, k, g, t)
        lse = fnp.transpose(lse.reshape((b, n, t)), (0, 2, 1))
        return enc, stop_gradient(lse.reshape(out_shape[:-1]))
    return enc
