"""Host plans compute a ``broadcast_in_dim`` as a view NumPy broadcasts (size-1
dimensions) where every reader broadcasts by NumPy's rules to its own result's shape,
and as the full array elsewhere; the values are the plan's without it, bit for bit, and
the same as JAX's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.lax as flax
import funcgrad.numpy as fnp
from funcgrad.core.host import HostPlan


def _views(plan: HostPlan) -> int:
    return sum(getattr(s.rule, "view_shape", None) is not None for s in plan.steps)


def _run(f, *args):
    prog = fg.make_ir(f)(*args)
    plan, plain = HostPlan(prog), HostPlan(prog, specialise=False)
    got = plan(*prog.consts, *args)
    want = plain(*prog.consts, *args)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        assert np.asarray(g).shape == np.asarray(w).shape
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
    return plan, got


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from([np.float32, np.float64, np.int32, np.bool_]),
    st.sampled_from([(5, 4), (1, 7), (3, 1, 2)]),
    st.integers(0, 2**31 - 1),
)
def test_bias_and_row_broadcasts_as_views(dtype, shape, seed):
    """A bias added to every row, a column scaled, a compare against a broadcast row: the
    broadcasts become views, the values are the full arrays' (and JAX's)."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    b = (rng.standard_normal(shape[-1:]) * 10).astype(dtype)
    c = (rng.standard_normal(shape[:1]) * 10).astype(dtype)

    def f(x, b, c):
        row = flax.broadcast_in_dim(b, x.shape, (x.ndim - 1,))
        col = flax.broadcast_in_dim(c, x.shape, (0,))
        if x.dtype == np.bool_:
            return [flax.bitwise_and(x, row), flax.eq(x, col)]
        return [flax.add(x, row), flax.mul(col, x), flax.lt(x, row)]

    plan, got = _run(f, x, b, c)
    assert _views(plan) == 2
    xj, bj = jnp.asarray(x), jnp.asarray(b)
    cj = jnp.asarray(c).reshape(c.shape + (1,) * (x.ndim - 1))
    want = [xj & bj, xj == cj] if x.dtype == bool else [xj + bj, cj * xj, xj < bj]
    for g, w in zip(got, want):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


def test_full_arrays_where_a_reader_does_not_broadcast_or_it_is_an_output():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    b = np.arange(4.0, dtype=np.float32)

    def read_by_dot(x, b):  # (dot_general does not broadcast its operands)
        row = flax.broadcast_in_dim(b, (4, 4), (1,))
        return [(x @ row) + 1.0]

    def returned(x, b):
        row = flax.broadcast_in_dim(b, x.shape, (1,))
        return [row, x + row]

    def read_once_elsewhere(x, b):  # one reader broadcasts, one does not
        row = flax.broadcast_in_dim(b, x.shape, (1,))
        return [x + row, fnp.sum(row, axis=0)]

    for f in (read_by_dot, returned, read_once_elsewhere):
        plan, got = _run(f, x, b)
        assert _views(plan) == 0, f.__name__
        assert all(np.asarray(g).flags.c_contiguous for g in got)


@pytest.mark.parametrize("shape", [(64, 10), (2, 3, 5)])
def test_log_softmax_plan_uses_views(shape):
    """A log-softmax (reductions broadcast back over the reduced axis): views, values
    bit for bit the full arrays' plan."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    plan, got = _run(lambda x: [fg.nn.log_softmax(x, axis=-1)], x)
    assert _views(plan) >= 1
    np.testing.assert_allclose(got[0], jax.nn.log_softmax(x, axis=-1), rtol=1e-6, atol=1e-6)
