"""Top-level utilities against JAX: eval_shape, linear_transpose, custom_gradient,
closure_convert, devices, block_until_ready, clear_caches, jit(donate_argnames=),
linearize(has_aux=), hessian(has_aux=), make_jaxpr, device_get, ensure_compile_time_eval,
float0, process queries and effects_barrier."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

A = np.arange(6.0).reshape(2, 3)


def test_eval_shape():
    def f(np_mod):
        return lambda x, y, s=2.0: {"p": x @ y, "s": np_mod.sum(x) * s, "i": x.shape[0] + 1}

    args = (jax.ShapeDtypeStruct((2, 3), np.float32), np.ones((3, 4), np.float32))
    got = fg.eval_shape(f(fnp), *args)
    want = jax.eval_shape(f(jnp), *args)
    assert jax.tree.structure(got) == jax.tree.structure(want)
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)
    weak = fg.eval_shape(lambda x: x * 2, 1.0)
    assert weak == jax.eval_shape(lambda x: x * 2, 1.0)
    assert fg.ShapeDtypeStruct is jax.ShapeDtypeStruct


def test_eval_shape_runs_nothing():
    calls = []

    def f(x):
        fg.debug.callback(calls.append, x)
        return fnp.sin(x)

    assert fg.eval_shape(f, jax.ShapeDtypeStruct((2,), np.float64)).shape == (2,)
    assert calls == []


@pytest.mark.parametrize(
    "fn",
    [
        lambda np_mod: lambda x: (A @ x, 2 * x[0]),
        lambda np_mod: lambda x: np_mod.cumsum(x[::-1]) / 3.0,
        lambda np_mod: lambda x: np_mod.sum(x.reshape(3, 1) * A.T, axis=0),
    ],
)
def test_linear_transpose_matches_jax(fn):
    x = np.ones(3)
    ft = fg.linear_transpose(fn(fnp), x)
    jt = jax.linear_transpose(fn(jnp), x)
    ct = jax.tree.map(lambda o: np.arange(1.0, 1.0 + o.size).reshape(o.shape), fn(jnp)(x))
    for a, b in zip(ft(ct), jt(ct)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    # a pytree: passes through jit
    out = fg.jit(lambda t, c: t(c))(ft, ct)
    np.testing.assert_allclose(np.asarray(out[0]), np.asarray(jt(ct)[0]), rtol=1e-12)


def test_linear_transpose_errors():
    with pytest.raises(TypeError, match="not linear"):
        fg.linear_transpose(lambda x: x * x, np.ones(3))
    with pytest.raises(TypeError, match="only supports"):
        fg.linear_transpose(lambda x: x.astype(np.int32), np.ones(3))
    ft = fg.linear_transpose(lambda x: 2 * x, np.ones(3))
    with pytest.raises(TypeError, match="cotangent type"):
        ft(np.ones(4))
    with pytest.raises(TypeError, match="cotangent tree"):
        ft((np.ones(3),))


def _cg(np_mod, deco):
    @deco
    def f(x, y):
        s = np_mod.sin(x)
        return s * y, lambda g: (g * 3.0 * s, g * x)

    return f


def test_custom_gradient():
    f, j = _cg(fnp, fg.custom_gradient), _cg(jnp, jax.custom_gradient)
    x, y = np.array([0.3, 1.2]), np.array([2.0, -1.0])

    def loss(f):
        return lambda x, y: (f(x, y) ** 2).sum()

    want = jax.grad(loss(j), (0, 1))(x, y)
    for got in (
        fg.grad(loss(f), (0, 1))(x, y),
        fg.jit(fg.grad(loss(f), (0, 1)))(x, y),
    ):
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(f(x, y)), np.asarray(j(x, y)))
    gv = fg.vmap(fg.grad(loss(f)))(np.stack([x, 2 * x]), np.stack([y, y]))
    jv = jax.vmap(jax.grad(loss(j)))(np.stack([x, 2 * x]), np.stack([y, y]))
    np.testing.assert_allclose(np.asarray(gv), np.asarray(jv), rtol=1e-12)

    @fg.custom_gradient
    def one(x):
        return x * 2, lambda c: c * 10  # a single cotangent need not be a tuple

    np.testing.assert_array_equal(np.asarray(fg.grad(lambda x: one(x).sum())(x)), [10.0, 10.0])


def test_closure_convert():
    def outer(c):
        def g(x):
            return fnp.sin(x) * c

        conv, consts = fg.closure_convert(g, 1.0)
        assert len(consts) == 1  # the traced c is hoisted
        return conv(0.5, *consts)

    np.testing.assert_allclose(fg.grad(outer)(2.0), np.sin(0.5), rtol=1e-12)
    conv, consts = fg.closure_convert(lambda x: x * A.sum(), 1.0)
    assert consts == []
    assert float(conv(2.0)) == pytest.approx(30.0)


def test_devices_and_placement():
    assert fg.devices() == jax.devices()
    assert fg.local_devices() == jax.local_devices()
    assert fg.device_count() == jax.device_count()
    assert fg.local_device_count() == jax.local_device_count()
    assert fg.default_backend() == jax.default_backend()
    d = fg.devices()[0]
    y = fg.device_put({"a": np.ones(2)}, d)
    assert isinstance(y["a"], jax.Array) and y["a"].devices() == {d}
    inside = fg.jit(lambda x: fg.device_put(x * 2) + 1)(np.ones(2))
    np.testing.assert_array_equal(np.asarray(inside), [3.0, 3.0])
    g = fg.grad(lambda x: fnp.sum(fg.device_put(x) ** 2))(np.ones(2))
    np.testing.assert_array_equal(np.asarray(g), [2.0, 2.0])
    tree = {"x": jnp.ones(3), "n": 1}
    assert fg.block_until_ready(tree) is tree


def test_clear_caches(monkeypatch):
    # JAX's own caches are left alone here (emptying them made every later test in this
    # worker compile again); tests/test_compile_cache.py checks that in a fresh process
    monkeypatch.setattr(jax, "clear_caches", lambda: None)
    f = fg.jit(lambda x: x + 1)
    f(np.ones(2))
    n = f.trace_count
    fg.clear_caches()
    np.testing.assert_array_equal(np.asarray(f(np.ones(2))), [2.0, 2.0])
    assert f.trace_count == n + 1


def test_jit_donate_argnames():
    f = fg.jit(lambda x, y: x + y, donate_argnames="y")
    assert f.donate_argnums == (1,)
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2), y=jnp.ones(2))), [2.0, 2.0])
    with pytest.raises(ValueError, match="not parameters"):
        fg.jit(lambda x: x, donate_argnames="z")


def test_linearize_has_aux():
    x = np.array([0.3, 1.2])

    def f(np_mod):
        return lambda x: (np_mod.sin(x) * x, {"c": np_mod.cos(x), "n": 3})

    o, lin, aux = fg.linearize(f(fnp), x, has_aux=True)
    p, jlin, jaux = jax.linearize(f(jnp), x, has_aux=True)
    np.testing.assert_allclose(np.asarray(o), np.asarray(p), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(lin(np.ones(2))), np.asarray(jlin(np.ones(2))))
    np.testing.assert_allclose(np.asarray(aux["c"]), np.asarray(jaux["c"]))
    assert aux["n"] == 3


def test_hessian_has_aux():
    x = np.array([0.3, 1.2])
    h, aux = fg.hessian(lambda x: (fnp.sum(fnp.sin(x) ** 3), x * 2), has_aux=True)(x)
    jh, jaux = jax.hessian(lambda x: (jnp.sum(jnp.sin(x) ** 3), x * 2), has_aux=True)(x)
    np.testing.assert_allclose(np.asarray(h), np.asarray(jh), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(aux), np.asarray(jaux))


def test_lazy_namespaces_in_a_fresh_interpreter():
    import subprocess
    import sys

    code = (
        "import funcgrad as fg; fg.checkpoint_policies.dots_saveable; "
        "fg.ad_checkpoint.checkpoint_name; fg.debug.print; fg.nn.initializers.he_normal"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------ make_jaxpr, device_get, float0, process queries


def test_make_jaxpr_returns_the_program_and_shapes_as_jax():
    def f(x, n):
        return {"y": fnp.sin(x) * n, "s": x.sum()}

    prog, shape = fg.make_jaxpr(f, static_argnums=1, return_shape=True)(np.ones((2, 3)), 2)
    _, jshape = jax.make_jaxpr(
        lambda x, n: {"y": jnp.sin(x) * n, "s": x.sum()}, static_argnums=1, return_shape=True
    )(np.ones((2, 3)), 2)
    assert shape == jshape
    assert isinstance(prog, fg.Program)
    assert [e.prim.name for e in prog.eqns] == ["sin", "mul", "reduce_sum"]
    assert isinstance(fg.make_jaxpr(f, static_argnums=1)(np.ones(2), 3), fg.Program)
    with pytest.raises(NotImplementedError, match="axis_env"):
        fg.make_jaxpr(f, axis_env=[("i", 2)])(np.ones(2), 3)


def test_make_jaxpr_result_reads_as_jaxs_closed_jaxpr():
    # (the attributes JAX's tests read off a closed jaxpr: its open jaxpr's equations,
    # variables and constants, and the in/out avals)
    c = np.arange(3.0, dtype=np.float32)

    def f(np_):
        return lambda x, y: (np_.sin(x) * y + c, x.sum())

    x, y = np.ones(3, np.float32), np.float32(2.0)
    ours, theirs = fg.make_jaxpr(f(fnp))(x, y), jax.make_jaxpr(f(jnp))(x, y)
    assert ours.jaxpr is ours
    assert [e.prim.name for e in ours.jaxpr.eqns] == [e.primitive.name for e in theirs.eqns]
    assert len(ours.jaxpr.eqns) == len(theirs.jaxpr.eqns) == 4
    assert len(ours.jaxpr.invars) == len(theirs.jaxpr.invars) == 2
    assert len(ours.jaxpr.outvars) == len(theirs.jaxpr.outvars) == 2
    assert [(a.shape, a.dtype) for a in ours.in_avals] == [
        (a.shape, a.dtype) for a in theirs.in_avals
    ]
    assert [(a.shape, a.dtype) for a in ours.out_avals] == [
        (a.shape, a.dtype) for a in theirs.out_avals
    ]
    assert len(ours.jaxpr.constvars) == len(ours.consts)
    assert len(theirs.jaxpr.constvars) == len(theirs.consts)


def test_device_get_matches_jax():
    tree = {"a": fnp.arange(3.0), "b": (np.float32(2.0), "label", 4)}
    got, want = fg.device_get(tree), jax.device_get({"a": jnp.arange(3.0), "b": tree["b"]})
    assert type(got["a"]) is type(want["a"]) is np.ndarray
    np.testing.assert_array_equal(got["a"], want["a"])
    assert got["b"] == want["b"]


def test_ensure_compile_time_eval_makes_constants_concrete_under_jit():
    def body(lib, x):
        np_ = fnp if lib is fg else jnp
        with lib.ensure_compile_time_eval():
            table = np_.cumsum(np_.arange(5.0))
            n = int(table[-1])  # concrete: Python can use it
            y = x * 2.0  # traced: still recorded
        return y + n

    got = fg.jit(lambda x: body(fg, x))(np.float32(1.0))
    want = jax.jit(lambda x: body(jax, x))(np.float32(1.0))
    np.testing.assert_allclose(got, want)
    with pytest.raises(fg.errors.ConcretizationTypeError):
        fg.jit(lambda x: int(x.sum()))(np.ones(2))


def test_small_names_are_jaxs():
    assert fg.float0 == jax.dtypes.float0
    assert fg.Device is jax.Device and isinstance(fg.devices()[0], fg.Device)
    assert fg.process_index() == jax.process_index()
    assert fg.process_count() == jax.process_count()


def test_effects_barrier_waits_for_callbacks():
    seen = []
    fg.jit(lambda x: fg.debug.callback(lambda v: seen.append(float(v)), x) or x)(np.float32(3.0))
    fg.effects_barrier()
    assert seen == [3.0]
