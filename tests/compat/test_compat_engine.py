"""The engine: compiled-backward cache, batched programs, deep graphs, hooks, higher order,
grad mode, graph introspection."""

from __future__ import annotations

import threading
import time
import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch
from compat._core import assemble, engine
from funcgrad.core import compile_cache


@pytest.fixture
def fresh_cache(monkeypatch):
    engine.clear_cache()
    monkeypatch.setattr(engine.policy, "assemble", "auto")
    yield
    engine.clear_cache()


def _mlp_step(t, params, x):
    w1, b1, w2 = params
    h = t.tanh(x @ w1 + b1)
    return ((h @ w2) ** 2).mean()


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return [
        ctorch.tensor(rng.standard_normal((4, 8)), dtype=ctorch.float32, requires_grad=True),
        ctorch.tensor(rng.standard_normal(8), dtype=ctorch.float32, requires_grad=True),
        ctorch.tensor(rng.standard_normal((8, 2)), dtype=ctorch.float32, requires_grad=True),
    ]


# --------------------------------------------------------------------------- compiled cache


def test_structure_seen_again_compiles_and_is_reused(fresh_cache):
    params = _params()
    x = ctorch.randn(5, 4)
    before = dict(engine.stats)
    after = compile_cache.POLICY.compile_after  # the sighting that compiles
    for _ in range(after + 2):
        _mlp_step(ctorch, params, x).backward()
    assert engine.stats["interpreted_runs"] - before["interpreted_runs"] == after - 1
    assert engine.stats["compiles"] - before["compiles"] == 1
    assert engine.stats["compiled_runs"] - before["compiled_runs"] == 3


