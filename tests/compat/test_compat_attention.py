"""Attention and transformers against real PyTorch with the same weights.

``F.scaled_dot_product_attention``, ``nn.MultiheadAttention`` and the
``nn.Transformer*`` modules: outputs, attention weights, gradients of inputs and
parameters, masks (bool / float / key padding / causal), state_dict names.
"""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

RTOL, ATOL = 1e-4, 1e-5


def c(t):
    """A real torch tensor as a compat tensor (same values and dtype)."""
    return ctorch.tensor(t.detach().numpy())


def close(a, b, rtol=RTOL, atol=ATOL):
    a = np.asarray(a.detach().numpy()) if hasattr(a, "detach") else np.asarray(a)
    b = np.asarray(b.detach().numpy()) if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def same_weights(real_mod, compat_mod):
    assert list(real_mod.state_dict()) == list(compat_mod.state_dict())
    compat_mod.load_state_dict({k: v.numpy() for k, v in real_mod.state_dict().items()})


def check_param_grads(real_mod, compat_mod):
    cparams = dict(compat_mod.named_parameters())
    for name, p in real_mod.named_parameters():
        assert p.grad is not None
        close(cparams[name].grad, p.grad)


# ---------------------------------------------------------------- scaled_dot_product_attention
SDPA_CASES = {
    "plain": {},
    "bool_mask": {"attn_mask": "bool"},
    "bool_mask_broadcast": {"attn_mask": "bool_b"},
    "float_mask": {"attn_mask": "float"},
    "causal": {"is_causal": True},
    "scale": {"scale": 0.3},
    "gqa": {"enable_gqa": True},
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_values_and_grads(real_torch, case):
    kw = dict(SDPA_CASES[case])
    g = np.random.default_rng(0)
    hk = 2 if kw.get("enable_gqa") else 4
    arrays = [
        g.standard_normal((2, 4, 3, 8)),
        g.standard_normal((2, hk, 5, 8)),
        g.standard_normal((2, hk, 5, 6)),
    ]
    mask = kw.get("attn_mask")
    if mask == "bool":
        m = g.random((3, 5)) > 0.3
        m[1] = False  # a fully masked row: zeros, as PyTorch's safe softmax
        kw["attn_mask"] = m
    elif mask == "bool_b":
        kw["attn_mask"] = g.random((2, 1, 3, 5)) > 0.3
    elif mask == "float":
        kw["attn_mask"] = g.standard_normal((3, 5)).astype(np.float32)
    results = []
    for lib in (real_torch, ctorch):
        qkv = [lib.tensor(a, dtype=lib.float32, requires_grad=True) for a in arrays]
        kwl = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
        out = lib.nn.functional.scaled_dot_product_attention(*qkv, **kwl)
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()
        results.append((out, [t.grad for t in qkv]))
    (ro, rg), (co, cg) = results
    assert co.dtype == ctorch.float32
    close(co, ro)
    for a, b in zip(cg, rg, strict=True):
        close(a, b)


def _node_names(lib, out):
    """The output's node and the names of the nodes it feeds (the graph's top)."""
    return out.grad_fn.name(), [f.name() if f else None for f, _ in out.grad_fn.next_functions]


@pytest.mark.parametrize(
    "shapes, kw",
    [
        (((2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8)), {}),  # PyTorch's fused CPU kernel
        (((2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8)), {"attn_mask": "float"}),
        (((2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8)), {"attn_mask": "bool"}),
        (((2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8)), {"is_causal": True}),
        (((2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 8)), {"enable_gqa": True}),
        # PyTorch's composite graph: 3-D, value's head size differs, batch broadcast,
        # dropout, a mask requiring grad
        (((4, 3, 8), (4, 5, 8), (4, 5, 8)), {}),
        (((2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 6)), {}),
        (((1, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8)), {}),
        (((2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8)), {"dropout_p": 0.5}),
        (((2, 4, 3, 8), (2, 4, 5, 8), (2, 4, 5, 8)), {"attn_mask": "float_grad"}),
    ],
)
def test_sdpa_graph_nodes_match_pytorch(real_torch, shapes, kw):
    # 4-D without dropout is one node (and one compiled program) as PyTorch's fused
    # kernel, whose inputs are the leaves; other cases are PyTorch's composite graph
    g = np.random.default_rng(2)
    arrays = [g.standard_normal(sh) for sh in shapes]
    names = []
    for lib in (real_torch, ctorch):
        qkv = [lib.tensor(a, dtype=lib.float32, requires_grad=True) for a in arrays]
        kwl = dict(kw)
        m = kwl.get("attn_mask")
        if m in ("float", "float_grad"):
            kwl["attn_mask"] = lib.tensor(np.linspace(-1, 1, 15).reshape(3, 5), dtype=lib.float32)
            kwl["attn_mask"].requires_grad_(m == "float_grad")
        elif m == "bool":
            kwl["attn_mask"] = lib.tensor(np.arange(15).reshape(3, 5) % 4 != 0)
        out = lib.nn.functional.scaled_dot_product_attention(*qkv, **kwl)
        names.append(_node_names(lib, out))
    if names[0][0].startswith("ScaledDotProduct"):  # one node over the three leaves
        # (compat lists the mask too, as a slot without a gradient: (None, 0))
        assert names[1][0] == names[0][0] and names[1][1][:3] == names[0][1]
        assert names[1][1][3:] in ([], [None])
    else:  # compat's composite graph below the top differs from PyTorch's bmm graph
        assert names[1][0] == names[0][0]


def test_sdpa_float_mask_gradient_and_masked_rows(real_torch):
    g = np.random.default_rng(3)
    arrays = [g.standard_normal(sh) for sh in ((1, 2, 4, 3), (1, 2, 6, 3), (1, 2, 6, 5))]
    mask = g.standard_normal((1, 1, 4, 6))
    mask[0, 0, 2] = -np.inf  # a row with every key masked: zeros and zero gradients
    mask[0, 0, 0, :3] = -np.inf
    results = []
    for lib in (real_torch, ctorch):
        ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in (*arrays, mask)]
        out = lib.nn.functional.scaled_dot_product_attention(*ts[:3], attn_mask=ts[3])
        (out * lib.tensor(np.linspace(-2, 1, out.numel()).reshape(out.shape))).sum().backward()
        results.append((out, [t.grad for t in ts]))
    (ro, rg), (co, cg) = results
    close(co, ro, 1e-10, 1e-12)
    assert np.all(co.detach().numpy()[0, :, 2] == 0)
    for a, b in zip(cg, rg, strict=True):
        close(a, b, 1e-10, 1e-12)


