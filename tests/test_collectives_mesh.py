"""``fg.shard_map`` with collectives over the axes of a device mesh: on 8 simulated CPU
devices (a subprocess started with ``--xla_force_host_platform_device_count=8``, as
tests/test_sharding.py does), against ``jax.shard_map`` with JAX's collectives and its
differentiation (the oracle) and against the same computation on one device; across two
processes with :mod:`funcgrad.distributed`; and the argument errors, in process on a
one-device mesh.
"""

from __future__ import annotations

import textwrap

import jax
import numpy as np
import pytest
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import funcgrad as fg
from funcgrad import lax
from tests.multiprocess import run_on_8_devices, run_workers

EIGHT_DEVICES = textwrap.dedent(
    """
    import json
    import numpy as np
    import jax, jax.numpy as jnp
    from jax.sharding import Mesh, PartitionSpec as P
    import funcgrad as fg, funcgrad.numpy as fnp
    from funcgrad import lax

    assert len(jax.devices()) == 8
    mesh2 = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    mesh1 = Mesh(np.array(jax.devices()), ("x",))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 6)).astype(np.float32)
    W = rng.normal(size=(6, 3)).astype(np.float32)
    out = {}

    def err(a, b):
        return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))

    def compare(name, body, in_specs, out_specs, *args, mesh=mesh2, grad=True, vma=True):
        ours = fg.shard_map(lambda *a: body(lax, fnp, *a), mesh=mesh, in_specs=in_specs,
                            out_specs=out_specs, check_vma=vma)
        def theirs(vma):
            return jax.shard_map(lambda *a: body(jax.lax, jnp, *a), mesh=mesh,
                                 in_specs=in_specs, out_specs=out_specs, check_vma=vma)
        want = jax.jit(theirs(False))(*args)
        r = {"jit": err(fg.jit(ours)(*args), want), "eager": err(ours(*args), want)}
        if grad:
            nums = tuple(range(len(args)))
            g = fg.jit(fg.grad(lambda *a: fnp.sum(fnp.sin(ours(*a))), argnums=nums))(*args)
            for vma in (False, True):  # differentiated outside: both of JAX's modes agree
                try:
                    gw = jax.jit(jax.grad(lambda *a: jnp.sum(jnp.sin(theirs(vma)(*a))),
                                          argnums=nums))(*args)
                except Exception:  # JAX's check_vma=True refuses some programs
                    continue
                r[f"grad_vma{vma}"] = max(err(a, b) for a, b in zip(g, gw))
        out[name] = r

    compare("psum", lambda L, N, v: L.psum(v, "x"), (P("x", "y"),), P(None, "y"), X)
    compare("psum_both", lambda L, N, v: L.psum(v * v, ("x", "y")), (P("x", "y"),), P(), X)
    compare("pmean", lambda L, N, v: L.pmean(v, "y"), (P("x", "y"),), P("x"), X)
    compare("pmax", lambda L, N, v: L.pmax(v, "x"), (P("x", "y"),), P(None, "y"), X, grad=False)
    compare("pmin", lambda L, N, v: L.pmin(v, "y"), (P("x", "y"),), P("x"), X, grad=False)
    compare("all_gather", lambda L, N, v: L.all_gather(v, "x"), (P("x", "y"),),
            P(None, None, "y"), X)
    compare("all_gather_tiled", lambda L, N, v: L.all_gather(v, "x", axis=1, tiled=True),
            (P("x", "y"),), P(None, "y"), X)
    compare("psum_scatter", lambda L, N, v: L.psum_scatter(v, "y", scatter_dimension=1,
            tiled=True), (P("x"),), P("x", "y"), X)
    cycle = [(0, 1), (1, 2), (2, 3), (3, 0)]
    compare("ppermute", lambda L, N, v: L.ppermute(v, "x", cycle), (P("x", "y"),),
            P("x", "y"), X)
    compare("ppermute_partial", lambda L, N, v: L.ppermute(v, "x", cycle[:2]),
            (P("x", "y"),), P("x", "y"), X)
    compare("all_to_all", lambda L, N, v: L.all_to_all(v, "y", 1, 0, tiled=True), (P("x"),),
            P("x", "y"), X)
    compare("axis_index", lambda L, N, v: v * L.axis_index("x") + L.axis_index(("x", "y")),
            (P("x", "y"),), P("x", "y"), X)
    perm2 = [(0, 5), (5, 2), (2, 7), (7, 1), (1, 0), (3, 4)]  # partial, over 4 x 2
    for names in (("x", "y"), ("y", "x")):  # several axes: row-major, the first major
        key = "".join(names)
        compare(f"all_gather_{key}", lambda L, N, v: L.all_gather(v, names, axis=1),
                (P(("x", "y")),), P(), X)
        compare(f"all_gather_tiled_{key}", lambda L, N, v: L.all_gather(v, names, tiled=True),
                (P(("x", "y")),), P(), X)
        compare(f"psum_scatter_{key}", lambda L, N, v: L.psum_scatter(v[:, :8], names,
                scatter_dimension=1, tiled=True), (P(),), P(None, names), np.tile(X, (1, 2)))
        compare(f"all_to_all_{key}", lambda L, N, v: L.all_to_all(v, names, 1, 0, tiled=True),
                (P(("x", "y")),), P(("x", "y")), np.tile(X, (1, 4)))
        compare(f"ppermute_{key}", lambda L, N, v: L.ppermute(v, names, perm2),
                (P(("x", "y")),), P(("x", "y")), X)
    compare("replicated_in", lambda L, N, w, v: L.psum(N.tanh(v @ w), "x"),
            (P(), P("x")), P(), W, X, mesh=mesh1)

    # differentiation inside the per-device body: JAX's check_vma=False semantics
    def inner(L, N, w, v):
        g = (fg.grad if L is lax else jax.grad)(lambda w: L.psum(N.sum(N.tanh(v @ w)), "x"))(w)
        return L.pmean(g, "x")
    compare("grad_inside", inner, (P(), P("x")), P(), W, X, mesh=mesh1, grad=False, vma=False)
    # ... which JAX's default (check_vma=True) computes differently: refused
    refusals = {}
    for key, f in {
        "replicated": lambda w, v: fg.grad(lambda w: fnp.sum(fnp.tanh(v @ w)))(w),
        "psum": lambda w, v: fg.grad(lambda v: lax.psum(fnp.sum(v * v), "x"))(v),
    }.items():
        try:
            fg.shard_map(f, mesh=mesh1, in_specs=(P(), P("x")), out_specs=P("x"))(W, X)
            refusals[key] = "no error"
        except NotImplementedError as e:
            refusals[key] = str(e)
    out["refusals"] = refusals

    # a data-parallel step equals the step on one device over the whole batch
    Y = np.sin(X.sum(1)).astype(np.float32)
    def loss(w, x, y):
        return fnp.mean((fnp.tanh(x @ w).sum(1) - y) ** 2)
    def dp_step(w, x, y):
        def per_device(w, xb, yb):
            l, g = fg.value_and_grad(loss)(w, xb, yb)
            return lax.pmean(l, "x"), lax.pmean(g, "x")
        l, g = fg.shard_map(per_device, mesh=mesh1, in_specs=(P(), P("x"), P("x")),
                            out_specs=(P(), P()), check_vma=False)(w, x, y)
        return w - 0.5 * g, l
    def sum_loss(w, x, y):  # grad outside: the psum'd loss of the shards
        per = lambda w, xb, yb: lax.psum(fnp.sum((fnp.tanh(xb @ w).sum(1) - yb) ** 2), "x")
        s = fg.shard_map(per, mesh=mesh1, in_specs=(P(), P("x"), P("x")), out_specs=P())
        return s(w, x, y) / x.shape[0]
    w1, l1 = fg.jit(dp_step)(W, X, Y)
    w2 = W - 0.5 * fg.jit(fg.grad(sum_loss))(W, X, Y)
    ref_l, ref_g = fg.jit(fg.value_and_grad(loss))(W, X, Y)
    out["data_parallel"] = {"inside": err(w1, W - 0.5 * ref_g), "loss": err(l1, ref_l),
                            "outside": err(w2, W - 0.5 * ref_g)}

    # vmap of a shard_map, and vmap with its own axis name inside one
    f = fg.shard_map(lambda v: lax.psum(fnp.sin(v), "x"), mesh=mesh1, in_specs=P("x"),
                     out_specs=P())
    xs = rng.normal(size=(3, 8, 2)).astype(np.float32)
    out["vmap_of"] = {"v": err(fg.vmap(f)(xs), np.stack([np.asarray(f(t)) for t in xs]))}
    def both(L, v):
        return (fg.vmap if L is lax else jax.vmap)(
            lambda r: L.psum(r, "b") + L.psum(r, "x") * L.axis_index("b"), axis_name="b")(v)
    a = fg.jit(fg.shard_map(lambda v: both(lax, v), mesh=mesh1, in_specs=P(None, "x"),
                            out_specs=P(None, "x")))(X.T)
    b = jax.jit(jax.shard_map(lambda v: both(jax.lax, v), mesh=mesh1, in_specs=P(None, "x"),
                              out_specs=P(None, "x"), check_vma=False))(X.T)
    out["vmap_inside"] = {"v": err(a, b)}

    # forward mode
    t = rng.normal(size=X.shape).astype(np.float32)
    fo = fg.shard_map(lambda v: lax.all_gather(fnp.sin(v), "x", tiled=True), mesh=mesh1,
                      in_specs=P("x"), out_specs=P())
    fj = jax.shard_map(lambda v: jax.lax.all_gather(jnp.sin(v), "x", tiled=True), mesh=mesh1,
                       in_specs=P("x"), out_specs=P(), check_vma=False)
    out["jvp"] = {"t": err(fg.jvp(fo, (X,), (t,))[1], jax.jvp(fj, (X,), (t,))[1])}

    # out_specs claiming replication of a varying value
    try:
        fg.shard_map(lambda v: v * 2, mesh=mesh1, in_specs=P("x"), out_specs=P())(X)
        out["check_vma"] = "no error"
    except ValueError as e:
        out["check_vma"] = str(e)
    # ... which check_vma=False skips (each device's block is then taken as the value)
    skip = fg.shard_map(lambda v: v * 2, mesh=mesh1, in_specs=P("x"), out_specs=P(),
                        check_vma=False)(X)
    out["no_check_shape"] = list(skip.shape)
    print("RESULT " + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def eight() -> dict:
    return run_on_8_devices(EIGHT_DEVICES)


# the tests reading ``eight`` run on one xdist worker, so its 8-device process (~6 s CPU)
# runs once per run, not once in each worker that draws one of them
ON_EIGHT = pytest.mark.xdist_group("collectives_mesh_eight")


COLLECTIVES = [
    "psum",
    "psum_both",
    "pmean",
    "pmax",
    "pmin",
    "all_gather",
    "all_gather_tiled",
    "psum_scatter",
    "ppermute",
    "ppermute_partial",
    "all_to_all",
    "axis_index",
    "replicated_in",
    "grad_inside",
    *[
        f"{k}_{n}"
        for k in ("all_gather", "all_gather_tiled", "psum_scatter", "all_to_all", "ppermute")
        for n in ("xy", "yx")
    ],
]


@ON_EIGHT
@pytest.mark.parametrize("name", COLLECTIVES)
def test_shard_map_collective_matches_jax_on_8_devices(eight, name):
    """Values (jitted and eager) and gradients equal jax.shard_map's; gradients taken
    outside the map equal JAX's in both its check_vma modes where JAX accepts them."""
    r = eight[name]
    assert r, name
    for k, v in r.items():
        assert v < 1e-5, (name, k, r)
    if name in ("psum", "pmean", "replicated_in"):
        assert "grad_vmaFalse" in r and "grad_vmaTrue" in r


@ON_EIGHT
def test_data_parallel_step_equals_one_device(eight):
    r = eight["data_parallel"]
    assert max(r.values()) < 1e-5, r


@ON_EIGHT
def test_shard_map_composes_with_vmap_and_jvp(eight):
    assert eight["vmap_of"]["v"] < 1e-6
    assert eight["vmap_inside"]["v"] < 1e-5
    assert eight["jvp"]["t"] < 1e-6


@ON_EIGHT
def test_reverse_mode_inside_a_check_vma_body_is_refused(eight):
    """Where JAX's check_vma=True rules give other numbers than funcgrad's (a gradient of
    a replicated value, a transposed psum, taken inside the body), it is an error."""
    r = eight["refusals"]
    assert "replicated over a mesh axis" in r["replicated"] and "check_vma=False" in r["replicated"]
    assert "collective over mesh axis 'x'" in r["psum"], r


@ON_EIGHT
def test_out_specs_replication_is_checked(eight):
    msg = eight["check_vma"]
    assert "varying across mesh axes {} and not {x}" in msg and "check_vma=False" in msg, msg
    assert eight["no_check_shape"] == [1, 6]


DATA_PARALLEL = textwrap.dedent(
    """
    import json
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import funcgrad as fg
    import funcgrad.numpy as fnp
    import funcgrad.distributed as fd
    from funcgrad import lax

    fd.initialize()
    me, n = fd.process_index(), fd.process_count()
    rng = np.random.default_rng(0)
    f32 = lambda a: np.asarray(a, np.float32)
    params = {"w": f32(rng.normal(size=(4, 8)) * 0.5), "v": f32(rng.normal(size=(8,)) * 0.5)}
    X = f32(rng.normal(size=(6 * n, 4)))
    Y = f32(np.sin(X.sum(1)))

    def loss(p, x, y):
        return fnp.mean((fnp.tanh(x @ p["w"]) @ p["v"] - y) ** 2)

    mesh = fd.global_mesh("data")

    def step(p, x, y):  # per-device gradients, averaged with pmean inside the map
        def per_device(p, xb, yb):
            l, g = fg.value_and_grad(loss)(p, xb, yb)
            return lax.pmean(l, "data"), lax.pmean(g, "data")
        l, g = fg.shard_map(per_device, mesh=mesh, in_specs=(P(), P("data"), P("data")),
                            out_specs=(P(), P()), check_vma=False)(p, x, y)
        return {k: p[k] - 0.5 * g[k] for k in p}, l

    repl, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    mine = slice(6 * me, 6 * (me + 1))
    xs = fd.make_array_from_process_local_data(data, X[mine])
    ys = fd.make_array_from_process_local_data(data, Y[mine])
    ps = {k: fd.make_array_from_process_local_data(repl, v) for k, v in params.items()}
    sharded = fg.jit(step)
    new, l = sharded(ps, xs, ys)
    new, l = sharded(new, xs, ys)

    def ref_step(p, x, y):
        l, g = fg.value_and_grad(loss)(p, x, y)
        return {k: p[k] - 0.5 * g[k] for k in p}, l
    ref, rl = fg.jit(ref_step)(params, X, Y)
    ref, rl = fg.jit(ref_step)(ref, X, Y)
    errs = {k: float(np.max(np.abs(fd.local_shards(new[k])[0] - np.asarray(ref[k]))))
            for k in params}
    print("RESULT", json.dumps({"errs": errs, "loss": float(fd.local_shards(l)[0]),
                                "ref_loss": float(rl)}))
    """
)


@pytest.mark.xdist_group("multiprocess")
def test_data_parallel_shard_map_across_two_processes(tmp_path):
    """Two processes, one device each: a step whose per-device gradients are averaged by
    pmean inside shard_map equals the one-process step on the whole batch."""
    workers = run_workers(DATA_PARALLEL, 2, tmp_path, timeout=120)
    for w in workers:
        assert w.returncode == 0, w.describe()
        r = w.result
        assert max(r["errs"].values()) < 1e-5, r
        assert r["loss"] == pytest.approx(r["ref_loss"], rel=1e-5)


# --------------------------------------------------------------------------- errors

MESH1 = Mesh(np.array(jax.devices()[:1]), ("x",))


def test_vmap_axis_inside_a_shard_map_body():
    """A shard_map under vmap(axis_name="i") whose body names "i": the token of "i" is an
    operand of the shard_map, batched, so the body's batching reduces over the examples."""
    xs = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)

    def body(u):
        return lax.psum(u, "i") * lax.axis_index("i") + lax.psum(u, "x")

    f = fg.vmap(
        lambda v: fg.shard_map(body, mesh=MESH1, in_specs=P(), out_specs=P())(v), axis_name="i"
    )
    want = xs.sum(0)[None] * np.arange(4)[:, None] + xs
    np.testing.assert_allclose(f(xs), want, rtol=1e-6)
    np.testing.assert_allclose(fg.jit(f)(xs), want, rtol=1e-6)
    g = fg.grad(lambda x: fg.numpy.sum(fg.numpy.sin(f(x))))(xs)
    g_plain = fg.grad(
        lambda x: fg.numpy.sum(fg.numpy.sin(x.sum(0)[None] * fg.numpy.arange(4.0)[:, None] + x))
    )(xs)
    np.testing.assert_allclose(g, g_plain, rtol=1e-5, atol=1e-6)


