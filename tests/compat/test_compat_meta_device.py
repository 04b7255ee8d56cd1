"""The ``meta`` device: tensors with a shape and a dtype and no values, as PyTorch 2.13's.

Factories, ``*_like``, ``.to('meta')``, layers built with ``device='meta'`` or inside
``with torch.device('meta')``, ops on meta tensors (their shapes and dtypes come from
funcgrad's abstract evaluation of the op's program), ``Module.to_empty`` then
``load_state_dict``/``reset_parameters``; the refusals (no data) and the mixing of devices
in PyTorch's words. Every check runs the same code on compat and on PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compat.torch as ctorch
from funcgrad.core.tiers import eager_tier

OPS = [
    "x + 1",
    "x * y",
    "x - y.sum(0)",
    "x @ x.T",
    "(x @ x.T).exp()",
    "x.sum(1)",
    "x.mean()",
    "x.amax(0, keepdim=True)",
    "x.reshape(2, 6)",
    "x.view(-1)",
    "x.T",
    "x[0]",
    "x[:, 1:3]",
    "x.transpose(0, 1).contiguous()",
    "x.unsqueeze(0).expand(2, 3, 4)",
    "x > 0",
    "(x > 0).sum()",
    "x.to(T.float64) * 2",
    "x.int() + 1",
    "T.cat([x, y])",
    "T.stack([x, y], 1)",
    "T.where(x > 0, x, y)",
    "T.softmax(x, 1)",
    "T.nn.functional.relu(x)",
    "T.nn.functional.linear(x, T.ones(5, 4, device='meta'))",
    "T.zeros_like(x)",
    "T.empty_like(x, dtype=T.int32)",
    "T.ones(2, device='meta', dtype=T.bool)",
    "T.full((2,), 3, device='meta')",
    "T.arange(5, device='meta')",
    "T.ones(3).to('meta')",
    "T.tensor([1.0, 2.0], device='meta')",
    "T.empty(0, device='meta')",
    "T.zeros((), device='meta')",
]


def _run(lib, expr: str):
    x = lib.randn(3, 4, device="meta")
    y = lib.rand(3, 4, device="meta")
    return eval(expr, {"T": lib, "x": x, "y": y})


def _describe(t) -> tuple:
    return (tuple(t.shape), str(t.dtype), str(t.device), t.is_meta, repr(t))


@pytest.mark.parametrize("expr", OPS)
def test_meta_results_as_pytorch(real_torch, expr):
    assert _describe(_run(ctorch, expr)) == _describe(_run(real_torch, expr))


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.lists(st.integers(0, 5), min_size=0, max_size=3),
    dtype=st.sampled_from(["float32", "float64", "int64", "int32", "bool", "complex64"]),
    op=st.sampled_from(["t.sum(0)", "t * 2", "t.flatten()", "t.unsqueeze(0)", "t + t"]),
)
def test_meta_shapes_dtypes_hypothesis(real_torch, shape, dtype, op):
    if not shape and op == "t.sum(0)":
        shape = [1]
    outs = []
    for lib in (ctorch, real_torch):
        t = lib.empty(tuple(shape), dtype=getattr(lib, dtype), device="meta")
        outs.append(_describe(eval(op, {"t": t})))
    assert outs[0] == outs[1]


def _error(fn):
    try:
        fn()
    except Exception as e:  # (the oracle decides which error is right)
        return type(e).__name__, str(e)
    return None


REFUSALS = [
    "x.item()",
    "s.item()",
    "float(s)",
    "int(s)",
    "bool(s)",
    "x.numpy()",
    "w.numpy()",
    "x.tolist()",
    "x.cpu()",
    "x.to('cpu')",
    "x + T.ones(3, 4)",
    "T.ones(3, 4) + x",
    "x * T.ones(4)",
]


@pytest.mark.parametrize("expr", REFUSALS)
def test_meta_refusals_word_for_word(real_torch, expr):
    errors = []
    for lib in (ctorch, real_torch):
        env = {
            "T": lib,
            "x": lib.randn(3, 4, device="meta"),
            "s": lib.zeros((), device="meta"),
            "w": lib.zeros(2, device="meta", requires_grad=True),
        }
        errors.append(_error(lambda env=env: eval(expr, env)))
    assert errors[0] is not None
    assert errors[0] == errors[1]


def test_a_zero_dim_cpu_tensor_mixes_with_meta(real_torch):
    for lib in (ctorch, real_torch):
        out = lib.randn(3, device="meta") + lib.tensor(2.0)
        assert out.is_meta and tuple(out.shape) == (3,)


def test_meta_factories_draw_nothing(real_torch):
    for lib in (ctorch, real_torch):
        lib.manual_seed(5)
        expected = lib.rand(4).numpy()
        lib.manual_seed(5)
        lib.randn(100, device="meta")
        lib.rand(3, 3, device="meta")
        with lib.device("meta"):
            lib.nn.Linear(10, 20)  # reset_parameters on meta: no draws either
        lib.empty(4, device="meta").uniform_().normal_()
        np.testing.assert_array_equal(lib.rand(4).numpy(), expected)


def _net(lib, **kw):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv1d(2, 3, 3, **kw),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(12, 5, **kw),
        nn.LayerNorm(5, **kw),
        nn.Linear(5, 2, bias=False, **kw),
    )


def _state(lib, m) -> list:
    return [(k, tuple(v.shape), str(v.dtype), str(v.device)) for k, v in m.state_dict().items()]


@pytest.mark.parametrize("how", ["argument", "block"])
def test_layers_on_meta(real_torch, how):
    states = []
    for lib in (ctorch, real_torch):
        if how == "argument":
            m = _net(lib, device="meta")
        else:
            with lib.device("meta"):
                m = _net(lib)
        out = m(lib.randn(7, 2, 6, device="meta"))
        states.append((_state(lib, m), _describe(out), _describe(out.sum())))
    assert states[0] == states[1]
    assert all(d == "meta" for *_, d in states[0][0])


def test_batchnorm_buffers_and_embedding_on_meta(real_torch):
    outs = []
    for lib in (ctorch, real_torch):
        bn = lib.nn.BatchNorm1d(4, device="meta")
        emb = lib.nn.Embedding(10, 3, device="meta")
        idx = lib.tensor([1, 2], device="meta")
        outs.append((_state(lib, bn), _state(lib, emb), _describe(emb(idx))))
    assert outs[0] == outs[1]


def test_to_empty_then_load_state_dict_gives_the_same_model(real_torch):
    real_torch.manual_seed(0)
    src = _net(real_torch)
    sd = {k: ctorch.tensor(v.detach().numpy()) for k, v in src.state_dict().items()}
    x = np.random.default_rng(0).standard_normal((4, 2, 6)).astype(np.float32)
    results = []
    for lib, state in ((ctorch, sd), (real_torch, src.state_dict())):
        m = _net(lib, device="meta")
        assert m.to_empty(device="cpu") is m
        assert all(p.device.type == "cpu" for p in m.parameters())
        m.load_state_dict(state)
        results.append(m(lib.tensor(x)).detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


def test_to_empty_then_reset_parameters_draws_as_pytorch(real_torch):
    weights = []
    for lib in (ctorch, real_torch):
        m = lib.nn.Linear(6, 3, device="meta")
        m.to_empty(device="cpu")
        lib.manual_seed(3)
        m.reset_parameters()
        weights.append((m.weight.detach().numpy(), m.bias.detach().numpy()))
    for a, b in zip(weights[0], weights[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_module_to_meta_and_parameters_stay_parameters(real_torch):
    for lib in (ctorch, real_torch):
        m = lib.nn.Linear(3, 2)
        m.to("meta")
        assert isinstance(m.weight, lib.nn.Parameter) and m.weight.is_meta
        assert m.weight.requires_grad
        assert repr(m.weight) == (
            "Parameter containing:\ntensor(..., device='meta', size=(2, 3), requires_grad=True)"
        )


def test_autograd_on_meta(real_torch):
    outs = []
    for lib in (ctorch, real_torch):
        w = lib.zeros(2, 3, device="meta", requires_grad=True)
        b = lib.zeros(3, device="meta", requires_grad=True)
        loss = ((w * 2 + b).exp() @ lib.ones(3, 4, device="meta")).sum()
        loss.backward()
        outs.append((_describe(loss), _describe(w.grad), _describe(b.grad)))
    assert outs[0] == outs[1]


def test_matrix_products_mix_meta_and_cpu(real_torch):
    # PyTorch's matrix products check no device (a meta weight times a CPU input, as in
    # its test_module_to_empty); compat's result is meta (PyTorch's is on the first
    # operand's device with unspecified values, so only shapes and dtypes are compared)
    exprs = ["c @ m", "m @ c", "T.mm(c, m)", "T.bmm(c[None], m[None])", "T.addmm(c, c, m)"]
    exprs += ["T.einsum('ij,jk->ik', c, m)", "T.nn.functional.embedding(T.tensor([0, 1]), m)"]
    for expr in exprs:
        shapes = []
        for lib in (ctorch, real_torch):
            env = {"T": lib, "m": lib.ones(3, 3, device="meta"), "c": lib.ones(3, 3)}
            out = eval(expr, env)
            shapes.append((tuple(out.shape), str(out.dtype)))
        assert shapes[0] == shapes[1], expr
        assert eval(
            expr, {"T": ctorch, "m": ctorch.ones(3, 3, device="meta"), "c": ctorch.ones(3, 3)}
        ).is_meta


def test_to_empty_non_recursive(real_torch):
    seen = []
    for lib in (ctorch, real_torch):
        with lib.device("meta"):
            m = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.BatchNorm1d(5))
            m.register_buffer("own", lib.zeros(2))
        m.to_empty(device="cpu", recurse=False)
        seen.append([(n, t.device.type) for n, t in m.state_dict().items()])
    assert seen[0] == seen[1]
    assert ("own", "cpu") in seen[0] and ("0.weight", "meta") in seen[0]


def test_load_state_dict_assign_into_meta_and_the_no_op_warning(real_torch):
    outs = []
    for lib in (ctorch, real_torch):
        lib.manual_seed(0)
        src = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.BatchNorm1d(5))
        with lib.device("meta"):
            m = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.BatchNorm1d(5))
        with pytest.warns(UserWarning) as rec:
            m.load_state_dict(src.state_dict())  # a copy into meta: nothing, and a warning
        words = sorted(str(w.message) for w in rec)
        still_meta = [t.device.type for t in m.state_dict().values()]
        m.load_state_dict(src.state_dict(), assign=True)
        assert m[0].weight is not src[0].weight and not m[0].weight.is_meta
        assert isinstance(m[0].weight, lib.nn.Parameter)
        x = lib.ones(4, 3)
        same = bool((m(x) == src(x)).all())
        bn = lib.nn.BatchNorm1d(3, device="meta")
        bn.load_state_dict({}, strict=False, assign=True)
        count = bn.state_dict()["num_batches_tracked"]
        outs.append((words, still_meta, same, count.device.type, int(count)))
    assert outs[0] == outs[1]


HUGE = [
    "T.empty(2 ** 20, 2 ** 20, device='meta') + T.empty(2 ** 20, device='meta')",
    "T.zeros(2 ** 40, device='meta')",
    "T.ones(2 ** 30, 2 ** 10, device='meta', dtype=T.int64)",
    "T.full((2 ** 40,), 3.0, device='meta')",
    "T.randn(2 ** 40, device='meta')",
    "T.zeros_like(T.empty(2 ** 40, device='meta'))",
    "T.full_like(T.empty(2 ** 40, device='meta'), 2)",
    "T.empty(2 ** 40, device='meta').new_zeros(2 ** 41)",
]


@pytest.mark.parametrize("expr", HUGE)
def test_meta_factories_make_no_values(real_torch, expr):
    # sizes no host could hold: a factory bound for meta must not build its fill first
    outs = [_describe(eval(expr, {"T": lib})) for lib in (ctorch, real_torch)]
    assert outs[0] == outs[1]


def test_meta_factories_under_the_default_device_make_no_values(real_torch):
    outs = []
    for lib in (ctorch, real_torch):
        with lib.device("meta"):
            outs.append([_describe(lib.zeros(2**40)), _describe(lib.full((2**40,), 1))])
    assert outs[0] == outs[1]


def test_format_of_a_0d_meta_tensor_is_its_repr(real_torch):
    for lib in (ctorch, real_torch):
        x = lib.empty((), device="meta")
        assert format(x) == repr(x) == "tensor(..., device='meta', size=())"


@pytest.mark.parametrize("tier", ["compiled", "host"])
def test_meta_on_each_tier_and_under_torch_compile(real_torch, tier):
    outs = []
    f = ctorch.compile(lambda a, w: (a @ w).exp().sum())
    for lib in (ctorch, real_torch):
        seen = []
        for _ in range(3):  # (repeated: the tiers switch programs after first calls)
            with eager_tier(tier):
                x = lib.randn(3, 4, device="meta")
                w = lib.zeros(4, 2, device="meta", requires_grad=True)
                y = (x @ w).exp().sum()
                y.backward()
                seen += [_describe(y), _describe(w.grad), _describe(x * 0.5)]
            if lib is ctorch:  # (PyTorch's own compile needs a compiler toolchain)
                seen.append(_describe(f(x, w)))
            else:
                seen.append(_describe((x @ w).exp().sum()))
        outs.append(seen)
    assert outs[0] == outs[1]
