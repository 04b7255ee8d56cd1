"""funcgrad.interop.from_jax: foreign JAX functions as opaque, transformable funcgrad calls."""

from __future__ import annotations

import ast
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.interop import from_jax, jax_call_p


def _mlp(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return h @ params["w2"], {"h_mean": jnp.mean(h)}


def _params(dtype=np.float64):
    rng = np.random.default_rng(0)
    return {
        "w1": rng.normal(size=(3, 5)).astype(dtype),
        "b1": rng.normal(size=(5,)).astype(dtype),
        "w2": rng.normal(size=(5, 2)).astype(dtype),
    }


X = np.random.default_rng(1).normal(size=(4, 3))
mlp = from_jax(_mlp)


def _close(a, b, rtol=1e-10, atol=1e-10):
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert ta == tb, (ta, tb)
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def _loss_fg(p, x):
    out, aux = mlp(p, x)
    return fnp.sum(fnp.sin(out) ** 2) + aux["h_mean"]


def _loss_jax(p, x):
    out, aux = _mlp(p, x)
    return jnp.sum(jnp.sin(out) ** 2) + aux["h_mean"]


# --------------------------------------------------------------------------- forward


def test_forward_eager_and_jit_keep_pytrees():
    p = _params()
    _close(mlp(p, X), _mlp(p, X))
    _close(fg.jit(mlp)(p, X), _mlp(p, X))


def test_one_opaque_equation():
    prog = fg.make_ir(lambda p, x: mlp(p, x)[0] * 2.0)(_params(), X)
    calls = [e for e in prog.eqns if e.prim is jax_call_p]
    assert len(calls) == 1
    assert calls[0].params["fun"] is _mlp
    assert calls[0].params["name"] == "_mlp"
    assert "jax_call" in str(prog)
    prog.check()


def test_python_scalars_and_kwargs():
    f = from_jax(lambda x, *, scale: x * scale)
    np.testing.assert_allclose(np.asarray(f(np.ones(3), scale=2.5)), 2.5)
    np.testing.assert_allclose(np.asarray(fg.jit(lambda x: f(x, scale=3.0))(np.ones(2))), 3.0)
    g = fg.grad(lambda s: fnp.sum(f(np.arange(3.0), scale=s)))(2.0)
    np.testing.assert_allclose(float(g), 3.0)


def test_static_argnums():
    f = from_jax(lambda x, axis: jnp.cumsum(x, axis=axis), static_argnums=1)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(f(x, 1)), np.cumsum(x, 1))
    np.testing.assert_allclose(np.asarray(fg.jit(lambda x: f(x, 0))(x)), np.cumsum(x, 0))
    g = fg.grad(lambda x: fnp.sum(f(x, 1) ** 2))(x)
    np.testing.assert_allclose(np.asarray(g), jax.grad(lambda x: jnp.sum(jnp.cumsum(x, 1) ** 2))(x))


def test_non_array_argument_error():
    f = from_jax(lambda x, mode: x)
    with pytest.raises(TypeError, match="static_argnums"):
        f(np.ones(2), "fast")


# --------------------------------------------------------------------------- differentiation


def test_grad_matches_jax_grad():
    p = _params()
    want = jax.grad(_loss_jax, argnums=(0, 1))(p, X)
    _close(fg.grad(_loss_fg, argnums=(0, 1))(p, X), want)
    _close(fg.jit(fg.grad(_loss_fg, argnums=(0, 1)))(p, X), want)


def test_jvp_matches_jax_jvp():
    p = _params()
    t = jax.tree_util.tree_map(np.ones_like, p)
    got = fg.jvp(lambda p: mlp(p, X), (p,), (t,))
    want = jax.jvp(lambda p: _mlp(p, X), (p,), (t,))
    _close(got, want)
    _close(fg.jit(lambda p, t: fg.jvp(lambda p: mlp(p, X), (p,), (t,)))(p, t), want)


def test_second_order_and_hessian():
    f = from_jax(lambda x: jnp.sum(jnp.sin(x) * x**2))
    x = np.linspace(-1.0, 1.0, 4)
    fj = lambda x: jnp.sum(jnp.sin(x) * x**2)
    _close(fg.hessian(f)(x), jax.hessian(fj)(x))
    _close(
        fg.grad(lambda x: fnp.sum(fg.grad(f)(x) ** 2))(x),
        jax.grad(lambda x: jnp.sum(jax.grad(fj)(x) ** 2))(x),
    )
    _close(fg.jacfwd(fg.grad(f))(x), jax.hessian(fj)(x))


