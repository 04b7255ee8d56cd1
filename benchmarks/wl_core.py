"""Core, autodiff and vmap workloads (issues 2, 3, 4): funcgrad vs JAX (vs PyTorch)."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

import funcgrad as fg
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
from benchmarks.harness import Impls, try_import_torch, workload

RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@workload("jit.dispatch.tiny", group="jit")
def jit_dispatch() -> Impls:
    """Dispatch latency of a jitted ``x + 1`` on a 0-d array."""
    x = jnp.float32(1.0)
    f = fg.jit(lambda x: x + 1.0)
    g = jax.jit(lambda x: x + 1.0)
    return {"funcgrad": lambda: f(x), "jax": lambda: g(x)}


def _mlp_params(sizes):
    return [
        (_f32(a, b) * np.float32(1 / np.sqrt(a)), np.zeros(b, np.float32))
        for a, b in itertools.pairwise(sizes)
    ]


@workload("jit.mlp_forward.784-512-512-10.b128", group="jit")
def mlp_forward() -> Impls:
    """Compiled MLP forward, batch 128."""
    params = [tuple(map(jnp.asarray, p)) for p in _mlp_params([784, 512, 512, 10])]
    x = jnp.asarray(_f32(128, 784))

    def f(params, x):
        for w, b in params[:-1]:
            x = fnn.relu(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    def g(params, x):
        for w, b in params[:-1]:
            x = jax.nn.relu(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    ff, gg = fg.jit(f), jax.jit(g)
    impls = {"funcgrad": lambda: ff(params, x), "jax": lambda: gg(params, x)}
    torch = try_import_torch()
    if torch is not None:
        tp = [(torch.from_numpy(np.asarray(w)), torch.from_numpy(np.asarray(b))) for w, b in params]
        tx = torch.from_numpy(np.asarray(x))

        def t():
            with torch.no_grad():
                h = tx
                for w, b in tp[:-1]:
                    h = torch.relu(h @ w + b)
                return h @ tp[-1][0] + tp[-1][1]

        impls["torch"] = t
    return impls


def _chain(lib, n):
    sin, cos = (fnp.sin, fnp.cos) if lib == "fg" else (jnp.sin, jnp.cos)

    def f(x):
        for _i in range(n // 4):
            x = sin(x) * 0.9 + cos(x) * 0.1
        return (x * x).sum()

    return f


@workload("trace.1000_ops", group="trace")
def trace_1000() -> Impls:
    """Tracing a 1000-op function: fg.make_ir vs jax.make_jaxpr.

    A fresh wrapper per call defeats JAX's trace cache (keyed on the function
    object), so both sides really trace.
    """
    x = np.ones(8, np.float32)
    f, g = _chain("fg", 1000), _chain("jax", 1000)
    return {
        "funcgrad": lambda: fg.make_ir(lambda x: f(x))(x),
        "jax": lambda: jax.make_jaxpr(lambda x: g(x))(x),
    }


@workload("trace.grad_1000_ops", group="trace")
def trace_grad_1000() -> Impls:
    """Trace + reverse-mode transform: make_ir(grad(f)) vs make_jaxpr(grad(f))."""
    x = np.ones(8, np.float32)
    f, g = _chain("fg", 1000), _chain("jax", 1000)
    return {
        "funcgrad": lambda: fg.make_ir(fg.grad(lambda x: f(x)))(x),
        "jax": lambda: jax.make_jaxpr(jax.grad(lambda x: g(x)))(x),
    }


@workload("eager.grad_20_ops", group="grad")
def eager_grad_20() -> Impls:
    """Un-jitted grad of a 20-op function."""
    x = jnp.ones(16, jnp.float32)
    f, g = _chain("fg", 20), _chain("jax", 20)
    return {"funcgrad": lambda: fg.grad(f)(x), "jax": lambda: jax.grad(g)(x)}


@workload("eager.grad_python_if", group="grad")
def eager_grad_python_if() -> Impls:
    """Un-jitted grad of a 20-op function with one Python ``if`` on a traced value
    (funcgrad evaluates the slice the ``if`` reads, then traces on)."""
    x = jnp.ones(16, jnp.float32)
    f, g = _chain("fg", 10), _chain("jax", 10)
    f2, g2 = _chain("fg", 10), _chain("jax", 10)

    def fb(x):
        y = f(x)
        return f2(y) if fnp.sum(y) > 0 else -f2(y)

    def gb(x):
        y = g(x)
        return g2(y) if jnp.sum(y) > 0 else -g2(y)

    return {"funcgrad": lambda: fg.grad(fb)(x), "jax": lambda: jax.grad(gb)(x)}


def _loss_pair():
    def f(x):
        return fnp.sum(fnp.tanh(x) ** 2 * fnp.sin(x[::-1])) + fnp.sum(x) ** 2 * 1e-3

    def g(x):
        return jnp.sum(jnp.tanh(x) ** 2 * jnp.sin(x[::-1])) + jnp.sum(x) ** 2 * 1e-3

    return f, g


@workload("jit.grad.vector_1024", group="grad")
def jit_grad() -> Impls:
    """Compiled gradient of a scalar function of 1024 inputs."""
    f, g = _loss_pair()
    x = jnp.asarray(_f32(1024))
    ff, gg = fg.jit(fg.grad(f)), jax.jit(jax.grad(g))
    return {"funcgrad": lambda: ff(x), "jax": lambda: gg(x)}


@workload("jit.hessian.64", group="grad")
def jit_hessian() -> Impls:
    """Compiled full Hessian of a function of 64 inputs."""
    f, g = _loss_pair()
    x = jnp.asarray(_f32(64))
    ff, gg = fg.jit(fg.hessian(f)), jax.jit(jax.hessian(g))
    return {"funcgrad": lambda: ff(x), "jax": lambda: gg(x)}


@workload("jit.hvp.4096", group="grad")
def jit_hvp() -> Impls:
    """Compiled Hessian-vector product (forward-over-reverse), 4096 inputs."""
    f, g = _loss_pair()
    x, v = jnp.asarray(_f32(4096)), jnp.asarray(_f32(4096))
    ff = fg.jit(lambda x, v: fg.jvp(fg.grad(f), (x,), (v,))[1])
    gg = jax.jit(lambda x, v: jax.jvp(jax.grad(g), (x,), (v,))[1])
    return {"funcgrad": lambda: ff(x, v), "jax": lambda: gg(x, v)}


@workload("vmap.per_example_grads.mlp.b256", group="vmap")
def per_example_grads() -> Impls:
    """jit(vmap(grad(loss))): per-example gradients of a 2-layer MLP, batch 256."""
    params = [tuple(map(jnp.asarray, p)) for p in _mlp_params([64, 128, 10])]
    x, y = jnp.asarray(_f32(256, 64)), jnp.asarray(_f32(256, 10))

    def loss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = fnp.tanh(x @ w1 + b1)
        return fnp.sum((h @ w2 + b2 - y) ** 2)

    def jloss(params, x, y):
        (w1, b1), (w2, b2) = params
        h = jnp.tanh(x @ w1 + b1)
        return jnp.sum((h @ w2 + b2 - y) ** 2)

    ff = fg.jit(fg.vmap(fg.grad(loss), in_axes=(None, 0, 0)))
    gg = jax.jit(jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0)))
    return {"funcgrad": lambda: ff(params, x, y), "jax": lambda: gg(params, x, y)}


@workload("vmap.jacrev.256x256", group="vmap")
def jacrev_256() -> Impls:
    """jit(jacrev(f)) for f: R^256 → R^256."""
    w = jnp.asarray(_f32(256, 256) / 16)
    f = lambda x: fnp.tanh(w @ x) * x
    g = lambda x: jnp.tanh(w @ x) * x
    x = jnp.asarray(_f32(256))
    ff, gg = fg.jit(fg.jacrev(f)), jax.jit(jax.jacrev(g))
    return {"funcgrad": lambda: ff(x), "jax": lambda: gg(x)}


@workload("jit.conv_grad.cnn.b32", group="grad")
def conv_grad() -> Impls:
    """jit(grad) of a 2-conv CNN (3→16→32 channels, 3x3, 32x32 images, batch 32)."""
    w1, w2 = jnp.asarray(_f32(16, 3, 3, 3) / 5), jnp.asarray(_f32(32, 16, 3, 3) / 12)
    x = jnp.asarray(_f32(32, 3, 32, 32))

    def make(lax_mod, np_mod):
        def loss(ws, x):
            h = np_mod.tanh(lax_mod.conv(x, ws[0], (1, 1), "SAME"))
            h = lax_mod.conv(h, ws[1], (2, 2), "SAME")
            return np_mod.mean(h * h)

        return loss

    ff = fg.jit(fg.grad(make(fg.lax, fnp)))
    gg = jax.jit(jax.grad(make(jax.lax, jnp)))
    impls = {"funcgrad": lambda: ff((w1, w2), x), "jax": lambda: gg((w1, w2), x)}
    torch = try_import_torch()
    if torch is not None:
        tw = [torch.tensor(np.asarray(w), requires_grad=True) for w in (w1, w2)]
        tx = torch.tensor(np.asarray(x))

        def torch_step():
            h = torch.tanh(torch.nn.functional.conv2d(tx, tw[0], padding=1))
            h = torch.nn.functional.conv2d(h, tw[1], stride=2, padding=1)
            return torch.autograd.grad((h * h).mean(), tw)

        impls["torch"] = torch_step
    return impls
