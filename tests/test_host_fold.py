"""The host plan's generated code computes an equation whose inputs are all literals once,
when the code is generated (a backward's ``1 / 32``, a zero broadcast to a shape): the
same values bit for bit as the interpreted plan, which computes them at every call, the
constants read-only, and such an equation left in place when its value is an output."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.lax as lax
from funcgrad.core.host import FOLD_MAX_ELEMENTS, HostPlan
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval, Literal

F32 = np.dtype(np.float32)


def _f(x):
    scale = lax.div(np.float32(1.0), np.float32(32.0))
    zeros = lax.broadcast_in_dim(np.float32(0.0), x.shape, ())
    g = lax.mul(x, scale)
    out = lax.select(lax.gt(x, zeros), g, zeros)
    return [out, lax.add(out, lax.mul(np.float32(2.0), np.float32(3.0)))]


def _f_const_out(x):
    return [lax.mul(x, np.float32(2.0)), lax.exp(np.float32(0.5))]


def _runs(f, x, specialise=True):
    prog = trace_flat(f, [Aval(x.shape, x.dtype)], "test")
    interpreted = HostPlan(prog, generate_after=10**9, specialise=specialise)
    generated = HostPlan(prog, generate_after=1, specialise=specialise)
    generated.run(*prog.consts, x)  # (the first call generates the code)
    return prog, interpreted, generated


def _literal_only(prog):
    return [
        k for k, e in enumerate(prog.eqns) if e.inputs and all(type(a) is Literal for a in e.inputs)
    ]


def test_literal_equations_are_folded_with_the_same_values():
    x = np.asarray([-1.5, 0.0, 2.0, 3e38, np.nan], F32)
    prog, interpreted, generated = _runs(_f, x)
    assert _literal_only(prog), prog  # (else the test tests nothing)
    rules = [k for k in generated.run.__globals__ if k.startswith("r") and k[1:].isdigit()]
    assert len(rules) == len(prog.eqns) - len(_literal_only(prog))
    for _ in range(3):
        want = interpreted.run(*prog.consts, x)
        got = generated.run(*prog.consts, x)
        for a, b in zip(want, got):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes()
            assert not b.flags.writeable
    consts = [v for k, v in generated.run.__globals__.items() if k.startswith("c")]
    assert all(not v.flags.writeable for v in consts if type(v) is np.ndarray)


def test_a_literal_equation_that_is_an_output_runs_at_every_call():
    x = np.asarray([1.0, 2.0], F32)
    prog, interpreted, generated = _runs(_f_const_out, x)
    a = generated.run(*prog.consts, x)
    b = generated.run(*prog.consts, x)
    assert a[1] is not b[1] or type(a[1]) is not np.ndarray
    assert [v.tobytes() for v in a] == [
        np.asarray(v).tobytes() for v in interpreted.run(*prog.consts, x)
    ]


def _f_big_zero(x):
    big = lax.broadcast_in_dim(np.float32(0.0), x.shape, ())
    return [lax.add(lax.mul(x, lax.div(np.float32(2.0), np.float32(4.0))), big)]


@pytest.mark.parametrize("specialise", [False, True])
def test_large_literal_values_are_not_folded(specialise):
    x = np.arange(FOLD_MAX_ELEMENTS + 1, dtype=F32)
    prog, interpreted, generated = _runs(_f_big_zero, x, specialise)
    consts = [v for k, v in generated.run.__globals__.items() if k.startswith("c")]
    assert all(getattr(v, "size", 1) <= FOLD_MAX_ELEMENTS for v in consts)
    rules = [k for k in generated.run.__globals__ if k.startswith("r") and k[1:].isdigit()]
    # (the scalar division is folded; specialised, the zero the add reads is a 1-element
    # view, folded too)
    assert len(rules) == len(prog.eqns) - (2 if specialise else 1)
    want, got = interpreted.run(*prog.consts, x), generated.run(*prog.consts, x)
    assert want[0].tobytes() == got[0].tobytes()
