"""A 2-process DistributedDataParallel training step: compat vs PyTorch's gloo DDP.

Both runs start through compat's launcher (``python -m compat.torch.distributed.run
--nproc-per-node 2``), on this machine, one after the other. Each process trains an
MLP (``IN -> HIDDEN -> HIDDEN -> OUT``, ReLU, cross-entropy, SGD with momentum) on its
own ``BATCH`` rows per step; a step is ``zero_grad``, forward, ``backward`` (which
averages the gradients over both processes) and ``optimizer.step()``. After
``WARMUP`` steps (compat's execution tiers settle within about 40: ops move from the
host tier to compiled executables in a background thread, at different steps in the
two processes) the median of ``STEPS`` timed steps is reported by rank 0, with the
median step under ``no_sync()`` (no gradient average: the local work), the median
time of one ``all_reduce`` of a flat buffer holding all gradients, and the CPU time of
the process (every thread) per synced step, which a loaded machine distorts least.

    python -m benchmarks.ddp_step [--repeat 3] [--pin]

Every worker runs with one BLAS/OpenMP thread (``OMP_NUM_THREADS`` and friends, as
torchrun sets) and PyTorch with one intra-op thread. ``--pin`` also pins each worker
to one core (rank ``r`` to core ``r``), for both libraries: XLA's CPU runtime sizes its
thread pools by the cores a process may use and has no thread-count setting, so
unpinned each compat process runs its programs on as many threads as the machine has
cores. ``--repeat`` runs both libraries that many times, alternating, and prints the
medians with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

IN, HIDDEN, OUT, BATCH = 64, 256, 10, 64
WARMUP, STEPS = 100, 100
#: the environment variables that give every worker one BLAS/OpenMP thread
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _worker(lib: str, out_path: str) -> None:
    """One process of the run (started by the launcher)."""
    if os.environ.get("DDP_STEP_PIN"):  # before any library starts its threads
        os.sched_setaffinity(0, {int(os.environ["RANK"]) % (os.cpu_count() or 1)})
    if lib == "torch":
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
    else:
        import compat.torch as torch
        from compat.torch.nn.parallel import DistributedDataParallel as DDP
    dist = torch.distributed
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if lib == "torch":
        torch.set_num_threads(1)  # two processes share the machine's cores
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(
        nn.Linear(IN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, OUT),
    )
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    rng = np.random.default_rng(rank)
    x = torch.from_numpy(rng.normal(size=(BATCH, IN)).astype(np.float32))
    y = torch.from_numpy(rng.integers(0, OUT, size=BATCH).astype(np.int64))

    def step() -> float:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()
        return float(loss.item())

    for _ in range(WARMUP):
        step()
    dist.barrier()
    times = []
    cpu = time.process_time()
    for _ in range(STEPS):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    cpu = (time.process_time() - cpu) / STEPS
    # the same step without the gradient average (DDP's no_sync): the local work
    local = []
    with ddp.no_sync():
        for _ in range(STEPS):
            t = time.perf_counter()
            step()
            local.append(time.perf_counter() - t)
    # the communication alone: an all_reduce of every gradient, flat
    flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    comm = []
    for _ in range(STEPS):
        t = time.perf_counter()
        dist.all_reduce(flat)
        float(flat[0].item())
        comm.append(time.perf_counter() - t)
    dist.barrier()
    if rank == 0:
        Path(out_path).write_text(
            json.dumps(
                {
                    "step_ms": 1e3 * float(np.median(times)),
                    "local_ms": 1e3 * float(np.median(local)),
                    "allreduce_ms": 1e3 * float(np.median(comm)),
                    "cpu_ms": 1e3 * cpu,
                }
            )
        )
    dist.destroy_process_group()


def _run(lib: str, pin: bool) -> dict[str, float]:
    env = dict(os.environ, **{var: "1" for var in THREAD_VARS})
    if pin:
        env["DDP_STEP_PIN"] = "1"
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "result.json")
        cmd = [sys.executable, "-m", "compat.torch.distributed.run", "--nproc-per-node", "2"]
        cmd += ["--standalone", "-m", "benchmarks.ddp_step", "--worker", lib, out]
        root = Path(__file__).resolve().parents[1]
        p = subprocess.run(cmd, timeout=600, cwd=root, env=env)
        if p.returncode and os.path.exists(out):  # measured; the shutdown failed
            print(f"(the {lib} run exited with {p.returncode} after writing its figures)")
        elif p.returncode:
            raise subprocess.CalledProcessError(p.returncode, cmd)
        return json.loads(Path(out).read_text())


def main(argv: list[str] | None = None) -> None:
    """Run both libraries ``--repeat`` times, alternating; print the medians and the ratio."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.ddp_step")
    p.add_argument("--repeat", type=int, default=3, help="alternating runs of each library")
    p.add_argument("--pin", action="store_true", help="pin each worker to one core")
    opts = p.parse_args(argv)
    runs: dict[str, list[dict[str, float]]] = {"torch": [], "compat": []}
    load = [os.getloadavg()[0]]
    for _ in range(opts.repeat):
        for lib in runs:
            runs[lib].append(_run(lib, opts.pin))
            load.append(os.getloadavg()[0])
    res = {
        lib: {k: float(np.median([r[k] for r in rs])) for k in rs[0]} for lib, rs in runs.items()
    }
    print(f"2-process DDP MLP step ({IN}-{HIDDEN}-{HIDDEN}-{OUT}, batch {BATCH} per process)")
    print(
        f"medians over {opts.repeat} alternating runs of {STEPS} steps each after {WARMUP} "
        f"warm-up steps{', each worker pinned to one core' if opts.pin else ''}; 1-minute "
        f"load average {min(load):.1f}-{max(load):.1f} on {os.cpu_count()} cores"
    )
    for lib, r in res.items():
        print(
            f"  {lib:7s} step {r['step_ms']:7.2f} ms   without the average (no_sync) "
            f"{r['local_ms']:6.2f} ms   all_reduce of all grads {r['allreduce_ms']:6.2f} ms   "
            f"CPU per step {r['cpu_ms']:6.2f} ms"
        )
    for lib, rs in runs.items():
        print(f"  {lib:7s} steps of each run: " + ", ".join(f"{r['step_ms']:.2f}" for r in rs))
    ratio = {k: res["compat"][k] / res["torch"][k] for k in ("step_ms", "cpu_ms")}
    print(
        f"  ratio compat/torch: step {ratio['step_ms']:.2f}x   CPU per step {ratio['cpu_ms']:.2f}x"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3])
    else:
        main()
