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

``--paired`` instead runs both libraries in the same two processes (PyTorch's process
group over a file store beside compat's): after both warm up, ``--rounds`` rounds of
``ROUND_STEPS`` synced steps alternate between them (torch, compat, compat, torch, ...),
and the ratio is taken per round. On a machine shared with other jobs the load moves
between runs of the separate mode (a library's step 2-3x apart in runs minutes apart);
two rounds seconds apart see about the same load, so the per-round ratio is the steadier
figure. It also prints, per process, the kind of the gradients compat's tiers hand DDP
(device arrays or host values), the tiers' background compiles and kept-host counts
(the tiers decide by timed probes, so the two processes may run different programs),
and how many averages ran each of the bucket's two programs (the processes' vote picks
one for both). ``--tier`` forces compat's tier mode (``host``: gradients as host values;
``compiled``: device arrays).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import funcgrad

IN, HIDDEN, OUT, BATCH = 64, 256, 10, 64
WARMUP, STEPS = 100, 100
#: synced steps per round of ``--paired``
ROUND_STEPS = 50
#: the environment variables that give every worker one BLAS/OpenMP thread
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _pin() -> None:
    if os.environ.get("DDP_STEP_PIN"):  # before any library starts its threads
        os.sched_setaffinity(0, {int(os.environ["RANK"]) % (os.cpu_count() or 1)})
    if os.environ.get("DDP_STEP_TIER"):  # compat's eager tier mode, forced (--tier)
        funcgrad.config.update("funcgrad_eager_tier", os.environ["DDP_STEP_TIER"])


def _training(torch: Any, ddp_class: Any, rank: int) -> tuple[Any, Any, Callable[[], float]]:
    """The benchmark's model wrapped in ``ddp_class``, and one training step of it, in
    ``torch`` (PyTorch or compat): ``(model, ddp, step)``."""
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(
        nn.Linear(IN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, OUT),
    )
    ddp = ddp_class(model)
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

    return model, ddp, step


def _parts(
    pt: Any, ct: Any, tddp: Any, cddp: Any, tstep: Callable[[], float], cstep: Callable[[], float]
) -> dict[str, Callable[[], Any]]:
    """The parts of a synced step that ``--paired`` also times in every round: each
    library's step under ``no_sync()`` (the local work), each library's ``all_reduce`` of
    a flat buffer as large as all gradients, and the same all-reduce written in JAX alone
    (``shard_map`` of ``psum`` over the process mesh, the global array built from this
    process's block as JAX's documentation does): the engine compat's collectives run
    on, with nothing of funcgrad's around it."""
    import jax
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    n = sum(p.numel() for p in cddp.module.parameters())
    tflat, cflat = pt.ones(n), ct.ones(n)
    mesh = Mesh(np.array(jax.devices()), ("p",))
    spec = NamedSharding(mesh, P("p"))
    psum = jax.jit(
        jax.shard_map(lambda b: jax.lax.psum(b, "p"), mesh=mesh, in_specs=P("p"), out_specs=P("p"))
    )
    # a group of two exchanges its blocks (one collective permute) and sums the pair, as
    # funcgrad's collectives of two members do (docs/design.md)
    pair = [(0, 1), (1, 0)]
    exchange = jax.jit(
        jax.shard_map(
            lambda b: b + jax.lax.ppermute(b, "p", pair),
            mesh=mesh,
            in_specs=P("p"),
            out_specs=P("p"),
        )
    )
    block = jax.device_put(np.ones(n, np.float32), jax.local_devices()[0])
    shape = (n * jax.process_count(),)

    def local(ddp: Any, step: Callable[[], float]) -> Callable[[], float]:
        def run() -> float:
            with ddp.no_sync():
                return step()

        return run

    def jax_all_reduce() -> Any:
        x = jax.make_array_from_single_device_arrays(shape, spec, [block])
        return psum(x).addressable_shards[0].data.block_until_ready()

    def jax_exchange() -> Any:
        x = jax.make_array_from_single_device_arrays(shape, spec, [block])
        return exchange(x).addressable_shards[0].data.block_until_ready()

    parts = {
        "torch_local": local(tddp, tstep),
        "compat_local": local(cddp, cstep),
        "torch_all_reduce": lambda: (pt.distributed.all_reduce(tflat), float(tflat[0])),
        "compat_all_reduce": lambda: (ct.distributed.all_reduce(cflat), float(cflat[0])),
        "jax_all_reduce": jax_all_reduce,
    }
    if jax.process_count() == 2:
        parts["jax_exchange"] = jax_exchange
    return parts


