"""``fg.shard_map``'s ``in_specs`` as JAX reads them (a pytree prefix of the arguments:
one ``PartitionSpec`` for all; ``None`` passes an argument as it is), the cotangents
reverse mode leaves symbolic, custom derivatives whose rules use collectives, and the
spec errors in JAX's words: against ``jax.shard_map`` (JAX 0.10.2) on 8 simulated CPU
devices, in one subprocess.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from tests.multiprocess import run_on_8_devices

SCRIPT = textwrap.dedent(
    """
    import json
    from functools import partial
    import numpy as np
    import jax, jax.numpy as jnp
    from jax.sharding import AxisType, PartitionSpec as P
    import funcgrad as fg

    assert len(jax.devices()) == 8
    mesh8 = jax.make_mesh((8,), ("x",), (AxisType.Auto,))
    mesh42 = jax.make_mesh((4, 2), ("i", "j"), (AxisType.Auto,) * 2)
    mesh4 = jax.make_mesh((4,), ("x",), (AxisType.Auto,))
    mesh222 = jax.make_mesh((2, 2, 2), ("x", "y", "z"), (AxisType.Auto,) * 3)
    X16 = np.linspace(-1.0, 1.0, 16).astype(np.float32)
    X42 = np.linspace(0.0, 2.0, 8).reshape(4, 2).astype(np.float32)
    out = {}

    def err(a, b):
        a, b = jax.tree.leaves(a), jax.tree.leaves(b)
        return max(float(np.max(np.abs(np.asarray(u, np.float64) - np.asarray(v, np.float64))))
                   for u, v in zip(a, b, strict=True))

    def both(name, make):
        # make(lib) -> a thunk computing the value with that library
        out[name] = err(make(fg)(), make(jax)())

    # a cotangent left symbolic (the psum output is unused): the backward map skips it
    def zero_ct(lib):
        f1 = lib.shard_map(lambda b: (b, lib.lax.psum(b, "x")), mesh=mesh8, in_specs=P("x"),
                           out_specs=(P("x"), P()))
        f2 = lambda v: lib.numpy.sum(lib.numpy.sin(f1(v)[0]))
        return lambda: (lib.grad(f2)(X16), lib.jit(lib.grad(f2))(X16))
    both("zero_ct", zero_ct)

    # one PartitionSpec for every argument
    def prefix(lib):
        f = lib.shard_map(lambda a, b: a * b + 1, mesh=mesh42, in_specs=P("i"),
                          out_specs=P("i"))
        return lambda: (f(X42, 2 * X42), lib.jit(f)(X42, X42))
    both("prefix", prefix)

    # None: the argument reaches the body as it is (any object); in_specs=None: all do
    marker = object()
    def static(lib):
        def body(o, d, a):
            assert o is marker and d["k"] is marker
            return lib.numpy.cos(a)
        f = lib.shard_map(body, mesh=mesh42, in_specs=(None, {"k": None}, P("i")),
                          out_specs=P("i"))
        g = lib.shard_map(lambda s: s * 2, mesh=mesh42, in_specs=None, out_specs=P())
        @partial(lib.jit, static_argnums=(1,))
        def h(a, shape):
            return lib.shard_map(lambda v, s: v + lib.numpy.ones(s, v.dtype), mesh=mesh42,
                                 in_specs=(P("i", "j"), None), out_specs=P("i", "j"))(a, shape)
        return lambda: (f(marker, {"k": marker}, X42), g(3.0), h(X42, (1, 1)))
    both("static", static)

    # a body with no arguments closing over the differentiated value
    def closure(lib):
        g = lambda v: lib.shard_map(lambda: lib.numpy.sin(v), mesh=mesh4, in_specs=P(),
                                    out_specs=P())()
        return lambda: (lib.grad(g)(2.0), lib.jit(lib.grad(g))(0.5))
    both("closure", closure)

    # a custom_vjp whose fwd uses a collective, differentiated from outside the map
    def custom(lib):
        @lib.custom_vjp
        def f(v):
            return lib.numpy.tan(v)
        def f_fwd(v):
            return lib.lax.psum(v, "x"), (v,)
        def f_bwd(res, g):
            return (lib.numpy.cos(res[0]) * g,)
        f.defvjp(f_fwd, f_bwd)
        s = lib.jit(lib.shard_map(lambda v: f(v) ** 2, mesh=mesh4, in_specs=P(),
                                  out_specs=P()))
        return lambda: lib.grad(lambda v: s(v).sum())(np.arange(4.0, dtype=np.float32))
    both("custom_vjp", custom)

    # a mesh with explicit axes set by JAX alone: fg.jit switches funcgrad's sharding
    # types on, so in_specs are read off the values' splits as JAX reads them (read as
    # unsplit, jit(grad) of this sum gave 6 where JAX gives 3)
    emesh = jax.make_mesh((2,), ("x",), (AxisType.Explicit,))
    with jax.set_mesh(emesh):
        ev = jax.device_put(np.arange(8.0, dtype=np.float32), P("x"))
        runs = []
        for lib in (fg, jax):
            sm = lib.shard_map(lambda a: a * 3.0, out_specs=P("x"))
            g = lib.jit(lib.grad(lambda v, sm=sm: sm(v).sum()))(ev)
            runs.append([np.asarray(lib.jit(sm)(ev)).tolist(), np.asarray(g).tolist()])
        out["untyped"] = runs

    # over explicit axes the cotangent of a reduction's seed is resharded to the output's
    # split before the backward map (JAX checks its operands' types against in_specs)
    def explicit(lib):
        @lib.custom_vjp
        def inner(v):
            return v
        inner.defvjp(lambda v: (v, None), lambda _, g: (None,))
        def call(v):
            f = lib.shard_map(lambda a: (inner(a), a * 3.0), out_specs=P("x"), check_vma=False)
            y, z = f(v)
            return y.sum() + z.sum()
        mesh = jax.make_mesh((2,), ("x",), (AxisType.Explicit,))
        def run():
            with lib.set_mesh(mesh):
                v = jax.device_put(np.linspace(0.0, 1.0, 8, dtype=np.float32), P("x"))
                return lib.grad(call)(v), lib.jit(lib.grad(call))(v)
        return run
    both("explicit_ct", explicit)

    # the spec errors: the phrases JAX's messages and tests share
    def message(lib, call):
        try:
            call(lib)
        except ValueError as e:
            return str(e)
        return "no error"
    x22 = np.arange(4.0).reshape(2, 2)
    cases = {
        "divisible": lambda lib: lib.shard_map(lambda *_: None, mesh=mesh42,
            in_specs=(P("i"), None), out_specs=None)(x22, object()),
        "length": lambda lib: lib.shard_map(lambda: {"hi": [3.0]}, mesh=mesh42, in_specs=(),
            out_specs={"hi": P("i")})(),
        "rank": lambda lib: lib.shard_map(lambda *_: None, mesh=mesh42,
            in_specs=(None, P("i", "j")), out_specs=None)(object(), np.arange(4.0)),
        "scalar": lambda lib: lib.shard_map(lambda v: v, mesh=mesh42, in_specs=P(None),
            out_specs=())(3.0),
        "replication": lambda lib: lib.shard_map(lambda v: v * 2, mesh=mesh222,
            in_specs=P("x", "y", "z"), out_specs=P("x"))(np.arange(16.0).reshape(4, 2, 2)),
        "prefix": lambda lib: lib.shard_map(lambda v: v, mesh=mesh42, in_specs=([P("i")],),
            out_specs=P("i"))([X42, X42]),
        "no_mesh": lambda lib: lib.shard_map(lambda v: v, in_specs=P(), out_specs=P())(x22),
        "empty_mesh": lambda lib: lib.shard_map(lambda v: v, in_specs=P(), out_specs=P(),
            mesh=jax.sharding.Mesh(np.empty((0,), object), ("x",)))(x22),
    }
    out["errors"] = {k: [message(fg, c), message(jax, c)] for k, c in cases.items()}
    print("RESULT " + json.dumps(out))
    """
)

#: a phrase of each error, in both libraries' messages
PHRASES = {
    "divisible": [r"evenly divisible", r"does not evenly divide 2"],
    "length": [r"which has length 1", r"shard_map applied to the function '<lambda>'"],
    "rank": [r"which has length 2", r"which has rank 1"],
    "scalar": [r"which has rank 0", r"consider using an in_specs entry of `P\(\)`"],
    "replication": [
        r"out_specs which require replication",
        r"only varying across mesh axes \{x\} and not \{y,z\}, but it was inferred to be "
        r"possibly varying over \{x,y,z\}",
    ],
    "prefix": [r"shard_map in_specs\[0\]"],
    "no_mesh": [r"The context mesh cannot be empty"],
    "empty_mesh": [r"requires a non-empty mesh"],
}


@pytest.fixture(scope="module")
def eight() -> dict:
    return run_on_8_devices(SCRIPT)


ON_EIGHT = pytest.mark.xdist_group("shard_map_specs_eight")


@ON_EIGHT
@pytest.mark.parametrize(
    "name", ["zero_ct", "prefix", "static", "closure", "custom_vjp", "explicit_ct"]
)
def test_values_equal_jax_shard_map(eight, name):
    assert eight[name] < 1e-5, (name, eight[name])


@ON_EIGHT
@pytest.mark.parametrize("case", sorted(PHRASES))
def test_spec_errors_say_what_jax_says(eight, case):
    ours, theirs = eight["errors"][case]
    for phrase in PHRASES[case]:
        assert re.search(phrase, theirs), (phrase, theirs)
        assert re.search(phrase, ours), (phrase, ours)


@ON_EIGHT
def test_inferred_in_specs_under_jaxs_own_mesh(eight):
    ours, theirs = eight["untyped"]
    assert ours == theirs, eight["untyped"]
