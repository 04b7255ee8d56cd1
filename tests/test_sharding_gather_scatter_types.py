"""Gathers and scatters under ``vmap`` over a batch split over a mesh's explicit axes, on
8 CPU devices, against JAX: ``vmap`` of ``x[y]`` and of ``x.at[i].set/add/...`` keep the
batch dimension split (funcgrad folded the batch into the indexed axis, and ``.at[]``
flattened the operand into positions: programs JAX's sharding rules cannot type, so
JAX's lowering raised ``Use .at[...].get(out_sharding=)``), their gradients are typed as
their primals, and ``gather_general``/the scatters type their results as JAX's rules do;
``.at[]`` with ``out_sharding=`` takes its traced indices into the automatic region.
One subprocess: the device count must be set before JAX starts.
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
    import funcgrad.numpy as fnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    libs = {
        "jax": dict(jit=jax.jit, grad=jax.grad, vmap=jax.vmap, np=jnp, lax=jax.lax,
                    set_mesh=jax.set_mesh, typeof=jax.typeof),
        "fg": dict(jit=fg.jit, grad=fg.grad, vmap=fg.vmap, np=fnp, lax=fg.lax,
                   set_mesh=fg.set_mesh, typeof=fg.typeof),
    }

    def show(o):
        return [str(o.sharding.spec), np.asarray(o).round(5).tolist()]

    def run(lib):
        ns = libs[lib]
        jit, grad, vmap, np_, lax = ns["jit"], ns["grad"], ns["vmap"], ns["np"], ns["lax"]
        res = {}
        with ns["set_mesh"](mesh):
            ops = {
                "set": lambda x, i, y: x.at[i].set(y),
                "add": lambda x, i, y: x.at[i].add(y),
                "mul": lambda x, i, y: x.at[i].mul(y),
                "min": lambda x, i, y: x.at[i].min(y),
                "max": lambda x, i, y: x.at[i].max(y),
                "dus": lambda x, i, y: lax.dynamic_update_slice_in_dim(x, y[None], i, axis=0),
            }
            for sname, ospec, uspec in (("xy", P("x", None, "y"), P("x", "y")),
                                        ("x", P("x", None, None), P("x", None))):
                a = np.arange(160, dtype=np.float32).reshape(2, 10, 8) / 40
                operand = jax.device_put(a, NamedSharding(mesh, ospec))
                indices = jax.device_put(np.array([2, 9], np.int32), NamedSharding(mesh, P("x")))
                updates = jax.device_put(np.arange(16, dtype=np.float32).reshape(2, 8) / 7 - 1,
                                         NamedSharding(mesh, uspec))
                for oname, op in ops.items():
                    f = jit(vmap(op))
                    g = grad(lambda *a: np_.sum(np_.sin(f(*a))), argnums=(0, 2))
                    outs = [f(operand, indices, updates), *g(operand, indices, updates)]
                    res[f"{oname}_{sname}"] = [show(o) for o in outs]
            embed = jax.device_put(np.arange(1024, dtype=np.float32).reshape(64, 16) / 100,
                                   NamedSharding(mesh, P("x", None)))
            tok = jax.device_put(np.arange(32, dtype=np.int32).reshape(8, 4) % 16,
                                 NamedSharding(mesh, P()))
            tokv = jax.device_put((np.arange(256, dtype=np.int32).reshape(64, 4) * 7) % 16,
                                  NamedSharding(mesh, P("x", None)))
            seen = []

            def f(e, t, tv):
                out = e.at[:, t].get()
                out2 = vmap(lambda x, y: x[y])(e, tv)
                seen.extend([str(out.aval.sharding.spec), str(out2.aval.sharding.spec)])
                return out, out2

            outs = jit(f)(embed, tok, tokv)
            loss = lambda *a: sum(np_.sum(np_.cos(o)) for o in f(*a))
            res["gather"] = [seen, *[show(o) for o in outs],
                             show(jit(grad(loss))(embed, tok, tokv)),
                             show(grad(loss)(embed, tok, tokv))]
            # ``.at[]`` with ``out_sharding=``: the traced indices enter the automatic
            # region as operands (a closed-over index stayed typed over the explicit axes
            # there, and JAX's lowering refused the region)
            x2 = jax.device_put(np.arange(24, dtype=np.float32).reshape(8, 3) / 5, P("x"))
            i2 = jax.device_put(np.array([2, 0, 1, 1, 0, 2, 2, 1], np.int32), P("x"))
            j2 = jax.device_put(np.array([0, 1, 2, 0, 2, 1, 0, 0], np.int32), P("x"))

            def f1(x, i, j):
                xj = x.at[:, j].get(out_sharding=ns["typeof"](i).sharding)
                return x.at[:, i].set(xj, out_sharding=ns["typeof"](x).sharding)

            def f2(x, i, j):
                xj = x.at[j].get(out_sharding=ns["typeof"](x).sharding)
                return x.at[i].set(xj, out_sharding=ns["typeof"](x).sharding)

            tok2 = jax.device_put(np.arange(32, dtype=np.int32).reshape(8, 4) % 64,
                                  NamedSharding(mesh, P("x", None)))
            emb = jax.device_put(np.arange(1024, dtype=np.float32).reshape(64, 16) / 100,
                                 NamedSharding(mesh, P(None, "x")))
            seen = []

            def f3(e, t):
                out = e.at[t].get(out_sharding=P("x", None, None))
                seen.append(str(out.aval.sharding.spec))
                return out

            # (vmap of the region: values only; funcgrad leaves the batch unsplit where
            # JAX splits it over the operand's axis)
            res["out_sharding"] = [show(jit(f1)(x2, i2, j2)),
                                   show(jit(vmap(f2))(x2, i2, j2))[1],
                                   show(jit(f3)(emb, tok2)),
                                   show(jit(grad(lambda e, t: np_.sum(f3(e, t))))(emb, tok2)),
                                   seen]
        return res

    print("RESULT " + json.dumps({lib: run(lib) for lib in ("jax", "fg")}))
    """
)


def test_gather_scatter_types_under_vmap_match_jax():
    res = run_on_8_devices(SCRIPT)
    want, got = res["jax"], res["fg"]
    assert set(got) == set(want)
    for key in sorted(want):
        for w, g in zip(want[key], got[key], strict=True):
            assert g == w, key