def _paired_worker(out_path: str, rounds: int) -> None:
    """One process of a ``--paired`` run: both libraries' DDP, rounds alternating."""
    _pin()
    import torch as pt

    import compat.torch as ct
    from compat.torch.nn.parallel import DistributedDataParallel as CompatDDP
    from funcgrad.core import tiers

    ct.distributed.init_process_group("gloo")
    rank, world = ct.distributed.get_rank(), ct.distributed.get_world_size()
    store = os.path.join(os.path.dirname(out_path), "torch_store")
    pt.distributed.init_process_group(
        "gloo", init_method=f"file://{store}", rank=rank, world_size=world
    )
    pt.set_num_threads(1)
    cmodel, cddp, cstep = _training(ct, CompatDDP, rank)
    _, tddp, tstep = _training(pt, pt.nn.parallel.DistributedDataParallel, rank)
    for _ in range(WARMUP):
        tstep()
        cstep()
    st = tiers.stats()
    kind = "device" if type(cmodel[0].weight.grad._st.array) is not np.ndarray else "host"
    info = (
        f"rank {rank}: gradients as {kind} arrays, {st['background_compiles']} programs "
        f"compiled in the background, {st['background_kept_host']} of them kept on the host"
    )
    steps = {"torch": tstep, "compat": cstep}
    steps.update(_parts(pt, ct, tddp, cddp, tstep, cstep))
    res: dict[str, list[list[float]]] = {k: [] for k in steps}
    res.update({"torch_cpu": [], "compat_cpu": []})
    for r in range(rounds):
        for lib in list(steps) if r % 2 == 0 else list(steps)[::-1]:
            f = steps[lib]
            f()  # (the other library's last step may still be settling)
            times = []
            cpu = time.process_time()
            for _ in range(ROUND_STEPS):
                t = time.perf_counter()
                f()
                times.append(time.perf_counter() - t)
            res[lib].append(1e3 * float(np.median(times)))
            if lib in ("torch", "compat"):
                res[f"{lib}_cpu"].append(1e3 * (time.process_time() - cpu) / ROUND_STEPS)
    calls = [b.calls for bs in cddp._buckets.values() for _, b in bs]
    info += f"; the average's programs: {', '.join(map(str, calls))} calls"
    Path(f"{out_path}.{rank}").write_text(info)
    ct.distributed.barrier()
    if rank == 0:
        res["tiers"] = [Path(f"{out_path}.{i}").read_text() for i in range(world)]
        Path(out_path).write_text(json.dumps(res))
    pt.distributed.destroy_process_group()
    ct.distributed.destroy_process_group()


def _worker(lib: str, out_path: str) -> None:
    """One process of the run (started by the launcher)."""
    _pin()
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
    model, ddp, step = _training(torch, DDP, rank)

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


def _run(lib: str, pin: bool, rounds: int = 0, tier: str = "") -> dict[str, Any]:
    """One launch of two workers of ``lib`` ("torch", "compat", or "paired" for both in
    the same processes, ``rounds`` rounds); rank 0's figures."""
    env = dict(os.environ, **{var: "1" for var in THREAD_VARS})
    if pin:
        env["DDP_STEP_PIN"] = "1"
    if tier:
        env["DDP_STEP_TIER"] = tier
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "result.json")
        cmd = [sys.executable, "-m", "compat.torch.distributed.run", "--nproc-per-node", "2"]
        cmd += ["--standalone", "-m", "benchmarks.ddp_step", "--worker", lib, out, str(rounds)]
        root = Path(__file__).resolve().parents[1]
        p = subprocess.run(cmd, timeout=600, cwd=root, env=env)
        if p.returncode and os.path.exists(out):  # measured; the shutdown failed
            print(f"(the {lib} run exited with {p.returncode} after writing its figures)")
        elif p.returncode:
            raise subprocess.CalledProcessError(p.returncode, cmd)
        return json.loads(Path(out).read_text())