def test_integer_inputs_and_outputs():
    f = from_jax(lambda x, k: (x * k, jnp.argmax(x), jnp.cumsum(x) ** 2))
    x, k = np.array([0.5, -1.0, 2.0]), np.array([1, 2, 3], np.int32)

    def loss(x):
        a, i, c = f(x, k)
        return fnp.sum(a) + fnp.sum(c) + 0.0 * i

    want = jax.grad(lambda x: jnp.sum(x * k) + jnp.sum(jnp.cumsum(x) ** 2))(x)
    _close(fg.grad(loss)(x), want)
    out, tout = fg.jvp(lambda x: f(x, k), (x,), (np.ones(3),))
    assert int(out[1]) == 2
    _close(tout[0], k.astype(np.float64))
    gk = fg.grad(lambda x, k: fnp.sum(f(x, k)[0]), argnums=1, allow_int=True)(x, k)
    assert gk.dtype == jax.dtypes.float0


def test_vjp_recomputes_from_primals_only():
    """The backward jax_call takes the primal inputs and the cotangents, nothing else."""
    x = np.linspace(0.1, 1.0, 3)
    f = from_jax(jnp.exp)
    prog = fg.make_ir(fg.grad(lambda x: fnp.sum(f(x))))(x)
    names = [e.params["name"] for e in prog.eqns if e.prim is jax_call_p]
    assert "vjp_exp" in names
    bwd = next(e for e in prog.eqns if e.prim is jax_call_p and e.params["name"] == "vjp_exp")
    assert len(bwd.inputs) == 2
    _close(fg.grad(lambda x: fnp.sum(f(x)))(x), np.exp(x))


# --------------------------------------------------------------------------- batching


def test_vmap_matches_jax_vmap():
    p = _params()
    xs = np.random.default_rng(2).normal(size=(6, 4, 3))
    _close(fg.vmap(mlp, in_axes=(None, 0))(p, xs), jax.vmap(_mlp, in_axes=(None, 0))(p, xs))
    ps = jax.tree_util.tree_map(lambda a: np.stack([a, 2 * a]), p)
    _close(fg.vmap(mlp, in_axes=(0, None))(ps, X), jax.vmap(_mlp, in_axes=(0, None))(ps, X))
    xt = np.moveaxis(xs, 0, 2)
    _close(
        fg.jit(fg.vmap(mlp, in_axes=(None, 2)))(p, xt),
        jax.vmap(_mlp, in_axes=(None, 2))(p, xt),
    )


def test_vmap_of_grad_and_grad_of_vmap():
    p = _params()
    xs = np.random.default_rng(3).normal(size=(5, 4, 3))
    want = jax.vmap(jax.grad(_loss_jax), in_axes=(None, 0))(p, xs)
    _close(fg.vmap(fg.grad(_loss_fg), in_axes=(None, 0))(p, xs), want)
    per_example = lambda p: fnp.sum(fg.vmap(_loss_fg, in_axes=(None, 0))(p, xs))
    _close(
        fg.grad(per_example)(p),
        jax.grad(lambda p: jnp.sum(jax.vmap(_loss_jax, in_axes=(None, 0))(p, xs)))(p),
    )


# --------------------------------------------------------------------------- caching


def test_derived_functions_are_cached():
    p = _params()
    g = fg.grad(_loss_fg)
    k1 = fg.make_ir(g)(p, X).key()
    k2 = fg.make_ir(g)(p, X).key()
    assert k1 == k2
    v1 = fg.make_ir(fg.vmap(mlp, in_axes=(None, 0)))(p, np.stack([X, X])).key()
    v2 = fg.make_ir(fg.vmap(mlp, in_axes=(None, 0)))(p, np.stack([X, X])).key()
    assert v1 == v2


def test_jitted_step_traces_once():
    p = _params()
    step = fg.jit(lambda p, x: fg.value_and_grad(_loss_fg)(p, x))
    for i in range(3):
        step(p, X + i)
    assert step.trace_count == 1


# --------------------------------------------------------------------------- optax inside fg.jit


