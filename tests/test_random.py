"""funcgrad.random: reproducibility across transforms, agreement with jax.random,
distributions (loose moment checks with fixed seeds), shapes, dtypes and errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.random as fr
from funcgrad.primitives import random as rp

SETTINGS = settings(deadline=None)  # max_examples: the hypothesis profile (tests/conftest.py)
PARTITIONABLE = bool(jax.config.jax_threefry_partitionable)
same_as_jax = pytest.mark.skipif(
    not PARTITIONABLE, reason="funcgrad lowers JAX's partitionable threefry layout"
)


def eq(a, b):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


seeds = st.integers(0, 2**31 - 1)


# --------------------------------------------------------------------------- keys


@SETTINGS
@given(seed=st.integers(-(2**40), 2**40))
def test_key_matches_jax(seed):
    eq(fr.key(seed), jax.random.PRNGKey(seed))
    eq(fr.PRNGKey(seed), jax.random.PRNGKey(seed))
    assert fr.key(seed).dtype == np.uint32 and fr.key(seed).shape == (2,)
    eq(fg.jit(fr.key)(np.int64(seed)), jax.random.PRNGKey(seed))


@same_as_jax
@SETTINGS
@given(seed=seeds, data=st.integers(0, 2**32 - 1), num=st.sampled_from([1, 2, 5]))
def test_split_fold_in_bits_match_jax(seed, data, num):
    k, jk = fr.key(seed), jax.random.PRNGKey(seed)
    eq(fr.split(k), jax.random.split(jk))
    eq(fr.split(k, num), jax.random.split(jk, num))
    eq(fr.split(k, (2, num)), jax.random.split(jk, (2, num)))
    eq(fr.fold_in(k, data), jax.random.fold_in(jk, data))
    for dt in (jnp.uint8, jnp.uint16, jnp.uint32, jnp.uint64):
        eq(fr.bits(k, (num, 3), dt), jax.random.bits(jk, (num, 3), dt))


@same_as_jax
@settings(deadline=None, max_examples=10)  # each sampler is compiled twice per new shape
@given(seed=seeds, n=st.sampled_from([1, 7, 40]))
def test_samplers_match_jax(seed, n):
    k, jk = fr.key(seed), jax.random.PRNGKey(seed)
    for dt in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64):
        eq(fr.uniform(k, (n,), dt), jax.random.uniform(jk, (n,), dt))
        eq(fr.normal(k, (n,), dt), jax.random.normal(jk, (n,), dt))
    eq(
        fr.uniform(k, (n, 2), minval=-3.0, maxval=np.array([1.0, 2.0])),
        jax.random.uniform(jk, (n, 2), minval=-3.0, maxval=jnp.array([1.0, 2.0])),
    )
    eq(fr.bernoulli(k, 0.3, (n,)), jax.random.bernoulli(jk, 0.3, (n,)))
    p = np.linspace(0.1, 0.9, n)
    eq(fr.bernoulli(k, p), jax.random.bernoulli(jk, p))
    logits = np.random.default_rng(seed).normal(size=(3, n))
    eq(fr.categorical(k, logits), jax.random.categorical(jk, logits))
    eq(
        fr.categorical(k, logits, axis=0, shape=(2, n)),
        jax.random.categorical(jk, logits, axis=0, shape=(2, n)),
    )
    eq(fr.gumbel(k, (n,)), jax.random.gumbel(jk, (n,)))
    eq(fr.exponential(k, (n,)), jax.random.exponential(jk, (n,)))
    eq(fr.randint(k, (n,), -3, 17), jax.random.randint(jk, (n,), -3, 17))
    eq(fr.randint(k, (n,), 0, 256, jnp.uint8), jax.random.randint(jk, (n,), 0, 256, jnp.uint8))
    eq(fr.permutation(k, n), jax.random.permutation(jk, n))
    x = np.arange(3 * n).reshape(n, 3)
    eq(fr.permutation(k, x), jax.random.permutation(jk, x))
    eq(
        fr.permutation(k, x, axis=1, independent=True),
        jax.random.permutation(jk, x, axis=1, independent=True),
    )
    eq(fr.choice(k, n, (2,)), jax.random.choice(jk, n, (2,)))
    eq(
        fr.choice(k, x, (min(n, 2),), replace=False),
        jax.random.choice(jk, x, (min(n, 2),), replace=False),
    )


# --------------------------------------------------------------------------- reproducibility


def sample_all(k):
    k1, k2, k3, k4 = (fr.fold_in(k, i) for i in range(4))
    return {
        "u": fr.uniform(k1, (5,), minval=-2.0, maxval=3.0),
        "n": fr.normal(k2, (2, 3)),
        "b": fr.bernoulli(k3, 0.4, (4,)),
        "c": fr.categorical(k4, np.log(np.array([0.2, 0.3, 0.5])), shape=(6,)),
        "p": fr.permutation(k1, 7),
        "r": fr.randint(k2, (5,), 0, 10),
        "s": fr.split(k3, 3),
        "bits": fr.bits(k4, (3,), jnp.uint32),
    }


sample_all_jit = fg.jit(sample_all)
sample_all_jit_vmap = fg.jit(fg.vmap(sample_all))


@SETTINGS
@given(seed=seeds)
def test_same_values_eager_jit_vmap(seed):
    keys = fr.split(fr.key(seed), 4)
    loop = [sample_all(keys[i]) for i in range(4)]
    jitted = [sample_all_jit(keys[i]) for i in range(4)]
    vm = fg.vmap(sample_all)(keys)
    jvm = sample_all_jit_vmap(keys)
    vm1 = fg.vmap(sample_all, in_axes=1)(np.asarray(keys).T)  # keys batched along the last axis
    for i in range(4):
        for name in loop[i]:
            eq(jitted[i][name], loop[i][name])
            eq(vm[name][i], loop[i][name])
            eq(jvm[name][i], loop[i][name])
            eq(vm1[name][i], loop[i][name])


def test_vmap_over_data_with_one_key_and_nested():
    k = fr.key(3)
    # unbatched key, batched other operand: every lane sees the same randomness
    got = fg.vmap(lambda p: fr.bernoulli(k, p, (8,)), in_axes=0)(np.array([0.0, 1.0, 0.5]))
    assert not np.asarray(got[0]).any() and np.asarray(got[1]).all()
    # vmap of vmap over a grid of keys
    keys = fr.split(k, (2, 3))
    got = fg.vmap(fg.vmap(lambda k: fr.normal(k, (2,))))(keys)
    for i in range(2):
        for j in range(3):
            eq(got[i, j], fr.normal(keys[i, j], (2,)))
    # fold_in with batched data
    eq(
        fg.vmap(lambda d: fr.fold_in(k, d))(np.arange(3)),
        np.stack([fr.fold_in(k, i) for i in range(3)]),
    )


def test_randomness_inside_control_flow_and_grad():
    def f(w, k):
        def body(c, k):
            noise = fr.normal(k, (3,))
            return c * w + noise, fnp.sum(noise)

        c, ys = fg.scan(body, np.zeros(3), fr.split(k, 4))
        return fnp.sum(c**2) + fnp.sum(ys)

    k = fr.key(0)
    val = f(0.5, k)
    np.testing.assert_allclose(fg.jit(f)(0.5, k), val, rtol=1e-12)
    g = fg.grad(f)(0.5, k)
    eps = 1e-6
    np.testing.assert_allclose(g, (f(0.5 + eps, k) - f(0.5 - eps, k)) / (2 * eps), rtol=1e-5)
    # dropout-style masks differ per key, are fixed per key
    drop = lambda x, k: fnp.where(fr.bernoulli(k, 0.5, x.shape), x / 0.5, 0.0)
    x = np.ones(16)
    eq(drop(x, k), fg.jit(drop)(x, k))
    assert not np.array_equal(drop(x, k), drop(x, fr.key(1)))
    gx = fg.grad(lambda x: fnp.sum(drop(x, k)))(x)
    eq(gx, np.asarray(drop(x, k)))


# --------------------------------------------------------------------------- distributions


@pytest.mark.parametrize("seed", [0, 1])
def test_moments(seed):
    k = fr.key(seed)
    ks = fr.split(k, 8)
    n = 20000
    u = np.asarray(fr.uniform(ks[0], (n,), minval=2.0, maxval=5.0))
    assert u.min() >= 2.0 and u.max() < 5.0
    assert abs(u.mean() - 3.5) < 0.03 and abs(u.var() - 0.75) < 0.03
    z = np.asarray(fr.normal(ks[1], (n,)))
    assert abs(z.mean()) < 0.03 and abs(z.var() - 1) < 0.04
    assert abs(np.mean(z**3)) < 0.1 and abs(np.mean(z**4) - 3) < 0.2
    b = np.asarray(fr.bernoulli(ks[2], 0.3, (n,)))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 0.015
    p = np.array([0.1, 0.2, 0.7])
    c = np.asarray(fr.categorical(ks[3], np.log(p), shape=(n,)))
    np.testing.assert_allclose(np.bincount(c, minlength=3) / n, p, atol=0.015)
    r = np.asarray(fr.randint(ks[4], (n,), -2, 3))
    assert r.min() == -2 and r.max() == 2
    np.testing.assert_allclose(np.bincount(r + 2) / n, np.full(5, 0.2), atol=0.015)
    e = np.asarray(fr.exponential(ks[5], (n,)))
    assert e.min() >= 0 and abs(e.mean() - 1) < 0.03
    perm = np.asarray(fr.permutation(ks[6], 50))
    assert sorted(perm.tolist()) == list(range(50))
    first = np.stack([np.asarray(fr.permutation(kk, 4))[0] for kk in fr.split(ks[7], 400)])
    np.testing.assert_allclose(np.bincount(first, minlength=4) / 400, np.full(4, 0.25), atol=0.07)


def test_keys_are_independent():
    a, b = fr.split(fr.key(0))
    x = np.asarray(fr.normal(a, (5000,)))
    y = np.asarray(fr.normal(b, (5000,)))
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.05
    assert not np.array_equal(fr.normal(fr.fold_in(a, 0), (3,)), fr.normal(fr.fold_in(a, 1), (3,)))


# --------------------------------------------------------------------------- shapes, dtypes, IR


def test_shapes_dtypes_and_ir():
    k = fr.key(0)
    assert fr.uniform(k).shape == () and fr.uniform(k).dtype == np.float64
    assert fr.uniform(k, (2, 3), jnp.float32).dtype == np.float32
    assert fr.normal(k, (4,), jnp.float16).dtype == np.float16
    assert fr.bernoulli(k, np.full((2, 2), 0.5)).shape == (2, 2)
    assert fr.categorical(k, np.zeros((4, 3))).shape == (4,)
    assert fr.categorical(k, np.zeros((4, 3)), axis=0).shape == (3,)
    assert fr.randint(k, (3,), 0, 5).dtype == np.int64
    assert fr.randint(k, (3,), 0, 5, jnp.int16).dtype == np.int16
    assert fr.split(k, 5).shape == (5, 2) and fr.split(k, 5).dtype == np.uint32
    assert fr.bits(k, (2,)).dtype == np.uint64
    assert fr.choice(k, np.arange(12.0).reshape(4, 3), (2,), axis=0).shape == (2, 3)
    prog = fg.make_ir(lambda k: fr.bits(k, (3,), jnp.uint32))(k)
    assert [e.prim.name for e in prog.eqns] == ["random_bits"]
    assert not rp.random_bits_p.differentiable


def test_errors():
    k = fr.key(0)
    with pytest.raises(TypeError, match="single PRNG key"):
        fr.normal(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="single PRNG key"):
        fr.uniform(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="scalar seed"):
        fr.key(np.arange(2))
    with pytest.raises(TypeError, match="integer"):
        fr.key(1.5)
    with pytest.raises(ValueError, match="float dtype"):
        fr.uniform(k, (2,), jnp.int32)
    with pytest.raises(TypeError, match="floating"):
        fr.bernoulli(k, 1)
    with pytest.raises(TypeError, match="PRNG key array"):
        rp.random_bits(np.zeros(3, np.float32), 32, (2,))
    with pytest.raises(ValueError, match="broadcast"):
        fr.uniform(k, (3,), minval=np.zeros(4))


# --------------------------------------------------------------------------- sort


@SETTINGS
@given(seed=seeds, n=st.integers(1, 6))
def test_sort_primitive(seed, n):
    r = np.random.default_rng(seed)
    x, v = r.normal(size=(3, n)), r.normal(size=(3, n))
    got = rp.sort(x, v, dimension=1)
    want = jax.lax.sort((x, v), dimension=1, num_keys=1)
    for a, b in zip(got, want):
        eq(a, b)
    f = lambda x, v: jnp.sum(jax.lax.sort((x, v), dimension=1)[1] * jnp.arange(n))
    g = lambda x, v: fnp.sum(rp.sort(x, v, dimension=1)[1] * fnp.arange(n))
    np.testing.assert_allclose(fg.grad(g, (0, 1))(x, v)[1], jo.grad(f, (0, 1))(x, v)[1])
    gs = fg.grad(lambda x: fnp.sum(rp.sort(x, dimension=0)[0] * fnp.arange(3.0)[:, None]))(x)
    js = jo.grad(lambda x: jnp.sum(jax.lax.sort(x, dimension=0) * jnp.arange(3.0)[:, None]))(x)
    np.testing.assert_allclose(gs, js)
    bx = np.stack([x, -x])
    eq(
        fg.vmap(lambda x: rp.sort(x, dimension=1)[0])(bx),
        jo.vmap(lambda x: jax.lax.sort(x, dimension=1))(bx),
    )
