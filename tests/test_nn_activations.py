"""funcgrad.nn activations, standardize, one_hot and dot_product_attention (the softmaxes
and logsumexp: tests/test_reduction_rows.py, from their rows)
against jax.nn: values, dtypes, gradients at the kinks, signatures and errors."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.nn as fnn

EDGES = np.array([-7.0, -6.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0], np.float32)

#: every name of funcgrad.nn but these is a function of one array, elementwise
NOT_UNARY = {
    *("dot_product_attention", "glu", "initializers", "log1mexp", "log_softmax"),
    *("logmeanexp", "logsumexp", "one_hot", "softmax", "standardize"),
}
UNARY = sorted(set(fnn.__all__) - NOT_UNARY)


def _close(a, b, rtol=2e-6, atol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_and_grads_at_edges(name):
    f, j = getattr(fnn, name), getattr(jax.nn, name)
    _close(f(EDGES), j(EDGES))
    # elementwise: the gradient of the sum is the derivative at each point
    gf = fg.grad(lambda x: f(x).sum())(EDGES)
    gj = jo.grad(lambda x: j(x).sum())(EDGES)
    # gelu's tanh form at x <= -6: 1 - tanh(u)^2 cancels in float32, so both libraries
    # return rounding noise of ~1e-5 where the derivative is ~1e-10 (float64: -7.7e-10 at
    # -6); the noise differs with how XLA fuses the program
    _close(gf, gj, atol=2e-5 if name == "gelu" else 1e-6)


@pytest.mark.parametrize("name", ["relu", "gelu", "sigmoid"])
def test_unary_dtypes(name):
    f, j = getattr(fnn, name), getattr(jax.nn, name)
    for x in (np.float16([0.5, -1.0]), jnp.bfloat16(1.5), 2.0, np.int32([1, -2])):
        try:
            b = j(x)
        except TypeError:  # jax.nn.sigmoid/silu reject integers; funcgrad promotes them
            assert np.asarray(f(x)).dtype == np.float32
            continue
        a = f(x)
        assert a.dtype == b.dtype, (name, x)
        assert getattr(a, "weak_type", False) == getattr(b, "weak_type", False), (name, x)


def test_gelu_exact_tail_and_params():
    x = np.array([-12.0, -6.0, -1.0, 0.0, 2.0], np.float32)
    _close(fnn.gelu(x, approximate=False), jax.nn.gelu(x, approximate=False), rtol=1e-5, atol=0)
    _close(fnn.elu(x, 0.3), jax.nn.elu(x, 0.3))
    _close(fnn.celu(x, 2.0), jax.nn.celu(x, 2.0))
    _close(fnn.leaky_relu(x, 0.2), jax.nn.leaky_relu(x, 0.2))
    _close(fnn.squareplus(x, 1.0), jax.nn.squareplus(x, 1.0))


def test_log1mexp():
    x = np.array([1e-4, 0.1, np.log(2.0), 1.0, 30.0], np.float32)
    _close(fnn.log1mexp(x), jax.nn.log1mexp(x), rtol=1e-5)
    _close(fg.vmap(fg.grad(fnn.log1mexp))(x), jo.vmap(jo.grad(jax.nn.log1mexp))(x), rtol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, (0, 1), None])
def test_logmeanexp(axis):
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    w = x > -0.5
    _close(fnn.logmeanexp(x, axis=axis), jax.nn.logmeanexp(x, axis=axis), rtol=1e-5)
    _close(fnn.logmeanexp(x, axis, where=w), jax.nn.logmeanexp(x, axis, where=w), rtol=1e-5)


@pytest.mark.parametrize("axis", [0, -1, 1])
def test_glu(axis):
    x = np.random.default_rng(1).normal(size=(4, 6)).astype(np.float32)
    _close(fnn.glu(x, axis), jax.nn.glu(x, axis))
    with pytest.raises(ValueError):
        fnn.glu(np.ones((3, 3)), axis)


@pytest.mark.parametrize("algorithm", ["fast", "stable"])
def test_standardize(algorithm):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 5)).astype(np.float32) + 4
    w = rng.random((3, 5)) > 0.2
    kw = dict(algorithm=algorithm)
    _close(fnn.standardize(x, **kw), jax.nn.standardize(x, **kw), rtol=1e-5, atol=1e-5)
    _close(fnn.standardize(x, 0, **kw), jax.nn.standardize(x, 0, **kw), rtol=1e-5, atol=1e-5)
    _close(
        fnn.standardize(x, where=w, epsilon=0.1, **kw),
        jax.nn.standardize(x, where=w, epsilon=0.1, **kw),
        rtol=1e-5,
        atol=1e-5,
    )
    m, v = np.float32(1.0), np.float32(2.0)
    _close(fnn.standardize(x, -1, m, v), jax.nn.standardize(x, -1, m, v))


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", [None, jnp.int32, jnp.bfloat16])
def test_one_hot(axis, dtype):
    x = np.array([[0, 2], [5, -1]])
    _close(fnn.one_hot(x, 3, dtype=dtype, axis=axis), jax.nn.one_hot(x, 3, dtype=dtype, axis=axis))


def _attn_inputs(b=2, t=5, s=6, n=4, k=2, h=3, dtype=np.float32):
    rng = np.random.default_rng(4)
    q = rng.normal(size=(b, t, n, h)).astype(dtype)
    kk = rng.normal(size=(b, s, k, h)).astype(dtype)
    v = rng.normal(size=(b, s, k, h)).astype(dtype)
    bias = rng.normal(size=(1, n, t, s)).astype(np.float32)
    mask = rng.random((b, 1, t, s)) > 0.3
    return q, kk, v, bias, mask


ATTN_KW = [
    {},
    {"is_causal": True},
    {"local_window_size": (1, 2)},
    {"local_window_size": 1, "scale": 0.2},
    {
        "query_seq_lengths": np.array([3, 5], np.int32),
        "key_value_seq_lengths": np.array([6, 2], np.int32),
    },
    {"bias": True, "mask": True, "is_causal": True},
]


@pytest.mark.parametrize("kw", ATTN_KW, ids=[",".join(k) or "plain" for k in ATTN_KW])
def test_dot_product_attention(kw):
    q, k, v, bias, mask = _attn_inputs()
    kw = dict(kw)
    if kw.pop("bias", False):
        kw["bias"] = bias
    if kw.pop("mask", False):
        kw["mask"] = mask
    _close(fnn.dot_product_attention(q, k, v, **kw), jax.nn.dot_product_attention(q, k, v, **kw))

    if kw and "mask" not in kw:
        return  # gradients: checked with no options and with every mask at once

    def lf(f):
        return lambda q, k, v: (f(q, k, v, **kw) ** 2).sum()

    gf = fg.grad(lf(fnn.dot_product_attention), argnums=(0, 1, 2))(q, k, v)
    gj = jo.grad(lf(jax.nn.dot_product_attention), argnums=(0, 1, 2))(q, k, v)
    for a, b in zip(gf, gj):
        _close(a, b, rtol=1e-4, atol=1e-5)


def test_dot_product_attention_layouts_and_residual():
    q, k, v, *_ = _attn_inputs()
    _close(
        fnn.dot_product_attention(q[0], k[0], v[0]), jax.nn.dot_product_attention(q[0], k[0], v[0])
    )
    a, r = fnn.dot_product_attention(q, k, v, return_residual=True)
    b, s = jax.nn.dot_product_attention(q, k, v, return_residual=True)
    _close(a, b)
    _close(r, s, rtol=1e-5)
    qb, kb, vb, *_ = _attn_inputs(dtype=jnp.bfloat16)
    x = fnn.dot_product_attention(qb, kb, vb)
    y = jax.nn.dot_product_attention(qb, kb, vb)
    assert x.dtype == y.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.float32(x), np.float32(y), rtol=2e-2, atol=2e-2)
    jitted = fg.jit(fnn.dot_product_attention)(q, k, v)
    _close(jitted, jax.nn.dot_product_attention(q, k, v))
    batched = fg.vmap(fnn.dot_product_attention)(q, k, v)
    _close(batched, jo.vmap(jax.nn.dot_product_attention)(q, k, v))


def test_dot_product_attention_errors():
    q, k, v, *_ = _attn_inputs()
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        fnn.dot_product_attention(q[:, :, :3], k, v)
    with pytest.raises(ValueError, match="value shape"):
        fnn.dot_product_attention(q, k, v[:, :4])
    with pytest.raises(ValueError, match="mask dtype"):
        fnn.dot_product_attention(q, k, v, mask=np.ones((1, 1, 5, 6), np.float32))
    with pytest.raises(ValueError, match="Unsupported implementation"):
        fnn.dot_product_attention(q, k, v, implementation="flash")


def test_names_and_signatures_match_jax():
    skip = {"get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul", "initializers"}
    for n in dir(jax.nn):
        if n.startswith("_") or n in skip:
            continue
        assert hasattr(fnn, n), n
        jp = list(inspect.signature(getattr(jax.nn, n)).parameters)
        fp = list(inspect.signature(getattr(fnn, n)).parameters)
        assert fp == jp, n
