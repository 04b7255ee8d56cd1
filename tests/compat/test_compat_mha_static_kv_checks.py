"""``F.multi_head_attention_forward``'s ``static_k``/``static_v`` (given per-head keys and
values used in place of the projected ones) and its rank checks of ``query``, ``key``,
``value``, ``key_padding_mask`` and ``attn_mask``, against real PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch

E, H, L, S, N = 4, 2, 3, 5, 2


def _arrays(seed, shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _mha(lib, batched, need_weights, static, zero_attn, **extra):
    q, k, v, w, b, ow, ob, sk, sv = _arrays(
        1,
        [(L, N, E), (S, N, E), (S, N, E), (3 * E, E), (3 * E,), (E, E), (E,), (N * H, 6, E // H),
         (N * H, 6, E // H)],
    )  # fmt: skip
    t = [lib.tensor(a) for a in (q, k, v, w, b, ow, ob, sk, sv)]
    q, k, v = [x if batched else x[:, 0] for x in t[:3]]
    if not batched:
        t[7], t[8] = t[7][:H], t[8][:H]
    static_k, static_v = (t[7], t[8]) if static else (None, None)
    return lib.nn.functional.multi_head_attention_forward(
        q, k, v, E, H, t[3], t[4], None, None, zero_attn, 0.0, t[5], t[6],
        need_weights=need_weights, static_k=static_k, static_v=static_v, **extra,
    )  # fmt: skip


@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize(("static", "zero_attn"), [(True, False), (True, True), (False, True)])
def test_static_kv_as_pytorch(real_torch, batched, need_weights, static, zero_attn):
    mine = _mha(torch, batched, need_weights, static, zero_attn)
    theirs = _mha(real_torch, batched, need_weights, static, zero_attn)
    for a, b in zip(mine, theirs, strict=True):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(npv(a), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def _error(lib, case):
    rng = np.random.default_rng(0)

    def t(*shape):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32))

    mha = lib.nn.MultiheadAttention(E, H)
    calls = {
        "batched mask 1-D": lambda: mha(t(L, N, E), t(S, N, E), t(S, N, E),
                                        key_padding_mask=t(S) > 0),
        "unbatched mask 2-D": lambda: mha(t(L, E), t(S, E), t(S, E),
                                          key_padding_mask=t(N, S) > 0),
        "key rank": lambda: mha(t(L, N, E), t(S, E), t(S, N, E)),
        "query rank": lambda: mha(t(N, L, S, E), t(S, N, E), t(S, N, E)),
        "attn_mask rank": lambda: mha(t(L, N, E), t(S, N, E), t(S, N, E), attn_mask=t(1, 1, L, S)),
        "unbatched 3-D attn_mask": lambda: mha(t(L, E), t(S, E), t(S, E), attn_mask=t(3, L, S)),
    }  # fmt: skip
    try:
        calls[case]()
    except Exception as e:
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize(
    "case",
    ["batched mask 1-D", "unbatched mask 2-D", "key rank", "query rank", "attn_mask rank",
     "unbatched 3-D attn_mask"],
)  # fmt: skip
def test_rank_errors_as_pytorch(real_torch, case):
    mine, theirs = _error(torch, case), _error(real_torch, case)
    assert mine is not None
    assert mine == theirs


def test_static_kv_errors_as_pytorch(real_torch):
    def run(lib):
        out = []
        q, k, v, w, b, ow, ob = (
            lib.tensor(a)
            for a in _arrays(
                2, [(L, N, E), (S, N, E), (S, N, E), (3 * E, E), (3 * E,), (E, E), (E,)]
            )
        )
        for sk, bias in (((N * H + 1, S, E // H), None), ((N * H, S, 3), None),
                         ((N * H, S, E // H), lib.zeros(1, 1, E))):  # fmt: skip
            try:
                lib.nn.functional.multi_head_attention_forward(
                    q, k, v, E, H, w, b, bias, bias, False, 0.0, ow, ob,
                    static_k=lib.zeros(sk), static_v=lib.zeros(N * H, S, E // H),
                )  # fmt: skip
            except AssertionError as e:
                out.append(str(e))
        return out

    mine = run(torch)
    assert mine == run(real_torch) and len(mine) == 3
