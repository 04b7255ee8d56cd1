"""Types over explicit mesh axes that JAX's rules give and funcgrad missed, on 8 CPU
devices, against JAX: slices, pads and split pieces keep the operand's splits (funcgrad
dropped a split whose size changed) and refuse a size that does not divide over the
axes; ``concatenate`` wants its operands split alike; ``bitcast_convert_type`` keeps
the splits (funcgrad left a changed shape unsplit); ``reshape`` cuts and merges as
JAX's rule (funcgrad typed some reshapes JAX refuses, and left others untyped); the ``out_sharding`` keywords of
``ravel``, ``percentile``, ``bincount``, the segment reductions,
``conv_general_dilated``, ``broadcast_to``, the ``nn`` initializers and
``rng_bit_generator`` (their values too: an unreduced ``segment_sum``/``bincount``
leaves each device its own share); and under ``vmap`` over split dimensions an
``out_sharding`` (``reshape``, ``dot_general``, ``conv_general_dilated``, the reshard of
``auto_axes``) splits the batch axis as the mapped dimensions are; an unsplit input's
gradient is unsplit (funcgrad left it split as its cotangent came); ``einsum``'s
``out_sharding`` over several contractions and its refusal of automatic axes. One
subprocess: the device count must be set before JAX starts.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.multiprocess import run_on_8_devices

SCRIPT = textwrap.dedent(
    """
    import json
    from functools import partial
    import numpy as np
    import jax
    import jax.numpy as jnp
    import funcgrad as fg
    import funcgrad.numpy as fnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    libs = {
        "jax": dict(jit=jax.jit, grad=jax.grad, vmap=jax.vmap, np=jnp, lax=jax.lax,
                    ops=jax.ops, set_mesh=jax.set_mesh, reshard=jax.sharding.reshard,
                    nn=jax.nn, random=jax.random,
                    auto_axes=jax.sharding.auto_axes),
        "fg": dict(jit=fg.jit, grad=fg.grad, vmap=fg.vmap, np=fnp, lax=fg.lax, ops=fg.ops,
                   nn=fg.nn, random=fg.random,
                   set_mesh=fg.set_mesh, reshard=fg.sharding.reshard,
                   auto_axes=fg.sharding.auto_axes),
    }
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    mesh4 = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Explicit,),
                          devices=jax.devices()[:4])

    def spec(v):
        return str(v.aval.sharding.spec)

    def outcome(fn):
        # the result's placement and values, or the error's type and first words
        try:
            out = fn()
        except Exception as e:
            return ["error", type(e).__name__, str(e).split(".")[0][:60]]
        # (an unreduced array has no value of its own: its shares are read below)
        return [[str(o.sharding.spec),
                 None if o.sharding.spec.unreduced else np.asarray(o).tolist()]
                for o in (out if isinstance(out, (list, tuple)) else [out])]

    def run(lib):
        ns = libs[lib]
        jit, grad, vmap, np_, lax = ns["jit"], ns["grad"], ns["vmap"], ns["np"], ns["lax"]
        res = {}
        a = np.arange(16, dtype=np.float32).reshape(4, 4) / 3
        with ns["set_mesh"](mesh):
            seen = []

            def cut(x):
                ys = [lax.slice(x, (0, 0), (4, 2)), lax.pad(x, 0.0, ((2, 2, 0), (0, 0, 0))),
                      *lax.split(x, (2, 2), axis=1)]
                seen.extend(spec(y) for y in ys)
                return ys

            for s in (P("x", "y"), P(None, ("x", "y"))):
                arr = jax.device_put(a, NamedSharding(mesh, s))
                res[f"cut {s}"] = outcome(lambda: jit(cut)(arr))
                res[f"cut grad {s}"] = outcome(
                    lambda: jit(grad(lambda x: sum(np_.sum(y ** 2) for y in cut(x))))(arr))
            res["cut types"] = seen
            res["slice odd"] = outcome(lambda: jit(lambda x: lax.slice(x, (0, 0), (4, 3)))(
                jax.device_put(a, P("x", "y"))))
            res["split odd"] = outcome(lambda: jit(lambda x: lax.split(x, (1, 3), axis=0))(
                jax.device_put(a, P("x", "y"))))
            b = jax.device_put(a[:, :1], P("x"))
            res["concat same"] = outcome(lambda: jit(lambda x, y: lax.concatenate(
                [x, y], 1))(jax.device_put(a, P("x")), b))
            res["concat other"] = outcome(lambda: jit(lambda x, y: lax.concatenate(
                [x, y], 1))(jax.device_put(a, P("x", "y")), b))
            narrow = jax.device_put(a, P("x", "y"))
            res["bitcast narrower"] = outcome(lambda: jit(
                lambda x: lax.bitcast_convert_type(x, np.uint8))(narrow))
            res["bitcast wider"] = outcome(lambda: jit(
                lambda x: lax.bitcast_convert_type(x, np.float32))(
                    jax.device_put(np.asarray(narrow).view(np.uint8).reshape(4, 4, 4),
                                   P("x", "y"))))
            # reshapes: a cut dimension spreads its axes over the pieces, merged ones take
            # theirs if the split ones lead; others are JAX's ShardingTypeError
            for src, dst, sp in (
                ((4, 6, 8), (4, 2, 3, 8), P("x", "y")),
                ((4, 6, 8), (4, 3, 2, 8), P("x", "y")),
                ((4, 6, 8), (4, 2, 3, 4, 2), P("x")),
                ((4, 12, 8), (4, 4, 3, 8), P(None, ("x", "y"))),
                ((4, 2, 3, 8), (4, 6, 8), P("x", None, None, "y")),
                ((4, 2, 6, 8), (4, 12, 8), P(None, None, "y", "x")),
                ((2, 2, 6, 8), (4, 6, 8), P(None, None, "y", "x")),
                ((10, 1), (2, 5, 1, 1), P("x")),
                ((2, 5, 1), (10, 1), P("x")),
            ):
                v = jax.device_put(np.arange(np.prod(src), dtype=np.float32).reshape(src),
                                   NamedSharding(mesh, sp))
                res[f"reshape {src}->{dst} {sp}"] = outcome(
                    lambda: jit(lambda x: lax.reshape(x, dst) * 2)(v))
            res["unstack split axis"] = outcome(lambda: jit(lambda x: np_.unstack(x))(
                jax.device_put(a, P("x"))))
            # repeat's out_sharding region takes array repeats as operands (a closed-over
            # one reached the region's cumsum typed over the outer mesh: JAX's lowering
            # refused it)
            pos = np.arange(15, dtype=np.float32).reshape(5, 3)
            res["repeat arrays"] = outcome(lambda: np_.repeat(
                np_.asarray(pos), np_.asarray(np.array([1, 0, 2, 1, 1], np.int32)), axis=0,
                total_repeat_length=5, out_sharding=P()))
            res["ravel"] = outcome(lambda: jit(lambda x: np_.ravel(x, out_sharding=P("x")))(
                jax.device_put(a, P("x", "y"))))
            res["percentile"] = outcome(lambda: jit(
                lambda x: np_.percentile(x, 30, axis=0, out_sharding=P()))(
                    jax.device_put(a, P("x", "y"))))
            # a 1-D convolution over a split batch and spatial dimension, its gradients
            # (the kernel's transpose contracts the split batch: JAX's needs out_sharding)
            x = jax.device_put(np.linspace(-1, 1, 16 * 8 * 4, dtype=np.float32).reshape(
                16, 8, 4), P("x", "y"))
            w = np.linspace(-1, 1, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
            conv = lambda x, w, **kw: lax.conv_general_dilated(
                x, w, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"), **kw)
            res["conv"] = outcome(lambda: jit(conv)(x, w))
            xb = jax.device_put(np.asarray(x)[..., :1], P("x"))
            wb = jax.device_put(w[:, :1], P())
            valid = lambda x, w: lax.conv_general_dilated(
                x, w, (1,), "VALID", dimension_numbers=("NWC", "WIO", "NWC"))
            res["conv grads"] = outcome(lambda: jit(grad(
                lambda x, w: np_.sum(valid(x, w)), argnums=(0, 1)))(xb, wb))
            res["conv feature split"] = outcome(lambda: jit(conv)(
                jax.device_put(np.asarray(x), P("x", None, "y")), w))
            res["conv placed"] = outcome(lambda: jit(partial(conv, out_sharding=P(None, "y")))(
                jax.device_put(np.asarray(x), P("x", None, "y")), w))
            # vmap over a dimension split over x: an out_sharding gains x on the batch axis
            xs = jax.device_put(np.arange(64, dtype=np.float32).reshape(4, 2, 8) / 7,
                                P("x", None, "y"))
            vseen = []

            def per(x):
                r = lax.reshape(x, (16,), out_sharding=P("y"))
                d = np_.einsum("ab,cb->ac", x, x, out_sharding=P(None, "y"))
                vseen.extend([spec(r), spec(d)])
                return r, d

            res["vmap out_sharding"] = outcome(lambda: jit(vmap(per))(xs))
            res["vmap out_sharding types"] = vseen
            res["vmap auto_axes"] = outcome(lambda: jit(vmap(
                ns["auto_axes"](lambda v: np_.sin(v) * 2, out_sharding=P())))(
                    jax.device_put(np.arange(8, dtype=np.float32).reshape(4, 2), P("x"))))
            # an unbatched operand of a batched concatenation, broadcast along the batch:
            # split as the mapped one (JAX's lowering refused unsplit beside split)
            cat = lambda a, b: np_.concatenate([a, b], axis=-1)
            res["vmap concat"] = outcome(lambda: jit(vmap(vmap(cat, in_axes=(0, None)),
                                                         in_axes=(0, None)))(
                jax.device_put(np.ones((4, 3, 2), np.float32), P("x")),
                jax.device_put(np.arange(3, dtype=np.float32), P())))
            ks = jax.device_put(np.linspace(-1, 1, 4 * 6 * 8 * 1, dtype=np.float32).reshape(
                4, 6, 8, 1), P("x"))
            k = np.linspace(-1, 1, 3 * 1 * 2, dtype=np.float32).reshape(3, 1, 2)
            res["vmap conv placed"] = outcome(lambda: jit(vmap(
                lambda v: conv(v, k, out_sharding=P(None, None, None))))(ks))
            # keywords that place a result whose values do not depend on placement
            res["placed broadcast_to"] = outcome(lambda: jit(lambda v: np_.broadcast_to(
                v, (4, 4), out_sharding=P("x", "y")))(jax.device_put(a[:1], P(None, "y"))))
            inits = ns["nn"].initializers
            for name, init in (("constant", inits.constant(-7.0)), ("uniform", inits.uniform()),
                               ("he_normal", inits.he_normal(in_axis=0, out_axis=1))):
                res[f"placed init {name}"] = outcome(lambda: init(
                    ns["random"].key(0), (8, 2), np.float32, out_sharding=P("x")))
            rkey = np.array((1, 2, 3, 4), np.uint32)
            rbg = lambda k: lax.rng_bit_generator(k, shape=(4, 8), out_sharding=P("x"))
            res["placed rng_bit_generator"] = outcome(lambda: [*rbg(rkey), *jit(rbg)(rkey)])
            # a replicated input's gradient is replicated (funcgrad left it split as
            # the cotangent came: x + y with y split)
            xr = jax.device_put(np.arange(4, dtype=np.float32), P())
            ys = jax.device_put(np.arange(4, dtype=np.float32), P("x"))
            res["grad replicated add"] = outcome(lambda: jit(grad(
                lambda x, y: np_.sum(np_.sin(x + y)), argnums=(0, 1)))(xr, ys))
            res["grad replicated broadcast"] = outcome(lambda: jit(grad(
                lambda x: np_.sum(lax.broadcast_in_dim(x, (4,), (0,), out_sharding=P("x")))))(
                    xr))
            # einsum's out_sharding: several contractions computed over automatic axes;
            # an automatic axis in it refused as JAX's
            ab = jax.device_put(np.ones((8, 16), np.float32), P("x", "y"))
            bc = jax.device_put(np.ones((16, 4), np.float32), P("y", None))
            ac = jax.device_put(np.ones((8, 4), np.float32), P("x", None))
            res["einsum three"] = outcome(lambda: jit(
                lambda a, b, c: np_.einsum("ab,bc,ac->c", a, b, c, out_sharding=P()))(ab, bc, ac))
            res["einsum auto axis"] = outcome(lambda: ns["auto_axes"](
                lambda a, c: np_.einsum("ab,ac->bc", a, c, out_sharding=P("y", None)),
                out_sharding=P())(ab, ac))
        with ns["set_mesh"](mesh4):
            data = jax.device_put(np.arange(8, dtype=np.int32), P("x"))
            ids = jax.device_put(np.array([0, 0, 1, 1, 1, 2, 2, 3]), P("x"))
            for kind in ("sum", "max", "prod"):
                seg = getattr(ns["ops"], f"segment_{kind}")
                for s in (P(), P(unreduced={"x"})):
                    f = jit(lambda d, i, s=s: seg(d, i, num_segments=4, out_sharding=s))
                    out = outcome(lambda: f(data, ids))
                    if out[0] != "error" and s.unreduced:  # each device's share
                        got = f(data, ids)
                        out = [out, [np.asarray(sh.data).tolist()
                                     for sh in got.addressable_shards]]
                    res[f"segment_{kind} {s}"] = out
            ones = jax.device_put(np.ones(4, np.int32), P("x"))
            for s in (P(), P(unreduced={"x"}), P("x")):
                f = jit(lambda v, s=s: np_.bincount(v, length=2, out_sharding=s))
                out = outcome(lambda: f(ones))
                if out[0] != "error" and s.unreduced:
                    out = [out, [np.asarray(sh.data).tolist()
                                 for sh in f(ones).addressable_shards]]
                res[f"bincount {s}"] = out
        return res

    print("RESULT " + json.dumps({lib: run(lib) for lib in libs}))
    """
)


@pytest.fixture(scope="module")
def result() -> dict:
    return run_on_8_devices(SCRIPT)


def _same(fg: object, jax: object) -> None:
    """Placements and errors equal, values to float32 rounding."""
    if isinstance(jax, list) and jax and jax[0] == "error":
        assert fg == jax
    elif isinstance(jax, list):
        assert isinstance(fg, list) and len(fg) == len(jax)
        for f, j in zip(fg, jax):
            _same(f, j)
    elif isinstance(jax, str) or jax is None:
        assert fg == jax
    else:
        np.testing.assert_allclose(fg, jax, rtol=1e-5, atol=1e-5)


def _keys(result: dict, prefix: str) -> list[str]:
    keys = [k for k in result["jax"] if k.startswith(prefix)]
    assert keys
    return keys


@pytest.mark.parametrize(
    "prefix", ["cut", "slice odd", "split odd", "concat", "bitcast", "reshape", "unstack"]
)
def test_slices_pads_splits_concatenations(result, prefix):
    # (funcgrad dropped the split of a dimension whose size changed, and typed the odd
    # slice and split unsplit where JAX raises ShardingTypeError)
    for k in _keys(result, prefix):
        _same(result["fg"][k], result["jax"][k])


def test_refusals_are_jax_errors(result):
    for k in ("slice odd", "split odd", "concat other", "conv feature split"):
        assert result["jax"][k][:2] == ["error", "ShardingTypeError"]


@pytest.mark.parametrize("prefix", ["ravel", "percentile", "conv", "einsum", "placed", "repeat"])
def test_out_sharding_keywords(result, prefix):
    for k in _keys(result, prefix):
        _same(result["fg"][k], result["jax"][k])


@pytest.mark.parametrize("prefix", ["segment_", "bincount"])
def test_unreduced_counts_and_segment_sums(result, prefix):
    # (the unreduced forms: each device's share is the sum over its own rows)
    for k in _keys(result, prefix):
        _same(result["fg"][k], result["jax"][k])
    if prefix == "segment_":
        assert result["jax"]["segment_max P(unreduced={'x'})"][1] == "NotImplementedError"
    else:
        assert result["jax"]["bincount P('x',)"][1] == "ShardingTypeError"


@pytest.mark.parametrize("prefix", ["vmap"])
def test_vmap_of_out_sharding(result, prefix):
    # (funcgrad left the batch axis unsplit: P(None, 'y') where JAX has P('x', 'y'))
    for k in _keys(result, prefix):
        _same(result["fg"][k], result["jax"][k])


def test_replicated_inputs_get_replicated_gradients(result):
    for k in _keys(result, "grad replicated"):
        _same(result["fg"][k], result["jax"][k])
    assert result["jax"]["grad replicated add"][0][0] == "P(None,)"
