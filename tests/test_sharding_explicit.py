"""Meshes with JAX's explicit axes, ``fg.reshard`` and ``fg.lax.with_sharding_constraint``
on 8 CPU devices, against JAX's own ``jax.jit``/``jax.grad`` of the same functions.

The multi-device checks run in one subprocess (``tests.multiprocess.run_on_8_devices``:
the device-count flag must be set before JAX starts); the one-device rules of the
``sharding_constraint`` primitive are checked by the registry tests from its examples.
"""

from __future__ import annotations

import textwrap

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec

import funcgrad as fg
import funcgrad.numpy as fnp
from tests.multiprocess import run_on_8_devices

SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp as jlogsumexp
    import funcgrad as fg
    import funcgrad.numpy as fnp
    from funcgrad.scipy.special import logsumexp
    from funcgrad.sharding import AxisType, NamedSharding, PartitionSpec as P

    out = {}

    def err(a, b):
        return max(float(np.max(np.abs(np.asarray(u) - np.asarray(v))))
                   for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)))

    def specs(tree):
        return [str(a.sharding.spec) for a in jax.tree_util.tree_leaves(tree)]

    # a data-parallel classifier step over explicit axes, as JAX's SPMD MNIST example
    mesh = fg.make_mesh((8,), ("batch",), axis_types=(AxisType.Explicit,))
    repl, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    rng = np.random.default_rng(0)
    f32 = lambda a: np.asarray(a, np.float32)
    params = [(f32(rng.normal(size=(12, 16)) * 0.3), f32(rng.normal(size=16) * 0.1)),
              (f32(rng.normal(size=(16, 5)) * 0.3), f32(rng.normal(size=5) * 0.1))]
    x = f32(rng.normal(size=(32, 12)))
    y = f32(np.eye(5)[rng.integers(0, 5, 32)])

    def make_loss(np_, lse):
        def loss(p, x, y):
            h = x
            for w, b in p[:-1]:
                h = np_.tanh(np_.dot(h, w) + b)
            w, b = p[-1]
            logits = np_.dot(h, w) + b
            logp = logits - lse(logits, axis=1, keepdims=True)
            return -np_.mean(np_.sum(logp * y, axis=1)) + 0.01 * np_.sum(np_.maximum(w, 0.0))
        return loss

    def make_step(grad, loss):
        def step(p, x, y):
            g = grad(loss)(p, x, y)
            return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(p, g)]
        return step

    ps, xs, ys = fg.device_put(params, repl), fg.device_put(x, data), fg.device_put(y, data)
    fg_step = fg.jit(make_step(fg.grad, make_loss(fnp, logsumexp)))
    jax_step = jax.jit(make_step(jax.grad, make_loss(jnp, jlogsumexp)))
    with fg.set_mesh(mesh):
        got, want = fg_step(ps, xs, ys), jax_step(ps, xs, ys)
        got2 = fg_step(got, xs, ys)
    out["step_err"] = err(got, want)
    out["step_specs"] = [specs(got), specs(want)]
    out["second_step_err"] = err(got2, jax_step(want, xs, ys))
    # outside set_mesh the explicitly sharded arguments carry the mesh (as JAX's example's
    # accuracy): an elementwise op between a replicated constant and a split value
    acc = lambda np_: lambda x: np_.mean(np_.where(x > 0, x, 0.0) + np_.ones_like(x))
    out["outside_err"] = err(fg.jit(acc(fnp))(xs), jax.jit(acc(jnp))(xs))

    # reshard: eagerly, inside jit, and its derivative's values
    out["reshard_eager"] = [str(fg.reshard(xs, repl).sharding.spec),
                            err(fg.reshard(xs, repl), x)]
    with fg.set_mesh(mesh):
        r = fg.jit(lambda v: fg.reshard(v * 2.0, P()))(xs)
        gr = fg.jit(fg.grad(lambda v: fnp.sum(fg.reshard(v * 2.0, P()) ** 2)))(xs)
    out["reshard_jit"] = [str(r.sharding.spec), err(r, 2.0 * x)]
    out["reshard_grad_err"] = err(gr, 8.0 * x)
    tree = {"a": xs, "b": [xs]}
    out["reshard_tree"] = specs(fg.reshard(tree, {"a": repl, "b": [data]}))
    try:
        fg.reshard(tree, {"a": repl})
        out["reshard_tree_error"] = None
    except ValueError as e:
        out["reshard_tree_error"] = str(e)

    # with_sharding_constraint over automatic axes, as JAX's: values, output sharding,
    # gradient and vmap
    auto = fg.make_mesh((4, 2), ("a", "b"), axis_types=(AxisType.Auto,) * 2)
    s_ab = NamedSharding(auto, P("a", "b"))
    z = f32(rng.normal(size=(8, 6)))
    fgw = fg.jit(lambda v: fg.lax.with_sharding_constraint(fnp.sin(v) * 3.0, s_ab))
    jw = jax.jit(lambda v: jax.lax.with_sharding_constraint(jnp.sin(v) * 3.0, s_ab))
    out["wsc"] = [str(fgw(z).sharding.spec), str(jw(z).sharding.spec), err(fgw(z), jw(z))]
    g_fg = fg.jit(fg.grad(lambda v: fnp.sum(
        fg.lax.with_sharding_constraint(fnp.sin(v), s_ab) ** 2)))(z)
    g_j = jax.jit(jax.grad(lambda v: jnp.sum(
        jax.lax.with_sharding_constraint(jnp.sin(v), s_ab) ** 2)))(z)
    out["wsc_grad_err"] = err(g_fg, g_j)
    zb = f32(rng.normal(size=(8, 3, 6)))
    vm = fg.jit(fg.vmap(lambda v: fg.lax.with_sharding_constraint(v * 2.0, s_ab), in_axes=1))
    jvm = jax.jit(jax.vmap(lambda v: jax.lax.with_sharding_constraint(v * 2.0, s_ab), in_axes=1))
    vz, jz = vm(zb), jvm(zb)
    out["wsc_vmap"] = [list(vz.shape), str(vz.sharding.spec), str(jz.sharding.spec),
                       err(vz, jz)]
    try:
        fg.lax.with_sharding_constraint(xs, data)
        out["wsc_explicit_error"] = None
    except ValueError as e:
        out["wsc_explicit_error"] = str(e)
    print("RESULT " + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def result() -> dict:
    return run_on_8_devices(SCRIPT)


def test_explicit_axes_training_step_matches_jax(result):
    # float32 sums in another order than JAX's: a few ulps
    assert result["step_err"] < 1e-5, result
    assert result["second_step_err"] < 1e-5, result
    ours, jax_specs = result["step_specs"]
    assert ours == jax_specs, result  # the parameters stay replicated, as JAX's
    assert result["outside_err"] < 1e-6, result


def test_reshard(result):
    assert result["reshard_eager"] == [str(PartitionSpec(None, None)), 0.0], result
    assert result["reshard_jit"] == [str(PartitionSpec(None, None)), 0.0], result
    assert result["reshard_grad_err"] < 1e-5, result
    assert result["reshard_tree"] == [
        str(PartitionSpec(None, None)),
        str(PartitionSpec("batch", None)),
    ], result
    assert "does not match" in result["reshard_tree_error"], result


def test_with_sharding_constraint(result):
    ours, theirs, err = result["wsc"]
    assert ours == theirs == str(PartitionSpec("a", "b")), result
    assert err < 1e-6 and result["wsc_grad_err"] < 1e-5, result
    shape, spec, jax_spec, err = result["wsc_vmap"]
    # the batch axis (moved to the front) is not split; the constraint's axes follow
    assert shape == [3, 8, 6] and spec == jax_spec == str(PartitionSpec(None, "a", "b")), result
    assert err < 1e-6, result
    assert "explicit mesh axes ['batch']" in result["wsc_explicit_error"], result


def test_one_device_eager_and_errors():
    """On this process's one device: the names are JAX's objects, the ops keep values, a
    leaf without a sharding is refused with the op's name."""
    assert fg.NamedSharding is NamedSharding and fg.P is PartitionSpec
    assert isinstance(fg.make_mesh((1,), ("i",)), jax.sharding.Mesh)
    assert fg.sharding.AxisType is jax.sharding.AxisType
    types = fg.sharding.AxisType
    auto = NamedSharding(fg.make_mesh((1,), ("i",), axis_types=(types.Auto,)), fg.P("i"))
    s = NamedSharding(fg.make_mesh((1,), ("i",), axis_types=(types.Explicit,)), fg.P("i"))
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(fg.reshard(x, s), x)
    np.testing.assert_array_equal(fg.lax.with_sharding_constraint(x, auto), x)
    with pytest.raises(ValueError, match=r"reshard: the spec .* not explicit"):
        fg.jit(lambda v: fg.reshard(v, auto))(x)
    with pytest.raises(ValueError, match=r"with_sharding_constraint: .* explicit mesh axes"):
        fg.jit(lambda v: fg.lax.with_sharding_constraint(v, s))(x)
    s = auto
    g = fg.grad(lambda v: fnp.sum(fg.lax.with_sharding_constraint(v, s) ** 2))(x)
    np.testing.assert_allclose(g, 2 * x)
    with pytest.raises(TypeError, match="with_sharding_constraint: expected a Sharding"):
        fg.lax.with_sharding_constraint({"a": x}, {"a": 3})
