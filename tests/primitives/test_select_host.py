"""``select_n``'s host-tier rule against JAX's ``lax.select_n``: a two-way select of
arrays of 256 elements or more is computed on the cases' bits, which must give JAX's
values bit for bit (NaN payloads and signed zeros included) for every dtype of 1-8
bytes, bool and 0-d predicates, and broadcast or transposed cases."""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funcgrad.primitives.elementwise.selection import select_n_p

DTYPES = [
    np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.int32, np.int64,
    np.uint16, np.bool_, np.complex64,
]  # fmt: skip


def _cases(rng, dtype, shape):
    x = rng.standard_normal(shape) * 100
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    x = np.asarray(x).astype(dtype)
    if np.dtype(dtype).kind == "f" and x.size > 2:
        flat = x.reshape(-1)
        flat[0], flat[1] = np.nan, -0.0
    return x


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(DTYPES),
    st.sampled_from([(16, 16), (300,), (4, 8, 9)]),
    st.booleans(),
    st.integers(0, 2**31 - 1),
)
def test_two_way_select_matches_jax_bit_for_bit(dtype, shape, scalar_pred, seed):
    rng = np.random.default_rng(seed)
    pred = np.bool_(rng.random() < 0.5) if scalar_pred else rng.random(shape) < 0.5
    on_false, on_true = _cases(rng, dtype, shape), _cases(rng, dtype, shape)
    got = select_n_p.host(pred, on_false, on_true)
    want = np.asarray(jax.lax.select_n(pred, on_false, on_true))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_broadcast_and_transposed_cases():
    a = np.arange(400, dtype=np.float32).reshape(20, 20)
    zero = np.broadcast_to(np.float32(-0.0), (20, 20))
    pred = a % 3 == 0
    for on_true, on_false in ((zero, a), (a.T, a), (a, zero)):
        got = select_n_p.host(pred, on_false, on_true)
        want = np.asarray(jax.lax.select_n(pred, np.array(on_false), np.array(on_true)))
        assert got.tobytes() == want.tobytes()


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(DTYPES),
    st.sampled_from([(16, 16), (300,), (5, 3)]),
    st.sampled_from([0, 1]),
    st.sampled_from(["zero", "negzero", "one"]),
    st.integers(0, 2**31 - 1),
)
def test_select_of_a_broadcast_constant_in_a_plan_matches_jax(dtype, shape, side, fill, seed):
    """A host plan's ``select_n`` of a value and a constant broadcast to its shape (relu,
    threshold_backward): zero bits take the specialised rule (the broadcast dropped),
    anything else (-0.0, one) the general one; JAX's values bit for bit either way."""
    import funcgrad.lax as flax
    from funcgrad.core.host import HostPlan
    from funcgrad.core.interp import trace_flat
    from funcgrad.core.ir import aval_of

    rng = np.random.default_rng(seed)
    x = _cases(rng, dtype, shape)
    dt = np.dtype(dtype)
    if fill == "negzero" and dt.kind not in "fc" and dt != np.dtype(ml_dtypes.bfloat16):
        fill = "zero"
    c = {"zero": 0, "negzero": -0.0, "one": 1}[fill]
    pred = rng.random(shape) < 0.5

    def f(p, v):
        k = flax.broadcast_in_dim(np.asarray(c, dt), shape, ())
        return [flax.select_n(p, k, v) if side else flax.select_n(p, v, k)]

    prog = trace_flat(f, [aval_of(pred), aval_of(x)], "test")
    plan = HostPlan(prog)
    specialised = fill == "zero"
    assert len(plan.steps) == (1 if specialised else 2)
    got = plan(*prog.consts, pred, x)[0]
    k = np.broadcast_to(np.asarray(c, dt), shape)
    want = np.asarray(jax.lax.select_n(pred, k, x) if side else jax.lax.select_n(pred, x, k))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("n", [2, 3, 31, 32, 33, 63, 64, 65, 130])
@pytest.mark.parametrize("seed", [0, 1])
def test_many_way_select_matches_jax(n, seed):
    """More cases than ``np.choose`` takes (63): channels-last max pooling of a large
    window selects among one case per window position."""
    rng = np.random.default_rng(seed)
    which = rng.integers(0, n, (3, 7)).astype(np.int32)
    cases = [rng.standard_normal((3, 7)).astype(np.float32) for _ in range(n)]
    cases[-1] = np.broadcast_to(np.float32(5.0), (3, 7))
    got = select_n_p.host(which, *cases)
    want = np.asarray(jax.lax.select_n(which, *[np.array(c) for c in cases]))
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
