"""compat's per-op hot path against PyTorch eager, alternated in one process.

Issue 33's steady-state targets, measured the way a shared machine allows: process
CPU time (other processes' load does not count), compat and PyTorch timed in turn
within each round, medians over rounds, the load average printed beside them.

* ``op_recorded``: 100 recorded scalar ops (``y = y * 1.0001``, ``y`` requires grad).
* ``op_unrecorded``: the same on a tensor that needs no gradient.
* ``chain_gc_on`` / ``chain_gc_off``: record a 20,000-op chain (``* 1.0001`` and
  ``+ 0.0`` alternating) and backward through it, with Python's GC running as users
  run it, and paused as ``timeit`` does.

Usage: ``python -m benchmarks.hot_path [--rounds 7] [--only op_recorded,chain_gc_on]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable

from benchmarks.wl_compat import _chain
from benchmarks.wl_compat_ops import N_OPS, _ops

N_REPEAT = 200
N_CHAIN = 20_000


def _op_loop(lib, requires_grad: bool) -> Callable[[], None]:
    x = lib.tensor(1.0, requires_grad=requires_grad)

    def run() -> None:
        for _ in range(N_REPEAT):
            _ops(x)

    return run


def _chain_run(lib) -> Callable[[], None]:
    x = lib.tensor(1.0, requires_grad=True)

    def run() -> None:
        x.grad = None
        _chain(x, N_CHAIN).backward()

    return run


def _cpu(fn: Callable[[], None], gc_on: bool) -> float:
    gc.collect()
    was = gc.isenabled()
    if not gc_on:
        gc.disable()
    try:
        t0 = time.process_time()
        fn()
        return time.process_time() - t0
    finally:
        if was:
            gc.enable()


WORKLOADS: dict[str, tuple[Callable, bool, float]] = {
    # name: (builder(lib), gc on, unit divisor to per-op µs)
    "op_recorded": (lambda lib: _op_loop(lib, True), True, N_OPS * N_REPEAT),
    "op_unrecorded": (lambda lib: _op_loop(lib, False), True, N_OPS * N_REPEAT),
    "chain_gc_on": (_chain_run, True, N_CHAIN),
    "chain_gc_off": (_chain_run, False, N_CHAIN),
}


def main(argv: list[str] | None = None) -> None:
    """Run the workloads and print per-op µs and compat/PyTorch ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    import torch

    import compat.torch as ctorch

    torch.set_num_threads(1)
    names = [n for n in WORKLOADS if not args.only or n in args.only.split(",")]
    print(f"load average at start: {os.getloadavg()}")
    for name in names:
        build, gc_on, per = WORKLOADS[name]
        fns = {"compat": build(ctorch), "torch": build(torch)}
        for fn in fns.values():  # warm: programs traced, caches filled
            fn()
            fn()
        times: dict[str, list[float]] = {"compat": [], "torch": []}
        ratios = []
        for _ in range(args.rounds):
            for lib in ("compat", "torch"):
                times[lib].append(_cpu(fns[lib], gc_on))
            ratios.append(times["compat"][-1] / times["torch"][-1])
        c, t = statistics.median(times["compat"]), statistics.median(times["torch"])
        print(
            f"{name:14s} compat {c / per * 1e6:7.2f} µs/op  torch {t / per * 1e6:6.2f} µs/op  "
            f"ratio {c / t:.2f} (paired median {statistics.median(ratios):.2f}, "
            f"min {min(ratios):.2f})"
        )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
