"""The size of XLA's CPU thread pool, chosen before JAX's CPU client starts.

XLA's CPU runtime splits a program's parallel work (a dot's tiles, a parallel loop)
over an intra-op thread pool that it sizes once, when JAX's CPU client starts: one
thread per core the process may use, unless the environment variable ``PJRT_NPROC``
says otherwise; nothing resizes it afterwards. Each split is a hand-off to another
thread: a small MLP's training step in compat spent 0.2-0.3 ms of its 1.4 ms of CPU
time in the pool's threads, and with one thread its CPU time fell to 1.04 ms (PyTorch
with one intra-op thread: 0.73-0.78). But XLA's CPU collectives need a second pool
thread: with one, a 2-process all-reduce took ~4 ms instead of ~0.8 (docs/design.md,
*XLA's CPU thread pool*), so nothing sets it behind the user's back.

``funcgrad.config.update("funcgrad_cpu_threads", n)`` sets the pool's size for this
process (``PJRT_NPROC``) before the client starts; 0 leaves XLA's default. Once the
client has started, asking for another size is an error rather than a silent no-op.
"""

from __future__ import annotations

import os

# (JAX has no public accessor for "has a backend started"; as funcgrad.distributed)
from jax._src import xla_bridge as _xla_bridge

from funcgrad import config

#: the variable XLA's CPU client reads for its thread pool's size
ENV = "PJRT_NPROC"


def started() -> bool:
    """Whether JAX's backends (and so XLA's CPU thread pool) have started."""
    return bool(_xla_bridge.backends_are_initialized())


def pool_size() -> int | None:
    """The pool size chosen through the environment (``PJRT_NPROC``/``NPROC``), if any."""
    for var in (ENV, "NPROC"):
        value = os.environ.get(var, "").strip()
        if value.isdigit():
            return int(value)
    return None


def _apply(n: int) -> None:
    if type(n) is not int or n < 0:
        raise ValueError(f"funcgrad_cpu_threads takes a non-negative int, got {n!r}")
    if n == 0 or pool_size() == n:
        return
    if started():
        have = pool_size()
        raise RuntimeError(
            f"funcgrad_cpu_threads={n}: XLA's CPU thread pool has already started with "
            f"{have if have is not None else 'one thread per core'} thread(s) in this "
            "process; set the option (or PJRT_NPROC) before the first array is created"
        )
    os.environ[ENV] = str(n)


config.define(
    "funcgrad_cpu_threads",
    0,
    "Threads of XLA's CPU intra-op pool (sets PJRT_NPROC; only before JAX's CPU client "
    "starts, i.e. before the first array). 0: XLA's default, one per core. compat's "
    "torch.set_num_threads(n) before the first tensor sets it, as PyTorch sizes its pool. "
    "One thread: a small MLP training step's CPU time 1.41 -> 1.04 ms in one process, but "
    "XLA's CPU collectives (gloo) ~4 ms an all-reduce instead of ~0.8.",
    _apply,
)