def test_sdpa_reads_no_value_under_lazy_execution():
    import compat.lazy as lazy

    q = ctorch.randn(2, 4, 3, 8)
    lazy.reset_stats()
    with lazy.enabled():
        out = ctorch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        assert lazy.stats().get("flushes", 0) == 0  # nothing was evaluated to decide a path
        out = out * 2.0
    assert np.isfinite(out.numpy()).all()


def test_sdpa_float64_and_unbatched(real_torch):
    g = np.random.default_rng(1)
    q, k, v = (g.standard_normal(s) for s in ((3, 4), (5, 4), (5, 2)))
    ro = real_torch.nn.functional.scaled_dot_product_attention(
        *(real_torch.tensor(a) for a in (q, k, v)), is_causal=True
    )
    co = ctorch.nn.functional.scaled_dot_product_attention(
        *(ctorch.tensor(a) for a in (q, k, v)), is_causal=True
    )
    assert co.dtype == ctorch.float64
    close(co, ro, 1e-10, 1e-12)


def test_sdpa_dropout_uses_compat_rng():
    q = ctorch.ones(1, 1, 4, 4)
    ctorch.manual_seed(3)
    a = ctorch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    ctorch.manual_seed(3)
    b = ctorch.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    close(a, b, 0, 0)
    # each weight is 1/4, dropped or scaled by 2: row sums are in {0, .5, 1, 1.5, 2}
    sums = a[0, 0, :, 0].numpy() * 2
    assert np.allclose(sums, np.round(sums))
    assert not np.allclose(a.numpy(), 1.0)