def test_shard_map_on_one_device_and_argument_errors():
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    f = fg.shard_map(
        lambda v: lax.psum(v, "x") * lax.axis_size("x"),
        mesh=MESH1,
        in_specs=P("x"),
        out_specs=P("x"),
    )
    np.testing.assert_allclose(f(x), x)
    with pytest.raises(TypeError, match=r"jax\.sharding\.Mesh"):
        fg.shard_map(lambda v: v, mesh="x", in_specs=P(), out_specs=P())
    # no mesh given and none set by set_mesh: refused when called, as JAX's (its phrase)
    unmeshed = fg.shard_map(lambda v: v, in_specs=P(), out_specs=P())
    with pytest.raises(ValueError, match="The context mesh cannot be empty"):
        unmeshed(x)
    with pytest.raises(ValueError, match="requires a non-empty mesh"):
        fg.shard_map(
            lambda v: v, mesh=Mesh(np.empty((0,), object), ("x",)), in_specs=P(), out_specs=P()
        )(x)
    with pytest.raises(ValueError, match="names the axis 'y'"):
        fg.shard_map(lambda v: v, mesh=MESH1, in_specs=P("y"), out_specs=P("x"))(x)
    with pytest.raises(ValueError, match="which has length 3, but the value has shape"):
        fg.shard_map(lambda v: v, mesh=MESH1, in_specs=P("x", None, None), out_specs=P())(x)
    with pytest.raises(ValueError, match="not a pytree prefix of the arguments"):
        fg.shard_map(lambda a, b: a, mesh=MESH1, in_specs=(P(),), out_specs=P())(x, x)
    with pytest.raises(NameError, match="unbound axis name: y"):
        fg.shard_map(lambda v: lax.psum(v, "y"), mesh=MESH1, in_specs=P(), out_specs=P())(x)
    with pytest.raises(NotImplementedError, match="unreduced/reduced mesh axes"):
        fg.shard_map(lambda v: v, mesh=MESH1, in_specs=P(), out_specs=P(unreduced={"x"}))(x)
    with pytest.raises(NotImplementedError, match="every mesh axis"):
        fg.shard_map(lambda v: v, mesh=MESH1, in_specs=P(), out_specs=P(), axis_names={"z"})


