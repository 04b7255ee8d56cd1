"""A torch-style training step on ``compat.torch`` vs PyTorch eager.

MLP 784-256-10 on a batch of 64: ``zero_grad``, forward, ``CrossEntropyLoss``,
``backward``, ``step`` — the same code on both backends (only the module
objects differ). Workloads time the steady state (the harness warms up first);
the first step's latency (tracing and XLA compilation of every op, of the
backward and of the optimizer program) is measured in a fresh subprocess and
printed beside them:

    python -m benchmarks --filter compat_train     # steady state, compat vs torch
    python -m benchmarks.wl_compat_train           # first-step latency vs steady state
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np

from benchmarks.harness import Impls, try_import_torch, workload

BATCH, N_IN, HIDDEN, N_OUT = 64, 784, 256, 10
WARMUP_STEPS = 5
ROOT = Path(__file__).resolve().parents[1]


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, N_IN)).astype(np.float32)
    y = rng.integers(0, N_OUT, size=BATCH).astype(np.int64)
    return x, y


def make_step(torch: ModuleType, optimizer: str) -> tuple[Callable[[], Any], Any]:
    """A zero-argument training step on backend ``torch`` (``compat.torch`` or ``torch``)."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(N_IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, N_OUT))
    loss_fn = nn.CrossEntropyLoss()
    if optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    x_np, y_np = _data()
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    params = list(model.parameters())

    def step() -> Any:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    def result() -> Any:
        # compat runs asynchronously on XLA: hand the harness the parameters' arrays to wait
        # on (the updated values are the step's real output). PyTorch CPU is synchronous.
        arrays = [getattr(p, "_data", None) for p in params]
        return arrays if all(a is not None for a in arrays) else None

    return step, result


def _impls(optimizer: str) -> Impls:
    import compat.torch as ctorch

    c_step, c_result = make_step(ctorch, optimizer)

    def compat_call() -> Any:
        c_step()
        return c_result()

    # Reach the steady state before the harness calibrates: the first step compiles every
    # op and the optimizer program, the second the cached backward (the harness itself only
    # warms up with one call).
    for _ in range(WARMUP_STEPS):
        jax.block_until_ready(compat_call())

    impls: dict[str, Callable[[], Any]] = {"compat": compat_call}
    torch = try_import_torch()
    if torch is not None:
        t_step, _ = make_step(torch, optimizer)
        for _ in range(WARMUP_STEPS):
            t_step()
        impls["torch"] = t_step
    return impls


@workload("compat_train.mlp784.adam.b64", group="compat", subject="compat")
def train_step_adam() -> Impls:
    """MLP 784-256-10, batch 64, Adam: zero_grad+forward+CE loss+backward+step."""
    return _impls("adam")


@workload("compat_train.mlp784.sgd.b64", group="compat", subject="compat")
def train_step_sgd() -> Impls:
    """MLP 784-256-10, batch 64, SGD momentum: zero_grad+forward+CE loss+backward+step."""
    return _impls("sgd")


# ---------------------------------------------------------------------------
# first-step latency (cold process) vs steady state
# ---------------------------------------------------------------------------


def _measure_in_this_process(backend: str, optimizer: str, steps: int) -> dict[str, float]:
    if backend == "compat":
        import compat.torch as torch
    else:
        import torch  # type: ignore[no-redef]
    import jax

    def run(step: Callable[[], Any], result: Callable[[], Any]) -> float:
        start = time.perf_counter()
        step()
        jax.block_until_ready(result())
        return time.perf_counter() - start

    step, result = make_step(torch, optimizer)
    first = run(step, result)
    second = run(step, result)
    rest = [run(step, result) for _ in range(steps)]
    return {
        "first_step_s": first,
        "second_step_s": second,
        "steady_median_s": statistics.median(rest),
    }


def first_step_latency(backend: str = "compat", optimizer: str = "adam", steps: int = 200) -> dict:
    """Run ``steps + 2`` training steps in a fresh interpreter; time the first ones separately."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    code = (
        "import json, sys; from benchmarks.wl_compat_train import _measure_in_this_process as m; "
        f"print(json.dumps(m({backend!r}, {optimizer!r}, {steps})))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    backends = ["compat"] + (["torch"] if try_import_torch() is not None else [])
    for optimizer in ("adam", "sgd"):
        for backend in backends:
            r = first_step_latency(backend, optimizer)
            print(
                f"{backend:6s} {optimizer:4s}  first step {r['first_step_s'] * 1e3:9.1f} ms   "
                f"second {r['second_step_s'] * 1e3:8.2f} ms   "
                f"steady (median of 200) {r['steady_median_s'] * 1e3:7.3f} ms"
            )


if __name__ == "__main__":
    main()
