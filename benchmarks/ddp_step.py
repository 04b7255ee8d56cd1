"""A 2-process DistributedDataParallel training step: compat vs PyTorch's gloo DDP.

Both runs start through compat's launcher (``python -m compat.torch.distributed.run
--nproc-per-node 2``), on this machine, one after the other. Each process trains an
MLP (``IN -> HIDDEN -> HIDDEN -> OUT``, ReLU, cross-entropy, SGD with momentum) on its
own ``BATCH`` rows per step; a step is ``zero_grad``, forward, ``backward`` (which
averages the gradients over both processes) and ``optimizer.step()``. After
``WARMUP`` steps the median of ``STEPS`` timed steps is reported by rank 0, with the
median step under ``no_sync()`` (no gradient average: the local work) and the median
time of one ``all_reduce`` of a flat buffer holding all gradients.

    python -m benchmarks.ddp_step
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

IN, HIDDEN, OUT, BATCH = 64, 256, 10, 64
WARMUP, STEPS = 10, 60


def _worker(lib: str, out_path: str) -> None:
    """One process of the run (started by the launcher)."""
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
    for _ in range(STEPS):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
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
                }
            )
        )
    dist.destroy_process_group()


def _run(lib: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "result.json")
        cmd = [sys.executable, "-m", "compat.torch.distributed.run", "--nproc-per-node", "2"]
        cmd += ["--standalone", "-m", "benchmarks.ddp_step", "--worker", lib, out]
        subprocess.run(cmd, check=True, timeout=600, cwd=Path(__file__).resolve().parents[1])
        return json.loads(Path(out).read_text())


def main(rounds: int = 3) -> None:
    """Run both ``rounds`` times, alternating; print the medians and compat's ratio."""
    runs: dict[str, list[dict[str, float]]] = {"torch": [], "compat": []}
    for _ in range(rounds):
        for lib in runs:
            runs[lib].append(_run(lib))
    res = {
        lib: {k: float(np.median([r[k] for r in rs])) for k in rs[0]} for lib, rs in runs.items()
    }
    print(f"2-process DDP MLP step ({IN}-{HIDDEN}-{HIDDEN}-{OUT}, batch {BATCH} per process)")
    print(f"medians over {rounds} alternating runs of {STEPS} steps each")
    for lib, r in res.items():
        print(
            f"  {lib:7s} step {r['step_ms']:7.2f} ms   without the average (no_sync) "
            f"{r['local_ms']:6.2f} ms   all_reduce of all grads {r['allreduce_ms']:6.2f} ms"
        )
    print(f"  ratio compat/torch: step {res['compat']['step_ms'] / res['torch']['step_ms']:.2f}x")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3])
    else:
        main()
