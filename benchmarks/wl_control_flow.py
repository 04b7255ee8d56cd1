"""Control-flow workloads (issue 5): an RNN scan forward+backward, and a whole training loop
(100 SGD steps in one ``fori_loop``) inside one compiled call; funcgrad vs JAX."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import funcgrad as fg
import funcgrad.numpy as fnp
from benchmarks.harness import Impls, workload

RNG = np.random.default_rng(0)


def _f32(*shape, scale=1.0):
    return jnp.asarray(RNG.standard_normal(shape).astype(np.float32) * np.float32(scale))


@workload("control_flow.rnn_scan.T100-H256-B32.value_and_grad", group="control_flow")
def rnn_scan() -> Impls:
    """tanh RNN, 100 steps, hidden 256, batch 32: loss and gradients under jit (scan)."""
    T, B, D, H = 100, 32, 64, 256
    params = {
        "W": _f32(H, H, scale=1 / np.sqrt(H)),
        "U": _f32(D, H, scale=1 / np.sqrt(D)),
        "b": jnp.zeros(H, jnp.float32),
        "V": _f32(H, 1, scale=1 / np.sqrt(H)),
    }
    xs = _f32(T, B, D)
    ys = _f32(T, B, 1)
    h0 = jnp.zeros((B, H), jnp.float32)

    def fg_loss(p, xs, ys):
        def cell(h, xy):
            x, y = xy
            h = fnp.tanh(h @ p["W"] + x @ p["U"] + p["b"])
            return h, fnp.mean((h @ p["V"] - y) ** 2)

        _, losses = fg.scan(cell, h0, (xs, ys))
        return fnp.mean(losses)

    def jax_loss(p, xs, ys):
        def cell(h, xy):
            x, y = xy
            h = jnp.tanh(h @ p["W"] + x @ p["U"] + p["b"])
            return h, jnp.mean((h @ p["V"] - y) ** 2)

        _, losses = lax.scan(cell, h0, (xs, ys))
        return jnp.mean(losses)

    f = fg.jit(fg.value_and_grad(fg_loss))
    g = jax.jit(jax.value_and_grad(jax_loss))
    return {"funcgrad": lambda: f(params, xs, ys), "jax": lambda: g(params, xs, ys)}


@workload("control_flow.train_loop.fori100-mlp", group="control_flow")
def train_loop() -> Impls:
    """100 SGD steps of an MLP regression (8-64-64-1, batch 128) in one jitted fori_loop."""
    sizes = [8, 64, 64, 1]
    params = [
        (_f32(a, b, scale=1 / np.sqrt(a)), jnp.zeros(b, jnp.float32))
        for a, b in itertools.pairwise(sizes)
    ]
    x = _f32(128, 8)
    y = jnp.sin(x.sum(1, keepdims=True))
    lr = 0.05

    def fg_loss(p, x, y):
        h = x
        for w, b in p[:-1]:
            h = fnp.tanh(h @ w + b)
        w, b = p[-1]
        return fnp.mean((h @ w + b - y) ** 2)

    def jax_loss(p, x, y):
        h = x
        for w, b in p[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = p[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    def fg_train(p, x, y):
        def step(i, p):
            g = fg.grad(fg_loss)(p, x, y)
            return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g)

        p = fg.fori_loop(0, 100, step, p)
        return p, fg_loss(p, x, y)

    def jax_train(p, x, y):
        def step(i, p):
            g = jax.grad(jax_loss)(p, x, y)
            return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g)

        p = lax.fori_loop(0, 100, step, p)
        return p, jax_loss(p, x, y)

    f = fg.jit(fg_train)
    g = jax.jit(jax_train)
    return {"funcgrad": lambda: f(params, x, y), "jax": lambda: g(params, x, y)}
