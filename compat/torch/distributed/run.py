"""``python -m compat.torch.distributed.run``: a torchrun-style launcher.

``python -m compat.torch.distributed.run --nproc-per-node 2 train.py --lr 0.1`` starts
two processes running ``train.py --lr 0.1`` with the variables torchrun sets
(``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``,
``MASTER_ADDR``, ``MASTER_PORT``, ``TORCHELASTIC_RUN_ID``), and, as torchrun, with
``OMP_NUM_THREADS=1`` when several workers share the node and the variable is unset
(NumPy's OpenBLAS, which compat's host tier runs on, reads it too). On several hosts, run it on
each with ``--nnodes``, ``--node-rank``, ``--master-addr`` and ``--master-port``.
When a worker fails, the launcher stops the others (SIGTERM, then SIGKILL after
``--stop-timeout`` seconds) and exits with the worst exit code of the workers that
failed by themselves (a signal ``s`` counts as ``128 + s``). A single-node run without ``--master-port`` uses a free port
(torchrun's default is 29500).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence

__all__ = ["main", "parse_args", "worst_exit_code"]


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The launcher's options and the script with its arguments."""
    p = argparse.ArgumentParser(
        prog="python -m compat.torch.distributed.run",
        description="Start one process per worker with torchrun's environment variables.",
    )
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1)
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int, default=None)
    p.add_argument("--standalone", action="store_true", help="single node, free port")
    p.add_argument("--stop-timeout", dest="stop_timeout", type=float, default=10.0)
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    a = p.parse_args(list(argv))
    if a.nproc < 1 or a.nnodes < 1 or not 0 <= a.node_rank < a.nnodes:
        p.error(f"need nproc-per-node >= 1 and 0 <= node-rank < nnodes, got {vars(a)}")
    if a.master_port is None:
        if a.nnodes > 1 and not a.standalone:
            p.error("--master-port is needed with --nnodes > 1")
        with socket.socket() as s:
            s.bind((a.master_addr, 0))
            a.master_port = s.getsockname()[1]
    return a


def worst_exit_code(codes: Sequence[int]) -> int:
    """The largest exit status, a death by signal ``s`` (``-s``) counting as ``128 + s``."""
    return max((128 - c if c < 0 else c) for c in codes) if codes else 0


def _command(a: argparse.Namespace) -> list[str]:
    if a.no_python:
        return [a.script, *a.script_args]
    if a.module:
        return [sys.executable, "-u", "-m", a.script, *a.script_args]
    return [sys.executable, "-u", a.script, *a.script_args]


def _stop(procs: list[subprocess.Popen], grace: float) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the workers of this node; returns the worst exit code."""
    a = parse_args(sys.argv[1:] if argv is None else argv)
    world = a.nnodes * a.nproc
    run_id = os.environ.get("TORCHELASTIC_RUN_ID", uuid.uuid4().hex[:8])
    threads = {}
    if a.nproc > 1 and "OMP_NUM_THREADS" not in os.environ:  # as torchrun
        threads["OMP_NUM_THREADS"] = "1"
        print(
            f"compat.torch.distributed.run: {a.nproc} workers share this machine, so each runs "
            "with OMP_NUM_THREADS=1 (one OpenMP/BLAS thread); set the variable to choose",
            file=sys.stderr,
        )
    procs: list[subprocess.Popen] = []
    for local in range(a.nproc):
        env = dict(os.environ, **threads)
        env.update(
            RANK=str(a.node_rank * a.nproc + local),
            LOCAL_RANK=str(local),
            GROUP_RANK=str(a.node_rank),
            ROLE_RANK=str(a.node_rank * a.nproc + local),
            WORLD_SIZE=str(world),
            LOCAL_WORLD_SIZE=str(a.nproc),
            ROLE_WORLD_SIZE=str(world),
            MASTER_ADDR=a.master_addr,
            MASTER_PORT=str(a.master_port),
            TORCHELASTIC_RUN_ID=run_id,
        )
        procs.append(subprocess.Popen(_command(a), env=env))
    try:
        while True:
            codes = [p.poll() for p in procs]  # poll every worker, not up to the first alive
            if all(c is not None for c in codes) or any(c not in (None, 0) for c in codes):
                break
            time.sleep(0.05)
    except KeyboardInterrupt:
        _stop(procs, a.stop_timeout)
        return 130
    # workers ending on their own at about the same time (a failure every rank meets) are
    # given a moment to do so before the others are stopped: they decide the exit code
    settle = time.monotonic() + min(1.0, a.stop_timeout)
    while any(p.poll() is None for p in procs) and time.monotonic() < settle:
        time.sleep(0.02)
    own = [(i, p.returncode) for i, p in enumerate(procs) if p.returncode not in (None, 0)]
    _stop(procs, a.stop_timeout)
    for i, p in enumerate(procs):
        if p.returncode != 0:
            how = "failed" if i in dict(own) else "was stopped"
            print(
                f"compat.torch.distributed.run: local rank {i} (rank {a.node_rank * a.nproc + i}) "
                f"{how} with exit code {p.returncode}",
                file=sys.stderr,
            )
    return worst_exit_code([c for _, c in own])


if __name__ == "__main__":
    sys.exit(main())
