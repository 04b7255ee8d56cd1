"""Host plans collapse chains of reshapes (``reshape``, ``stop_gradient``, a
``broadcast_in_dim`` taken as a view) to one reshape of the chain's first operand, and
drop a chain that gives that operand back: the values are the plan's without it, bit for
bit, and JAX's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.core import tiers
from funcgrad.core.host import HostPlan


def _plans(f, *args):
    prog = fg.make_ir(f)(*args)
    plan, plain = HostPlan(prog), HostPlan(prog, specialise=False)
    got = plan(*prog.consts, *args)
    want = plain(*prog.consts, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        assert g.tobytes() == w.tobytes()
    return prog, plan, got


def _same(got, want):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)


#: one link of a chain, written for both libraries: (name, function of (module, x))
_LINKS = {
    "flatten": lambda m, x: x.reshape(-1),
    "rows": lambda m, x: x.reshape(x.shape[0], -1) if x.ndim else x.reshape(1, 1),
    "expand": lambda m, x: m.expand_dims(x, 0),
    "squeeze": lambda m, x: x.reshape([d for d in x.shape if d != 1]),
    "stop": lambda m, x: fg.lax.stop_gradient(x) if m is fnp else jax.lax.stop_gradient(x),
    "back": None,  # reshape to the chain's first operand's shape
}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(sorted(_LINKS)), min_size=1, max_size=6),
    st.sampled_from([(4, 3), (2, 1, 3), (6,), (1, 5)]),
    st.sampled_from([np.float32, np.int32, np.bool_]),
    st.booleans(),
    st.integers(0, 2**31 - 1),
)
def test_chains_of_reshapes(links, shape, dtype, keepdims_sum, seed):
    """Random chains of reshapes between elementwise reads, ending in an op of the chain
    and the first operand (the first operand's own shape: a broadcast of the chain's
    result where it differs): the plan's values are the plain plan's and JAX's."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 5).astype(dtype)

    def f(m, x):
        y, outs = x, []
        for name in links:
            y = y.reshape(x.shape) if name == "back" else _LINKS[name](m, y)
            # (a reader of each link that shows its shape: a reduction over its first axis)
            if x.dtype == np.bool_:
                outs.append(m.any(m.logical_not(y), axis=0))
            else:
                outs.append(m.sum(y * 3, axis=0, keepdims=keepdims_sum))
        z = y.reshape(x.shape)
        if x.dtype == np.bool_:
            outs.append(m.logical_xor(z, x))
        else:
            outs.append(z * x + z)
        return outs

    _, _, got = _plans(lambda x: f(fnp, x), x)
    _same(got, jax.jit(lambda x: f(jnp, x))(x))


def test_keepdims_broadcasts_collapse():
    """A log-softmax's reshape, stop_gradient, reshape and view: the chain gives the max
    back (three steps fewer), the values are bit for bit the plain plan's and close to
    JAX's."""
    x = np.random.default_rng(0).standard_normal((64, 10)).astype(np.float32)
    prog, plan, got = _plans(lambda x: [fg.nn.log_softmax(x, axis=-1)], x)
    names = [e.prim.name for e in prog.eqns]
    assert "stop_gradient" in names
    assert len(plan.steps) <= len(prog.eqns) - 3
    np.testing.assert_allclose(got[0], jax.nn.log_softmax(x, axis=-1), rtol=1e-6, atol=1e-6)


def test_a_chain_that_gives_its_start_back_is_dropped():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)

    def f(x):
        y = fg.lax.stop_gradient(x.reshape(12).reshape(4, 3)).reshape(3, 4)
        return [y * 2.0]

    prog, plan, got = _plans(f, x)
    assert len(prog.eqns) == 5 and len(plan.steps) == 1  # (the multiply alone)
    _same(got, [x * 2.0])


def test_outputs_and_scalars_keep_their_steps():
    """A link that is an output stays a step (a fresh value, read-only), and a chain
    starting at a 0-d value (a Python number the plan passes as it is) is not collapsed."""
    x = np.arange(6.0, dtype=np.float32)

    def returned(x):
        y = x.reshape(2, 3)
        return [y, y.reshape(6) + 1.0]

    prog, plan, got = _plans(returned, x)
    assert len(plan.steps) == len(prog.eqns) - 1  # (the reshape back to x's shape)
    assert not got[0].flags.writeable and got[0].shape == (2, 3)
    _same(got, [x.reshape(2, 3), x + 1.0])

    def scalar(s):
        return [fnp.reshape(fnp.reshape(s, (1,)), ()) + 1.0]

    prog = fg.make_ir(scalar)(2.5)
    plan = HostPlan(prog)
    assert len(plan.steps) == len(prog.eqns)
    assert float(plan(*prog.consts, 2.5)[0]) == 3.5


@pytest.mark.parametrize("shape", [(8, 5), (2, 3, 4)])
def test_cross_entropy_gradient_through_collapsed_plans(shape):
    """A loss whose forward and backward plans collapse (keepdims reductions, the
    stop_gradient of a log-softmax): funcgrad's gradient in the host tier is JAX's."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    t = rng.integers(0, shape[-1], shape[:-1])

    def loss(nn, m, x):
        logp = nn.log_softmax(x, axis=-1)
        hit = m.expand_dims(t, -1) == m.arange(shape[-1])
        return -m.sum(m.where(hit, logp, 0.0)) / t.size

    with tiers.eager_tier("host"):
        got = fg.value_and_grad(lambda x: loss(fg.nn, fnp, x))(x)
    want = jax.value_and_grad(lambda x: loss(jax.nn, jnp, x))(x)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-7)
