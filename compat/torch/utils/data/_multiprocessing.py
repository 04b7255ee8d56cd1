"""The main-process side of ``DataLoader(num_workers > 0)``: start workers, hand out keys,
yield their batches in sampler order.

Workers start with the ``spawn`` method unless ``multiprocessing_context`` names
another: forking a process whose XLA runtime is already running threads can
deadlock, so each worker imports compat afresh (a script must guard its entry point
with ``if __name__ == "__main__":``, and datasets, ``collate_fn`` and
``worker_init_fn`` must be picklable, as with PyTorch on macOS and Windows).
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import queue
from typing import Any

from compat.torch.utils.data.worker import RESET, ExceptionWrapper, IterableEnded, worker_loop

_POLL_S = 5.0  # how often a blocked ``next`` checks that the workers are alive


class MultiProcessIter:
    """Iterates once over a loader with worker processes (reused across epochs when
    ``persistent_workers``)."""

    def __init__(self, base: Any, loader: Any) -> None:
        self._base = base
        self._workers: list = []
        self._index_queues: list = []
        n = loader.num_workers
        ctx = loader.multiprocessing_context or multiprocessing.get_context("spawn")
        self._timeout = loader.timeout
        self._prefetch = loader.prefetch_factor * n
        self._persistent = loader.persistent_workers
        self._results = ctx.Queue()
        for wid in range(n):
            iq = ctx.Queue()
            args = (
                base.iterable,
                loader.dataset,
                iq,
                self._results,
                base.auto_collation,
                loader.collate_fn,
                base.drop_last,
                base.base_seed,
                loader.worker_init_fn,
                wid,
                n,
            )
            w = ctx.Process(target=worker_loop, args=args, daemon=True)
            w.start()
            self._index_queues.append(iq)
            self._workers.append(w)
        self._epoch = 0
        self._start_epoch(first=True)

    def _start_epoch(self, first: bool) -> None:
        self._epoch += 1
        self._sent = self._received = 0
        self._early: dict[int, Any] = {}
        self._active = [True] * len(self._workers)
        self._cycle = itertools.cycle(range(len(self._workers)))
        if not first and self._base.iterable:
            for iq in self._index_queues:
                iq.put(RESET)
        for _ in range(self._prefetch):
            self._put_task()

    def reset(self) -> None:
        """Start another epoch on the same workers (persistent workers)."""
        self._start_epoch(first=False)

    def _put_task(self) -> None:
        if not any(self._active):
            return
        try:
            keys = self._base.next_index()
        except StopIteration:
            return
        wid = next(w for w in self._cycle if self._active[w])
        self._index_queues[wid].put((self._epoch, self._sent, keys))
        self._sent += 1

    def _receive(self) -> tuple:
        """The next result of this epoch from any worker (waits; checks timeouts and deaths)."""
        while True:
            try:
                item = self._results.get(timeout=self._timeout or _POLL_S)
            except queue.Empty:
                if self._timeout:
                    raise RuntimeError(
                        f"DataLoader timed out after {self._timeout} seconds"
                    ) from None
                dead = [str(w.pid) for w in self._workers if not w.is_alive()]
                if dead:
                    self.shutdown()
                    raise RuntimeError(
                        f"DataLoader worker (pid(s) {', '.join(dead)}) exited unexpectedly"
                    ) from None
                continue
            if item[0] == self._epoch:
                return item[1], item[2]

    def next_data(self) -> Any:
        while True:
            if self._received >= self._sent:
                if not self._persistent:
                    self.shutdown()
                raise StopIteration
            while self._received not in self._early:
                task_id, data = self._receive()
                self._early[task_id] = data
            data = self._early.pop(self._received)
            self._received += 1
            if isinstance(data, IterableEnded):
                self._active[data.worker_id] = False
                continue
            self._put_task()
            if isinstance(data, ExceptionWrapper):
                data.reraise()
            return data

    def shutdown(self) -> None:
        """Stop the workers and release the queues (idempotent)."""
        workers, self._workers = self._workers, []
        for iq in self._index_queues:
            with contextlib.suppress(OSError, ValueError):  # already closed
                iq.put(None)
        for w in workers:
            w.join(timeout=5.0)
            if w.is_alive():
                w.terminate()
                w.join(timeout=1.0)
        for q in [*self._index_queues, self._results]:
            q.cancel_join_thread()
            q.close()
        self._index_queues = []

    def __del__(self) -> None:
        if getattr(self, "_workers", None):
            with contextlib.suppress(Exception):  # e.g. at interpreter exit
                self.shutdown()