def test_cached_and_uncached_gradients_are_identical(fresh_cache, monkeypatch):
    x = ctorch.randn(5, 4)
    grads = {}
    for policy in ("never", "always"):
        monkeypatch.setattr(engine.policy, "assemble", policy)
        engine.clear_cache()
        params = _params()
        for _ in range(3):
            _mlp_step(ctorch, params, x).backward()
        grads[policy] = [npv(p.grad) for p in params]
    for a, b in zip(grads["never"], grads["always"]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_change_of_shape_recompiles(fresh_cache, monkeypatch):
    monkeypatch.setattr(engine.policy, "assemble", "always")
    params = _params()
    n0 = engine.stats["compiles"]
    _mlp_step(ctorch, params, ctorch.randn(5, 4)).backward()
    _mlp_step(ctorch, params, ctorch.randn(5, 4)).backward()
    assert engine.stats["compiles"] - n0 == 1
    _mlp_step(ctorch, params, ctorch.randn(3, 4)).backward()
    assert engine.stats["compiles"] - n0 == 2


def test_change_of_structure_recompiles(fresh_cache, monkeypatch):
    monkeypatch.setattr(engine.policy, "assemble", "always")
    x = ctorch.randn(3, requires_grad=True)
    n0 = engine.stats["compiles"]
    (x.sin() * 2).sum().backward()
    (x.cos() * 2).sum().backward()
    assert engine.stats["compiles"] - n0 == 2
    np.testing.assert_allclose(npv(x.grad), 2 * np.cos(npv(x)) - 2 * np.sin(npv(x)), rtol=1e-6)


def test_cache_is_bounded(fresh_cache, monkeypatch):
    monkeypatch.setattr(engine.policy, "assemble", "always")
    monkeypatch.setattr(engine.policy, "cache_size", 3)
    for n in range(1, 6):
        x = ctorch.randn(n, requires_grad=True)
        (x * x).sum().backward()
    assert len(assemble._compiled) == 3


def test_compiled_path_checks_freed_graph_and_versions(fresh_cache, monkeypatch):
    monkeypatch.setattr(engine.policy, "assemble", "always")
    x = ctorch.randn(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()
    a = x * 1
    b = a.exp()
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_leaf_hooks_run_on_the_compiled_path(fresh_cache, monkeypatch):
    monkeypatch.setattr(engine.policy, "assemble", "always")
    x = ctorch.ones(2, requires_grad=True)
    seen = []
    x.register_hook(lambda g: g * 10)
    x.register_post_accumulate_grad_hook(lambda t: seen.append(npv(t.grad).tolist()))
    (x * 3).sum().backward()
    assert npv(x.grad).tolist() == [30.0, 30.0] and seen == [[30.0, 30.0]]


# --------------------------------------------------------------------------- is_grads_batched


def test_batched_program_has_no_per_example_loop(fresh_cache):
    w = ctorch.randn(6, 6)
    x = ctorch.randn(6, requires_grad=True)
    counts = []
    for batch in (2, 6, 11):
        y = ctorch.tanh(w @ x) * x
        torch_eye = ctorch.randn(batch, 6)
        ctorch.autograd.grad(y, x, torch_eye, is_grads_batched=True)
        prog = assemble.last_backward_program
        counts.append(len(prog.eqns))
        assert prog.outvars[0].aval.shape == (batch, 6)
    assert counts[0] == counts[1] == counts[2]


def test_batched_jacobian_matches_pytorch(real_torch):
    rng = np.random.default_rng(0)
    w0, x0 = rng.standard_normal((5, 5)), rng.standard_normal(5)
    jacs = []
    for lib in (ctorch, real_torch):
        w = lib.tensor(w0)
        x = lib.tensor(x0, requires_grad=True)
        y = lib.sigmoid(w @ x).log_softmax(0) * x
        (j,) = lib.autograd.grad(y, x, lib.eye(5, dtype=lib.float64), is_grads_batched=True)
        jacs.append(npv(j))
    np.testing.assert_allclose(jacs[0], jacs[1], rtol=1e-10)


def test_batched_compiled_matches_eager(fresh_cache):
    x = ctorch.randn(4, requires_grad=True, dtype=ctorch.float64)
    outs = []
    for _ in range(3):  # eager assembled program, then compiled twice
        y = (x.sin() * x).exp()
        (j,) = ctorch.autograd.grad(
            y, x, ctorch.eye(4, dtype=ctorch.float64), is_grads_batched=True
        )
        outs.append(npv(j))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12)
    np.testing.assert_allclose(outs[1], outs[2], rtol=0)


def test_batched_with_create_graph(lib):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    y = x**3
    (j,) = lib.autograd.grad(
        y, x, lib.eye(2, dtype=lib.float64), is_grads_batched=True, create_graph=True
    )
    (h,) = lib.autograd.grad(j.sum(), x)
    np.testing.assert_allclose(npv(h), 6 * np.array([1.0, 2.0]))


# --------------------------------------------------------------------------- deep graphs


def test_hundred_thousand_node_chain_no_recursion_error():
    x = ctorch.tensor(1.0, dtype=ctorch.float64, requires_grad=True)
    y = x
    start = time.perf_counter()
    for _ in range(50_000):
        y = y * 1.0001 + 0.0  # two nodes per step
    y.backward()
    elapsed = time.perf_counter() - start
    np.testing.assert_allclose(x.grad.item(), 1.0001**50_000, rtol=1e-9)
    assert elapsed < 120


def test_deep_graph_is_freed_after_backward():
    import gc
    import weakref

    x = ctorch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(2000):
        y = y.sin()
    first = weakref.ref(y.grad_fn)
    y.backward()
    assert first()._res is None
    del y
    gc.collect()
    assert first() is None


# --------------------------------------------------------------------------- hooks vs PyTorch


def test_tensor_hooks_and_retain_grad_match_pytorch(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    order = []
    a = x * 2
    a.register_hook(lambda g: order.append(("a", npv(g).tolist())) or g * 10)
    a.retain_grad()
    b = a.sin()
    b.register_hook(lambda g: order.append(("b", npv(g).tolist())))
    x.register_hook(lambda g: order.append(("x", npv(g).round(4).tolist())))
    b.sum().backward()
    xv = np.array([1.0, 2.0])
    np.testing.assert_allclose(npv(x.grad), 10 * np.cos(2 * xv) * 2, rtol=1e-5)
    # retain_grad sees the value after the tensor's own hooks
    np.testing.assert_allclose(npv(a.grad), 10 * np.cos(2 * xv), rtol=1e-5)
    assert [o[0] for o in order] == ["b", "a", "x"]


def test_hook_handle_remove(lib):
    x = lib.tensor([1.0], requires_grad=True)
    h = x.register_hook(lambda g: g * 0)
    h.remove()
    (x * 2).sum().backward()
    assert npv(x.grad).tolist() == [2.0]


def test_hooks_on_leaf_run_in_grad_and_change_the_result(lib):
    x = lib.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: g + 100)
    (g,) = lib.autograd.grad((x * 2).sum(), x)
    assert npv(g).tolist() == [102.0]


def test_retain_grad_in_autograd_grad(lib):
    x = lib.tensor([1.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    lib.autograd.grad((h * h).sum(), x)
    assert npv(h.grad).tolist() == [6.0]


def test_node_hooks(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = {}
    y.grad_fn.register_prehook(lambda gout: seen.update(pre=npv(gout[0]).tolist()))
    y.grad_fn.register_hook(lambda gin, gout: seen.update(post=npv(gin[0]).tolist()))
    y.sum().backward()
    assert seen == {"pre": [1.0, 1.0], "post": [3.0, 3.0]}


def test_post_accumulate_grad_hook(lib):
    x = lib.tensor([1.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(npv(t.grad).tolist()))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert seen == [[2.0], [4.0]]


# --------------------------------------------------------------------------- higher order


def test_hessian_vector_product_matches_pytorch(real_torch):
    rng = np.random.default_rng(2)
    a0, v0 = rng.standard_normal(4), rng.standard_normal(4)
    res = []
    for lib in (ctorch, real_torch):
        x = lib.tensor(a0, requires_grad=True)
        v = lib.tensor(v0)
        y = (lib.tanh(x) * x.exp()).sum() + (x.softmax(0) * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (hv,) = lib.autograd.grad(g, x, grad_outputs=v, create_graph=True)
        (third,) = lib.autograd.grad(hv.sum(), x)
        res.append((npv(g), npv(hv), npv(third)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_grad_of_grad_through_backward_create_graph(lib):
    x = lib.tensor([0.5], dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib.sin(x).sum().backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(npv(x.grad), [-np.sin(0.5)])


def test_double_backward_leaves_grad_of_unused_parameter_none(lib):
    # the first-order gradient wrt x does not depend on the bias: a backward through it
    # must not touch bias.grad (PyTorch leaves it None), while weight and x get gradients
    lib.manual_seed(0)
    x = lib.ones(3, 4, dtype=lib.float64, requires_grad=True)
    lin = lib.nn.Linear(4, 2).double()
    (g,) = lib.autograd.grad(lin(x * x).sum(), x, create_graph=True)
    g.sum().backward()
    assert lin.bias.grad is None
    assert lin.weight.grad is not None and x.grad is not None
    np.testing.assert_allclose(npv(lin.weight.grad), np.full((2, 4), 6.0))


def test_grad_outputs_requiring_grad_are_differentiable(lib):
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    v = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    (g,) = lib.autograd.grad(x * x, x, grad_outputs=v, create_graph=True)
    (dv,) = lib.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(npv(dv), [2.0, 4.0])


# --------------------------------------------------------------------------- grad mode


def test_grad_mode_context_managers_and_decorators(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        assert not (x * 2).requires_grad
        with lib.enable_grad():
            assert (x * 2).requires_grad

    @lib.no_grad()
    def f():
        return x * 2

    assert not f().requires_grad
    lib.set_grad_enabled(False)
    try:
        assert not lib.is_grad_enabled()
    finally:
        lib.set_grad_enabled(True)
    with lib.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert lib.is_grad_enabled()

    @lib.set_grad_enabled(False)
    def g():
        return x * 2

    assert lib.is_grad_enabled() and not g().requires_grad


def test_grad_mode_is_per_thread():
    seen = []
    with ctorch.no_grad():
        t = threading.Thread(target=lambda: seen.append(ctorch.is_grad_enabled()))
        t.start()
        t.join()
        assert not ctorch.is_grad_enabled()
    assert seen == [True]


# --------------------------------------------------------------------------- graph introspection


def test_grad_fn_names_and_next_functions(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    assert y.grad_fn.name() == "MulBackward0"
    (acc, nr), (none, _) = y.grad_fn.next_functions
    assert nr == 0 and none is None and acc.variable is x
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert (y.sum()).grad_fn.next_functions[0][0] is y.grad_fn
    assert x.is_leaf and not y.is_leaf and x.grad_fn is None


def _edges_of(fn, depth=4):
    """``next_functions`` down to ``depth``: (name, output_nr, children) per edge."""
    if fn is None or depth == 0:
        return None
    return [
        (None if f is None else f.name(), nr, _edges_of(f, depth - 1))
        for f, nr in fn.next_functions
    ]


def test_edges_of_outputs_other_than_the_first_match_torch(real_torch, fresh_cache):
    # a node holds an edge to output 0 as the node itself and to output k > 0 as the pair
    # (graph.edge_key): what PyTorch shows, the gradients, twice (the assembled backward
    # from the second sighting), and the second derivative must not see the difference
    data = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [2.0, 1.0, -3.0]], np.float32)
    results = {}
    for t in (ctorch, real_torch):
        x = t.tensor(data, requires_grad=True)
        c = t.tensor(data[0])  # needs no gradient: a ``None`` edge
        got = []
        for _ in range(3):
            x.grad = None
            a, b, d = x.unbind(0)
            lo, hi = (x * c).split([1, 2], dim=1)
            y = (b * 2 + d * a).sum() + (hi * hi).sum() + (lo * c[:1]).sum()
            if not got:
                got.append(_edges_of(y.grad_fn, 6))
            y.backward(retain_graph=True)
            (gx,) = t.autograd.grad(y, x, create_graph=True)
            (ggx,) = t.autograd.grad((gx * gx).sum(), x)
            got.append((x.grad.detach().numpy().copy(), ggx.detach().numpy().copy()))
        results[t] = got
    want, mine = results[real_torch], results[ctorch]
    assert mine[0] == want[0]
    for (g, gg), (wg, wgg) in zip(mine[1:], want[1:]):
        np.testing.assert_allclose(g, wg, rtol=1e-6)
        np.testing.assert_allclose(gg, wgg, rtol=1e-6)


def test_gradient_edge_in_grad_and_backward(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = (h * h).sum()
    edge = lib.autograd.graph.get_gradient_edge(h)
    assert edge.node is h.grad_fn and edge.output_nr == 0
    (g,) = lib.autograd.grad(y, edge, retain_graph=True)
    (g2,) = lib.autograd.grad(y, h)
    np.testing.assert_allclose(npv(g), npv(g2))


def test_inputs_dict_in_grad(lib):
    x = lib.tensor([1.0], requires_grad=True)
    out = lib.autograd.grad((x * 5).sum(), {"x": x})
    assert list(out) == ["x"] and npv(out["x"]).tolist() == [5.0]


def test_detach_shares_storage_and_version(lib):
    x = lib.ones(2, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.zero_()
    assert npv(x).tolist() == [0.0, 0.0]
    assert x._version == d._version == 1


def test_detach_in_place(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    y.detach_()
    assert y.is_leaf and not y.requires_grad


@pytest.mark.parametrize("policy", ["auto", "never", "always"])
def test_mixed_graph_all_paths_match_pytorch(policy, real_torch, monkeypatch, fresh_cache):
    """Multiple roots, a multi-output op with an unused output, a captured non-leaf input
    and leaves, three times (interpreted, then compiled and cached)."""
    monkeypatch.setattr(engine.policy, "assemble", policy)
    rng = np.random.default_rng(5)
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal(4)

    def scenario(lib):
        a = lib.tensor(a0, requires_grad=True)
        b = lib.tensor(b0, requires_grad=True)
        h = lib.tanh(a * b)
        p, _q = h.split([1, 2], dim=0)  # second output unused
        m = h.max(dim=1)[0]
        r1 = (p.exp() * 2).sum()
        r2 = (m * m).sum() + b.sum()
        gh, gb = lib.autograd.grad([r1, r2], [h, b], retain_graph=True)
        lib.autograd.backward([r1, r2])
        return [npv(gh), npv(gb), npv(a.grad), npv(b.grad)]

    expected = scenario(real_torch)
    for _ in range(3):
        got = scenario(ctorch)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_batched_grad_through_a_create_graph_graph(lib):
    """``is_grads_batched`` over a graph recorded by ``create_graph=True`` (the Jacobian of
    a gradient): the assembled program is traced unbatched and vectorised afterwards."""
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    y = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
    loss = (lib.sin(x) * y).sum() + (x**3).sum()
    gy = lib.autograd.grad(loss, y, create_graph=True)[0]
    eye = lib.eye(3, dtype=lib.float64)
    for _ in range(2):  # first sighting runs node by node, the second assembled
        (jac,) = lib.autograd.grad(
            gy, x, grad_outputs=eye, is_grads_batched=True, retain_graph=True
        )
        np.testing.assert_allclose(
            jac.detach().numpy(), np.diag(np.cos([1.0, 2.0, 3.0])), atol=1e-12
        )
