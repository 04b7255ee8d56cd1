"""Sharding in funcgrad's types, on 8 CPU devices, against JAX's own ``jax.typeof``.

The explicit splits of a 2-d array over a (4, 2) mesh go through a set
of small programs (elementwise with broadcasting, transpose, reductions, reshapes,
slices, dots, gradients); ``fg.typeof`` of each result, eager and under ``fg.jit``, must
print as ``jax.typeof`` of JAX's same program does, and the values must agree. Then the
edges: ``out_sharding`` on dots and samplers, JAX's refusal of an ambiguous contraction,
and untyped values (no explicit mesh) printing as before.
"""

from __future__ import annotations

import textwrap

import jax
import numpy as np
import pytest
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

from funcgrad.core.ir import ShapedArray
from tests.multiprocess import run_on_8_devices

SCRIPT = textwrap.dedent(
    """
    import itertools, json
    import numpy as np
    import jax
    import jax.numpy as jnp
    import funcgrad as fg
    import funcgrad.numpy as fnp
    from funcgrad.errors import ShardingTypeError

    out = {"typeof": [], "values": 0.0}
    untyped = fg.typeof(fnp.ones((2, 3)))
    out["untyped"] = [str(untyped), repr(untyped), str(untyped.sharding.spec)]

    # a tracer's aval holds a NamedSharding as JAX's does (over the context mesh,
    # nothing split, for a value not split over explicit axes): no mesh here, then
    # under set_mesh below
    def aval_shardings(lib, jit, grad, vmap, np_):
        seen = []

        def record(*vs):
            for v in vs:
                a = v.aval
                seen.append([str(a), str(a.sharding.spec), str(a.sharding.mesh)])

        def f(v, u):
            w = v.T * 2.0
            record(v, w, u + 1.0)
            return np_.sum(w) + np_.sum(u)

        x2 = np.ones((8, 4), np.float32)
        jit(f)(x2, np.ones(4, np.float32))
        grad(f, argnums=(0, 1))(x2, np.ones(4, np.float32))
        vmap(f)(np.ones((3, 8, 4), np.float32), np.ones((3, 4), np.float32))
        return seen

    out["aval_no_mesh"] = [aval_shardings(*libs) for libs in (
        ("fg", fg.jit, fg.grad, fg.vmap, fnp), ("jax", jax.jit, jax.grad, jax.vmap, jnp))]

    mesh = fg.make_mesh((4, 2), ("X", "Y"))
    fg.set_mesh(mesh)
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(8, 4)).astype(np.float32)
    w0 = rng.normal(size=(4, 6)).astype(np.float32)
    row = rng.normal(size=(1, 4)).astype(np.float32)

    def programs(np_):
        lax_ = fg.lax if np_ is fnp else jax.lax
        grad_ = fg.grad if np_ is fnp else jax.grad
        return {
            "sin_T": lambda x: np_.sin(x).T,
            "add_row": lambda x: x + row,
            "scale": lambda x: 2.0 * x - 1.0,
            "sum0": lambda x: x.sum(0),
            "sum1": lambda x: np_.sum(x * x, axis=1),
            "flatten": lambda x: x.reshape(32),
            "split": lambda x: x.reshape(8, 2, 2),
            "slice": lambda x: x[2:6],
            "dot_w": lambda x: np_.dot(x, w0),
            "outer": lambda x: x[:, :1] * x[:1, :],
            "where": lambda x: np_.where(x > 0, x, 0.0),
            "gather": lambda x: x[:, np.array([0, 3, 1])],
            "cumsum": lambda x: np_.cumsum(x, axis=1),
            "argmax": lambda x: np_.argmax(x, axis=1),
            "stack_concat": lambda x: np_.concatenate([np_.stack([x, x]), x[None]]),
            "window_max": lambda x: lax_.reduce_window(x, -np.inf, lax_.max, (1, 2), (1, 2), "VALID"),
            "dynamic_slice": lambda x: lax_.dynamic_slice(x, (2, 0), (4, 4)),
            "dynamic_update": lambda x: lax_.dynamic_update_slice(x, x * 2.0, (0, 0)),
            # a cotangent takes its primal's type (a sum's transpose broadcasts into it)
            "grad_slice": lambda x: grad_(lambda v: np_.square(np_.sum(v[2:6] * 3.0)))(x),
            "grad": lambda x: None,
        }

    def fg_grad(x):
        return fg.grad(lambda v: fnp.sum(fnp.tanh(fnp.dot(v, w0)) ** 2))(x)

    def jax_grad(x):
        return jax.grad(lambda v: jnp.sum(jnp.tanh(jnp.dot(v, w0)) ** 2))(x)

    # every split of a 2-d array over a (4, 2) mesh, less the two mirrored by the others
    axes = [None, "X", "Y"]
    for spec in itertools.product(axes, axes):
        if spec[0] is not None and spec[0] == spec[1] or spec in ((None, "Y"), ("Y", None)):
            continue
        x = fg.device_put(x0, fg.P(*spec))
        fgp, jp = programs(fnp), programs(jnp)
        fgp["grad"], jp["grad"] = fg_grad, jax_grad
        for name in fgp:
            def outcome(run):
                try:
                    return run()
                except Exception as e:
                    return type(e).__name__
            want = outcome(lambda: jax.jit(jp[name])(x))
            want_eager = outcome(lambda: jp[name](x))
            seen = []
            def traced(v):
                r = fgp[name](v)
                seen.append(str(fg.typeof(r)))
                return r
            eager = outcome(lambda: fgp[name](x))
            jitted = outcome(lambda: fg.jit(traced)(x))
            found = [str(spec), name]
            for r in (want_eager, eager, want, jitted):
                found.append(r if isinstance(r, str) else str(fg.typeof(r)))
            # the type inside fg.jit, where JAX's program runs
            found.append(seen[0] if seen and not isinstance(want, str) else found[-2])
            out["typeof"].append(found)
            if not isinstance(want, str):
                for r in (eager, jitted):
                    if not isinstance(r, str):
                        err = float(np.max(np.abs(np.asarray(r) - np.asarray(want))))
                        out["values"] = max(out["values"], err)

    # tracers' avals over the explicit mesh of set_mesh: split and unsplit values
    def aval_shardings_typed(jit, grad, np_):
        seen = []
        x = fg.device_put(x0, fg.P("X", "Y"))
        u = fg.device_put(x0[0], fg.P())

        def f(v, u):
            w = v.T * 2.0
            # (a *_like of a traced value takes its type, as JAX's)
            made = (np_.zeros_like(v), np_.full_like(w, 3.0), np_.ones_like(u))
            for a in (v, w, u + 1.0, np_.sum(w, axis=0), *made):
                seen.append([str(a.aval), str(a.aval.sharding.spec), str(a.aval.sharding.mesh)])
            return np_.sum(w) + np_.sum(u)

        jit(f)(x, u)
        jit(grad(f))(x, u)
        return seen

    out["aval_mesh"] = [aval_shardings_typed(fg.jit, fg.grad, fnp),
                        aval_shardings_typed(jax.jit, jax.grad, jnp)]

    # one ShardingTypeError: funcgrad's rules raise it (an ambiguous contraction) and so
    # does JAX's lowering of what funcgrad's rules leave to it (a reshape JAX refuses),
    # eagerly and under jit; one except clause catches both, as under JAX
    from jax._src.core import ShardingTypeError as JaxShardingTypeError
    xr = fg.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4), fg.P("X", "Y"))
    xa = fg.device_put(np.ones((8, 4), np.float32), fg.P(None, "X"))
    xb = fg.device_put(np.ones((4, 16), np.float32), fg.P("X", None))
    caught = {}
    for lib, np_, lax_, jit in (("fg", fnp, fg.lax, fg.jit), ("jax", jnp, jax.lax, jax.jit)):
        for name, run in (
            ("dot", lambda: np_.dot(xa, xb)),
            ("dot_jit", lambda: jit(np_.dot)(xa, xb)),
            ("reshape", lambda: lax_.reshape(xr, (4, 8))),
            ("reshape_jit", lambda: jit(lambda v: lax_.reshape(v, (4, 8)))(xr)),
        ):
            try:
                run()
                caught[lib + "." + name] = None
            except ShardingTypeError as e:
                caught[lib + "." + name] = [isinstance(e, JaxShardingTypeError),
                                            str(e).splitlines()[0][:80]]
            except Exception as e:
                caught[lib + "." + name] = [type(e).__name__]
    out["one_error"] = caught

    # a contraction split on both sides: JAX's error, or out_sharding
    x = fg.device_put(np.arange(8 * 4.0, dtype=np.float32).reshape(8, 4), fg.P(None, "X"))
    y = fg.device_put(np.arange(4 * 16.0, dtype=np.float32).reshape(4, 16), fg.P("X", None))
    msgs = []
    for dot in (fnp.dot, jnp.dot):
        try:
            dot(x, y)
            msgs.append(None)
        except Exception as e:
            msgs.append([type(e).__name__, str(e).splitlines()[0]])
    out["ambiguous"] = msgs
    try:
        fg.jit(fnp.dot)(x, y)
    except ShardingTypeError:
        out["ambiguous_jit"] = "ShardingTypeError"
    z = fnp.dot(x, y, out_sharding=fg.P("X", None))
    zj = jnp.dot(x, y, out_sharding=jax.P("X", None))
    out["out_sharding"] = [str(fg.typeof(z)), str(jax.typeof(zj)),
                           float(np.max(np.abs(np.asarray(z) - zj)))]
    es = {}
    for lib, np_, jit in (("fg", fnp, fg.jit), ("jax", jnp, jax.jit)):
        es[lib] = [
            np_.einsum("ij,jk->ik", x, y, out_sharding=jax.P("X", None)),
            jit(lambda a, b: np_.einsum("ij,jk->ki", a, b, out_sharding=jax.P(None, "X")))(x, y),
            np_.einsum("ij,jk,k->j", x, y, np.ones(16, np.float32), out_sharding=jax.P("X")),
        ]
    out["einsum"] = [[str(fg.typeof(a)) for a in es["fg"]], [str(jax.typeof(a)) for a in es["jax"]],
                     max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                         for a, b in zip(es["fg"], es["jax"]))]
    loss = lambda np_: lambda a, b: np_.sum(np_.dot(a, b, out_sharding=jax.P("X", None)) ** 2)
    g = fg.jit(fg.grad(loss(fnp), argnums=(0, 1)))(x, y)
    gj = jax.jit(jax.grad(loss(jnp), argnums=(0, 1)))(x, y)
    out["out_sharding_grad"] = [[str(fg.typeof(a)) for a in g], [str(jax.typeof(a)) for a in gj],
                                max(float(np.max(np.abs(np.asarray(a) - b))) for a, b in zip(g, gj))]
    bx = fg.vmap(lambda a: fnp.dot(a, y[:, :4], out_sharding=jax.P(None)))(x[:, :4])
    out["vmap_out_sharding"] = float(np.max(np.abs(np.asarray(bx) - np.asarray(x[:, :4]) @ np.asarray(y[:4, :4]))))

    # reshape, broadcast_in_dim, iota and empty with out_sharding (and reshape's transpose)
    x = fg.device_put(x0, fg.P(None, "X"))
    placed = {}
    for lib, np_, lax_, jit, grad in (("fg", fnp, fg.lax, fg.jit, fg.grad),
                                      ("jax", jnp, jax.lax, jax.jit, jax.grad)):
        flat = lambda v: np_.reshape(v, (32,), out_sharding=jax.P("X"))
        placed[lib] = [
            flat(x),
            jit(flat)(x),
            jit(grad(lambda v: np_.sum(np_.sin(flat(v)) ** 2)))(x),
            lax_.broadcast_in_dim(x0[0], (8, 4), (1,), out_sharding=jax.P("X", None)),
            lax_.broadcasted_iota(np.int32, (8, 4), 1, out_sharding=jax.P(None, "Y")),
            lax_.empty((8, 4), np.float32, out_sharding=jax.P("Y", "X")),
            np_.zeros((8, 4), out_sharding=jax.P("X", "Y")),
            np_.full_like(x, 2.0, out_sharding=jax.P(None, "Y")),
            jit(lambda: np_.arange(8, out_sharding=jax.P("X")))(),
            lax_.reduce_sum(x, (0,), out_sharding=jax.P("Y")),
        ]
    out["out_sharding_shapes"] = [[str(fg.typeof(a)) for a in placed["fg"]],
                                  [str(jax.typeof(a)) for a in placed["jax"]],
                                  max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                                      for i, (a, b) in enumerate(zip(placed["fg"], placed["jax"])) if i != 5)]

    # at[] with out_sharding (JAX's advice for a gather it cannot type)
    x = fg.device_put(x0, fg.P("X", None))
    take = np.array([0, 3, 1])
    ats = {}
    for lib, jit in (("fg", fg.jit), ("jax", jax.jit)):
        ats[lib] = [
            fnp.asarray(x).at[take].get(out_sharding=jax.P()) if lib == "fg"
            else x.at[take].get(out_sharding=jax.P()),
            jit(lambda v: v.at[take].set(1.0, out_sharding=jax.P("X", None)))(x),
            jit(lambda v: v.at[take].add(np.full((3, 4), 2.0, np.float32), out_sharding=jax.P("X")))(x),
            jit(lambda v: v.at[take].max(0.5, out_sharding=jax.P(None, None)))(x),
        ]
    out["at"] = [[str(fg.typeof(a)) for a in ats["fg"]], [str(jax.typeof(a)) for a in ats["jax"]],
                 max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                     for a, b in zip(ats["fg"], ats["jax"]))]

    # samplers placed by out_sharding: JAX's numbers, JAX's type
    key = 0
    samplers = {
        "normal": lambda r, k, s: r.normal(k, (8, 4), out_sharding=s),
        "uniform": lambda r, k, s: r.uniform(k, (8, 4), out_sharding=s),
        "bits": lambda r, k, s: r.bits(k, (8, 4), out_sharding=s),
        "randint": lambda r, k, s: r.randint(k, (8, 4), 0, 10, out_sharding=s),
        "bernoulli": lambda r, k, s: r.bernoulli(k, 0.3, (8, 4), out_sharding=s),
        "gumbel": lambda r, k, s: r.gumbel(k, (8, 4), out_sharding=s),
        "cauchy": lambda r, k, s: r.cauchy(k, (8, 4), out_sharding=s),
        "permutation": lambda r, k, s: r.permutation(k, 8, out_sharding=jax.P("X")),
    }
    out["samplers"] = {}
    for name, f in samplers.items():
        a = f(fg.random, fg.random.PRNGKey(3), fg.P("X", "Y"))
        b = f(jax.random, jax.random.PRNGKey(3), jax.P("X", "Y"))
        out["samplers"][name] = [str(fg.typeof(a)), str(jax.typeof(b)),
                                 bool(np.array_equal(np.asarray(a), np.asarray(b)))]

    # switching axis types: use_abstract_mesh inside jit, auto_axes, explicit_axes
    from funcgrad.sharding import AbstractMesh, AxisType, auto_axes, explicit_axes
    from funcgrad.sharding import use_abstract_mesh
    x = fg.device_put(x0, fg.P("X", "Y"))

    def other_mesh(sh, reshard_):
        def f(v):
            with sh.use_abstract_mesh(sh.AbstractMesh((8,), ("A",), (sh.AxisType.Explicit,))):
                return reshard_(v, jax.P("A", None)) * 2
        return f

    z = fg.jit(other_mesh(fg.sharding, fg.reshard))(x)
    zj = jax.jit(other_mesh(jax.sharding, jax.sharding.reshard))(x)
    out["use_abstract_mesh"] = [str(fg.typeof(z)), str(jax.typeof(zj)),
                                float(np.max(np.abs(np.asarray(z) - np.asarray(zj))))]
    a = fg.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), fg.P("X", None))
    b = fg.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), fg.P(None, "X"))
    inside = []

    def add2_of(sh, np_):
        def add2(u, v):
            inside.append(str(sh.get_abstract_mesh()))
            return np_.sin(u) + v
        return add2

    runs = {}
    for lib, sh, np_, jit, grad in (("fg", fg.sharding, fnp, fg.jit, fg.grad),
                                    ("jax", jax.sharding, jnp, jax.jit, jax.grad)):
        f = sh.auto_axes(add2_of(sh, np_))
        eager = f(a, b, out_sharding=jax.P("X", None))
        jitted = jit(lambda u, v: f(u, v, out_sharding=jax.P("X", None)))(a, b)
        g = jit(grad(lambda u, v: np_.sum(f(u, v, out_sharding=jax.P("X", None)) ** 2)))(a, b)
        runs[lib] = [eager, jitted, g]
    out["auto_axes"] = [[str(fg.typeof(r)) for r in runs["fg"]],
                        [str(jax.typeof(r)) for r in runs["jax"]],
                        max(float(np.max(np.abs(np.asarray(p) - np.asarray(q))))
                            for p, q in zip(runs["fg"], runs["jax"])),
                        sorted(set(inside))]
    try:
        auto_axes(lambda u: u)(a)
    except TypeError as e:
        out["auto_axes_missing"] = str(e)

    automesh = fg.make_mesh((4, 2), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
    seen = {}

    def g_of(sh, np_, lib):
        def g(v):
            seen[lib] = [str(sh.get_abstract_mesh().axis_types), str(fg.typeof(v))]
            return v * 2
        return g

    with fg.set_mesh(automesh):
        v = fg.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), jax.P("X", "Y"))
        res = {}
        for lib, sh, np_, jit in (("fg", fg.sharding, fnp, fg.jit), ("jax", jax.sharding, jnp, jax.jit)):
            g = sh.explicit_axes(g_of(sh, np_, lib))
            res[lib] = jit(lambda u: g(np_.sin(u), in_sharding=jax.P("X", "Y")) + 1)(v)
    seen["jax"][1] = None  # (fg.typeof of a JAX tracer is not the point)
    out["explicit_axes"] = [seen["fg"], seen["jax"][0],
                            float(np.max(np.abs(np.asarray(res["fg"]) - np.asarray(res["jax"]))))]

    # shard_map over the mesh of set_mesh, its in_specs read from the arguments' types
    x = fg.device_put(np.arange(8 * 4.0, dtype=np.float32).reshape(8, 4), fg.P(None, "X"))
    y = fg.device_put(np.arange(4 * 16.0, dtype=np.float32).reshape(4, 16), fg.P("X", None))
    res = {}
    for lib, smap, np_, lax_ in (("fg", fg.shard_map, fnp, fg.lax), ("jax", jax.shard_map, jnp, jax.lax)):
        @smap(out_specs=jax.P("X", None))
        def matmul(xs, ys):
            return lax_.psum_scatter(np_.dot(xs, ys), "X", tiled=True)
        res[lib] = matmul(x, y)
    out["shard_map"] = [str(fg.typeof(res["fg"])), str(jax.typeof(res["jax"])),
                        float(np.max(np.abs(np.asarray(res["fg"]) - np.asarray(res["jax"]))))]
    # a convolution over a split batch (and a split kernel: JAX asks for out_sharding)
    xc = np.linspace(-1, 1, 8 * 6 * 4, dtype=np.float32).reshape(8, 6, 4)
    kc = np.linspace(-1, 1, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    convs = []
    for lib, lax_ in (("fg", fg.lax), ("jax", jax.lax)):
        row = []
        for xs, ks in ((fg.P("X"), fg.P()), (fg.P("X", "Y"), fg.P()), (fg.P(), fg.P(None, "Y"))):
            try:
                r = lax_.conv_general_dilated(
                    fg.device_put(xc, xs), fg.device_put(kc, ks), (1,), "SAME",
                    dimension_numbers=("NWC", "WIO", "NWC"))
                row.append([str(jax.typeof(r) if lib == "jax" else fg.typeof(r)), np.asarray(r)])
            except Exception as e:
                row.append([type(e).__name__, None])
        convs.append(row)
    out["conv"] = [[a[0] for a in convs[0]], [a[0] for a in convs[1]],
                   max(float(np.max(np.abs(a[1] - b[1]))) for a, b in zip(*convs)
                       if a[1] is not None and b[1] is not None)]
    # out_sharding on array, asarray and repeat (repeat computes with the axes automatic)
    reps = {}
    for lib, np_, jit in (("fg", fnp, fg.jit), ("jax", jnp, jax.jit)):
        xi = np.arange(16).reshape(8, 2)
        e = fg.device_put(np.eye(8, dtype=np.float32), fg.P("X"))
        rs = [
            np_.array(xi, dtype=np_.int32, out_sharding=jax.P("X")),
            # (with a dtype of its own: JAX 0.10.2's asarray of a NumPy array of the
            # right dtype skips out_sharding, its device_put fast path)
            np_.asarray(xi, dtype=np.float32, out_sharding=jax.P(None, "Y")),
            jit(lambda v: np_.array(v * 2, out_sharding=jax.P("Y")))(e),
            np_.repeat(e, np.tile([1, 2, 1, 0], 2), axis=0, out_sharding=jax.P("X")),
            np_.repeat(e, 2, axis=1, out_sharding=jax.P("X", "Y")),
            jit(lambda v: np_.repeat(v, 3, out_sharding=jax.P("X")))(e),
            jit(lambda v, r: np_.repeat(v, r, axis=0, total_repeat_length=12,
                                        out_sharding=jax.P("Y")))(e, np.tile([1, 2, 1, 0], 2)),
        ]
        reps[lib] = [[str(jax.typeof(r) if lib == "jax" else fg.typeof(r)),
                      np.asarray(r).tolist()] for r in rs]
    out["out_sharding_array_repeat"] = [reps["fg"], reps["jax"]]

    # the lowered and compiled stages' in_avals: typed by in_shardings (a NumPy argument),
    # by the argument's own type, or unsplit over the context mesh; the trace itself sees
    # the arguments' own types, as JAX's
    stages = {}
    for lib, jit in (("fg", fg.jit), ("jax", jax.jit)):
        seen = []
        f = jit(lambda v, w: (seen.append(str(fg.typeof(v))), v * 2 + w.sum())[1],
                in_shardings=(jax.P("X"), None))
        lowered = f.lower(np.arange(8.0, dtype=np.float32), fg.device_put(x0, fg.P(None, "Y")))
        avals = [*lowered.in_avals[0], *lowered.compile().in_avals[0]]
        stages[lib] = [seen, [[str(a), str(a.sharding)] for a in avals]]
    out["stage_in_avals"] = [stages["fg"], stages["jax"]]
    # unreduced and reduced specs (JAX's partial sums in types): a dot over a split
    # contraction left unreduced, sums of such, reduce_sum, a transpose and a cast keep
    # it, a reshard reduces it; types and values, eager and jitted, and the gradient
    xu = fg.device_put(np.arange(16.0, dtype=np.float32).reshape(8, 2), fg.P("X", "Y"))
    yu = fg.device_put(np.arange(16.0, dtype=np.float32).reshape(2, 8) / 7, fg.P("Y", None))
    partial = {}
    for lib, L, np_ in (("fg", fg, fnp), ("jax", jax, jnp)):
        seen = []
        def prog(a, b, L=L, np_=np_, seen=seen):
            m1 = np_.einsum("xy,yz->xz", a, b, out_sharding=jax.P("X", unreduced={"Y"}))
            m2 = np_.dot(a, b, out_sharding=jax.P("X", None, unreduced={"Y"}))
            s = m1 + m2
            t = np_.transpose(s).astype(np_.float16)
            r = np_.sum(s, axis=1)
            seen.extend(str(L.typeof(v)) for v in (m1, s, t, r))
            return L.sharding.reshard(s, jax.P("X")), L.sharding.reshard(r, jax.P("X"))
        vals = [prog(xu, yu), L.jit(prog)(xu, yu)]
        loss = lambda a, b, prog=prog, np_=np_: np_.sum(prog(a, b)[0] * 3.0)
        grads = L.jit(L.grad(loss, argnums=(0, 1)))(xu, yu)
        partial[lib] = [seen, [np.asarray(v).tolist() for pair in vals for v in pair],
                        [[str(g.sharding.spec), np.asarray(g).tolist()] for g in grads]]
    out["unreduced"] = [partial["fg"], partial["jax"]]
    m1 = fg.make_mesh((2,), ("x",), devices=jax.devices()[:2])
    with fg.set_mesh(m1):
        red = fg.device_put(np.arange(8.0, dtype=np.float32), fg.P(reduced={"x"}))
        split = fg.device_put(np.arange(8.0, dtype=np.float32), fg.P("x"))
        a1 = fg.device_put(np.arange(8.0, dtype=np.float32).reshape(4, 2) / 8, fg.P(reduced={"x"}))
        a2 = fg.device_put(np.arange(16.0, dtype=np.float32).reshape(2, 8) / 16, fg.P(None, "x"))
        reduced = {}
        for lib, L, np_ in (("fg", fg, fnp), ("jax", jax, jnp)):
            rows = [str(L.jit(lambda v: v * 2)(red).sharding.spec)]
            for f in (lambda a, b: np_.sum(a * b), lambda a, b: np_.sum(a + b)):
                for g in L.jit(L.grad(f, argnums=(0, 1)))(red, red):
                    rows.append([str(g.sharding.spec),
                                 np.asarray(L.sharding.reshard(g, jax.P())).tolist()])
            f = lambda x, y, np_=np_: np_.sum(np_.sin(x) @ np_.sin(y))
            for g in L.jit(L.grad(f, argnums=(0, 1)))(a1, a2):
                rows.append([str(g.sharding.spec),
                             np.asarray(L.sharding.reshard(g, jax.P(None, None))).tolist()])
            # a reshape, a select and a scaling by a constant of a reduced value: their
            # gradients are unreduced (JAX's seed, transposes and constants typed so)
            lax_ = L.lax
            for f in (lambda v, np_=np_: np_.sum(np_.reshape(L.jit(lambda u: u * 2)(v), (4, 2))),
                      lambda v, np_=np_, lax_=lax_: np_.sum(lax_.select(v > 3, v, v * 0.5))):
                g = L.jit(L.grad(f))(red)
                rows.append([str(g.sharding.spec),
                             np.asarray(L.sharding.reshard(g, jax.P())).tolist()])
            reduced[lib] = rows
        out["reduced"] = [reduced["fg"], reduced["jax"]]
    # JAX's refusals, raised by funcgrad's own rules while tracing (fg.jit(...).trace)
    sin_u = lambda np_: lambda a, b: np_.sin(
        np_.dot(a, b, out_sharding=jax.P("X", None, unreduced={"Y"})))
    add_mixed = lambda np_: lambda a, b: (
        np_.dot(a, b, out_sharding=jax.P("X", None, unreduced={"Y"}))
        + np_.dot(a, b, out_sharding=jax.P("X", None)))
    wrong_axis = lambda np_: lambda a, b: np_.dot(
        a, b, out_sharding=jax.P(None, None, unreduced={"X"}))
    dot_of_u = lambda np_: lambda a, b: np_.dot(
        np_.dot(a, b, out_sharding=jax.P("X", None, unreduced={"Y"})), b.T)
    refusals = {}
    for lib, L, np_ in (("fg", fg, fnp), ("jax", jax, jnp)):
        row = []
        for make in (sin_u, add_mixed, wrong_axis, dot_of_u):
            try:
                L.jit(make(np_)).trace(xu, yu)
                row.append(None)
            except Exception as e:
                row.append([type(e).__name__, str(e).split(".")[0][:60]])
        refusals[lib] = row
    out["unreduced_errors"] = [refusals["fg"], refusals["jax"]]
    print("RESULT " + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def result() -> dict:
    return run_on_8_devices(SCRIPT)


def test_typeof_follows_jax_through_every_split(result):
    # (spec, program, then JAX's eager type or error and funcgrad's, JAX's jitted type or
    # error and fg.jit's, and the type inside fg.jit where JAX's jitted program runs)
    bad = [r for r in result["typeof"] if r[2] != r[3] or not r[4] == r[5] == r[6]]
    assert not bad, bad
    assert len(result["typeof"]) == 5 * 20
    assert result["values"] < 1e-4, result["values"]


def test_untyped_values_print_as_before(result):
    assert result["untyped"] == ["float32[2,3]", "ShapedArray(float32[2,3])", "P(None, None)"]


def test_tracer_avals_hold_jaxs_sharding(result):
    # (each: the aval, its spec and its mesh, for every value read inside jit, grad and
    # vmap with no mesh in context; then inside jit and jit of grad over set_mesh's)
    ours, theirs = result["aval_no_mesh"]
    assert ours == theirs and len(ours) == 9, result["aval_no_mesh"]
    ours, theirs = result["aval_mesh"]
    assert ours == theirs and len(ours) == 14, result["aval_mesh"]
    assert ours[4][0] == "float32[8@X,4@Y]" and ours[5][0] == "float32[4@Y,8@X]"
    assert "8@X,4@Y" in ours[0][0] and "Explicit" in ours[0][2]


def test_one_sharding_type_error(result):
    # funcgrad's rule (dot) and JAX's lowering (reshape): the one class, caught by
    # funcgrad.errors.ShardingTypeError and JAX's alike, with JAX's messages
    caught = result["one_error"]
    for name in ("dot", "dot_jit", "reshape", "reshape_jit"):
        ours, theirs = caught["fg." + name], caught["jax." + name]
        assert ours is not None and ours[0] is True, (name, ours)
        assert ours == theirs, (name, ours, theirs)


def test_out_sharding_on_array_and_repeat(result):
    # (funcgrad's array, asarray and repeat had no out_sharding)
    ours, theirs = result["out_sharding_array_repeat"]
    assert ours == theirs, [(a[0], b[0]) for a, b in zip(ours, theirs)]
    assert [a[0] for a in ours][:2] == ["int32[8@X,2]", "float32[8,2@Y]"]


def test_stages_in_avals_as_jax(result):
    # (they showed no sharding: an empty mesh, nothing split)
    ours, theirs = result["stage_in_avals"]
    assert ours == theirs, (ours, theirs)
    assert ours[0] == ["float32[8]"] and ours[1][0][0] == "float32[8@X]"


def test_ambiguous_contraction_is_jaxs_error(result):
    ours, theirs = result["ambiguous"]
    assert ours == theirs and ours[0] == "ShardingTypeError", result["ambiguous"]
    assert result["ambiguous_jit"] == "ShardingTypeError"


def test_out_sharding_on_dots(result):
    ours, theirs, err = result["out_sharding"]
    assert ours == theirs == "float32[8@X,16]" and err == 0.0
    ours, theirs, err = result["einsum"]
    assert ours == theirs and err == 0.0, result["einsum"]
    ours, theirs, err = result["out_sharding_grad"]
    assert ours == theirs and err < 1e-3, result["out_sharding_grad"]
    assert result["vmap_out_sharding"] < 1e-4


def test_switching_axis_types(result):
    ours, theirs, err = result["use_abstract_mesh"]
    assert ours == theirs == "float32[8@A,4]" and err == 0.0
    ours, theirs, err, meshes = result["auto_axes"]
    assert ours == theirs and err < 1e-4, result["auto_axes"]
    assert all("Auto, Auto" in m for m in meshes), meshes
    assert "out_sharding" in result["auto_axes_missing"]
    (types, inner), jax_types, err = result["explicit_axes"]
    assert types == jax_types and "Explicit" in types and inner == "float32[4@X,4@Y]"
    assert err < 1e-5


def test_shard_map_over_the_context_mesh(result):
    ours, theirs, err = result["shard_map"]
    assert ours == theirs == "float32[8@X,16]" and err == 0.0


def test_out_sharding_on_at(result):
    ours, theirs, err = result["at"]
    assert ours == theirs and err == 0.0, result["at"]


def test_out_sharding_on_shape_ops(result):
    ours, theirs, err = result["out_sharding_shapes"]
    assert ours == theirs and err < 1e-5, result["out_sharding_shapes"]


def test_samplers_out_sharding(result):
    for name, (ours, theirs, same) in result["samplers"].items():
        assert ours == theirs and same, (name, ours, theirs)


def test_conv_types(result):
    ours, theirs, err = result["conv"]
    assert ours == theirs and err < 1e-4, result["conv"]


def test_shaped_array_reads_a_given_sharding_as_jax():
    # (a sharding given to the type keeps its explicit axes, one entry per dimension)
    types = (AxisType.Explicit, AxisType.Explicit, AxisType.Auto, AxisType.Manual)
    mesh = AbstractMesh((2, 2, 2, 2), ("a", "b", "c", "d"), axis_types=types)
    ours, theirs = (
        ShapedArray((16, 8, 4, 2), np.float32),
        jax.core.ShapedArray((16, 8, 4, 2), np.float32),
    )
    for spec in (P(("a", "b", "c"), "d"), P(("a", "c"), "b", "d"), P(("a", "d"), "b", "c"), P()):
        s = NamedSharding(mesh, spec)
        assert ours.update(sharding=s).sharding.spec == theirs.update(sharding=s).sharding.spec
    one = AbstractMesh((2,), ("x",), axis_types=(AxisType.Explicit,))
    s = NamedSharding(one, P("x"))
    got = ShapedArray((8, 2), np.int32, sharding=s).sharding.spec
    assert got == jax.core.ShapedArray((8, 2), np.int32, sharding=s).sharding.spec


def test_unreduced_specs_as_jax(result):
    # (funcgrad iterated specs JAX refuses to iterate, and dropped unreduced={...})
    ours, theirs = result["unreduced"]
    assert ours[0] == theirs[0], (ours[0], theirs[0])
    assert ours[0][:4] == ["float32[8@X,8]{U:Y}"] * 2 + ["float16[8,8@X]{U:Y}", "float32[8@X]{U:Y}"]
    np.testing.assert_allclose(np.array(ours[1][0]), np.array(theirs[1][0]), rtol=1e-6)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=1e-6)
    for (spec, g), (jspec, jg) in zip(ours[2], theirs[2]):
        assert spec == jspec
        np.testing.assert_allclose(np.array(g), np.array(jg), rtol=1e-6)


def test_reduced_specs_as_jax(result):
    # a reduced value's cotangent is unreduced (JAX's to_ct_spec swaps the two sets)
    ours, theirs = result["reduced"]
    assert ours[0] == theirs[0] == "P(None, reduced={'x'})"
    assert len(ours) == len(theirs) == 9
    for a, b in zip(ours[1:], theirs[1:]):
        assert a[0] == b[0], (a[0], b[0])
        np.testing.assert_allclose(np.array(a[1]), np.array(b[1]), rtol=1e-5)
    assert ours[1][0] == "P(None, unreduced={'x'})"


def test_unreduced_refusals_are_jaxs(result):
    ours, theirs = result["unreduced_errors"]
    assert ours == theirs, (ours, theirs)
    assert [r[0] for r in ours] == ["NotImplementedError"] + ["ShardingTypeError"] * 3