def test_sdpa_errors(lib):
    F = lib.nn.functional
    q = lib.randn(2, 3, 4)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, lib.randn(2, 3, 5), lib.randn(2, 3, 4))
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(
            q.requires_grad_(), q, q, attn_mask=lib.ones(3, 3, dtype=lib.bool), is_causal=True
        )
    with pytest.raises(RuntimeError):  # int mask
        F.scaled_dot_product_attention(q, q, q, attn_mask=lib.ones(3, 3, dtype=lib.int64))


# ---------------------------------------------------------------- MultiheadAttention
MHA_CASES = [
    # (batch_first, kdim, add_bias_kv, add_zero_attn, bias, masks, need_weights)
    (False, None, False, False, True, "none", True),
    (True, None, False, False, True, "bool", False),
    (True, 6, False, False, True, "float", True),
    (False, 6, True, True, True, "bool", True),
    (True, None, True, False, False, "kpm_only", False),
]


@pytest.mark.parametrize("case", MHA_CASES, ids=lambda c: "-".join(map(str, c)))
def test_multihead_attention(real_torch, case):
    batch_first, kdim, bias_kv, zero_attn, bias, masks, need_weights = case
    real_torch.manual_seed(0)
    kw = dict(
        batch_first=batch_first,
        kdim=kdim,
        vdim=kdim,
        add_bias_kv=bias_kv,
        add_zero_attn=zero_attn,
        bias=bias,
    )
    rm = real_torch.nn.MultiheadAttention(8, 2, **kw)
    cm = ctorch.nn.MultiheadAttention(8, 2, **kw)
    same_weights(rm, cm)
    g = np.random.default_rng(2)
    N, L, S, kd = 3, 4, 5, kdim or 8
    xs = g.standard_normal((N, L, 8) if batch_first else (L, N, 8))
    ys = g.standard_normal((N, S, kd) if batch_first else (S, N, kd))
    kpm = g.random((N, S)) > 0.6
    kpm[:, 0] = False
    am = g.random((L, S)) > 0.7
    am[:, 1] = False
    outs = []
    for lib, mod in ((real_torch, rm), (ctorch, cm)):
        x = lib.tensor(xs, dtype=lib.float32, requires_grad=True)
        y = lib.tensor(ys, dtype=lib.float32, requires_grad=True)
        mkw = {}
        if masks in ("bool", "kpm_only"):
            mkw["key_padding_mask"] = lib.tensor(kpm)
        if masks == "bool":
            mkw["attn_mask"] = lib.tensor(am)
        if masks == "float":
            mkw["attn_mask"] = lib.tensor(np.where(am, -1e9, 0.5).astype(np.float32))
            mkw["key_padding_mask"] = lib.tensor(np.where(kpm, float("-inf"), 0).astype(np.float32))
        out, w = mod(x, y, y, need_weights=need_weights, **mkw)
        loss = (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum()
        if w is not None:
            loss = loss + (w * w).sum()
        loss.backward()
        outs.append((out, w, x.grad, y.grad))
    for a, b in zip(outs[1], outs[0], strict=True):
        if b is None:
            assert a is None
        else:
            close(a, b)
    check_param_grads(rm, cm)


@pytest.mark.parametrize("average", [True, False])
def test_mha_unbatched_self_attention_weights(real_torch, average):
    real_torch.manual_seed(1)
    rm = real_torch.nn.MultiheadAttention(6, 3)
    cm = ctorch.nn.MultiheadAttention(6, 3)
    same_weights(rm, cm)
    x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
    ro, rw = rm(*(real_torch.tensor(x),) * 3, average_attn_weights=average)
    co, cw = cm(*(ctorch.tensor(x),) * 3, average_attn_weights=average)
    close(co, ro)
    close(cw, rw)
    assert tuple(cw.shape) == ((4, 4) if average else (3, 4, 4))


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fully_masked_row(real_torch, need_weights):
    """A fully padded batch element: NaN with need_weights (plain softmax), zeros without."""
    real_torch.manual_seed(2)
    rm = real_torch.nn.MultiheadAttention(4, 2, batch_first=True).eval()
    cm = ctorch.nn.MultiheadAttention(4, 2, batch_first=True).eval()
    same_weights(rm, cm)
    x = np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32)
    kpm = np.zeros((2, 3), bool)
    kpm[1] = True
    ro, _ = rm(
        *(real_torch.tensor(x),) * 3,
        key_padding_mask=real_torch.tensor(kpm),
        need_weights=need_weights,
    )
    co, _ = cm(
        *(ctorch.tensor(x),) * 3, key_padding_mask=ctorch.tensor(kpm), need_weights=need_weights
    )
    assert np.isnan(ro.detach().numpy()).any() == need_weights
    close(co, ro)


