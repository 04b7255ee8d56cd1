"""compat.torch vs PyTorch eager: batched-gradient Jacobians and deep scalar chains.

* ``compat.jacobian_256``: the full 256×256 Jacobian of ``x -> tanh(W @ x) * x`` by
  ``autograd.grad(y, x, eye, is_grads_batched=True)`` (forward recorded every call).
  compat runs one vectorised backward program (compiled and cached after the second
  call); PyTorch vmaps its engine.
* ``compat.chain_20k_backward``: ``backward(retain_graph=True)`` through a recorded
  chain of 20,000 scalar ops (``y = y * 1.0001`` / ``y + 0.0`` alternating).
* ``compat.chain_20k_fwd_bwd``: recording that chain and running its backward.
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Impls, try_import_torch, workload

N_JAC = 256
N_CHAIN = 20_000


def _jac_fn(lib, w, x):
    y = lib.tanh(w @ x) * x
    return lib.autograd.grad(y, x, lib.eye(N_JAC), is_grads_batched=True)[0]


@workload("compat.jacobian_256", group="compat")
def jacobian_256() -> Impls:
    """256x256 Jacobian with autograd.grad(..., is_grads_batched=True)."""
    import compat.torch as ctorch

    rng = np.random.default_rng(0)
    w0 = (rng.standard_normal((N_JAC, N_JAC)) / 16).astype(np.float32)
    x0 = rng.standard_normal(N_JAC).astype(np.float32)
    cw, cx = ctorch.tensor(w0), ctorch.tensor(x0, requires_grad=True)
    impls: dict = {"funcgrad": lambda: _jac_fn(ctorch, cw, cx)._data}
    torch = try_import_torch()
    if torch is not None:
        tw, tx = torch.tensor(w0), torch.tensor(x0, requires_grad=True)
        impls["torch"] = lambda: _jac_fn(torch, tw, tx)
    return impls


def _chain(x, n):
    y = x
    for _i in range(n // 2):
        y = y * 1.0001
        y = y + 0.0
    return y


@workload("compat.chain_20k_backward", group="compat")
def chain_backward() -> Impls:
    """backward through a 20,000-op scalar chain (graph recorded once, retained)."""
    import compat.torch as ctorch

    cx = ctorch.tensor(1.0, requires_grad=True)
    cy = _chain(cx, N_CHAIN)

    def run_compat():
        cx.grad = None
        cy.backward(retain_graph=True)
        return cx.grad._data

    impls: dict = {"funcgrad": run_compat}
    torch = try_import_torch()
    if torch is not None:
        tx = torch.tensor(1.0, requires_grad=True)
        ty = _chain(tx, N_CHAIN)

        def run_torch():
            tx.grad = None
            ty.backward(retain_graph=True)
            return tx.grad

        impls["torch"] = run_torch
    return impls


@workload("compat.chain_20k_fwd_bwd", group="compat")
def chain_fwd_bwd() -> Impls:
    """record a 20,000-op scalar chain and backward through it."""
    import compat.torch as ctorch

    cx = ctorch.tensor(1.0, requires_grad=True)

    def run_compat():
        cx.grad = None
        _chain(cx, N_CHAIN).backward()
        return cx.grad._data

    impls: dict = {"funcgrad": run_compat}
    torch = try_import_torch()
    if torch is not None:
        tx = torch.tensor(1.0, requires_grad=True)

        def run_torch():
            tx.grad = None
            _chain(tx, N_CHAIN).backward()
            return tx.grad

        impls["torch"] = run_torch
    return impls
