"""An eager ``shard_map`` given an ``AbstractMesh`` runs on its operands' devices, as
JAX's: arrays with a ``NamedSharding`` of the mesh's shape give the devices (values as
JAX's); an operand without one, or with a mesh of another shape, is JAX's ``ValueError``
(funcgrad compiled the abstract mesh and XLA failed on a custom call). On 8 CPU devices,
against JAX, in one subprocess.
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
    from jax.sharding import NamedSharding, PartitionSpec as P

    auto = (jax.sharding.AxisType.Auto,)
    mesh = jax.make_mesh((2,), ("x",), axis_types=auto, devices=jax.devices()[:2])
    mesh2 = jax.make_mesh((2,), ("y",), axis_types=auto, devices=jax.devices()[2:4])
    arr = jax.device_put(np.arange(8.0), NamedSharding(mesh, P("x")))
    arr2 = jax.device_put(np.arange(8.0), NamedSharding(mesh2, P("y")))

    def run(shard_map, np_):
        res = {}
        am = mesh.abstract_mesh
        cases = {
            "named": lambda: shard_map(lambda x: x * 2 + 1, mesh=am, in_specs=P("x"),
                                       out_specs=P("x"))(arr),
            "library array": lambda: shard_map(lambda x: x, mesh=am, in_specs=P("x"),
                                               out_specs=P("x"))(np_.arange(8.0)),
            "numpy": lambda: shard_map(lambda x: x, mesh=am, in_specs=P("x"),
                                       out_specs=P("x"))(np.arange(8.0)),
            "other shape": lambda: shard_map(lambda x: x, mesh=mesh2.abstract_mesh,
                                             in_specs=P("y"), out_specs=P("y"))(arr),
            "two meshes": lambda: shard_map(lambda x, y: (x, y), mesh=am, in_specs=P("x"),
                                            out_specs=P("x"))(arr, arr2),
        }
        for k, fn in cases.items():
            try:
                out = fn()
                res[k] = [str(out.sharding.spec), np.asarray(out).tolist(),
                          sorted(d.id for d in out.sharding.device_set)]
            except Exception as e:
                res[k] = ["error", type(e).__name__, str(e)]
        return res

    print("RESULT " + json.dumps({"jax": run(jax.shard_map, jnp),
                                  "fg": run(fg.shard_map, fnp)}))
    """
)


@pytest.fixture(scope="module")
def result() -> dict:
    return run_on_8_devices(SCRIPT)


@pytest.mark.parametrize("case", ["named", "library array", "numpy", "other shape", "two meshes"])
def test_eager_shard_map_over_abstract_mesh(result, case):
    fg, jax = result["fg"][case], result["jax"][case]
    if jax[0] == "error":
        assert fg[:2] == jax[:2]
        # JAX's message, up to the spacing of its shapes
        assert fg[2].split(" for shape")[0] == jax[2].split(" for shape")[0]
    else:
        assert fg[0] == jax[0] and fg[2] == jax[2]
        np.testing.assert_array_equal(fg[1], jax[1])