def test_shard_map_under_every_transform_on_one_device():
    """linearize, linear_transpose, hessian and jacfwd through a shard_map equal the same
    transforms of the body's computation without it (one device: the blocks are the
    arrays)."""
    x = np.linspace(-1.0, 1.0, 6).reshape(3, 2)

    def body(v):
        return lax.psum(fg.numpy.sin(v) * v, "x") + lax.all_gather(v, "x", tiled=True)

    f = fg.shard_map(body, mesh=MESH1, in_specs=P("x"), out_specs=P("x"))

    def plain(v):
        return fg.numpy.sin(v) * v + v

    t = np.ones_like(x)
    np.testing.assert_allclose(fg.linearize(f, x)[1](t), fg.linearize(plain, x)[1](t), 1e-12)
    lin = fg.shard_map(
        lambda v: lax.psum(3 * v, "x") + lax.all_gather(v, "x", tiled=True),
        mesh=MESH1,
        in_specs=P("x"),
        out_specs=P("x"),
    )
    np.testing.assert_allclose(fg.linear_transpose(lin, x)(x)[0], 4 * x)
    h = fg.hessian(lambda v: fg.numpy.sum(f(v) ** 2))(x)
    np.testing.assert_allclose(h, fg.hessian(lambda v: fg.numpy.sum(plain(v) ** 2))(x), 1e-10)
    np.testing.assert_allclose(fg.jacfwd(f)(x), fg.jacfwd(plain)(x), 1e-12)
    np.testing.assert_allclose(
        fg.jit(fg.vmap(f))(np.stack([x, 2 * x])), fg.vmap(plain)(np.stack([x, 2 * x])), 1e-12
    )


