"""``fnp.reshape(..., order="F", out_sharding=...)`` and ``ravel(order="F", ...)`` on 8 CPU
devices against JAX 0.10.2: the column-major reshape honours ``out_sharding`` as JAX's
does (its row-major middle step is typed by the spec reversed as written, so a spec
shorter than the rank types the last axes); funcgrad dropped the keyword and the
reshape of a split operand was refused. Placements and values, eager and under ``jit``.
One subprocess: the device count must be set before JAX starts."""

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
    a = np.arange(24, dtype=np.float32).reshape(4, 6) / 7

    def outcome(fn):
        try:
            o = fn()
        except Exception as e:
            return ["error", type(e).__name__, str(e).split(".")[0][:60]]
        return [str(o.sharding.spec), np.asarray(o).tolist()]

    def run(np_, jit, set_mesh):
        res = {}
        with set_mesh(mesh):
            v = jax.device_put(a, NamedSharding(mesh, P("x", None)))
            cases = [((6, 4), P("x", "y")), ((6, 4), P("x")), ((6, 4), P(None, "y")),
                     ((2, 12), P("y", "x")), ((24,), P("x")), ((3, 8), P("y")),
                     ((6, 4), NamedSharding(mesh, P("y", "x"))), ((3, 8), P("x", "y"))]
            for shape, s in cases:
                for order in "CF":
                    f = lambda x, shape=shape, s=s, order=order: np_.reshape(
                        x, shape, order=order, out_sharding=s)
                    res[f"jit {shape} {s} {order}"] = outcome(lambda: jit(f)(v))
                    res[f"eager {shape} {s} {order}"] = outcome(lambda: f(v))
            res["ravel F"] = outcome(
                lambda: jit(lambda x: np_.ravel(x, order="F", out_sharding=P("x")))(v))
        return res

    print("RESULT " + json.dumps({
        "jax": run(jnp, jax.jit, jax.set_mesh),
        "fg": run(fnp, fg.jit, fg.set_mesh),
    }))
    """
)


@pytest.fixture(scope="module")
def result() -> dict:
    return run_on_8_devices(SCRIPT)


def test_order_f_reshape_honours_out_sharding_as_jax(result):
    want, got = result["jax"], result["fg"]
    assert set(got) == set(want)
    assert any(k.endswith(" F") and w[0] != "error" for k, w in want.items())
    for key, w in want.items():
        g = got[key]
        if w[0] == "error":
            assert g[:2] == w[:2], key
        else:
            assert g[0] == w[0], key
            np.testing.assert_array_equal(np.asarray(g[1]), np.asarray(w[1]), err_msg=key)
