"""``torch.multiprocessing``: Python's :mod:`multiprocessing` under PyTorch's name.

compat tensors pickle by value (as NumPy arrays), so no shared-memory reductions are
registered; the sharing-strategy functions exist and report the one strategy,
``"file_system"``. ``spawn`` starts ``nprocs`` processes running ``fn(i, *args)``.
"""

from __future__ import annotations

import multiprocessing as _mp
from multiprocessing import *  # noqa: F403
from typing import Any


def get_all_sharing_strategies() -> set[str]:
    return {"file_system"}


def get_sharing_strategy() -> str:
    return "file_system"


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"unsupported sharing strategy {new_strategy!r}")


def spawn(
    fn: Any,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> Any:
    """Start ``nprocs`` processes running ``fn(i, *args)``; with ``join`` wait for them and
    raise if one failed."""
    ctx = _mp.get_context(start_method)
    procs = [ctx.Process(target=fn, args=(i, *args), daemon=daemon) for i in range(nprocs)]
    for p in procs:
        p.start()
    if not join:
        return procs
    for p in procs:
        p.join()
    bad = [i for i, p in enumerate(procs) if p.exitcode != 0]
    if bad:
        raise RuntimeError(f"process {bad[0]} terminated with exit code {procs[bad[0]].exitcode}")
    return None
