"""compat's lazy execution vs compat eager vs PyTorch eager: whole training steps.

The same step code (``benchmarks.models``) runs on each backend: ``compat_lazy``
(``compat.lazy`` on: each step recorded and dispatched as one compiled program),
``compat`` (eager: one dispatch per op) and ``torch``; ``funcgrad_jit`` is the same
step hand-written with funcgrad (``benchmarks.fg_models``: one ``funcgrad.jit`` of
gradient and update, parameters and optimizer state donated), the floor lazy
compat can approach. Ratios are ``compat_lazy / other`` (below 1: lazy is faster). The first steps (op by op, then
the compilation of the step's program) are excluded: the workloads warm up first;
``python -m benchmarks.wl_compat_lazy`` prints the first-step times.

    python -m benchmarks --filter compat_lazy
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.fg_models import from_compat
from benchmarks.harness import Impls, try_import_torch, workload
from benchmarks.models import build, train_step

WARMUP_STEPS = 4
N_CHAIN = 20_000


def _stepper(torch: ModuleType, kind: str, lazy_on: bool) -> Callable[[], Any]:
    import compat.lazy

    model, opt, data = build(torch, kind)
    x, y = (torch.tensor(a) for a in data(np.random.default_rng(0)))
    params = list(model.parameters())
    is_compat = torch.__name__.startswith("compat")

    def step() -> Any:
        if is_compat:
            with compat.lazy.enabled(lazy_on):
                train_step(torch, model, opt, x, y)
            return [p._data for p in params]  # the harness waits on the new parameters
        return train_step(torch, model, opt, x, y)

    for _ in range(WARMUP_STEPS):
        step()
    return step


def _fg_stepper(kind: str) -> Callable[[], Any]:
    """The hand-written funcgrad step, from the same initial parameters and batch."""
    import compat.torch as ctorch

    model, opt, data = build(ctorch, kind)
    ref = from_compat(kind, model, opt)
    x, y = ref.batch(data(np.random.default_rng(0)))
    carry = [ref.params, ref.state]  # donated each step: only the newest values are kept

    def step() -> Any:
        carry[0], carry[1], _ = ref.step(carry[0], carry[1], x, y)
        return carry[0]  # the harness waits on the new parameters

    for _ in range(WARMUP_STEPS):
        step()
    return step


def _impls(kind: str) -> Impls:
    import compat.torch as ctorch

    impls: dict[str, Callable[[], Any]] = {
        "compat_lazy": _stepper(ctorch, kind, True),
        "compat": _stepper(ctorch, kind, False),
        "funcgrad_jit": _fg_stepper(kind),
    }
    torch = try_import_torch()
    if torch is not None:
        impls["torch"] = _stepper(torch, kind, False)
    return impls


def _register(kind: str, name: str, doc: str) -> None:
    def factory() -> Impls:
        return _impls(kind)

    factory.__doc__ = doc
    workload(name, group="compat_lazy", subject="compat_lazy")(factory)


for _kind, _name, _doc in (
    ("mlp", "mlp784.adam.b64", "MLP 784-256-10, batch 64, Adam: one training step."),
    ("gpt", "gpt2x64.adamw.b8", "GPT (2 layers, 64 wide, 4 heads, 32 tokens, batch 8), AdamW."),
    ("cnn", "mnist_cnn.adadelta.b64", "PyTorch mnist example's CNN, batch 64, Adadelta."),
    ("lstm", "lstm_lm.sgd.b8", "2-layer LSTM language model (64 wide, 32 tokens, b8), SGD."),
):
    _register(_kind, f"compat_lazy.{_name}", _doc)


def _chain(x: Any, n: int) -> Any:
    y = x
    for _ in range(n // 2):
        y = y * 1.0001
        y = y + 0.0
    return y


@workload("compat_lazy.chain_20k_fwd_bwd", group="compat_lazy", subject="compat_lazy")
def chain() -> Impls:
    """Record a 20,000-op scalar chain and run its backward."""
    import compat.lazy
    import compat.torch as ctorch

    def make(torch: ModuleType, lazy_on: bool) -> Callable[[], Any]:
        x = torch.tensor(1.0, requires_grad=True)

        def run() -> Any:
            x.grad = None
            if torch.__name__.startswith("compat"):
                with compat.lazy.enabled(lazy_on):
                    _chain(x, N_CHAIN).backward()
                return x.grad._data
            _chain(x, N_CHAIN).backward()
            return x.grad

        run()
        return run

    impls: dict[str, Callable[[], Any]] = {
        "compat_lazy": make(ctorch, True),
        "compat": make(ctorch, False),
    }
    torch = try_import_torch()
    if torch is not None:
        impls["torch"] = make(torch, False)
    return impls


def main() -> None:
    """First-step times (op by op, then compiling the step) and the steady state."""
    import compat.lazy
    import compat.torch as ctorch

    for kind in ("mlp", "gpt", "cnn", "lstm"):
        model, opt, data = build(ctorch, kind)
        x, y = (ctorch.tensor(a) for a in data(np.random.default_rng(0)))
        times = []
        with compat.lazy.enabled():
            for _ in range(8):
                t = time.perf_counter()
                train_step(ctorch, model, opt, x, y)
                [p._data.block_until_ready() for p in model.parameters()]
                times.append(time.perf_counter() - t)
        print(
            f"{kind:5s} lazy: step 1 {times[0] * 1e3:8.1f} ms, step 2 {times[1] * 1e3:8.1f} ms, "
            f"step 3 (compiles) {times[2] * 1e3:8.1f} ms, steady {np.median(times[4:]) * 1e3:7.2f} ms"
        )


if __name__ == "__main__":
    main()
