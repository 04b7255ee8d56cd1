"""funcgrad.optim: update sequences vs hand-written NumPy formulas (always) and optax (if installed)."""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import optim

STEPS = 6


def _params(dtype=np.float32):
    rng = np.random.default_rng(0)
    return {
        "w": rng.normal(size=(3, 4)).astype(dtype),
        "b": rng.normal(size=(4,)).astype(dtype),
    }


def _grads(params, steps=STEPS, seed=1, scale=1.0):
    rng = np.random.default_rng(seed)
    return [
        {k: (scale * rng.normal(size=v.shape)).astype(v.dtype) for k, v in params.items()}
        for _ in range(steps)
    ]


def _run(opt, params, grads, jit=False):
    """Apply ``opt`` for every gradient in ``grads``; returns the list of parameter trees."""
    update = fg.jit(opt.update) if jit else opt.update
    state = opt.init(params)
    out = []
    for g in grads:
        upd, state = update(g, state, params)
        params = optim.apply_updates(params, upd)
        out.append(params)
    return out, state


def _assert_trees_close(got, want, rtol=1e-5, atol=1e-6):
    for g, w in zip(got, want):
        assert jax.tree_util.tree_structure(g) == jax.tree_util.tree_structure(w)
        for a, b in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(w)):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- NumPy references


def _np_run(step_fn, params, grads):
    """Run a per-leaf reference ``step_fn(p, g, state, t) -> (p, state)`` over all steps."""
    out = []
    state: dict = {k: {} for k in params}
    p = {k: np.asarray(v, np.float64) for k, v in params.items()}
    for t, g in enumerate(grads, start=1):
        p = dict(p)
        for k in p:
            p[k], state[k] = step_fn(p[k], np.asarray(g[k], np.float64), state[k], t)
        out.append({k: v.astype(params[k].dtype) for k, v in p.items()})
    return out


def _np_sgd(lr, momentum=None, nesterov=False, lr_fn=None):
    def step(p, g, s, t):
        rate = lr_fn(t - 1) if lr_fn else lr
        if momentum is None:
            return p - rate * g, s
        buf = g + momentum * s.get("buf", 0.0)
        d = g + momentum * buf if nesterov else buf
        return p - rate * d, {"buf": buf}

    return step


def _np_adam(lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, lr_fn=None):
    def step(p, g, s, t):
        m = (1 - b1) * g + b1 * s.get("m", 0.0)
        v = (1 - b2) * g * g + b2 * s.get("v", 0.0)
        m_hat = m / (1 - b1**t)
        v_hat = v / (1 - b2**t)
        rate = lr_fn(t - 1) if lr_fn else lr
        return p - rate * (m_hat / (np.sqrt(v_hat) + eps) + wd * p), {"m": m, "v": v}

    return step


def _np_cosine(init, steps, alpha=0.0):
    return lambda t: (
        init * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * min(t, steps) / steps)) + alpha)
    )


def _np_warmup_cosine(init, peak, warmup, steps, end=0.0):
    def f(t):
        if t < warmup:
            return init + (peak - init) * t / warmup
        return _np_cosine(peak, steps - warmup, end / peak)(t - warmup)

    return f


def _np_linear(init, end, steps, begin=0):
    return lambda t: init + (end - init) * min(max(t - begin, 0), steps) / steps


