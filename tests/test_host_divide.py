"""The host tier divides as the compiled tier does, bit for bit: a division by a
broadcast or constant divisor is XLA's ``x * (1 / y)`` (funcgrad.core.host_divide), a
division by a full-shaped operand the correctly rounded quotient. Each program runs on
both tiers (its host plan, interpreted and generated, against its XLA executable)."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.lax as lax
from funcgrad.core import compile_cache
from funcgrad.core.host import HostPlan
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import aval_of

DTYPES = [np.float32, np.float64]


def _both_tiers(f, *xs):
    prog = trace_flat(lambda *a: [f(*a)], [aval_of(x) for x in xs], "test")
    plan = HostPlan(prog, generate_after=2)
    interpreted = np.asarray(plan.run(*prog.consts, *xs)[0])
    generated = np.asarray(plan.run(*prog.consts, *xs)[0])
    compiled = np.asarray(compile_cache.compiled(prog)(*prog.consts, *xs)[0])
    return interpreted, generated, compiled


def _assert_same_bits(*arrays):
    first = arrays[0]
    for a in arrays[1:]:
        assert a.dtype == first.dtype and a.shape == first.shape
        np.testing.assert_array_equal(
            np.atleast_1d(a).view(np.uint8), np.atleast_1d(first).view(np.uint8)
        )


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _floats(dtype, shape):
    return hnp.arrays(
        dtype,
        shape,
        elements=st.floats(
            -1e3, 1e3, allow_subnormal=False, width=np.dtype(dtype).itemsize * 8
        ).filter(lambda v: abs(v) > 1e-3),
    )


@settings(max_examples=25, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES))
def test_divide_by_a_broadcast_matches_compiled(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9))
    x = data.draw(_floats(dtype, shape))
    keep = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    small = tuple(n if k else 1 for n, k in zip(shape, keep))
    y = data.draw(_floats(dtype, small))
    dims = tuple(range(len(shape)))

    def f(a, b):
        return lax.div(a, lax.broadcast_in_dim(b, shape, dims))

    _assert_same_bits(*_both_tiers(f, x, y))


@settings(max_examples=25, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES))
def test_divide_by_a_scalar_or_constant_matches_compiled(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=9))
    x = data.draw(_floats(dtype, shape))
    s = data.draw(_floats(dtype, ()))
    c = float(data.draw(_floats(np.float64, ())))
    _assert_same_bits(*_both_tiers(lax.div, x, s))  # a 0-d divisor (rank-0 x: true quotient)
    _assert_same_bits(*_both_tiers(lambda a: lax.div(a, dtype(c)), x))  # a literal
    _assert_same_bits(*_both_tiers(lambda a: lax.div(a, lax.sqrt(np.asarray(c * c, dtype))), x))


@settings(max_examples=25, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES))
def test_divide_by_a_full_operand_is_the_true_quotient(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=9))
    x, y = data.draw(_floats(dtype, shape)), data.draw(_floats(dtype, shape))
    host, generated, compiled = _both_tiers(lax.div, x, y)
    _assert_same_bits(host, generated, compiled, np.asarray(np.true_divide(x, y)))


def test_the_reciprocal_form_is_what_differs():
    """The case the rule exists for: the true quotient differs from XLA's in the last bit
    for some elements, and the host tier follows XLA."""
    x = np.random.default_rng(0).standard_normal(4000)
    s = np.float64(0.91752102)
    host, _, compiled = _both_tiers(lax.div, x, s)
    assert (np.true_divide(x, s) != compiled).sum() > 100
    _assert_same_bits(host, compiled, x * (1.0 / s))
