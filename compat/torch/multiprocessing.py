"""``torch.multiprocessing``: Python's :mod:`multiprocessing` under PyTorch's name.

compat tensors pickle by value (as NumPy arrays), so no shared-memory reductions are
registered; the sharing-strategy functions exist and report the one strategy,
``"file_system"``. ``spawn`` starts ``nprocs`` processes running ``fn(i, *args)`` and,
as PyTorch's, ends the others when one fails and raises ``ProcessRaisedException``
(with the child's traceback) or ``ProcessExitedException``.
"""

from __future__ import annotations

import multiprocessing as _mp
import multiprocessing.connection as _mpc
import signal
import sys
import traceback
from multiprocessing import *  # noqa: F403
from typing import Any


def get_all_sharing_strategies() -> set[str]:
    return {"file_system"}


def get_sharing_strategy() -> str:
    return "file_system"


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"unsupported sharing strategy {new_strategy!r}")


class ProcessException(Exception):
    """A process started by :func:`spawn` failed."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or by a signal."""

    def __init__(
        self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name


def _wrap(fn: Any, i: int, args: tuple, errors: Any) -> None:
    """Run ``fn(i, *args)`` in the child; an exception's traceback goes to the parent."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes of one :func:`spawn`; ``join()`` waits for them."""

    def __init__(self, processes: list, error_queues: list) -> None:
        self.processes = processes
        self.error_queues = error_queues

    def pids(self) -> list[int]:
        """The process ids."""
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout`` s) for one process to end; ``True`` once all ended well.

        Raises:
            ProcessRaisedException: a process raised; the others are terminated.
            ProcessExitedException: a process exited with a non-zero code.
        """
        alive = [p for p in self.processes if p.exitcode is None]
        if alive:
            _mpc.wait([p.sentinel for p in alive], timeout=timeout)
        failed = [(i, p) for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)]
        if not failed:
            return all(p.exitcode == 0 for p in self.processes)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join(10)
        i, p = failed[0]
        if not self.error_queues[i].empty():
            tb = self.error_queues[i].get()
            msg = f"\n\n-- Process {i} terminated with the following error:\n{tb}"
            raise ProcessRaisedException(msg, i, p.pid)
        code = p.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(
                f"process {i} terminated with signal {name}", i, p.pid, code, name
            )
        raise ProcessExitedException(
            f"process {i} terminated with exit code {code}", i, p.pid, code, None
        )


def spawn(
    fn: Any,
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """Start ``nprocs`` processes running ``fn(i, *args)``.

    With ``join`` wait for all of them: the first failure terminates the others and
    raises :class:`ProcessRaisedException` (with the child's traceback) or
    :class:`ProcessExitedException`. Without, return the :class:`ProcessContext`.
    """
    ctx = _mp.get_context(start_method)
    queues = [ctx.SimpleQueue() for _ in range(nprocs)]
    procs = [
        ctx.Process(target=_wrap, args=(fn, i, args, queues[i]), daemon=daemon)
        for i in range(nprocs)
    ]
    for p in procs:
        p.start()
    context = ProcessContext(procs, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None
