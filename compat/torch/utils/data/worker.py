"""The worker-process side of ``DataLoader(num_workers > 0)``.

Each worker seeds Python's ``random`` and compat's global generator with
``base_seed + worker_id``, runs ``worker_init_fn``, then answers tasks
``(epoch, task_id, keys)`` from its index queue with ``(epoch, task_id, batch)`` on
the shared result queue. Batches travel pickled: compat tensors pickle as NumPy
arrays and are rebuilt as tensors in the main process.
"""

from __future__ import annotations

import pickle
import random
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compat._core import creation as _creation
from compat.torch.utils.data.fetch import make_fetcher

RESET = "reset"  # index-queue message: restart the dataset iterator (persistent workers)


@dataclass
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The current worker's ``WorkerInfo`` (id, num_workers, seed, its dataset copy); ``None`` in
    the main process."""
    return _worker_info


@dataclass
class IterableEnded:
    """A worker's answer once its copy of an ``IterableDataset`` is exhausted."""

    worker_id: int


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and raised there again."""

    def __init__(self, exc_info: Any = None, where: str = "in background") -> None:
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        try:  # the type travels by reference: a class defined in a function cannot
            pickle.dumps(self.exc_type)
        except Exception:
            self.exc_type = RuntimeError
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


def worker_loop(
    iterable: bool,
    dataset: Any,
    index_queue: Any,
    data_queue: Any,
    auto_collation: bool,
    collate_fn: Callable,
    drop_last: bool,
    base_seed: int,
    init_fn: Callable | None,
    worker_id: int,
    num_workers: int,
) -> None:
    """The body of one worker process (see the module docstring)."""
    global _worker_info
    seed = (base_seed + worker_id) % 2**64
    random.seed(seed)
    _creation.manual_seed(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    where = f"in DataLoader worker process {worker_id}"
    init_error = fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(sys.exc_info(), where)
    ended = False
    try:
        while (task := index_queue.get()) is not None:
            if task == RESET:
                fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                ended = False
                continue
            epoch, task_id, keys = task
            if init_error is not None:
                data, init_error = init_error, None
            elif ended:
                data = IterableEnded(worker_id)
            else:
                try:
                    data = fetcher.fetch(keys)  # type: ignore[union-attr]
                except StopIteration:
                    data, ended = IterableEnded(worker_id), True
                except Exception:
                    data = ExceptionWrapper(sys.exc_info(), where)
            data_queue.put((epoch, task_id, data))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group; the main process
        pass  # raises it, the worker just stops
    # the main process has stopped listening: do not wait for unread results on exit
    data_queue.cancel_join_thread()
    data_queue.close()
