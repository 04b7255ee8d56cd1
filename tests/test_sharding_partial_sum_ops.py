"""Partial sums through two operations, on 8 CPU devices, against JAX.

``lax.reduce_sum(out_sharding=P(unreduced=...))``: the
sum is left partial over the axes that split the summed dimensions (each device's share
is its own partial sum, no all-reduce: funcgrad summed, then resharded, so the shares
differed), its type names them, an unreduced axis the operand was not summed over is
JAX's ``ShardingTypeError``, an operand already unreduced over one axis may be summed
unreduced over another (funcgrad refused that reshard), and the gradient is typed and
valued as JAX's. ``split`` of a reduced value keeps it reduced, and its transpose
concatenates the pieces' cotangents, an unused piece's zero typed as a partial sum too
(funcgrad refused the split, then concatenated an untyped zero). One subprocess: the
device count must be set before JAX starts.
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
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    libs = {
        "jax": dict(jit=jax.jit, grad=jax.grad, lax=jax.lax, set_mesh=jax.set_mesh,
                    reshard=jax.sharding.reshard, dot=jnp.dot, np=jnp),
        "fg": dict(jit=fg.jit, grad=fg.grad, lax=fg.lax, set_mesh=fg.set_mesh,
                   reshard=fg.sharding.reshard, dot=fg.numpy.dot, np=fg.numpy),
    }

    def shares(o):
        return [np.asarray(s.data).tolist() for s in o.addressable_shards]

    def run(lib):
        ns = libs[lib]
        jit, grad, lax, reshard = ns["jit"], ns["grad"], ns["lax"], ns["reshard"]
        res = {}
        mesh1 = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
        with ns["set_mesh"](mesh1):
            x = jax.device_put(np.arange(8, dtype=np.float32), P("x"))
            seen = []

            def f(x):
                out = lax.reduce_sum(x, axes=(0,), out_sharding=P(unreduced={"x"}))
                seen.append(str(out.aval.sharding.spec))
                return out

            out = jit(f)(x)
            res["scalar"] = [seen, str(out.sharding.spec), shares(out),
                             np.asarray(reshard(out, P())).tolist()]
            g = jit(grad(lambda x: reshard(f(x), P()).sum()))(x)
            res["scalar_grad"] = [str(g.sharding.spec), np.asarray(g).tolist()]
        mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
        with ns["set_mesh"](mesh):
            a = jax.device_put(np.arange(16, dtype=np.float32).reshape(4, 2, 2), P("x", "y", None))
            out = jit(lambda a: lax.reduce_sum(a, axes=(0, 1),
                                               out_sharding=P(None, unreduced={"x"})))(a)
            res["partial_x"] = [str(out.sharding.spec),
                                np.asarray(reshard(out, P(None))).tolist()]
            b = jax.device_put(np.arange(16, dtype=np.float32).reshape(8, 2), P("y", None))
            try:
                jit(lambda b: lax.reduce_sum(b, axes=(0,),
                                             out_sharding=P(None, unreduced={"x"})))(b)
                res["error"] = None
            except Exception as e:
                res["error"] = [type(e).__name__, str(e).split(". Got")[0]]
            i1 = jax.device_put(np.arange(16, dtype=np.float32).reshape(8, 2), P("x", "y"))
            i2 = jax.device_put(np.arange(8, dtype=np.float32).reshape(2, 4), P("y", None))
            arr = ns["dot"](i1, i2, out_sharding=P("x", unreduced={"y"}))
            for axes in ((0,), (0, 1)):
                o = jit(lambda v: lax.reduce_sum(v, axes=axes,
                                                 out_sharding=P(unreduced={"x"})))(arr)
                res[f"from_unreduced_{axes}"] = [
                    str(o.sharding.spec), np.asarray(reshard(o, P())).tolist()]
        with ns["set_mesh"](mesh1):
            x = jax.device_put(np.arange(8.0, dtype=np.float32).reshape(2, 4), P("x"))
            w = jax.device_put(np.arange(64.0, dtype=np.float32).reshape(4, 16) / 9,
                               P(reduced={"x"}))

            def fn(x, w):
                w1, w2 = ns["np"].split(w, 2, axis=-1)
                return (x @ w1).sum()

            gs = jit(grad(fn, argnums=(0, 1)))(x, w)
            res["split"] = [[str(g.sharding.spec),
                             np.asarray(jax.sharding.reshard(g, P())).round(4).tolist()]
                            for g in gs]
        return res

    print("RESULT " + json.dumps({lib: run(lib) for lib in ("jax", "fg")}))
    """
)


def test_reduce_sum_unreduced_and_split_of_reduced_match_jax():
    res = run_on_8_devices(SCRIPT)
    want, got = res["jax"], res["fg"]
    assert want["error"] is not None and want["error"][0] == "ShardingTypeError"
    for key in sorted(want):
        assert got[key] == want[key], key
