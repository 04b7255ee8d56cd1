"""The host tier agrees with the compiled tier: every primitive's registry examples run
through both (funcgrad.core.host's plan of a one-equation program against its XLA
executable), with the same dtypes exactly and the same values to the examples'
tolerances; and the registry lists which primitives have a host rule."""

from __future__ import annotations

import numpy as np
import pytest
from cases import PRIMS, examples

import funcgrad.lax as lax
import funcgrad.numpy as fnp
from funcgrad.core import compile_cache
from funcgrad.core.host import HostPlan
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import aval_of
from funcgrad.core.primitive import REGISTRY

try:  # optional families register on import
    import funcgrad.control_flow
    import funcgrad.random  # noqa: F401
except ImportError:  # pragma: no cover
    pass

#: primitives that run compiled, equation by equation, when met on the host tier; the
#: test below fails when a primitive gains a rule and stays listed, or loses one
WITHOUT_HOST_RULE = {
    # a jit the user asked for runs its executable (and the random samplers are jit
    # units whose fused arithmetic matches JAX's bit for bit)
    "jit_call",
    "mesh_call",  # (as jit_call: a region the user compiles, under its mesh)
    # a transfer between devices: the host tier has one (JAX's own device_put moves it)
    "device_put",
    # a foreign JAX function: JAX evaluates it
    "jax_call",
    # JAX's threefry bits: the compiled tier is the one bit-identical to JAX's
    "random_bits",
    "random_fold_in",
    "random_gamma",
    "random_gamma_grad",
    "random_seed",
    "random_split",
    # XLA's RngBitGenerator (Philox/Threefry in XLA's layout): its bits are XLA's own
    "rng_bit_generator",
    # XLA's rounding to an arbitrary float format (exponent and mantissa widths no NumPy
    # dtype has): the compiled tier is XLA's exactly
    "reduce_precision",
    # random.normal's samples are erf_inv of uniform bits: XLA's approximation keeps them
    # JAX's bit for bit (SciPy's erfinv differs in the last bit now and then)
    "erf_inv",
    # collectives over named axes and the per-device map: they run only lowered, inside
    # the mesh's per-device program (under vmap their batching rules replace them)
    "psum",
    "pmax",
    "pmin",
    "all_gather",
    "psum_scatter",
    "ppermute",
    "all_to_all",
    "shard_map",
    # reduce/reduce_window with a general computation: XLA picks the order in which a
    # computation that need not be associative combines (jax.lax's caveat), so the
    # compiled tier is the one whose values are JAX's
    "reduce_general",
    "reduce_window_general",
}

HOST_CASES = [
    pytest.param(p, i, id=f"{p.name}-{i}")
    for p in PRIMS
    if p.host is not None
    for i in range(len(examples(p)))
]


def _program(prim, ex):
    arrays = [i for i, a in enumerate(ex.args) if not isinstance(a, (bool, int, float, complex))]

    def f(*xs):
        args = list(ex.args)
        for i, x in zip(arrays, xs):
            args[i] = x
        out = prim.bind(*args, **ex.params)
        return list(out) if prim.multiple_results else [out]

    avals = [aval_of(np.asarray(ex.args[i])) for i in arrays]
    return trace_flat(f, avals, "test"), [np.asarray(ex.args[i]) for i in arrays]


@pytest.mark.parametrize("prim,i", HOST_CASES)
def test_host_rule_matches_compiled(prim, i):
    ex = examples(prim)[i]
    prog, args = _program(prim, ex)
    plan = HostPlan(prog, generate_after=1)
    host = plan.run(*prog.consts, *args)  # interpreted
    generated = plan.run(*prog.consts, *args)  # the generated code
    compiled = compile_cache.compiled(prog)(*prog.consts, *args)
    assert len(host) == len(generated) == len(compiled)
    for h, g in zip(host, generated):
        assert type(h) is type(g) and h.dtype == g.dtype
        np.testing.assert_array_equal(h, g)
    for h, c, v in zip(host, compiled, prog.outvars):
        c = np.asarray(c)
        assert isinstance(h, (np.ndarray, np.generic)), f"{prim.name}: a {type(h).__name__}"
        assert h.dtype == c.dtype == v.aval.dtype, (prim.name, h.dtype, c.dtype, v.aval)
        assert h.shape == c.shape == v.aval.shape
        if h.dtype.kind in "fc":
            tol = max(ex.rtol, 1e-5 if h.dtype.itemsize <= 4 or h.dtype.kind == "c" else 1e-12)
            np.testing.assert_allclose(h, c, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(h, c)


def test_generated_plans_equal_interpreted_ones():
    """A plan's first calls interpret it, later ones run its generated code: the same
    outputs, dtypes and read-only flags for literals, passed-through inputs, repeated
    outputs, multiple results and lax-style operand casts."""

    def f(x, i):
        s = fnp.sin(x) * 2.0
        srt = lax.sort((x, s), num_keys=1)
        # (the add primitive itself: a weak Python int adapts to int32; lax.add refuses it)
        add3 = REGISTRY["add"].bind(i, 3)
        return [s, x, s, 1.5, srt[1], add3, fnp.cumsum(x) / (i.sum() + 0.5)]

    x = np.linspace(-2.0, 3.0, 7, dtype=np.float32)[::-1].copy()
    i = np.arange(7, dtype=np.int32)
    prog = trace_flat(f, [aval_of(x), aval_of(i)], "test")
    plan = HostPlan(prog, generate_after=2)
    first = plan.run(*prog.consts, x, i)
    assert plan.run.__name__ == "_interpret"
    second = plan.run(*prog.consts, x, i)  # the call that generates still interprets
    third = plan.run(*prog.consts, x, i)
    assert plan.run.__name__ == "run"
    compiled = compile_cache.compiled(prog)(*prog.consts, x, i)
    for a, b, c, d in zip(first, second, third, compiled):
        assert type(a) is type(b) is type(c), (type(a), type(c))
        assert np.asarray(a).dtype == np.asarray(c).dtype == np.asarray(d).dtype
        np.testing.assert_array_equal(a, c)
        np.testing.assert_allclose(np.asarray(a), np.asarray(d), rtol=1e-6)
        if isinstance(a, np.ndarray) and a is not x:
            assert not a.flags.writeable and not c.flags.writeable
    assert first[1] is x and third[1] is x


def test_host_rule_coverage_is_listed():
    """The primitives without a host rule are exactly those listed above."""
    without = {p.name for p in REGISTRY.values() if p.host is None}
    assert without == WITHOUT_HOST_RULE, (
        f"gained a host rule: {sorted(WITHOUT_HOST_RULE - without)}; "
        f"without one and unlisted: {sorted(without - WITHOUT_HOST_RULE)}"
    )


def test_a_step_with_new_params_keeps_every_other_slot():
    # HostPlan.with_params (a shape template's plan at concrete dimensions) copies each
    # step by name: a slot added to _Step must be copied too
    prog = trace_flat(lambda x: [fnp.reshape(x * 2.0, (3, 2))], [aval_of(np.ones((2, 3)))], "t")
    plan = HostPlan(prog)
    i = next(k for k, st in enumerate(plan.steps) if st.params)
    new = plan.with_params({i: {**plan.steps[i].params}})
    for name in type(plan.steps[i]).__slots__:
        if name != "params":
            assert getattr(new.steps[i], name) is getattr(plan.steps[i], name), name
    assert new.steps[i].params == plan.steps[i].params
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(new.run(x)[0], (x * 2.0).reshape(3, 2))
