"""``DataLoader`` (``torch/utils/data/dataloader.py``): batches of a dataset, in one process or
with worker processes.

Arguments, defaults, the checks between them and their error messages follow
PyTorch 2.13. ``pin_memory``/``pin_memory_device`` are accepted and do nothing (no
devices); ``in_order=False`` is accepted and batches still come in order.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from compat.torch.utils.data._multiprocessing import MultiProcessIter
from compat.torch.utils.data.collate import default_collate, default_convert
from compat.torch.utils.data.dataset import Dataset, IterableDataset
from compat.torch.utils.data.fetch import make_fetcher
from compat.torch.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    _draw_seed,
)

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class _InfiniteConstantSampler(Sampler):
    """The keys of an iterable dataset: ``None`` forever (the dataset decides when to stop)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class _LoaderIter:
    """One pass over a DataLoader; ``num_workers > 0`` delegates to ``MultiProcessIter``."""

    def __init__(self, loader: DataLoader) -> None:
        self.dataset = loader.dataset
        self.iterable = isinstance(loader.dataset, IterableDataset)
        self.auto_collation = loader._auto_collation
        self.drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self.base_seed = _draw_seed(loader.generator)
        self._reset_state(loader)
        self._mp: MultiProcessIter | None = None
        if loader.pin_memory:
            warnings.warn(
                "pin_memory=True has no effect in compat: there is no device memory to pin to",
                stacklevel=3,
            )
        if loader.num_workers == 0:
            self._fetcher = make_fetcher(
                self.iterable, self.dataset, self.auto_collation, loader.collate_fn, self.drop_last
            )
        else:
            self._mp = MultiProcessIter(self, loader)

    def _reset_state(self, loader: DataLoader) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called

    def _reset(self, loader: DataLoader) -> None:
        """Begin another epoch (persistent workers keep running)."""
        self._reset_state(loader)
        if self._mp is not None:
            self._mp.reset()

    def next_index(self) -> Any:
        return next(self._sampler_iter)

    def __iter__(self) -> _LoaderIter:
        return self

    def __next__(self) -> Any:
        if self._mp is not None:
            data = self._mp.next_data()
        else:
            data = self._fetcher.fetch(self.next_index())
        self._num_yielded += 1
        if self.iterable and self._len_called is not None and self._num_yielded > self._len_called:
            warnings.warn(
                f"Length of IterableDataset {self.dataset} was reported to be {self._len_called}"
                f"(when accessing len(dataloader)), but {self._num_yielded} samples have been "
                "fetched. ",
                stacklevel=2,
            )
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _shutdown_workers(self) -> None:
        if self._mp is not None:
            self._mp.shutdown()


class DataLoader:
    """Iterates over ``dataset`` in batches (see PyTorch's ``torch.utils.data.DataLoader``)."""

    _DataLoader__initialized = False

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler | Iterable | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            if shuffle not in (False, None):
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )

        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called: int | None = None
        self._iterator: _LoaderIter | None = None
        self.__initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self) -> Any:
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method in "
                        f"{methods!r}, but got multiprocessing_context={context!r}"
                    )
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a "
                    f"string specifying the start method, but got "
                    f"multiprocessing_context={context}"
                )
        self.__multiprocessing_context = context

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__initialized and attr in _FROZEN:
            raise ValueError(
                f"{attr} attribute should not be set after {type(self).__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _LoaderIter:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = _LoaderIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _LoaderIter(self)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are requested than this process may use CPUs."""
        if self.num_workers == 0:
            return
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:
            cpus = os.cpu_count() or 1
        if self.num_workers > cpus:
            warnings.warn(
                f"DataLoader asked for {self.num_workers} worker processes but this process may "
                f"use only {cpus} CPUs; so many workers may slow loading down or freeze it.",
                stacklevel=2,
            )

    def __del__(self) -> None:
        it = self.__dict__.get("_iterator")
        if it is not None:
            with contextlib.suppress(Exception):  # e.g. at interpreter exit
                it._shutdown_workers()