def test_mha_dropout_train_vs_eval():
    ctorch.manual_seed(0)
    m = ctorch.nn.MultiheadAttention(4, 2, dropout=0.5)
    x = ctorch.randn(3, 2, 4)
    m.eval()
    a, _ = m(x, x, x)
    b, _ = m(x, x, x)
    close(a, b, 0, 0)
    m.train()
    c_, _ = m(x, x, x)
    assert not np.allclose(a.detach().numpy(), c_.detach().numpy())


def test_mha_errors(lib):
    with pytest.raises(AssertionError):
        lib.nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError):
        lib.nn.MultiheadAttention(0, 2)
    m = lib.nn.MultiheadAttention(4, 2)
    x = lib.randn(3, 2, 4)
    with pytest.raises(RuntimeError):  # is_causal needs a mask
        m(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError):  # wrong 2-D mask shape
        m(x, x, x, attn_mask=lib.zeros(2, 3))
    with pytest.raises(AssertionError):  # wrong embedding size
        m(lib.randn(3, 2, 5), x, x)


def test_mha_parameter_layout(real_torch):
    for kw in ({}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True, "bias": False}):
        r = real_torch.nn.MultiheadAttention(4, 2, **kw)
        m = ctorch.nn.MultiheadAttention(4, 2, **kw)
        assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
            (n, tuple(p.shape)) for n, p in r.named_parameters()
        ]
        assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert m._qkv_same_embed_dim == r._qkv_same_embed_dim


# ---------------------------------------------------------------- transformer layers
LAYER_CASES = [
    # (norm_first, activation, batch_first, bias); gelu: test_transformer_model
    (False, "relu", False, True),
    (True, "callable", True, False),
]


def _act(lib, name):
    return (lambda t: lib.tanh(t) * 2.0) if name == "callable" else name


@pytest.mark.parametrize("case", LAYER_CASES, ids=lambda c: "-".join(map(str, c)))
def test_encoder_decoder_layers(real_torch, case):
    norm_first, act, batch_first, bias = case
    kw = dict(
        dim_feedforward=16,
        dropout=0.0,
        norm_first=norm_first,
        batch_first=batch_first,
        bias=bias,
        layer_norm_eps=1e-6,
    )
    real_torch.manual_seed(0)
    r_enc = real_torch.nn.TransformerEncoderLayer(8, 2, activation=_act(real_torch, act), **kw)
    r_dec = real_torch.nn.TransformerDecoderLayer(8, 2, activation=_act(real_torch, act), **kw)
    c_enc = ctorch.nn.TransformerEncoderLayer(8, 2, activation=_act(ctorch, act), **kw)
    c_dec = ctorch.nn.TransformerDecoderLayer(8, 2, activation=_act(ctorch, act), **kw)
    same_weights(r_enc, c_enc)
    same_weights(r_dec, c_dec)
    g = np.random.default_rng(5)
    N, S, T = 2, 5, 4
    src = g.standard_normal((N, S, 8) if batch_first else (S, N, 8))
    tgt = g.standard_normal((N, T, 8) if batch_first else (T, N, 8))
    kpm = np.zeros((N, S), bool)
    kpm[0, -2:] = True
    res = []
    for lib, enc, dec in ((real_torch, r_enc, r_dec), (ctorch, c_enc, c_dec)):
        s = lib.tensor(src, dtype=lib.float32, requires_grad=True)
        t = lib.tensor(tgt, dtype=lib.float32, requires_grad=True)
        tmask = lib.nn.Transformer.generate_square_subsequent_mask(T)
        mem = enc(s, src_key_padding_mask=lib.tensor(kpm))
        out = dec(
            t, mem, tgt_mask=tmask, tgt_is_causal=True, memory_key_padding_mask=lib.tensor(kpm)
        )
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()
        res.append((mem, out, s.grad, t.grad))
    for a, b in zip(res[1], res[0], strict=True):
        close(a, b)
    check_param_grads(r_enc, c_enc)
    check_param_grads(r_dec, c_dec)


