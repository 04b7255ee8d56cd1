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

Modes (each a fresh process with an empty persistent compilation cache of its own):
``compat`` as shipped (the execution tiers: cold ops on the host tier, hot ones
compiled in the background); ``compat_again`` a second process on ``compat``'s cache
directory (what a second run of a script compiles); ``compat_lazy`` with
``compat.lazy`` on; ``compat_compiled`` the compiled tier mode (every eager op an XLA
executable: compat before the host tier); ``compat_xla_defaults`` and
``compat_level_0`` (not run by default: ``--one`` them) the compiled mode with XLA's
default eager options or its optimisation level 0.

    python -m benchmarks.compat_cold
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

N_TOKENS = 16
MODES = ("torch", "compat", "compat_again", "compat_lazy", "compat_compiled")


def _measure(mode: str) -> dict[str, float]:
    """The figures of one mode, in this (fresh) process."""
    if mode == "torch":
        import torch
    else:
        import compat.torch as torch
        from funcgrad.core import compile_cache

        if mode in ("compat_compiled", "compat_xla_defaults", "compat_level_0"):
            compile_cache.POLICY.tier = "compiled"
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
    if mode != "torch":  # what XLA compiled, and what came from the disk instead
        from funcgrad.core import disk_cache

        d = disk_cache.stats()
        out["XLA compiles (n)"] = d["misses"]
        out["read from disk (n)"] = d["hits"]
    return out


def main() -> None:
    """Run each mode in its own process and print the figures side by side."""
    results: dict[str, dict[str, Any]] = {}
    caches = tempfile.mkdtemp(prefix="compat-cold-")
    for mode in MODES:
        cache = os.path.join(caches, "compat" if mode == "compat_again" else mode)
        env = {**os.environ, "FUNCGRAD_CACHE_DIR": cache}
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.compat_cold", "--one", mode],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        if proc.returncode != 0:
            print(f"{mode}: failed\n{proc.stderr[-2000:]}")
            continue
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    shutil.rmtree(caches, ignore_errors=True)
    rows = list(dict.fromkeys(r for res in results.values() for r in res))
    print(f"{'':24s}" + "".join(f"{m:>22s}" for m in results))
    for r in rows:
        cells = []
        for m in results:
            v = results[m].get(r)
            if v is None:
                cells.append(f"{'-':>22s}")
            elif r.endswith("(n)"):
                cells.append(f"{v:22d}")
            else:
                cells.append(f"{v:21.2f}s")
        print(f"{r:24s}" + "".join(cells))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(_measure(sys.argv[2])))
    else:
        main()
