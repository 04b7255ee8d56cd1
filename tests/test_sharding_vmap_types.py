"""Types over explicit mesh axes under ``vmap`` and through the dynamic-slice transposes,
on 8 CPU devices, against JAX: a vmapped function sees its arguments' other dimensions
still split (funcgrad typed them unsplit), an output that does not depend on the mapped
values is split over the mapped axes along its batch dimension, and the gradients of
``dynamic_slice``/``dynamic_update_slice`` of split values (JAX's rule asks operand and
update to be typed alike: funcgrad's transposes built unsplit zeros, and JAX's lowering
refused them). One subprocess: the device count must be set before JAX starts.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

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
                    set_mesh=jax.set_mesh),
        "fg": dict(jit=fg.jit, grad=fg.grad, vmap=fg.vmap, np=fnp, lax=fg.lax,
                   set_mesh=fg.set_mesh),
    }
    a = np.arange(16, dtype=np.float32).reshape(8, 2) / 5

    def run(lib):
        ns = libs[lib]
        jit, grad, vmap, np_, lax = ns["jit"], ns["grad"], ns["vmap"], ns["np"], ns["lax"]
        res = {}
        with ns["set_mesh"](mesh):
            arr = jax.device_put(a, NamedSharding(mesh, P("x", "y")))
            seen = []

            def f(x):
                seen.append(str(x.aval.sharding.spec))
                y = np_.sin(x) * 2
                seen.append(str(y.aval.sharding.spec))
                return y

            outs = [vmap(f)(arr), jit(vmap(f))(arr),
                    grad(lambda x: np_.sum(vmap(f)(x)))(arr)]
            res["vmap_inner"] = seen
            res["vmap_outs"] = [[str(o.sharding.spec), np.asarray(o).tolist()] for o in outs]
            v = jax.device_put(a[:, 0], NamedSharding(mesh, P("x")))
            z = vmap(lambda x: np_.zeros((4,)), out_axes=-1)(v)
            z2 = jit(vmap(lambda x: np_.ones((3,)) * 2))(v)
            res["unmapped_out"] = [[str(o.sharding.spec), np.asarray(o).tolist()]
                                   for o in (z, z2)]
            s16 = jax.device_put(np.arange(16, dtype=np.float32) / 3, P("x"))
            upd = jax.device_put(np.arange(8, dtype=np.float32), P("x"))
            ds = lambda x: np_.sum(np_.sin(lax.dynamic_slice_in_dim(x, np.int32(4), 4)))
            dus = lambda x, u: np_.sum(np_.sin(lax.dynamic_update_slice(x, u, (3,))))
            grads = [grad(ds)(s16), jit(grad(ds))(s16),
                     *grad(dus, argnums=(0, 1))(s16, upd),
                     *jit(grad(dus, argnums=(0, 1)))(s16, upd)]
            res["slice_grads"] = [[str(o.sharding.spec), np.asarray(o).tolist()] for o in grads]
            # an unsplit operand updated, then added to a split value: its cotangent
            # comes split and is typed back as the operand's (unsplit)
            x = jax.device_put(np.arange(8, dtype=np.float32), P())
            y = jax.device_put(np.arange(4, dtype=np.float32), P())
            z = jax.device_put(np.arange(8, dtype=np.float32), P("x"))
            h = lambda x, y, z: np_.sum(np_.sin(lax.dynamic_update_slice(x, y, (1,)) + z))
            hv = lambda x, y, z: np_.sum(vmap(h)(x, y, z))
            xs = jax.device_put(np.arange(16, dtype=np.float32).reshape(2, 8), P())
            ys = jax.device_put(np.arange(6, dtype=np.float32).reshape(2, 3), P())
            zs = jax.device_put(np.arange(16, dtype=np.float32).reshape(2, 8), P(None, "x"))
            grads = [*jit(grad(h, argnums=(0, 1, 2)))(x, y, z),
                     *jit(grad(hv, argnums=(0, 1, 2)))(xs, ys, zs)]
            res["update_grads"] = [[str(o.sharding.spec), np.asarray(o).tolist()] for o in grads]
        return res

    print("RESULT " + json.dumps({lib: run(lib) for lib in libs}))
    """
)


@pytest.fixture(scope="module")
def result() -> dict:
    return run_on_8_devices(SCRIPT)


def _same(fg: list, jax: list) -> None:
    assert len(fg) == len(jax)
    for (f_spec, f_val), (j_spec, j_val) in zip(fg, jax):
        assert f_spec == j_spec
        np.testing.assert_allclose(f_val, j_val, rtol=1e-5, atol=1e-6)


def test_vmapped_function_sees_other_splits(result):
    # (funcgrad's values inside were typed unsplit: P(None,))
    assert result["fg"]["vmap_inner"] == result["jax"]["vmap_inner"]
    assert set(result["fg"]["vmap_inner"]) == {"P('y',)"}
    _same(result["fg"]["vmap_outs"], result["jax"]["vmap_outs"])


def test_unmapped_output_split_over_mapped_axes(result):
    # (funcgrad's broadcast output was unsplit)
    _same(result["fg"]["unmapped_out"], result["jax"]["unmapped_out"])
    assert result["fg"]["unmapped_out"][0][0] == "P(None, 'x')"


def test_dynamic_slice_gradients_of_split_values(result):
    # (JAX's lowering refused funcgrad's transposes: unsplit zeros beside a split update)
    _same(result["fg"]["slice_grads"], result["jax"]["slice_grads"])


def test_update_gradient_typed_as_its_operand(result):
    # (the transpose's zeros took the split cotangent's type: a shape error for a length-3
    # update, and the operand's gradient came back split where JAX's is not)
    _same(result["fg"]["update_grads"], result["jax"]["update_grads"])