def test_transformer_model(real_torch):
    kw = dict(
        d_model=8,
        nhead=2,
        num_encoder_layers=1,
        num_decoder_layers=2,
        dim_feedforward=12,
        dropout=0.1,
        batch_first=True,
        activation="gelu",
    )
    real_torch.manual_seed(0)
    rm = real_torch.nn.Transformer(**kw).eval()
    cm = ctorch.nn.Transformer(**kw).eval()
    same_weights(rm, cm)
    g = np.random.default_rng(6)
    src, tgt = g.standard_normal((2, 5, 8)), g.standard_normal((2, 3, 8))
    outs = []
    for lib, m in ((real_torch, rm), (ctorch, cm)):
        mask = m.generate_square_subsequent_mask(3)
        out = m(
            lib.tensor(src, dtype=lib.float32), lib.tensor(tgt, dtype=lib.float32), tgt_mask=mask
        )
        out.sum().backward()
        outs.append(out)
    close(outs[1], outs[0])
    check_param_grads(rm, cm)


def test_encoder_stack_clones_and_norm(real_torch):
    real_torch.manual_seed(0)
    layer_r = real_torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
    layer_c = ctorch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
    rm = real_torch.nn.TransformerEncoder(
        layer_r, 3, norm=real_torch.nn.LayerNorm(4), enable_nested_tensor=False
    )
    cm = ctorch.nn.TransformerEncoder(
        layer_c, 3, norm=ctorch.nn.LayerNorm(4), enable_nested_tensor=False
    )
    # the stack deep-copies its layer: every layer starts from the same weights
    w = [p.numpy() for p in (m.self_attn.in_proj_weight.detach() for m in cm.layers)]
    assert all(np.array_equal(w[0], x) for x in w[1:])
    assert cm.layers[0].linear1.weight is not cm.layers[1].linear1.weight
    same_weights(rm, cm)
    x = np.random.default_rng(7).standard_normal((5, 2, 4)).astype(np.float32)
    mask = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
    ro = rm(real_torch.tensor(x), mask=real_torch.tensor(mask))
    co = cm(ctorch.tensor(x), mask=ctorch.tensor(mask))
    close(co, ro)


def test_generate_square_subsequent_mask(real_torch):
    for lib_dtype in (None, "float64"):
        r = real_torch.nn.Transformer.generate_square_subsequent_mask(
            4, dtype=None if lib_dtype is None else real_torch.float64
        )
        m = ctorch.nn.Transformer.generate_square_subsequent_mask(
            4, dtype=None if lib_dtype is None else ctorch.float64
        )
        assert str(m.dtype) == str(r.dtype)
        close(m, r, 0, 0)


def test_transformer_errors(lib):
    with pytest.raises(RuntimeError):
        lib.nn.TransformerEncoderLayer(4, 2, activation="tanh")
    m = lib.nn.Transformer(4, 2, 1, 1, 8, dropout=0.0, batch_first=True)
    with pytest.raises(RuntimeError):
        m(lib.randn(2, 3, 4), lib.randn(1, 3, 4))
    with pytest.raises(RuntimeError):
        m(lib.randn(2, 3, 5), lib.randn(2, 3, 5))


def test_state_dict_compat_to_torch(real_torch):
    """compat's initialised weights load into real PyTorch and give the same outputs."""
    ctorch.manual_seed(0)
    cm = ctorch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).eval()
    rm = real_torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True).eval()
    rm.load_state_dict({k: real_torch.from_numpy(v.numpy()) for k, v in cm.state_dict().items()})
    x = np.random.default_rng(8).standard_normal((2, 3, 4)).astype(np.float32)
    with real_torch.no_grad():
        ro = rm(real_torch.tensor(x))
    close(cm(ctorch.tensor(x)), ro)
