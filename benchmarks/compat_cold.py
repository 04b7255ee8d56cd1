"""compat.torch's cold start vs PyTorch: what a user waits for before the steady state.

compat traces each op the first time it meets an op signature (and, in the compiled
tier mode, compiles an XLA executable for it), so the first training step, and every
step of a loop whose shapes keep changing (a GPT generating token by token: the
sequence grows by one each step, which shape templates serve after a few tokens), pays
for it; PyTorch pays nothing. Each figure comes from a fresh process (nothing cached
in memory; JAX's persistent cache is off unless you turned it on); the ``(cpu)`` rows
are the main thread's CPU time, what a loaded machine distorts least:

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
default eager options or its optimisation level 0; ``compat_no_templates`` (not run by
default) ``compat`` with shape templates off (every new shape traced again);
``compat_tiered`` (not run by default) the tiered mode whatever the backend (``auto``
compiles every eager op on a GPU); ``compat_placed`` (not run by default) ``auto`` with
``funcgrad_tier_place_by_operands`` (on a GPU machine: compiled for cuda tensors,
tiered for CPU tensors).

    python -m benchmarks.compat_cold [--threads 1] [--repeat 5] [--modes torch,compat]
        [--device cuda]

``--threads N`` runs every library with N threads (BLAS, OpenMP, PyTorch's intra-op
pool): on a machine other processes share, NumPy's OpenBLAS waking a second thread for
a host-tier matmul of a few million multiply-adds took 30-50 ms where one thread takes
30 us. ``--repeat`` prints the median of that many fresh processes per mode.
``--device`` moves the models and their data to that device in every mode (``cuda``:
PyTorch's GPU, and compat's ``cuda``, JAX's GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

N_TOKENS = 16
MODES = ("torch", "compat", "compat_again", "compat_lazy", "compat_compiled")
#: the environment variables ``--threads`` sets in each process
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: the environment variable that tells a measuring process its ``--device``
DEVICE_VAR = "FUNCGRAD_BENCH_DEVICE"


def _measure(mode: str, threads: int | None = None, device: str = "cpu") -> dict[str, float]:
    """The figures of one mode, in this (fresh) process (``threads``: PyTorch's intra-op
    threads; BLAS's and OpenMP's come from the environment ``main`` sets; ``device``:
    where the models and data live)."""
    if mode == "torch":
        import torch

        if threads is not None:
            torch.set_num_threads(threads)
    else:
        import compat.torch as torch
        from funcgrad.core import compile_cache

        if mode == "compat_no_templates":  # every new shape traced again (before templates)
            from funcgrad import config

            config.update("compat_shape_templates", False)
        if mode in ("compat_compiled", "compat_xla_defaults", "compat_level_0"):
            compile_cache.POLICY.tier = "compiled"
        elif mode == "compat_tiered":
            compile_cache.POLICY.tier = "tiered"
        elif mode == "compat_placed":
            compile_cache.POLICY.tier_place_by_operands = True
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
    cpu: dict[str, float] = {}  # this thread's CPU time: what a loaded machine distorts least
    for kind in ("mlp", "cnn", "lstm", "gpt"):
        model, opt, data = build(torch, kind)
        model.to(device)
        x, y = (torch.tensor(a, device=device) for a in data(np.random.default_rng(0)))
        t, c = time.perf_counter(), time.thread_time()
        with scope():
            float(train_step(torch, model, opt, x, y))
        out[f"first step {kind}"] = time.perf_counter() - t
        cpu[f"first step {kind} (cpu)"] = time.thread_time() - c
        if kind == "gpt":
            idx = torch.zeros((1, 1), dtype=torch.long, device=device)
            t, c = time.perf_counter(), time.thread_time()
            with torch.no_grad(), scope():
                for _ in range(N_TOKENS):
                    nxt = model(idx)[:, -1, :].argmax(-1, keepdim=True)
                    idx = torch.cat([idx, nxt], dim=1)
            int(idx[0, -1])
            out[f"generate {N_TOKENS} tokens"] = time.perf_counter() - t
            cpu[f"generate {N_TOKENS} tokens (cpu)"] = time.thread_time() - c
    out.update(cpu)
    if mode != "torch":  # what XLA compiled, and what came from the disk instead
        from funcgrad.core import disk_cache

        d = disk_cache.stats()
        out["XLA compiles (n)"] = d["misses"]
        out["read from disk (n)"] = d["hits"]
    return out


def _run_one(
    mode: str, cache: str, threads: int | None, device: str = "cpu"
) -> dict[str, Any] | None:
    """The figures of ``mode`` from a fresh process (``None`` if it failed)."""
    env = {**os.environ, "FUNCGRAD_CACHE_DIR": cache, DEVICE_VAR: device}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    if threads is not None:  # BLAS (NumPy's OpenBLAS: the host tier), OpenMP (PyTorch)
        for var in THREAD_VARS:
            env[var] = str(threads)
    args = [sys.executable, "-m", "benchmarks.compat_cold", "--one", mode]
    if threads is not None:
        args += ["--threads", str(threads)]
    proc = subprocess.run(args, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        print(f"{mode}: failed\n{proc.stderr[-2000:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    """Run each mode in fresh processes and print the figures side by side (medians
    over ``--repeat`` runs per mode, the runs of the modes interleaved)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per mode")
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads of BLAS, OpenMP and PyTorch's intra-op pool in every mode "
        "(default: each library's own choice)",
    )
    ap.add_argument("--device", default="cpu", help="where models and data live (cpu, cuda)")
    opts = ap.parse_args(argv)
    modes = [m for m in opts.modes.split(",") if m]
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    for _ in range(opts.repeat):
        caches = tempfile.mkdtemp(prefix="compat-cold-")
        for mode in modes:
            cache = os.path.join(caches, "compat" if mode == "compat_again" else mode)
            res = _run_one(mode, cache, opts.threads, opts.device)
            if res is not None:
                runs[mode].append(res)
        shutil.rmtree(caches, ignore_errors=True)
    results = {
        m: {
            k: statistics.median(r[k] for r in rs if k in r)
            for k in dict.fromkeys(k for r in rs for k in r)
        }
        for m, rs in runs.items()
        if rs
    }
    rows = list(dict.fromkeys(r for res in results.values() for r in res))
    print(f"{'':24s}" + "".join(f"{m:>22s}" for m in results))
    for r in rows:
        cells = []
        for m in results:
            v = results[m].get(r)
            if v is None:
                cells.append(f"{'-':>22s}")
            elif r.endswith("(n)"):
                cells.append(f"{v:22.0f}")
            else:
                cells.append(f"{v:21.3f}s")
        print(f"{r:24s}" + "".join(cells))
    if "torch" in results:  # compat's figures as multiples of PyTorch's
        for m in results:
            if m == "torch":
                continue
            ratios = [
                f"{r} {results[m][r] / results['torch'][r]:.1f}x"
                for r in rows
                if not r.endswith("(n)") and r in results[m] and results["torch"].get(r)
            ]
            print(f"{m} / torch: " + ", ".join(ratios))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--one":
        n = int(sys.argv[4]) if len(sys.argv) == 5 and sys.argv[3] == "--threads" else None
        print(json.dumps(_measure(sys.argv[2], n, os.environ.get(DEVICE_VAR, "cpu"))))
    else:
        main()
