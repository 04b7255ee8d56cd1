"""compat ``torch.func`` (funcgrad's transforms) vs real ``torch.func``.

* ``compat.func.vmap_mlp_b256``: ``vmap`` of a small MLP's forward over 256
  examples (softmax output, matrices from outside the function).
* ``compat.func.per_sample_grads_b64``: per-sample gradients of a
  cross-entropy loss, ``vmap(grad(loss))`` over ``functional_call`` of an
  ``nn.Sequential`` MLP (the torch.func showcase), 64 examples.
* ``compat.func.per_sample_grads_b1024_h512``: the same, 1,024 examples and a
  hidden layer of 512 (compute dominates the per-call tracing).
* ``compat.func.jacrev_b32``: ``vmap(jacrev(f))``: per-example Jacobians of a
  ``tanh`` layer, 32 examples.

Each call of a compat transform traces the function (funcgrad IR) and runs the
program compiled (cached by structure), so this measures the whole call.
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Impls, compat_and_torch, workload

D_IN, D_HID, D_OUT = 32, 64, 10


def _model(lib, hidden: int = D_HID):
    g = np.random.default_rng(0)
    m = lib.nn.Sequential(lib.nn.Linear(D_IN, hidden), lib.nn.ReLU(), lib.nn.Linear(hidden, D_OUT))
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(g.standard_normal(tuple(p.shape)) * 0.1, dtype=lib.float32))
    return m


def _data(lib, n: int):
    g = np.random.default_rng(1)
    x = lib.tensor(g.standard_normal((n, D_IN)), dtype=lib.float32)
    y = lib.tensor(g.integers(0, D_OUT, n))
    return x, y


@workload("compat.func.vmap_mlp_b256", group="compat")
def vmap_mlp() -> Impls:
    """torch.func.vmap of an MLP forward with softmax, 256 examples."""
    impls: dict = {}
    for name, lib, raw in compat_and_torch():
        m = _model(lib)
        w1, b1 = m[0].weight.detach(), m[0].bias.detach()
        w2, b2 = m[2].weight.detach(), m[2].bias.detach()
        x, _ = _data(lib, 256)

        def f(v, lib=lib, w1=w1, b1=b1, w2=w2, b2=b2):
            h = lib.relu(w1 @ v + b1)
            return lib.softmax(w2 @ h + b2, -1)

        fn = lib.func.vmap(f)
        impls[name] = lambda fn=fn, x=x, raw=raw: raw(fn(x))
    return impls


def _per_sample(n: int, hidden: int) -> Impls:
    impls: dict = {}
    for name, lib, raw in compat_and_torch():
        m = _model(lib, hidden)
        params = {k: v.detach() for k, v in m.named_parameters()}
        x, y = _data(lib, n)

        def loss(p, v, t, lib=lib, m=m):
            out = lib.func.functional_call(m, p, (v.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, t.unsqueeze(0))

        fn = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
        impls[name] = lambda fn=fn, p=params, x=x, y=y, raw=raw: [
            raw(g) for g in fn(p, x, y).values()
        ]
    return impls


@workload("compat.func.per_sample_grads_b64", group="compat")
def per_sample_grads() -> Impls:
    """vmap(grad(cross_entropy o functional_call(MLP))): per-sample gradients, 64 examples."""
    return _per_sample(64, D_HID)


@workload("compat.func.per_sample_grads_b1024_h512", group="compat")
def per_sample_grads_large() -> Impls:
    """Per-sample gradients as above, 1,024 examples, hidden width 512."""
    return _per_sample(1024, 512)


@workload("compat.func.jacrev_b32", group="compat")
def jacrev_batched() -> Impls:
    """vmap(jacrev(tanh layer)): per-example 64x32 Jacobians, 32 examples."""
    impls: dict = {}
    for name, lib, raw in compat_and_torch():
        m = _model(lib)
        w, b = m[0].weight.detach(), m[0].bias.detach()
        x, _ = _data(lib, 32)
        fn = lib.func.vmap(lib.func.jacrev(lambda v, lib=lib, w=w, b=b: lib.tanh(w @ v + b)))
        impls[name] = lambda fn=fn, x=x, raw=raw: raw(fn(x))
    return impls
