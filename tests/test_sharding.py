"""``fg.jit`` with ``in_shardings`` / ``out_shardings`` on a mesh of 8 CPU devices, and
buffer donation.

The multi-device checks run in a subprocess started with
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (the flag must be set before
JAX initialises its backend, so it cannot be applied to the test process).
"""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp
from tests.multiprocess import run_on_8_devices

DATA_PARALLEL = textwrap.dedent(
    """
    import json
    import numpy as np
    import jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import funcgrad as fg
    import funcgrad.numpy as fnp

    devices = jax.devices()
    mesh = Mesh(np.array(devices), ("data",))
    repl, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    rng = np.random.default_rng(0)
    f32 = lambda a: np.asarray(a, np.float32)
    params = {"w1": f32(rng.normal(size=(16, 32)) * 0.3), "b1": f32(np.zeros(32)),
              "w2": f32(rng.normal(size=(32, 1)) * 0.3), "b2": f32(np.zeros(1))}
    x = f32(rng.normal(size=(64, 16)))
    y = f32(np.sin(x.sum(1)))
    scale = f32(np.linspace(0.5, 1.5, 16))  # closed over: a constant of the program

    def predict(p, x):
        h = fnp.tanh((x * scale) @ p["w1"] + p["b1"])
        return (h @ p["w2"] + p["b2"])[:, 0]

    def loss(p, x, y):
        return fnp.mean((predict(p, x) - y) ** 2)

    def step(p, x, y):
        l, g = fg.value_and_grad(loss)(p, x, y)
        new = jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)
        return new, l, predict(new, x)

    def multi_step(p, x, y):  # 5 SGD steps inside one compiled call
        return fg.fori_loop(0, 5, lambda i, p: step(p, x, y)[0], p)

    single = fg.jit(step)(params, x, y)
    single_multi = fg.jit(multi_step)(params, x, y)

    sharded = fg.jit(
        step,
        in_shardings=(repl, data, data),          # params replicated, batch split over "data"
        out_shardings=(repl, repl, data),         # pytree prefixes, expanded per leaf
    )
    ps = jax.device_put(params, repl)
    xs, ys = jax.device_put(x, data), jax.device_put(y, data)
    out = sharded(ps, xs, ys)
    out_np = sharded(params, x, y)  # unplaced numpy inputs are placed as asked
    multi = fg.jit(multi_step, in_shardings=(repl, data, data), out_shardings=repl)(ps, xs, ys)

    def err(a, b):
        return max(float(np.max(np.abs(np.asarray(u) - np.asarray(v))))
                   for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)))

    new_params, l, preds = out
    leaves = jax.tree_util.tree_leaves(new_params)
    print("RESULT " + json.dumps({
        "n_devices": len(devices),
        "err_step": err(out, single),
        "err_numpy_inputs": err(out_np, single),
        "err_multi": err(multi, single_multi),
        "params_replicated": all(
            a.sharding.is_equivalent_to(repl, a.ndim) and len(a.sharding.device_set) == 8
            for a in leaves),
        "loss_replicated": l.sharding.is_equivalent_to(repl, l.ndim),
        "preds_spec": str(preds.sharding.spec),
        "preds_shards": sorted({tuple(s.data.shape) for s in preds.addressable_shards}),
        "preds_n_shards": len(preds.addressable_shards),
        "multi_replicated": all(a.sharding.is_equivalent_to(repl, a.ndim)
                                for a in jax.tree_util.tree_leaves(multi)),
        "partitions_in_hlo": "num_partitions = 8" in sharded.lower(ps, xs, ys),
        "loss_decreases": float(loss(multi, x, y)) < float(loss(params, x, y)),
    }))
    """
)


def test_data_parallel_step_on_8_devices():
    res = run_on_8_devices(DATA_PARALLEL)
    assert res["n_devices"] == 8
    # same numbers as the single-device step (float32; the sharded mean sums in another order)
    assert res["err_step"] < 1e-5, res
    assert res["err_numpy_inputs"] < 1e-5, res
    assert res["err_multi"] < 1e-4, res
    # outputs sharded as asked
    assert res["params_replicated"] and res["loss_replicated"] and res["multi_replicated"], res
    assert res["preds_spec"] == str(jax.sharding.PartitionSpec("data")), res
    assert res["preds_n_shards"] == 8 and res["preds_shards"] == [[8]], res
    assert res["partitions_in_hlo"], res
    assert res["loss_decreases"], res


def test_donation():
    def step(p, x):
        g = fg.grad(lambda p: fnp.sum(fnp.sin(p["a"] * x)) + fnp.sum(p["b"] ** 2))(p)
        return {k: p[k] - 0.1 * g[k] for k in p}

    x = jnp.linspace(0.0, 1.0, 3)
    fresh = lambda: {"a": jnp.ones(3), "b": jnp.arange(3.0)}
    want = fg.jit(step)(fresh(), x)
    f = fg.jit(step, donate_argnums=0)
    p = fresh()
    got = f(p, x)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-12)
    # the donated buffers were handed to XLA (CPU supports donation); x was not donated
    assert all(p[k].is_deleted() for k in p) and not x.is_deleted()
    again = f(got, x)  # the cached executable donates again
    assert got["a"].is_deleted()
    np.testing.assert_allclose(again["a"], fg.jit(step)(want, x)["a"], rtol=1e-12)
    assert "tf.aliasing_output" in f.lower(again, x)
    # donation composes with static arguments
    g = fg.jit(lambda n, p: {k: v * n for k, v in p.items()}, static_argnums=0, donate_argnums=1)
    q = fresh()
    out = g(3, q)
    np.testing.assert_allclose(out["b"], np.arange(3.0) * 3)
    assert q["a"].is_deleted()
