"""Reverse mode through ``cond`` and loops over values typed over explicit axes, on 8 CPU
devices, against JAX: each ``cond`` branch's cotangents are typed as their primals'
cotangents (a zero in one branch beside a partial sum in the other: JAX's ``switch``
refused the branches' differing types), another branch's residuals are padded with zeros
of their type, and the backward scan's carries (the cotangent sums of closed-over values
and of the carries) keep their primals' cotangent types through the body (their zeros
were untyped, the body's sums split). One subprocess: the device count must be set
before JAX starts.
"""

from __future__ import annotations

import textwrap

from tests.multiprocess import run_on_8_devices

SCRIPT = textwrap.dedent(
    """
    import json
    import numpy as np
    import jax
    import jax.numpy as jnp
    import funcgrad as fg
    from jax.sharding import AxisType, PartitionSpec as P

    libs = {
        "jax": dict(jit=jax.jit, grad=jax.grad, lax=jax.lax, set_mesh=jax.set_mesh,
                    reshard=jax.sharding.reshard, np=jnp),
        "fg": dict(jit=fg.jit, grad=fg.grad, lax=fg.lax, set_mesh=fg.set_mesh,
                   reshard=fg.sharding.reshard, np=fg.numpy),
    }

    def show(o):  # (a partial sum's value: its shares summed by JAX's own reshard)
        spec = o.sharding.spec
        val = jax.sharding.reshard(o, P()) if spec.unreduced or spec.reduced else o
        return [str(spec), np.asarray(val).round(5).tolist()]

    def run(lib):
        ns = libs[lib]
        jit, grad, lax, reshard, np_ = ns["jit"], ns["grad"], ns["lax"], ns["reshard"], ns["np"]
        res = {}
        mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
        with ns["set_mesh"](mesh):
            k = jax.device_put(np.arange(8.0, dtype=np.float32), P("x"))
            v = jax.device_put(np.arange(8.0, dtype=np.float32) / 3, P("x"))
            kv = (reshard(k, P(reduced={"x"})), reshard(v, P(reduced={"x"})))

            def f(p, kv, k, v):
                def body(_, store):
                    return lax.cond(
                        p,
                        lambda: (reshard(k, P(reduced={"x"})), reshard(v, P(reduced={"x"}))),
                        lambda: store,
                    )
                return lax.fori_loop(0, 3, body, kv)

            for p in (True, False):
                gs = jit(grad(lambda *a: f(*a)[0].sum(), argnums=(1, 2, 3)))(np.bool_(p), kv, k, v)
                res[f"cond_{p}"] = [show(g) for g in jax.tree_util.tree_leaves(gs)]

            def g(k, v):
                def body(i, c):
                    return c * np_.cos(k) + v
                return lax.fori_loop(0, 4, body, v).sum()

            gs = jit(grad(g, argnums=(0, 1)))(k, v)
            res["loop"] = [show(x) for x in gs]
        return res

    print("RESULT " + json.dumps({lib: run(lib) for lib in ("jax", "fg")}))
    """
)


def test_cond_and_loop_cotangent_types_match_jax():
    res = run_on_8_devices(SCRIPT)
    want, got = res["jax"], res["fg"]
    for key in sorted(want):
        assert got[key] == want[key], key