def _replicated_out(body):
    return fg.shard_map(body, mesh=MESH1, in_specs=P("x"), out_specs=P())


@pytest.mark.parametrize(
    "body,ok",
    [
        (
            lambda v: fg.lax.scan(
                lambda c, r: (c + lax.psum(r, "x"), c), fg.numpy.zeros(2, np.float32), v
            )[0],
            True,
        ),
        (
            lambda v: fg.lax.scan(lambda c, r: (c + r, c), fg.numpy.zeros(2, np.float32), v)[0],
            False,
        ),
        # the varying value reaches the first carry only after two iterations
        (
            lambda v: fg.lax.scan(
                lambda c, r: ((c[1], c[2], r), r),
                (
                    fg.numpy.zeros(2, np.float32),
                    fg.numpy.zeros(2, np.float32),
                    fg.numpy.zeros(2, np.float32),
                ),
                v,
            )[0][0],
            False,
        ),
        (
            lambda v: fg.lax.cond(True, lambda u: lax.psum(u, "x"), lambda u: lax.pmax(u, "x"), v),
            True,
        ),
        (lambda v: fg.lax.cond(True, lambda u: lax.psum(u, "x"), lambda u: u, v), False),
        (
            lambda v: fg.lax.while_loop(
                lambda c: c[0] < 3,
                lambda c: (c[0] + 1, c[1] + lax.psum(v, "x")),
                (0, fg.numpy.zeros((3, 2), np.float32)),
            )[1],
            True,
        ),
        (lambda v: fg.jit(lambda u: lax.all_gather(u, "x", tiled=True))(v), True),
    ],
)
def test_replication_check_follows_control_flow(body, ok):
    """check_vma's analysis follows cond branches, jit bodies and loop carries (to a fixed
    point): replicated results are accepted, varying ones rejected."""
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    f = _replicated_out(body)
    if ok:
        f(x)
    else:
        with pytest.raises(ValueError, match="possibly varying over"):
            f(x)
