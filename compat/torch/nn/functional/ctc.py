"""``nn.functional.ctc_loss`` and ``nn.CTCLoss``: connectionist temporal classification.

The forward (alpha) recursion over the blank-extended target runs in log space as one
``funcgrad.lax.scan`` over time, batched over the sequences; its VJP is the gradient.
PyTorch's backward returns ``exp(log_probs) - (alpha beta) / p``, i.e. the true gradient
plus ``exp(log_probs)`` at the valid time steps (the same gradient once it passes through
``log_softmax``); a zero-valued term with that gradient is added so the results agree.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from compat._core.tensor import apply
from compat.torch.nn.functional._arguments import Tensor
from compat.torch.nn.functional.upsampling import _Key

_NEG_INF = -np.inf


def _lse3(a: Any, b: Any, c: Any) -> Any:
    """``log(exp(a) + exp(b) + exp(c))`` with all--inf entries giving -inf and no NaN
    gradients."""
    m = fnp.maximum(fnp.maximum(a, b), c)
    m_safe = fnp.where(fnp.isfinite(m), m, fnp.zeros_like(m))
    total = fnp.exp(a - m_safe) + fnp.exp(b - m_safe) + fnp.exp(c - m_safe)
    pos = total > 0
    safe = fnp.where(pos, total, fnp.ones_like(total))
    return fnp.where(pos, m_safe + fnp.log(safe), fnp.full_like(total, _NEG_INF))


def _ctc_f(
    lp: Any,
    *,
    ext: Any,
    skip: Any,
    in_len: tuple[int, ...],
    ext_len: tuple[int, ...],
    zero_infinity: bool,
) -> Any:
    """Per-sequence negative log likelihood; ``lp`` is ``(T, N, C)``."""
    ext_idx = np.asarray(ext).astype(np.int64)  # (N, L) blank-extended targets
    can_skip = np.asarray(skip).astype(bool)  # (N, L): s may come from s - 2
    t_max, n = lp.shape[0], lp.shape[1]
    length = ext_idx.shape[1]
    dt = lp.dtype
    # emissions along the extended targets: (T, N, L)
    emit = fnp.take_along_axis(lp, fnp.broadcast_to(fnp.asarray(ext_idx), (t_max, n, length)), 2)
    neg = fnp.full((n, length), _NEG_INF, dtype=dt)
    init_mask = np.zeros((n, length), dtype=bool)
    init_mask[:, :2] = True
    alpha0 = fnp.where(init_mask, emit[0], neg)
    lens = np.asarray(in_len)[:, None]
    pad1 = fnp.full((n, 1), _NEG_INF, dtype=dt)
    pad2 = fnp.full((n, 2), _NEG_INF, dtype=dt)

    def step(alpha: Any, xs: Any) -> tuple[Any, Any]:
        e, t = xs
        # alpha shifted by 1 and 2 (the slices keep L columns when L is 1: empty targets)
        prev1 = fnp.concatenate([pad1, alpha], axis=1)[:, :length]
        prev2 = fnp.concatenate([pad2, alpha], axis=1)[:, :length]
        prev2 = fnp.where(can_skip, prev2, neg)
        new = _lse3(alpha, prev1, prev2) + e
        return fnp.where(t < lens, new, alpha), None

    steps = fnp.arange(1, t_max)
    alpha, _ = flax.scan(step, alpha0, (emit[1:], steps))
    last = np.asarray(ext_len) - 1
    rows = np.arange(n)
    end1 = alpha[rows, last]
    end2 = fnp.where(last >= 1, alpha[rows, np.maximum(last - 1, 0)], fnp.full((n,), _NEG_INF, dt))
    nll = -_lse3(end1, end2, fnp.full((n,), _NEG_INF, dtype=dt))
    # zero-valued term whose gradient is exp(log_probs) at the valid steps (PyTorch's rule)
    valid = (np.arange(t_max)[:, None] < np.asarray(in_len)[None, :]).astype(dt)[..., None]
    sg = flax.stop_gradient(lp)
    extra = fnp.sum(fnp.exp(sg) * (lp - sg) * valid, axis=(0, 2))
    nll = nll + extra
    if zero_infinity:
        inf = fnp.isinf(nll)
        nll = fnp.where(inf, fnp.zeros_like(nll), nll)
    return nll


def _lengths(name: str, value: Any, n: int) -> tuple[int, ...]:
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() or value.is_complex():
            raise RuntimeError(f"{name} must be integral")
        value = value.tolist()
    if isinstance(value, int):
        value = [value]
    values = tuple(operator.index(v) for v in value)
    if len(values) != n:
        raise RuntimeError(f"{name} must be of size batch_size ({n}), but got {len(values)} values")
    return values


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """CTC negative log likelihood of ``targets`` under per-step ``log_probs`` ``(T, N, C)``
    (or ``(T, C)``); ``targets`` is ``(N, S)`` padded or the concatenated 1-D targets.
    ``'mean'`` divides each loss by its target length, then averages over the batch."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if log_probs.dim() not in (2, 3):
        raise RuntimeError(f"ctc_loss expects log_probs to be 2-D or 3-D, got {log_probs.dim()}-D")
    if not log_probs.is_floating_point():
        raise RuntimeError(f"\"ctc_loss_cpu\" not implemented for '{log_probs.dtype}'")
    t_max = log_probs.shape[0]
    n = 1 if unbatched else log_probs.shape[1]
    n_classes = log_probs.shape[-1]
    if not 0 <= blank < n_classes:
        raise RuntimeError("blank must be in label range")
    in_len = _lengths("input_lengths", input_lengths, n)
    tgt_len = _lengths("target_lengths", target_lengths, n)
    tv = np.asarray(targets.numpy()).astype(np.int64)
    if unbatched:
        tv = tv.reshape(1, -1)
    if tv.ndim == 1:  # concatenated targets
        offsets = np.concatenate([[0], np.cumsum(tgt_len)])
        if offsets[-1] > tv.size:
            raise RuntimeError("Expected tensor to have size at least the sum of target_lengths")
        seqs = [tv[offsets[i] : offsets[i + 1]] for i in range(n)]
    else:
        if tv.shape[0] != n:
            raise RuntimeError(f"Expected targets to have {n} rows, got {tv.shape[0]}")
        for s in tgt_len:
            if s > tv.shape[1]:
                raise RuntimeError(
                    f"Expected tensor to have size at least {s} at dimension 1, but got size "
                    f"{tv.shape[1]} for argument #2 'targets' (while checking arguments for "
                    "ctc_loss_cpu)"
                )
        seqs = [tv[i, :s] for i, s in enumerate(tgt_len)]
    for i in range(n):
        if in_len[i] > t_max or in_len[i] < 0:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {t_max}, but got value "
                f"{in_len[i]} (while checking arguments for ctc_loss_cpu)"
            )
    s_max = max((len(s) for s in seqs), default=0)
    length = 2 * s_max + 1
    ext = np.full((n, length), blank, dtype=np.int64)
    skip = np.zeros((n, length), dtype=bool)
    for i, s in enumerate(seqs):
        if ((s < 0) | (s >= n_classes)).any():
            raise IndexError("Target index out of range for the number of classes")
        ext[i, 1 : 2 * len(s) : 2] = s
        for j in range(3, 2 * len(s), 2):
            skip[i, j] = ext[i, j] != ext[i, j - 2]
    ext_len = tuple(2 * len(s) + 1 for s in seqs)
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    static = (
        ("ext", _Key(ext)),
        ("skip", _Key(skip)),
        ("in_len", in_len),
        ("ext_len", ext_len),
        ("zero_infinity", bool(zero_infinity)),
    )
    nll = apply(_ctc_f, "CtcLossBackward0", (lp,), static)
    if reduction == "none":
        return nll.squeeze(0) if unbatched else nll
    if reduction == "sum":
        return nll.sum()
    divisor = torch.tensor([max(s, 1) for s in tgt_len], dtype=nll.dtype)
    return (nll / divisor).mean()
