"""``fg.jit``'s ahead-of-time stages against JAX 0.10.2's: ``jit(f).trace`` gives a
``Traced``, ``.lower`` a ``Lowered``, ``.compile()`` a ``Compiled``, whose attributes
(``args_info``, ``out_info``, trees, shardings, formats) equal JAX's for the same
function, and whose calls with other shapes, dtypes or trees raise JAX's errors.

Each check runs on the three ways ``fg.jit`` compiles: through ``jax.jit`` (``plain``),
through funcgrad's own dispatch with ``in_shardings`` (``sharded``), and with a closed-over
constant too large to embed (``big_const``: its constants are leading arguments of the
executable, which the stages must hide).
"""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import SingleDeviceSharding

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad._aot import Compiled, Lowered, Traced
from funcgrad.core.ir import Program
from tests.multiprocess import run_on_8_devices

F32 = np.float32
SHARDING = SingleDeviceSharding(jax.devices()[0])
BIG = np.full(300_000, 0.5, F32)  # 1.2 MB: above jit's embedding limit
PATHS = ("plain", "sharded", "big_const")


def body(np_, p, y, n, scale):
    """The function under test, for ``np_`` = funcgrad.numpy or jax.numpy."""
    h = p["w"] * y + p["b"][0]
    return {"h": h * n, "s": np_.sum(h) * scale}


def pair(path: str, **jit_kw):
    """The same function jitted by funcgrad and by JAX (``n`` static, ``p`` donated)."""
    scale = F32(BIG.sum()) if path != "big_const" else None

    def ours(p, y, n=2):
        return body(fnp, p, y, n, fnp.sum(BIG) if scale is None else scale)

    def theirs(p, y, n=2):
        return body(jnp, p, y, n, jnp.sum(BIG) if scale is None else scale)

    if path == "sharded":
        jit_kw["in_shardings"] = SHARDING
    return (
        fg.jit(ours, static_argnames="n", **jit_kw),
        jax.jit(theirs, static_argnames="n", **jit_kw),
    )


def args():
    """Positional arguments (JAX's ``jit`` with ``in_shardings`` takes no keywords)."""
    p = {"w": np.arange(6, dtype=F32).reshape(2, 3), "b": [np.ones(3, F32)]}
    return (p, F32(1.5), 3)


def dyn(a):
    """The dynamic arguments: a compiled function is called without the static ``n``."""
    return a[:2]


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
@pytest.mark.parametrize("path", PATHS)
def test_traced_attributes_equal_jax(path):
    ours, theirs = pair(path, donate_argnums=0)
    a = args()
    t, jt = ours.trace(*a), theirs.trace(*a)
    assert type(t) is Traced and type(jt) is jax.stages.Traced
    assert isinstance(t.jaxpr, Program) and "mul" in str(t.jaxpr)  # funcgrad's IR
    assert (t.fun_name, jt.fun_name) == ("ours", "theirs")
    assert t.args_info == jt.args_info
    assert t.in_tree == jt.in_tree and t.out_tree == jt.out_tree
    assert t.out_info == jt.out_info
    assert t.in_avals == jt.in_avals and t.out_avals == jt.out_avals
    assert t.donate_argnums == jt.donate_argnums == (0, 1)  # p's two leaves
    w, y = t.args_info[0][0]["w"], t.args_info[0][1]
    assert (w.shape, w.dtype, w.donated) == ((2, 3), np.dtype(F32), True)
    assert (y.shape, y.dtype, y.donated) == ((), np.dtype(F32), False)


@pytest.mark.parametrize("path", PATHS)
def test_traced_lower_is_jit_lower(path):
    ours, theirs = pair(path)
    a = args()
    lowered = ours.trace(*a).lower()
    assert type(lowered) is Lowered
    assert lowered.as_text() == ours.lower(*a).as_text()
    np.testing.assert_allclose(
        lowered.compile()(*dyn(a))["s"],
        theirs.trace(*a).lower().compile()(*dyn(a))["s"],
        rtol=1e-6,
    )


