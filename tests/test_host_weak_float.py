"""The host plan's generated code takes a weakly typed Python ``float`` as it is where a
lax-style add/sub/mul/div/max/min with a strongly typed operand of its float dtype
consumes its conversion (NumPy converts it to that dtype first, as XLA's program does):
bit for bit the interpreted plan's results (which convert every number), the compiled
tier's to its usual tolerance, and the conversion kept wherever that does not hold (both
operands Python floats, the value an output, another consumer)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad.lax as lax
from funcgrad.core import compile_cache
from funcgrad.core.host import HostPlan
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval

F64W = Aval((), np.dtype(np.float64), True)


def _c(c, x):
    return lax.convert_element_type(c, x.dtype)


PROGRAMS = {
    "mul": (lambda x, c: [lax.mul(x, _c(c, x))], True),
    "rsub": (lambda x, c: [lax.sub(_c(c, x), x)], True),
    "div": (lambda x, c: [lax.div(x, _c(c, x))], True),
    "max_min": (lambda x, c: [lax.min(lax.max(x, _c(c, x)), x)], True),
    "used_twice": (lambda x, c: [lax.add(lax.mul(x, _c(c, x)), _c(c, x))], True),
    "is_output": (lambda x, c: (lambda k: [lax.mul(x, k), k])(_c(c, x)), False),
    "two_floats": (lambda x, c: [lax.add(x, lax.add(_c(c, x), _c(c, x)))], False),
    "other_consumer": (lambda x, c: (lambda k: [lax.mul(x, k), lax.exp(k)])(_c(c, x)), False),
}


def _passes(plan):
    """Whether the generated code takes a Python float as it is (its only use of ``float``)."""
    return "float" in plan.run.__code__.co_names


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_generated_plan_matches_compiled(name, dtype):
    f, skipped = PROGRAMS[name]
    rng = np.random.default_rng(0)
    xs = [
        (rng.standard_normal(5) * 1e3).astype(dtype),
        np.asarray([0.0, -0.0, 3e38, -3e38, 1e-30], dtype),
        np.asarray(1.5, dtype),
    ]
    cs = [1.0001, 0.1, -2.5, 1e39, 1e-50, 1e300, float("nan"), float("inf"), 0.0]
    with jax.enable_x64(True):
        for x in xs:
            prog = trace_flat(f, [Aval(x.shape, x.dtype), F64W], "test")
            plan = HostPlan(prog, generate_after=1)
            plan.run(*prog.consts, x, 1.0)
            assert plan.run.__name__ == "run"
            exe = compile_cache.compiled(prog)
            interpreted = HostPlan(prog, generate_after=1 << 30)  # converts every number
            for c in cs:
                host = plan.run(*prog.consts, x, c)
                ref = interpreted.run(*prog.consts, x, c)
                comp = exe(*prog.consts, x, c)
                for h, r, k in zip(host, ref, comp):
                    assert np.asarray(h).dtype == np.asarray(r).dtype == np.asarray(k).dtype
                    np.testing.assert_array_equal(np.asarray(h), np.asarray(r))
                    # against XLA: its CPU code flushes subnormal results to zero (1e-30 *
                    # 1e-50) and may divide by a reciprocal (1 ulp), both tiers before too
                    tiny = np.abs(np.asarray(h)) < np.finfo(dtype).tiny
                    np.testing.assert_allclose(
                        np.where(tiny, 0, h), np.where(tiny, 0, k), rtol=4 * np.finfo(dtype).eps
                    )
            # a NumPy scalar or array in the Python number's place is converted as before
            host = plan.run(*prog.consts, x, np.float64(0.1))
            ref = interpreted.run(*prog.consts, x, 0.1)
            for h, r in zip(host, ref):
                np.testing.assert_array_equal(np.asarray(h), np.asarray(r))
            assert _passes(plan) == skipped
