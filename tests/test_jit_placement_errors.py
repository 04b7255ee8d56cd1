"""Where ``jit``'s shardings meet operands placed otherwise, and where ``vmap`` maps over
dimensions split differently, on 8 CPU devices, against JAX: JAX raises for a committed
operand placed otherwise than a jit's ``in_shardings`` wherever that jit runs by itself
(under eager ``grad``, ``jvp``, ``vmap``), reads a nested jit's shardings as constraints,
and refuses mapped dimensions split over different explicit axes.

funcgrad silently resharded these before (the nested jit's shardings were dropped under
any transform, and eager ``grad`` of a placed jit returned its gradient on device 0).
One subprocess: the device count must be set before JAX starts.
"""

from __future__ import annotations

import textwrap

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import funcgrad as fg
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
    from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

    devs = jax.devices()
    mesh = Mesh(np.array(devs).reshape(4, 2), ("x", "y"))
    sx, sy = NamedSharding(mesh, P("x")), NamedSharding(mesh, P("y"))
    a = np.arange(32, dtype=np.float32).reshape(8, 4) / 7
    ax, ay, ua = jax.device_put(a, sx), jax.device_put(a, sy), jnp.asarray(a)
    libs = {
        "jax": dict(jit=jax.jit, grad=jax.grad, jvp=jax.jvp, vmap=jax.vmap, np=jnp,
                    set_mesh=jax.set_mesh),
        "fg": dict(jit=fg.jit, grad=fg.grad, jvp=fg.jvp, vmap=fg.vmap, np=fnp,
                   set_mesh=fg.set_mesh),
    }

    def outcome(make, lib):
        try:
            res = make(**libs[lib])
        except Exception as e:  # the error's type and its words up to the source line
            return ["error", type(e).__name__, str(e).split(" at ")[0].rstrip()]
        leaves = jax.tree_util.tree_leaves(res)
        return ["ok", [[str(getattr(x.sharding, "spec", type(x.sharding).__name__)),
                        sorted(d.id for d in x.devices()), np.asarray(x).tolist()]
                       for x in leaves]]

    def sq(u):
        return (jnp.sin(u) * u).sum() if isinstance(u, jax.Array) else (fnp.sin(u) * u).sum()

    def grad_spec_in_mesh(jit, grad, set_mesh, **k):
        with set_mesh(mesh):
            return grad(jit(sq, in_shardings=P("x")))(ua)

    cases = {
        # eager transforms of a placed jit: JAX evaluates it by itself and checks
        "grad_committed_other": lambda jit, grad, **k: grad(jit(sq, in_shardings=sx))(ay),
        "grad_committed_same": lambda jit, grad, **k: grad(jit(sq, in_shardings=sx))(ax),
        "grad_uncommitted": lambda jit, grad, **k: grad(jit(sq, in_shardings=sx))(ua),
        "grad_of_linear": lambda jit, grad, np, **k: grad(
            jit(lambda u: (u * 2).sum(), in_shardings=sx))(ay),
        "grad_intermediate": lambda jit, grad, np, **k: grad(
            lambda u: jit(lambda v: (v * v).sum(), in_shardings=sx)(u * 3))(ay),
        "jvp_committed_other": lambda jit, jvp, np, **k: jvp(
            jit(lambda u: np.sin(u), in_shardings=sx), (ay,), (ay,)),
        "vmap_committed_other": lambda jit, vmap, np, **k: vmap(
            jit(lambda u: np.sin(u), in_shardings=sx))(ay),
        "vmap_batched_alike": lambda jit, vmap, np, **k: vmap(
            jit(lambda u: np.sin(u), in_shardings=sx))(
                jax.device_put(a, NamedSharding(mesh, P(None, "x")))),
        # a nested jit's shardings constrain its operands and results
        "nested_in": lambda jit, np, **k: jit(
            lambda u: jit(lambda v: np.sin(v), in_shardings=sx)(u))(ay),
        "nested_out": lambda jit, np, **k: jit(
            lambda u: jit(lambda v: np.sin(v), out_shardings=sy)(u))(ax),
        "jit_grad_nested": lambda jit, grad, **k: jit(grad(jit(sq, in_shardings=sx)))(ay),
        "nested_other_devices": lambda jit, np, **k: jit(
            lambda inp1: jit(lambda v: v * 2, in_shardings=sx, out_shardings=sx)(inp1))(
                jax.device_put(a, devs[0])),
        # a bare spec is read over the context's mesh, and needs one
        "grad_spec_in_mesh": grad_spec_in_mesh,
        "grad_spec_no_mesh": lambda jit, grad, **k: grad(jit(sq, in_shardings=P("x")))(ua),
        # array/asarray(device=) of an array committed elsewhere: JAX does not move it
        "array_committed_elsewhere": lambda np, **k: np.array(
            jax.device_put(a, devs[0]), device=devs[1]),
        "asarray_committed_elsewhere": lambda np, **k: np.asarray(
            jax.device_put(a, devs[0]), device=NamedSharding(mesh, P("x"))),
        "array_uncommitted_elsewhere": lambda np, **k: np.array(ua, device=devs[1]),
        "array_committed_same_devices": lambda np, **k: np.asarray(ax, device=sy),
        # JAX's words for two ways of asking what a jit cannot do
        "kwargs_with_in_shardings": lambda jit, **k: jit(lambda v: v * 2, in_shardings=sx)(v=ax),
        "nested_compiler_options": lambda jit, np, **k: jit(lambda u: jit(
            lambda v: v * 2, compiler_options={"xla_embed_ir_in_executable": True})(u))(ua),
    }

    # vmap over explicit axes: mapped dimensions split alike, unmapped ones not over them
    em = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    b = np.arange(8, dtype=np.float32).reshape(4, 2)

    def explicit(fn):
        def run(set_mesh, **k):
            with set_mesh(em):
                return fn(**k)
        return run

    cases.update({
        "vmap_split_differently": explicit(lambda jit, vmap, **k: jit(vmap(lambda x, y: x * y))(
            jax.device_put(b, NamedSharding(em, P("x"))),
            jax.device_put(b, NamedSharding(em, P())))),
        "vmap_split_x_and_y": explicit(lambda vmap, **k: vmap(lambda x, y: x * y)(
            jax.device_put(b, NamedSharding(em, P("x"))),
            jax.device_put(b, NamedSharding(em, P("y"))))),
        "vmap_split_alike": explicit(lambda jit, vmap, **k: jit(vmap(lambda x, y: x * y))(
            jax.device_put(b, NamedSharding(em, P("x"))),
            jax.device_put(b, NamedSharding(em, P("x"))))),
        "vmap_unmapped_split": explicit(lambda vmap, **k: vmap(
            lambda x, y: x * y, in_axes=(0, None))(
                jax.device_put(b, NamedSharding(em, P("x"))),
                jax.device_put(b[0], NamedSharding(em, P("x"))))),
        "vmap_spmd_other_axis": explicit(lambda vmap, **k: vmap(
            lambda x: x * 2, spmd_axis_name="y")(jax.device_put(b, NamedSharding(em, P("x"))))),
        "vmap_spmd_same_axis": explicit(lambda vmap, **k: vmap(
            lambda x: x * 2, spmd_axis_name="x")(jax.device_put(b, NamedSharding(em, P("x"))))),
    })

    out = {name: {lib: outcome(make, lib) for lib in libs} for name, make in cases.items()}
    print("RESULT " + json.dumps(out))
    """
)

RAISES = {
    "grad_committed_other": "Sharding passed to jit does not match the sharding",
    "grad_of_linear": "Sharding passed to jit does not match the sharding",
    "grad_intermediate": "Sharding passed to jit does not match the sharding",
    "jvp_committed_other": "Sharding passed to jit does not match the sharding",
    "vmap_committed_other": "Sharding passed to jit does not match the sharding",
    "nested_other_devices": "Received incompatible devices for jitted computation",
    "array_committed_elsewhere": "Received incompatible devices for jitted computation",
    "asarray_committed_elsewhere": "Received incompatible devices for jitted computation",
    "grad_spec_no_mesh": "jit requires a non-empty mesh in context",
    "kwargs_with_in_shardings": "pjit does not support kwargs when in_shardings is specified",
    "nested_compiler_options": "`compiler_options` can only be passed to top-level `jax.jit`",
    "vmap_split_differently": "Mapped away dimension of inputs passed to vmap should be sharded",
    "vmap_split_x_and_y": "Mapped away dimension of inputs passed to vmap should be sharded",
    "vmap_unmapped_split": "Unmapped values passed to vmap cannot be sharded along the mesh",
    "vmap_spmd_other_axis": "Only one of spmd_axis_name or arrays sharded on `Explicit`",
}
RUNS = [
    "array_uncommitted_elsewhere",
    "array_committed_same_devices",
    "grad_spec_in_mesh",
    "grad_committed_same",
    "grad_uncommitted",
    "vmap_batched_alike",
    "nested_in",
    "nested_out",
    "jit_grad_nested",
    "vmap_split_alike",
    "vmap_spmd_same_axis",
]


@pytest.fixture(scope="module")
def result() -> dict:
    return run_on_8_devices(SCRIPT)


def _close(fg: list, jax: list) -> None:
    assert fg[0] == jax[0] == "ok", (fg, jax)
    assert len(fg[1]) == len(jax[1])
    for (f_spec, f_devs, f_val), (j_spec, j_devs, j_val) in zip(fg[1], jax[1]):
        assert (f_spec, f_devs) == (j_spec, j_devs)
        np.testing.assert_allclose(f_val, j_val, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", sorted(RAISES))
def test_raises_as_jax(result, case):
    fg, jax = result[case]["fg"], result[case]["jax"]
    assert jax[0] == "error" and RAISES[case] in jax[2], jax  # (the oracle)
    assert fg[0] == "error", f"funcgrad ran where JAX raises: {fg}"
    assert fg[1] == jax[1]
    # the same words, but the argument names and qualified function names JAX's
    # tracing finds and funcgrad's dispatch hides
    assert RAISES[case] in fg[2]
    if case.startswith(("grad", "jvp", "vmap", "kwargs", "array", "asarray")):
        assert fg[2] == jax[2]


@pytest.mark.parametrize("case", RUNS)
def test_runs_and_places_as_jax(result, case):
    _close(result[case]["fg"], result[case]["jax"])


def test_nested_shardings_are_constraints(result):
    # (they were dropped: the results kept their operand's split)
    assert result["nested_in"]["fg"][1][0][0] == "P('x',)"
    assert result["nested_out"]["fg"][1][0][0] == "P('y',)"
    assert result["jit_grad_nested"]["fg"][1][0][0] == "P('x',)"


@pytest.mark.parametrize("which", ["in_shardings", "out_shardings"])
def test_unconstrained_dims_refused_as_jax(which):
    # (funcgrad accepted them: JAX refuses them when the jit is made)
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    s = NamedSharding(mesh, P(P.UNCONSTRAINED, "x"))
    with pytest.raises(ValueError) as want:
        jax.jit(lambda x: x, **{which: s})
    with pytest.raises(ValueError) as got:
        fg.jit(lambda x: x, **{which: s})
    assert str(got.value) == str(want.value)
    assert "Unconstrained dims are not allowed" in str(got.value)
