"""Datasets (``torch/utils/data/dataset.py``): map-style and iterable, wrappers, ``random_split``."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from compat._core import creation as _creation
from compat._core import grad_mode as _gm
from compat._core.tensor import Tensor

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map from keys to samples: subclasses define ``__getitem__`` (and usually ``__len__``).

    A subclass may also define ``__getitems__(indices)`` returning a list of samples;
    the DataLoader then fetches a batch with one call.
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A stream of samples: subclasses define ``__iter__``.

    With ``num_workers > 0`` every worker iterates its own copy; use
    ``get_worker_info()`` inside ``__iter__`` to split the work.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


def _plain(t: Any) -> bool:
    """A tensor whose rows can be read with NumPy: not a subclass, not 0-d, outside autograd."""
    return (
        type(t) is Tensor and t._st.a.ndim > 0 and not (t._requires_grad and _gm.is_grad_enabled())
    )


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, bool)


def _row(t: Any, index: Any) -> Any:
    """``t[index]``; a plain int row of a tensor outside autograd is taken with NumPy.

    compat's indexing op specialises on Python-int indices, so going through it for
    every sample of a large dataset would build one program per row; the values are
    the same either way.
    """
    if _plain(t) and _is_int(index):
        arr = np.asarray(t._st.array)
        n = arr.shape[0]
        if -n <= index < n:
            return Tensor._make(np.array(arr[index]))
    return t[index]


class TensorDataset(Dataset[tuple]):
    """Samples are ``tuple(t[i] for t in tensors)``; all tensors share their first dimension."""

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(_row(t, index) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


def collated_rows(dataset: Any, keys: Any) -> list | None:
    """``default_collate([dataset[k] for k in keys])`` in one NumPy gather per tensor, when
    ``dataset`` is a ``TensorDataset`` (possibly under ``Subset``s) of tensors outside autograd
    and ``keys`` are in-range ints; ``None`` otherwise (the caller takes the general path).

    The same values, dtypes and shapes as the general path, without creating a tensor per
    sample (each costs a host-to-device transfer)."""
    while type(dataset) is Subset:
        try:
            keys = [dataset.indices[k] for k in keys]
        except (IndexError, TypeError, KeyError):
            return None
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or not all(_plain(t) for t in dataset.tensors):
        return None
    if not keys or not all(_is_int(k) for k in keys):
        return None
    idx = np.asarray(keys, dtype=np.int64)
    n = len(dataset)
    if idx.min() < -n or idx.max() >= n:
        return None
    return [Tensor._make(np.asarray(t._st.array)[idx]) for t in dataset.tensors]


class StackDataset(Dataset):
    """Samples are tuples (positional datasets) or dicts (keyword datasets) of equal-length datasets."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "StackDataset takes positional datasets (tuple samples) or keyword datasets "
                "(dict samples), but both types are given."
            )
        parts = list(args) or list(kwargs.values())
        if not parts:
            raise ValueError("At least one dataset should be passed")
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The samples of several map-style datasets one after another."""

    @staticmethod
    def cumsum(sequence: Iterable[Dataset]) -> list[int]:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """The streams of several iterable datasets one after another."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> T_co:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(n: int, lengths: Sequence[int | float]) -> list[int]:
    """Fractions summing to 1 become counts (floor, then the remainder round-robin)."""
    if not (math.isclose(sum(lengths), 1) and sum(lengths) <= 1):
        return list(lengths)  # type: ignore[arg-type]
    counts = []
    for i, frac in enumerate(lengths):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        counts.append(math.floor(n * frac))
    for i in range(n - sum(counts)):
        counts[i % len(counts)] += 1
    for i, c in enumerate(counts):
        if c == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
                stacklevel=3,
            )
    return counts


def random_split(
    dataset: Dataset,
    lengths: Sequence[int | float],
    generator: Any = None,
) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given lengths or fractions.

    ``generator`` defaults to the global generator (``torch.manual_seed`` makes the
    split reproducible); the permutation differs from PyTorch's.
    """
    counts = _split_lengths(len(dataset), lengths)
    if sum(counts) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    g = generator if generator is not None else _creation.default_generator
    order = _creation.randperm(sum(counts), generator=g).tolist()
    ends = list(itertools.accumulate(counts))
    return [Subset(dataset, order[e - c : e]) for e, c in zip(ends, counts, strict=True)]
