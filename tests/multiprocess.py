"""Run a worker script in several processes on localhost, as one distributed run.

Every process gets torchrun's variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``MASTER_ADDR``, ``MASTER_PORT``) and the repository on ``PYTHONPATH``; a worker reports
by printing one line ``RESULT <json>``. Every wait has a timeout and every process is
killed before :func:`run_workers` returns, whatever happened.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port that was free a moment ago (bind port 0, read it, release it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Worker:
    """One finished process: exit code, output, seconds from start to exit."""

    rank: int
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def result(self) -> Any:
        """The JSON the worker printed after ``RESULT``."""
        for line in reversed(self.stdout.splitlines()):
            if line.startswith("RESULT "):
                return json.loads(line[len("RESULT ") :])
        raise AssertionError(
            f"rank {self.rank} (exit {self.returncode}) printed no RESULT line\n"
            f"stdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}"
        )

    def describe(self) -> str:
        return (
            f"rank {self.rank}: exit {self.returncode} after {self.seconds:.1f} s\n"
            f"stdout:\n{self.stdout[-2000:]}\nstderr:\n{self.stderr[-4000:]}"
        )


def worker_env(rank: int, world: int, port: int, extra: dict[str, str] | None = None) -> dict:
    """The environment of worker ``rank`` of ``world``: torchrun's variables, CPU JAX."""
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # one CPU device per process
    env.update(
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(world),
        LOCAL_WORLD_SIZE=str(world),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]),
        JAX_PLATFORMS="cpu",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra or {})
    return env


def run_workers(
    script: str,
    world: int,
    tmp_path: Path,
    timeout: float = 60.0,
    extra_env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
) -> list[Worker]:
    """Run ``script`` (Python source) as ranks ``0..world-1``; return them once all exited.

    Raises:
        AssertionError: some process still ran after ``timeout`` seconds (all are killed).
    """
    path = tmp_path / "worker.py"
    path.write_text(script)
    port = free_port()
    start = time.monotonic()
    procs = []
    outs = []
    try:
        for r in range(world):
            out = open(tmp_path / f"out{r}.txt", "w+")  # noqa: SIM115  (closed below)
            err = open(tmp_path / f"err{r}.txt", "w+")  # noqa: SIM115
            outs.append((out, err))
            procs.append(
                subprocess.Popen(
                    [sys.executable, str(path), *args],
                    env=worker_env(r, world, port, extra_env),
                    stdout=out,
                    stderr=err,
                    cwd=tmp_path,
                )
            )
        ended: dict[int, float] = {}
        while len(ended) < world and time.monotonic() - start < timeout:
            for r, p in enumerate(procs):
                if r not in ended and p.poll() is not None:
                    ended[r] = time.monotonic() - start
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)
    workers = []
    for r, (p, (out, err)) in enumerate(zip(procs, outs)):
        out.seek(0)
        err.seek(0)
        workers.append(Worker(r, p.returncode, out.read(), err.read(), ended.get(r, float("inf"))))
        out.close()
        err.close()
    hung = [w for w in workers if w.seconds == float("inf")]
    assert not hung, f"still running after {timeout} s:\n" + "\n".join(w.describe() for w in hung)
    return workers


def run_on_8_devices(script: str, timeout: float = 900) -> dict:
    """Run ``script`` (Python source) in a fresh process that sees 8 simulated CPU devices;
    the JSON it printed on its last line starting with ``RESULT ``."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    ).strip()
    env["JAX_PLATFORMS"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])
