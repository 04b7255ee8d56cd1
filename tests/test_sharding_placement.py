"""Where results land over meshes with automatic axes, on 8 CPU devices, against JAX's
own functions: gradients of placed arrays, ``device_put`` inside transforms (and its
cotangent put back), the ``*_like`` creators and ``asarray(device=)``, ``auto_axes``
without a context mesh, ``with_sharding_constraint`` with a pytree prefix, and ``jit``'s
``device=``/``backend=``.

Found by JAX's ``pjit_test`` (docs/conformance.md, seventeenth session): each case here was
a silent wrong placement or a missing form. One subprocess (the device count must be
set before JAX starts), no explicit mesh before the placement checks: a fresh process
shows what a user who never made one gets.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.multiprocess import run_on_8_devices

SCRIPT = textwrap.dedent(
    """
    import json, warnings
    from functools import partial
    import numpy as np
    import jax
    import jax.numpy as jnp
    import funcgrad as fg
    import funcgrad.numpy as fnp
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    out = {}
    libs = {"jax": (jax, jnp), "fg": (fg, fnp)}

    def where(a):
        return [str(a.sharding.spec) if isinstance(a.sharding, NamedSharding)
                else type(a.sharding).__name__, sorted(d.id for d in a.devices())]

    # a gradient of an array split over an automatic mesh keeps its placement
    mesh1 = jax.sharding.Mesh(jax.devices()[:4], "x")
    mesh2 = jax.sharding.Mesh(jax.devices()[4:8], "x")
    s1, s2 = NamedSharding(mesh1, P("x")), NamedSharding(mesh2, P("x"))
    x0 = np.arange(4.0, dtype=np.float32)
    for name, (lib, np_) in libs.items():
        arr = lib.device_put(x0, s1)
        g = lib.grad(lambda v: np_.sum(np_.sin(v) ** 2))(arr)
        out[f"grad_{name}"] = [where(g), np.asarray(g).tolist()]

    # device_put inside a transform, from one mesh to another: the result on the second,
    # its cotangent put back on the first (with and without src=)
    for name, (lib, np_) in libs.items():
        stage1, stage2 = lib.jit(lambda v: v**2), lib.jit(lambda v: v * 3)
        def f(v):
            return np_.sum(stage2(lib.device_put(stage1(v), s2)))
        def g(v):
            return np_.sum(stage2(lib.device_put(stage1(v), s2, src=s1)))
        arr = lib.device_put(x0, s1)
        res = []
        for fn in (f, g):
            gr = lib.grad(fn)(arr)
            jgr = lib.jit(lib.grad(fn))(arr)
            res.append([where(gr), np.asarray(gr).tolist(), where(jgr)])
        hess = lib.grad(lambda v: lib.grad(g)(v).sum())(arr)
        vm = lib.vmap(lambda v: lib.device_put(v, jax.devices()[5]) * 2.0)(np.ones((3, 2)))
        res.append([np.asarray(hess).tolist(), np.asarray(vm).tolist()])
        out[f"device_put_{name}"] = res

    # the *_like creators take the placement of their prototype (an array or a
    # ShapeDtypeStruct); asarray/array with device= inside jit
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    for name, (lib, np_) in libs.items():
        arr = lib.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), s)
        sds = jax.ShapeDtypeStruct((4, 4), jnp.float32, sharding=s)
        rows = [where(getattr(np_, f)(p)) for f in ("zeros_like", "ones_like", "empty_like")
                for p in (arr, sds)]
        rows.append(where(np_.full_like(arr, 3.0)))
        rows.append(where(np_.zeros_like(arr, shape=(2, 2))))
        rows.append(where(np_.zeros_like(arr, device=jax.devices()[6])))
        rows.append(where(lib.jit(lambda v: np_.asarray(v, device=s))(np.ones((4, 4)))))
        rows.append(where(lib.jit(lambda v: np_.array(v * 2, device=s))(np.ones((4, 4)))))
        out[f"like_{name}"] = rows

    # jit's device= and backend= (deprecated in JAX, still taken)
    warnings.simplefilter("ignore", DeprecationWarning)
    for name, (lib, np_) in libs.items():
        f = lib.jit(lambda v: v @ v.T, device=jax.devices()[1])
        o = f(np_.arange(8.0).reshape(4, 2))
        errs = []
        for kw in ({"device": jax.devices()[0], "backend": "cpu"},
                   {"device": jax.devices()[0], "out_shardings": s}):
            try:
                lib.jit(lambda v: v, **kw)
                errs.append(None)
            except ValueError as e:
                errs.append(str(e))
        b = lib.jit(lambda v: v + 1, backend="cpu")(np.ones(2))
        out[f"jit_device_{name}"] = [where(o), where(f(o)), np.asarray(f(o)).tolist(),
                                     where(b), errs]

    # with_sharding_constraint: the shardings a pytree prefix of the value; None refused
    auto = jax.sharding.Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
    sa, sb = NamedSharding(auto, P("a")), NamedSharding(auto, P(None, "b"))
    tree = [{"p": np.ones((4, 4)), "q": np.zeros((4, 4))}, np.ones((4, 4))]
    for name, (lib, np_) in libs.items():
        o = lib.jit(lambda t: lib.lax.with_sharding_constraint(t, [sa, sb]))(tree)
        try:
            lib.lax.with_sharding_constraint(np_.arange(8), None)
            none_err = None
        except ValueError as e:
            none_err = str(e)
        with lib.set_mesh(auto):  # (a bare spec under vmap: the batch axis unsplit)
            vm = lib.jit(lib.vmap(lambda v: lib.lax.with_sharding_constraint(v * 2.0, P("a")),
                                  in_axes=1))(np.ones((4, 3)))
        out[f"wsc_{name}"] = [[str(a.sharding.spec) for a in jax.tree_util.tree_leaves(o)],
                              none_err, str(vm.sharding.spec), np.asarray(vm).tolist()]
        # vmap's spmd_axis_name: the constraint's batch axis split over those mesh axes
        # (one name, a tuple, nested vmaps, a constraint over the abstract mesh)
        wsc = lib.lax.with_sharding_constraint
        g = lambda v: wsc(v * 3.0, NamedSharding(auto, P(None)))
        ab = lambda v: wsc(v, NamedSharding(auto.abstract_mesh, P("a"))) * 2.0
        x8 = np.arange(32.0).reshape(8, 4)
        placed_ab = jax.device_put(x8, NamedSharding(auto, P("a", "b")))
        runs = [
            lib.jit(lib.vmap(g, spmd_axis_name="b"))(x8),
            lib.jit(lib.vmap(g, spmd_axis_name=("a", "b")))(x8),
            lib.jit(lib.vmap(lib.vmap(g, in_axes=1, spmd_axis_name="b"), spmd_axis_name="a"))(
                x8.reshape(2, 4, 4)),
            lib.jit(lib.vmap(g, in_axes=1, out_axes=1, spmd_axis_name="a"))(x8),
            lib.jit(lib.vmap(ab, spmd_axis_name="b"))(placed_ab),
            lib.jit(lib.vmap(ab))(placed_ab),
        ]
        out[f"spmd_{name}"] = [[str(r.sharding.spec), np.asarray(r).tolist()] for r in runs]

    # auto_axes without a context mesh takes its mesh from out_sharding; explicit_axes
    # without one is JAX's error
    for name, (lib, np_) in libs.items():
        em = lib.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
        arr = lib.device_put(np.arange(16.0).reshape(8, 2), NamedSharding(em, P("x", "y")))
        seen = []

        @partial(lib.sharding.auto_axes, axes="x", out_sharding=NamedSharding(em, P("x", "y")))
        def h(v):
            seen.append(str(lib.typeof(v).sharding.spec))
            return np_.sin(v)

        o1, o2 = lib.jit(h)(arr), h(arr)
        try:
            lib.sharding.explicit_axes(lambda v: v, in_sharding=P("x"))(np.ones(4))
            exp_err = None
        except ValueError as e:
            exp_err = str(e)
        out[f"auto_{name}"] = [seen, str(o1.sharding.spec), str(o2.sharding.spec),
                               float(np.asarray(o1).sum()), exp_err]
    # a ShapeDtypeStruct over an abstract mesh: zeros_like places on the context's mesh
    for name, (lib, np_) in libs.items():
        em = lib.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
        sds = jax.ShapeDtypeStruct((32,), jnp.float32,
                                   sharding=NamedSharding(em.abstract_mesh, P("x")))
        with lib.set_mesh(em):
            out[f"abstract_like_{name}"] = where(np_.zeros_like(sds))
    print("RESULT " + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def result() -> dict:
    return run_on_8_devices(SCRIPT)


def _same(result: dict, key: str) -> None:
    assert result[f"{key}_fg"] == result[f"{key}_jax"], (result[f"{key}_fg"], result[f"{key}_jax"])


def test_gradient_keeps_placement(result):
    # (it was on device 0 alone: the host tier ran the backward pass)
    _same(result, "grad")
    assert result["grad_fg"][0] == ["P('x',)", [0, 1, 2, 3]]


def test_device_put_inside_transforms(result):
    # (it was ignored: the gradient landed on one device)
    _same(result, "device_put")
    (f_grad, _, f_jit), (g_grad, *_), _ = result["device_put_fg"]
    assert f_grad[1] == [0, 1, 2, 3] and g_grad[1] == [0, 1, 2, 3] and f_jit[1] == [0, 1, 2, 3]


def test_like_creators_and_asarray_device(result):
    # (they were on device 0 alone)
    _same(result, "like")
    assert result["like_fg"][0] == ["P('x', 'y')", [0, 1, 2, 3]]


def test_jit_device_and_backend(result):
    _same(result, "jit_device")


def test_with_sharding_constraint_prefix_and_none(result):
    _same(result, "wsc")
    assert "got sharding None" in result["wsc_fg"][1]


def test_vmap_spmd_axis_name(result):
    # (funcgrad refused spmd_axis_name)
    _same(result, "spmd")
    specs = [r[0] for r in result["spmd_fg"]]
    assert specs[:2] == ["P('b',)", "P(('a', 'b'),)"] and specs[4] == "P('b', 'a')"


def test_auto_axes_without_context_mesh(result):
    # (its argument was typed as split over 'x' inside: the context mesh was empty)
    _same(result, "auto")
    assert result["auto_fg"][0] == ["P(None, 'y')", "P(None, 'y')"]


def test_like_of_abstract_sharding_under_a_mesh(result):
    _same(result, "abstract_like")
    assert result["abstract_like_fg"] == ["P('x',)", [0, 1]]
