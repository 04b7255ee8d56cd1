"""compat.torch's cold start vs PyTorch: what a user waits for before the steady state.

compat compiles one XLA executable per op and shape the first time it runs, so the
first training step, and every step of a loop whose shapes keep changing (a GPT
generating token by token: the sequence grows by one each step), pays XLA's compile
time; PyTorch pays nothing. Each figure comes from a fresh process (nothing cached
in memory; JAX's persistent cache is off unless you turned it on):

* ``first step``: the first training step of each model in ``benchmarks.models``
  (``zero_grad``, forward, cross-entropy, ``backward``, ``step``);
* ``generate``: greedy generation of ``N_TOKENS`` tokens from a one-token prompt by
  the GPT of ``benchmarks.models`` (``no_grad``; every token a new sequence length).

compat runs three times: with ``POLICY.eager_compiler_options`` as shipped (XLA's
classic CPU emitters for eager executables), with XLA's defaults (``None``), and with
XLA's optimisation level 0 added (compiles faster still, but code that XLA would
vectorise, ``tanh`` of a large tensor, runs up to 20x slower: a choice for loops of
one-off shapes, not the default). ``compat_lazy`` is the shipped options with
``compat.lazy`` on: a first sighting whose ops are cold compiles one program.

    python -m benchmarks.compat_cold
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import numpy as np

N_TOKENS = 16
MODES = ("torch", "compat", "compat_lazy", "compat_xla_defaults", "compat_level_0")


def _measure(mode: str) -> dict[str, float]:
    """The figures of one mode, in this (fresh) process."""
    if mode == "torch":
        import torch
    else:
        import compat.torch as torch
        from funcgrad.core import compile_cache

        if mode == "compat_xla_defaults":
            compile_cache.POLICY.eager_compiler_options = None
        elif mode == "compat_level_0":
            compile_cache.POLICY.eager_compiler_options = {
                "xla_cpu_use_fusion_emitters": False,
                "xla_backend_optimization_level": 0,
            }
    import contextlib

    from benchmarks.models import build, train_step

    if mode == "compat_lazy":
        import compat.lazy

        scope = compat.lazy.enabled
    else:
        scope = contextlib.nullcontext

    out: dict[str, float] = {}
    for kind in ("mlp", "cnn", "lstm", "gpt"):
        model, opt, data = build(torch, kind)
        x, y = (torch.tensor(a) for a in data(np.random.default_rng(0)))
        t = time.perf_counter()
        with scope():
            float(train_step(torch, model, opt, x, y))
        out[f"first step {kind}"] = time.perf_counter() - t
        if kind == "gpt":
            idx = torch.zeros((1, 1), dtype=torch.long)
            t = time.perf_counter()
            with torch.no_grad(), scope():
                for _ in range(N_TOKENS):
                    nxt = model(idx)[:, -1, :].argmax(-1, keepdim=True)
                    idx = torch.cat([idx, nxt], dim=1)
            int(idx[0, -1])
            out[f"generate {N_TOKENS} tokens"] = time.perf_counter() - t
    return out


def main() -> None:
    """Run each mode in its own process and print the figures side by side."""
    results: dict[str, dict[str, Any]] = {}
    for mode in MODES:
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.compat_cold", "--one", mode],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            print(f"{mode}: failed\n{proc.stderr[-2000:]}")
            continue
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = list(next(iter(results.values()), {}))
    print(f"{'':24s}" + "".join(f"{m:>22s}" for m in results))
    for r in rows:
        print(f"{r:24s}" + "".join(f"{results[m][r]:21.2f}s" for m in results))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(_measure(sys.argv[2])))
    else:
        main()