def _paired(opts: argparse.Namespace) -> None:
    """``--paired``: both libraries in the same processes, the ratio taken per round."""
    load = [os.getloadavg()[0]]
    res = _run("paired", opts.pin, opts.rounds, opts.tier)
    load.append(os.getloadavg()[0])
    ratio = np.array(res["compat"]) / np.array(res["torch"])
    cpu_ratio = np.array(res["compat_cpu"]) / np.array(res["torch_cpu"])
    print(f"2-process DDP MLP step ({IN}-{HIDDEN}-{HIDDEN}-{OUT}, batch {BATCH} per process)")
    print(
        f"both libraries in the same two processes, {opts.rounds} alternating rounds of "
        f"{ROUND_STEPS} steps after {WARMUP} warm-up steps each"
        f"{', each worker pinned to one core' if opts.pin else ''}"
        f"{f', compat tier mode {opts.tier!r}' if opts.tier else ''}; 1-minute load average "
        f"{min(load):.1f}-{max(load):.1f} on {os.cpu_count()} cores"
    )
    for lib in ("torch", "compat"):
        print(
            f"  {lib:7s} step {np.median(res[lib]):7.2f} ms (rounds: "
            + ", ".join(f"{v:.2f}" for v in res[lib])
            + f")   CPU per step {np.median(res[lib + '_cpu']):6.2f} ms"
        )
    rows = [(lib, "local", "no_sync step") for lib in ("torch", "compat")]
    rows += [(lib, "all_reduce", "all_reduce  ") for lib in ("torch", "compat", "jax")]
    rows.append(("jax", "exchange", "exchange    "))
    for lib, part, what in rows:
        if f"{lib}_{part}" in res:
            vals = res[f"{lib}_{part}"]
            print(
                f"  {lib:7s} {what} {np.median(vals):6.2f} ms (rounds: "
                + ", ".join(f"{v:.2f}" for v in vals)
                + ")"
            )
    # PyTorch's step with its gloo all-reduce's time replaced by the engine's (JAX alone)
    floor = (
        np.array(res["torch"]) - np.array(res["torch_all_reduce"]) + np.array(res["jax_all_reduce"])
    ) / np.array(res["torch"])
    print(
        "  PyTorch's step with JAX's all-reduce in place of its own, over PyTorch's step "
        f"(the engine's floor): {np.median(floor):.2f}x (rounds: "
        + ", ".join(f"{v:.2f}" for v in floor)
        + ")"
    )
    print("  ratio compat/torch per round: " + ", ".join(f"{v:.2f}" for v in ratio))
    print(
        f"  ratio compat/torch: step {np.median(ratio):.2f}x (median of the rounds)   CPU per "
        f"step {np.median(cpu_ratio):.2f}x"
    )
    for line in res["tiers"]:
        print(f"  compat {line}")


def main(argv: list[str] | None = None) -> None:
    """Run both libraries ``--repeat`` times, alternating; print the medians and the ratio."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.ddp_step")
    p.add_argument("--repeat", type=int, default=3, help="alternating runs of each library")
    p.add_argument("--pin", action="store_true", help="pin each worker to one core")
    p.add_argument(
        "--paired",
        action="store_true",
        help="both libraries in the same processes, per-round ratio",
    )
    p.add_argument("--rounds", type=int, default=8, help="alternating rounds of --paired")
    p.add_argument(
        "--tier",
        default="",
        choices=["", "auto", "tiered", "host", "compiled"],
        help="force compat's eager tier mode (funcgrad_eager_tier) in the workers",
    )
    opts = p.parse_args(argv)
    if opts.paired:
        _paired(opts)
        return
    runs: dict[str, list[dict[str, float]]] = {"torch": [], "compat": []}
    load = [os.getloadavg()[0]]
    for _ in range(opts.repeat):
        for lib in runs:
            runs[lib].append(_run(lib, opts.pin, tier=opts.tier))
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
        if sys.argv[2] == "paired":
            _paired_worker(sys.argv[3], int(sys.argv[4]))
        else:
            _worker(sys.argv[2], sys.argv[3])
    else:
        main()