@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
@pytest.mark.parametrize("path", PATHS)
def test_lowered_attributes_equal_jax(path):
    ours, theirs = pair(path, donate_argnums=0)
    a = args()
    low, jlow = ours.lower(*a), theirs.lower(*a)
    assert low.args_info == jlow.args_info
    assert low.in_tree == jlow.in_tree and low.out_tree == jlow.out_tree
    assert low.out_info == jlow.out_info
    assert low.in_avals == jlow.in_avals and low.donate_argnums == jlow.donate_argnums
    assert low.cost_analysis()["flops"] > 0
    assert "stablehlo" in str(low.compiler_ir())


@pytest.mark.parametrize("path", PATHS)
def test_compiled_attributes_equal_jax(path):
    ours, theirs = pair(path)
    a = args()
    c, jc = ours.lower(*a).compile(), theirs.lower(*a).compile()
    assert type(c) is Compiled
    for name in (
        "args_info",
        "in_tree",
        "out_tree",
        "in_avals",
        "out_info",
        "input_shardings",
        "output_shardings",
        "input_formats",
        "output_formats",
        "donate_argnums",
    ):
        assert getattr(c, name) == getattr(jc, name), name
    assert c.memory_analysis().output_size_in_bytes == jc.memory_analysis().output_size_in_bytes
    assert c.cost_analysis()["flops"] > 0 and "HloModule" in c.as_text()
    out, jout = c(*dyn(a)), jc(*dyn(a))
    for k in ("h", "s"):
        np.testing.assert_allclose(out[k], jout[k], rtol=1e-6)


@pytest.mark.parametrize("path", PATHS)
def test_shape_dtype_struct_arguments(path):
    """``jax.ShapeDtypeStruct`` (with ``sharding=``) in place of arrays, as JAX takes them."""
    ours, theirs = pair(path)
    a = args()
    structs = jax.tree_util.tree_map(
        lambda x: jax.ShapeDtypeStruct(np.shape(x), F32, sharding=SHARDING), dyn(a)
    )
    t, jt = ours.trace(*structs, 3), theirs.trace(*structs, 3)
    assert t.args_info == jt.args_info and t.out_info == jt.out_info
    c, jc = t.lower().compile(), jt.lower().compile()
    assert c.input_shardings == jc.input_shardings
    np.testing.assert_allclose(c(*dyn(a))["h"], jc(*dyn(a))["h"], rtol=1e-6)


def bad_calls():
    p, y, _ = args()
    wide = {"w": np.ones((2, 4), F32), "b": p["b"]}
    ints = {"w": p["w"].astype(np.int32), "b": [np.ones(3, np.int32)]}
    return {
        "shape": ((wide, y), {}),
        "dtype_and_int_scalar": ((ints, 1), {}),
        "python_float": ((p, 1.5), {}),
        "missing": ((p,), {}),
        "static_kwarg": ((p, y), {"n": 3}),
        "list_for_dict": (([p["w"]], y), {}),
        "extra_key": (({**p, "c": p["w"]}, y), {}),
    }


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", sorted(bad_calls()))
def test_compiled_call_errors_are_jax_errors(path, case):
    ours, theirs = pair(path)
    a = args()
    c, jc = ours.lower(*a).compile(), theirs.lower(*a).compile()
    bad_args, bad_kw = bad_calls()[case]
    with pytest.raises(Exception) as theirs_err:
        jc(*bad_args, **bad_kw)
    with pytest.raises(Exception) as ours_err:
        c(*bad_args, **bad_kw)
    assert type(ours_err.value) is type(theirs_err.value) is TypeError
    assert str(ours_err.value) == str(theirs_err.value)