CASES = {
    "sgd": (lambda: optim.sgd(0.1), lambda: _np_sgd(0.1)),
    "momentum": (lambda: optim.sgd(0.1, momentum=0.9), lambda: _np_sgd(0.1, 0.9)),
    "nesterov": (lambda: optim.sgd(0.1, 0.9, nesterov=True), lambda: _np_sgd(0.1, 0.9, True)),
    "momentum_alias": (lambda: optim.momentum(0.05, 0.8), lambda: _np_sgd(0.05, 0.8)),
    "adam": (lambda: optim.adam(0.01), lambda: _np_adam(0.01)),
    "adam_b": (
        lambda: optim.adam(0.02, b1=0.5, b2=0.9, eps=1e-3),
        lambda: _np_adam(0.02, 0.5, 0.9, 1e-3),
    ),
    "adamw": (
        lambda: optim.adamw(0.01, weight_decay=0.1),
        lambda: _np_adam(0.01, wd=0.1),
    ),
    "adamw_default_wd": (lambda: optim.adamw(0.01), lambda: _np_adam(0.01, wd=1e-4)),
    "sgd_cosine": (
        lambda: optim.sgd(optim.cosine_decay_schedule(0.1, 4, alpha=0.1)),
        lambda: _np_sgd(None, lr_fn=_np_cosine(0.1, 4, 0.1)),
    ),
    "adam_warmup_cosine": (
        lambda: optim.adam(optim.warmup_cosine_decay_schedule(0.0, 0.05, 2, 5, 0.005)),
        lambda: _np_adam(None, lr_fn=_np_warmup_cosine(0.0, 0.05, 2, 5, 0.005)),
    ),
    "momentum_linear": (
        lambda: optim.sgd(optim.linear_schedule(0.1, 0.01, 3, 1), momentum=0.9),
        lambda: _np_sgd(None, 0.9, lr_fn=_np_linear(0.1, 0.01, 3, 1)),
    ),
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy_formulas(name, jit):
    make, make_ref = CASES[name]
    params = _params()
    grads = _grads(params)
    got, _ = _run(make(), params, grads, jit=jit)
    want = _np_run(make_ref(), params, grads)
    _assert_trees_close(got, want, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", ["adam", "nesterov", "adamw"])
def test_float64_params(name):
    make, make_ref = CASES[name]
    params = _params(np.float64)
    grads = _grads(params)
    got, state = _run(make(), params, grads, jit=True)
    want = _np_run(make_ref(), params, grads)
    _assert_trees_close(got, want, rtol=1e-10, atol=1e-12)
    for leaf in jax.tree_util.tree_leaves(state):
        assert np.asarray(leaf).dtype in (np.float64, np.int32)


def test_clip_by_global_norm_formula():
    params = _params()
    big = _grads(params, 1, scale=10.0)[0]
    small = _grads(params, 1, scale=0.01)[0]
    clip = optim.clip_by_global_norm(1.0)
    state = clip.init(params)
    for g, jit in [(big, False), (big, True), (small, False), (small, True)]:
        upd = fg.jit(clip.update) if jit else clip.update
        out, _ = upd(g, state)
        norm = math.sqrt(sum(float(np.sum(np.square(v, dtype=np.float64))) for v in g.values()))
        factor = 1.0 if norm < 1.0 else 1.0 / norm
        for k in g:
            np.testing.assert_allclose(np.asarray(out[k]), g[k] * factor, rtol=1e-5, atol=1e-7)
    clipped = clip.update(big, state)[0]
    np.testing.assert_allclose(float(optim.global_norm(clipped)), 1.0, rtol=1e-5)


def test_chain_clip_then_adam_matches_manual():
    params = _params()
    grads = _grads(params, scale=5.0)
    opt = optim.chain(optim.clip_by_global_norm(2.0), optim.adam(0.01))
    got, state = _run(opt, params, grads, jit=True)
    clipped = []
    for g in grads:
        norm = math.sqrt(sum(float(np.sum(np.square(v, dtype=np.float64))) for v in g.values()))
        f = 1.0 if norm < 2.0 else 2.0 / norm
        clipped.append({k: (v * f).astype(v.dtype) for k, v in g.items()})
    want = _np_run(_np_adam(0.01), params, clipped)
    _assert_trees_close(got, want, rtol=2e-5, atol=2e-6)
    assert isinstance(state, tuple) and len(state) == 2


def test_states_are_namedtuples_with_int32_count():
    params = _params()
    for opt in (optim.sgd(0.1, 0.9), optim.adam(1e-3), optim.adamw(1e-3)):
        state = opt.init(params)
        counted = [s for s in state if "count" in s._fields]
        assert counted
        for s in counted:
            assert np.asarray(s.count).dtype == np.int32 and np.shape(s.count) == ()
        _, state = _run(opt, params, _grads(params, 3), jit=True)
        for s in state:
            if "count" in s._fields:
                assert int(s.count) == 3
    # a state round-trips through the pytree machinery
    state = optim.adam(1e-3).init(params)
    leaves, tree = jax.tree_util.tree_flatten(state)
    again = jax.tree_util.tree_unflatten(tree, leaves)
    assert type(again[0]) is optim.ScaleByAdamState and len(leaves) == 1 + 2 * len(params) + 1


def test_safe_increment_saturates():
    top = np.int32(np.iinfo(np.int32).max)
    assert int(optim.safe_increment(top)) == int(top)
    assert int(fg.jit(optim.safe_increment)(np.int32(5))) == 6


def test_adamw_needs_params():
    opt = optim.adamw(1e-3)
    params = _params()
    state = opt.init(params)
    with pytest.raises(ValueError, match="params"):
        opt.update(_grads(params, 1)[0], state)


def test_apply_updates_keeps_param_dtype():
    p = {"a": np.ones(3, np.float32), "b": np.ones(2, np.float64)}
    u = {"a": np.full(3, 0.5, np.float64), "b": np.full(2, 0.5, np.float32)}
    out = optim.apply_updates(p, u)
    assert out["a"].dtype == np.float32 and out["b"].dtype == np.float64
    np.testing.assert_allclose(np.asarray(out["a"]), 1.5)


# --------------------------------------------------------------------------- schedules


SCHEDULES = [
    ("constant", optim.constant_schedule(0.3), lambda t: 0.3),
    ("linear", optim.linear_schedule(1.0, 0.1, 10), _np_linear(1.0, 0.1, 10)),
    ("linear_begin", optim.linear_schedule(1.0, 0.0, 5, 3), _np_linear(1.0, 0.0, 5, 3)),
    ("cosine", optim.cosine_decay_schedule(0.5, 10), _np_cosine(0.5, 10)),
    ("cosine_alpha", optim.cosine_decay_schedule(0.5, 10, alpha=0.2), _np_cosine(0.5, 10, 0.2)),
    (
        "warmup_cosine",
        optim.warmup_cosine_decay_schedule(0.0, 1.0, 4, 20, 0.05),
        _np_warmup_cosine(0.0, 1.0, 4, 20, 0.05),
    ),
]


@pytest.mark.parametrize("name,sched,ref", SCHEDULES, ids=[s[0] for s in SCHEDULES])
def test_schedules(name, sched, ref):
    steps = [0, 1, 2, 3, 4, 5, 7, 10, 15, 20, 25]
    traced = fg.jit(lambda t: fnp.asarray(sched(t)))
    for t in steps:
        np.testing.assert_allclose(float(sched(t)), ref(t), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(float(traced(np.int32(t))), ref(t), rtol=1e-5, atol=1e-6)
    batched = fg.vmap(lambda t: fnp.asarray(sched(t)) * fnp.ones(()))(np.array(steps, np.int32))
    np.testing.assert_allclose(np.asarray(batched), [ref(t) for t in steps], rtol=1e-5, atol=1e-6)


def test_exponential_decay():
    s = optim.exponential_decay(1.0, 10, 0.5, transition_begin=2, end_value=0.3)
    for t in [0, 2, 7, 12, 30]:
        want = 1.0 if t <= 2 else max(0.5 ** ((t - 2) / 10), 0.3)
        np.testing.assert_allclose(float(s(t)), want, rtol=1e-6)


def test_cosine_decay_requires_positive_steps():
    with pytest.raises(ValueError, match="decay_steps"):
        optim.cosine_decay_schedule(1.0, 0)


# --------------------------------------------------------------------------- control flow


class _Carry(NamedTuple):
    params: dict
    state: tuple


def _loss(p, x):
    return fnp.sum((x @ p["w"] + p["b"]) ** 2)


def _train_inputs():
    params = _params()
    xs = np.random.default_rng(5).normal(size=(STEPS, 2, 3)).astype(np.float32)
    return params, xs


def _reference_loop(opt, params, xs):
    state = opt.init(params)
    for x in xs:
        g = fg.grad(_loss)(params, x)
        u, state = opt.update(g, state, params)
        params = optim.apply_updates(params, u)
    return params, state


@pytest.mark.parametrize(
    "make",
    [lambda: optim.adam(0.01), lambda: optim.sgd(optim.cosine_decay_schedule(0.1, 4), 0.9)],
    ids=["adam", "sgd_schedule"],
)
def test_inside_scan(make):
    if not hasattr(fg, "scan"):
        pytest.skip("fg.scan not available yet")
    opt = make()
    params, xs = _train_inputs()

    @fg.jit
    def train(params, xs):
        def body(carry, x):
            p, s = carry
            loss, g = fg.value_and_grad(_loss)(p, x)
            u, s = opt.update(g, s, p)
            return (optim.apply_updates(p, u), s), loss

        (p, s), losses = fg.scan(body, (params, opt.init(params)), xs)
        return p, s, losses

    p, s, losses = train(params, xs)
    want_p, want_s = _reference_loop(opt, params, xs)
    _assert_trees_close([p, s], [want_p, want_s], rtol=1e-4, atol=1e-5)
    assert np.shape(losses) == (STEPS,)


def test_inside_fori_loop():
    if not hasattr(fg, "fori_loop"):
        pytest.skip("fg.fori_loop not available yet")
    opt = optim.adamw(0.01, weight_decay=0.01)
    params, xs = _train_inputs()

    @fg.jit
    def train(params, xs):
        def body(i, carry):
            g = fg.grad(_loss)(carry.params, xs[i])
            u, s = opt.update(g, carry.state, carry.params)
            return _Carry(optim.apply_updates(carry.params, u), s)

        return fg.fori_loop(0, STEPS, body, _Carry(params, opt.init(params)))

    out = train(params, xs)
    want_p, want_s = _reference_loop(opt, params, xs)
    _assert_trees_close([out.params, out.state], [want_p, want_s], rtol=1e-4, atol=1e-5)


def test_step_compiles_once():
    opt = optim.adam(optim.warmup_cosine_decay_schedule(0.0, 0.01, 2, 10))
    params = _params()
    grads = _grads(params)
    update = fg.jit(opt.update)
    state = opt.init(params)
    for g in grads:
        _, state = update(g, state, params)
    assert update.trace_count == 1


def test_minimizes_quadratic():
    target = np.linspace(-1, 1, 5).astype(np.float32)
    loss = lambda p: fnp.sum((p - target) ** 2)
    for opt in (optim.sgd(0.1, 0.9), optim.adam(0.1), optim.adamw(0.1, weight_decay=0.0)):

        @fg.jit
        def step(p, s, opt=opt):
            g = fg.grad(loss)(p)
            u, s = opt.update(g, s, p)
            return optim.apply_updates(p, u), s

        p = np.zeros(5, np.float32)
        s = opt.init(p)
        for _ in range(300):
            p, s = step(p, s)
        np.testing.assert_allclose(np.asarray(p), target, atol=1e-2)


# --------------------------------------------------------------------------- optax oracle

OPTAX_CASES = {
    "sgd": ("sgd", (0.1,), {}),
    "momentum": ("sgd", (0.1,), {"momentum": 0.9}),
    "nesterov": ("sgd", (0.1,), {"momentum": 0.9, "nesterov": True}),
    "adam": ("adam", (0.01,), {"b1": 0.8, "b2": 0.99, "eps": 1e-6}),
    "adamw": ("adamw", (0.01,), {"weight_decay": 0.05}),
}


@pytest.mark.parametrize("name", sorted(OPTAX_CASES))
def test_against_optax(name):
    optax = pytest.importorskip("optax")
    fn, args, kw = OPTAX_CASES[name]
    params = _params()
    grads = _grads(params)
    got, _ = _run(getattr(optim, fn)(*args, **kw), params, grads, jit=True)
    want, _ = _run(getattr(optax, fn)(*args, **kw), params, grads)
    _assert_trees_close(got, want, rtol=1e-5, atol=1e-6)


def test_against_optax_schedules_and_chain():
    optax = pytest.importorskip("optax")
    params = _params()
    grads = _grads(params, 8, scale=3.0)
    ours = optim.chain(
        optim.clip_by_global_norm(1.5),
        optim.adamw(optim.warmup_cosine_decay_schedule(0.0, 0.02, 3, 8, 0.001), weight_decay=0.01),
    )
    theirs = optax.chain(
        optax.clip_by_global_norm(1.5),
        optax.adamw(optax.warmup_cosine_decay_schedule(0.0, 0.02, 3, 8, 0.001), weight_decay=0.01),
    )
    got, _ = _run(ours, params, grads, jit=True)
    want, _ = _run(theirs, params, grads)
    _assert_trees_close(got, want, rtol=1e-5, atol=1e-6)
    for ours_s, theirs_s in [
        (optim.cosine_decay_schedule(1.0, 7, 0.1), optax.cosine_decay_schedule(1.0, 7, 0.1)),
        (optim.linear_schedule(0.5, 0.0, 6, 2), optax.linear_schedule(0.5, 0.0, 6, 2)),
        (
            optim.exponential_decay(1.0, 3, 0.7, 1, True),
            optax.exponential_decay(1.0, 3, 0.7, 1, True),
        ),
    ]:
        for t in range(12):
            np.testing.assert_allclose(float(ours_s(t)), float(theirs_s(t)), rtol=1e-6)