def test_optax_update_inside_fg_jit():
    optax = pytest.importorskip("optax")
    p0 = _params(np.float32)
    x = X.astype(np.float32)
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-2, weight_decay=1e-3))
    update = from_jax(opt.update)
    apply = from_jax(optax.apply_updates)

    @fg.jit
    def step(p, s, x):
        loss, g = fg.value_and_grad(_loss_fg)(p, x)
        u, s = update(g, s, p)
        return apply(p, u), s, loss

    @jax.jit
    def step_ref(p, s, x):
        loss, g = jax.value_and_grad(_loss_jax)(p, x)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, loss

    p, s = p0, opt.init(p0)
    pr, sr = p0, opt.init(p0)
    losses = []
    for i in range(5):
        p, s, loss = step(p, s, x + 0.1 * i)
        pr, sr, loss_r = step_ref(pr, sr, x + 0.1 * i)
        losses.append(float(loss))
        np.testing.assert_allclose(float(loss), float(loss_r), rtol=1e-5)
    _close((p, s), (pr, sr), rtol=1e-5, atol=1e-6)
    assert step.trace_count == 1
    assert losses[-1] < losses[0]
    # the state is optax's own pytree, passed through funcgrad unchanged in structure
    assert jax.tree_util.tree_structure(s) == jax.tree_util.tree_structure(sr)


def test_optax_vs_funcgrad_optim():
    optax = pytest.importorskip("optax")
    from funcgrad import optim

    p0 = _params(np.float32)
    x = X.astype(np.float32)
    theirs = optax.adam(1e-2)
    ours = optim.adam(1e-2)
    update = from_jax(theirs.update)

    @fg.jit
    def step(p, s1, q, s2):
        g1 = fg.grad(_loss_fg)(p, x)
        u1, s1 = update(g1, s1, p)
        g2 = fg.grad(_loss_fg)(q, x)
        u2, s2 = ours.update(g2, s2, q)
        return optim.apply_updates(p, u1), s1, optim.apply_updates(q, u2), s2

    p, s1, q, s2 = p0, theirs.init(p0), p0, ours.init(p0)
    for _ in range(4):
        p, s1, q, s2 = step(p, s1, q, s2)
    _close(p, q, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- the rule


_FORBIDDEN = {
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "vmap",
    "linearize",
    "jacfwd",
    "jacrev",
    "hessian",
    "custom_vjp",
    "custom_jvp",
    "checkpoint",
    "remat",
    "make_jaxpr",
}


def test_jax_transforms_only_in_interop():
    """Outside funcgrad/interop/, funcgrad never calls JAX's transformations."""
    root = pathlib.Path(fg.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if "interop" in path.relative_to(root).parts:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in _FORBIDDEN
                and isinstance(node.value, ast.Name)
                and node.value.id == "jax"
            ):
                offenders.append(f"{path}:{node.lineno}: jax.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module in ("jax", "jax.api"):
                for alias in node.names:
                    if alias.name in _FORBIDDEN:
                        offenders.append(f"{path}:{node.lineno}: from jax import {alias.name}")
    assert not offenders, "\n".join(offenders)


def test_unhashable_callable():
    class Scale:
        __hash__ = None  # e.g. a mutable module object

        def __init__(self, s):
            self.s = s

        def __call__(self, x):
            return x * self.s

    f = from_jax(Scale(3.0))
    x = np.arange(3.0)
    np.testing.assert_allclose(np.asarray(fg.jit(f)(x)), 3 * x)
    np.testing.assert_allclose(np.asarray(fg.grad(lambda x: fnp.sum(f(x)))(x)), 3.0)
    k1 = fg.make_ir(fg.grad(lambda x: fnp.sum(f(x))))(x).key()
    k2 = fg.make_ir(fg.grad(lambda x: fnp.sum(f(x))))(x).key()
    assert k1 == k2


def test_linearize():
    f = from_jax(jnp.sin)
    x = np.linspace(0.0, 1.0, 3)
    out, lin = fg.linearize(lambda x: f(x) * 2.0, x)
    _close(out, 2 * np.sin(x))
    _close(lin(np.ones(3)), 2 * np.cos(x))


def test_registered_with_examples():
    from funcgrad.core.primitive import REGISTRY

    assert REGISTRY["jax_call"] is jax_call_p
    assert jax_call_p.missing_rules() == []
    assert len(jax_call_p.examples(np.random.default_rng(0))) == 2