@pytest.mark.parametrize("x64", [False, True])
def test_compiled_scalars_as_jax(x64):
    """Python scalars and NumPy scalars of each width, compiled for and called with: a
    call runs where JAX's runs and fails with JAX's error where JAX's fails (with and
    without x64, which changes what a Python float is)."""
    values = (1.5, 2, F32(1.5), np.float64(1.5), np.int32(2))
    with jax.enable_x64(x64):
        for compiled_for in values:
            c = fg.jit(lambda y: y * 2).lower(compiled_for).compile()
            jc = jax.jit(lambda y: y * 2).lower(compiled_for).compile()
            for y in values:
                try:
                    want = jc(y)
                except TypeError as e:
                    with pytest.raises(TypeError) as err:
                        c(y)
                    assert str(err.value) == str(e)
                else:
                    got = c(y)
                    assert got.dtype == want.dtype and float(got) == float(want)


def test_keyword_arguments_named_as_jax():
    """Dynamic keyword arguments: in ``args_info``'s keyword dict and named by their key in
    errors, as JAX names them."""

    def f(x, *, z):
        return x + z["a"]

    x, z = np.ones(3, F32), {"a": np.ones(3, F32)}
    ours, theirs = fg.jit(f), jax.jit(f)
    c, jc = ours.lower(x, z=z).compile(), theirs.lower(x, z=z).compile()
    assert c.args_info == jc.args_info and c.input_shardings == jc.input_shardings
    bad = {"a": np.ones(2, F32)}
    with pytest.raises(TypeError) as want:
        jc(x, z=bad)
    with pytest.raises(TypeError) as got:
        c(x, z=bad)
    assert str(got.value) == str(want.value) and "'z['a']'" in str(got.value)


@pytest.mark.parametrize("path", PATHS)
def test_compiled_under_a_transform_is_jax_error(path):
    ours, _ = pair(path)
    a = args()
    c = ours.lower(*a).compile()
    with pytest.raises(TypeError, match="Cannot apply JAX transformations to a function lowered"):
        fg.grad(lambda y: c(a[0], y)["s"])(F32(1.5))


def test_eval_shape_as_jax():
    """``jit(f).eval_shape``: the outputs' ``ShapeDtypeStruct`` tree, equal to JAX's (weak
    types and ``out_shardings`` included)."""
    a = args()
    for kw in ({}, {"out_shardings": SHARDING}):
        ours, theirs = pair("plain", **kw)
        assert ours.eval_shape(*a) == theirs.eval_shape(*a)
    assert fg.jit(lambda y: y * 2).eval_shape(1.0) == jax.jit(lambda y: y * 2).eval_shape(1.0)


ABSTRACT_MESH = textwrap.dedent(
    """
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import funcgrad as fg

    mesh = jax.make_mesh((2, 1), ("x", "y"))
    sds = jax.ShapeDtypeStruct(
        (8, 2), jnp.float32, sharding=NamedSharding(mesh.abstract_mesh, P("x"))
    )
    arr = jax.device_put(np.arange(16, dtype=np.float32).reshape(8, 2), NamedSharding(mesh, P("x")))
    res = {}
    for name, jit in (("ours", fg.jit), ("theirs", jax.jit)):
        lowered = jit(lambda x: x * 2).trace(sds).lower(lowering_platforms=("tpu",))
        compiled = lowered.compile(device_assignment=tuple(mesh.devices.flat))
        out = compiled(arr)
        try:
            lowered.compile(device_assignment=(jax.devices()[0],))
            err = None
        except ValueError as e:
            err = str(e)
        res[name] = {
            "partitions": "num_partitions = 2" in lowered.as_text(),
            "out": np.asarray(out).tolist(),
            "out_sharding": repr(out.sharding),
            "input_shardings": repr(compiled.input_shardings),
            "error": err,
        }
    print("RESULT " + json.dumps(res))
    """
)


def test_lower_for_other_platforms_on_an_abstract_mesh():
    """``trace(sds).lower(lowering_platforms=("tpu",))`` on an abstract mesh, then
    ``compile(device_assignment=...)``, as JAX's (pjit_test's AOT-on-abstract-mesh case)."""
    res = run_on_8_devices(ABSTRACT_MESH)
    assert res["ours"] == res["theirs"]
    assert res["ours"]["partitions"] and "abstract mesh 2" in res["ours"]["error"]
    assert res["ours"]["out"] == (np.arange(16).reshape(8, 2) * 2).tolist()
