"""``torch.utils.data.distributed``: ``DistributedSampler``, one replica's share of a dataset.

Every replica sees the same (optionally shuffled) order of the indices, padded by repeating
its head to a multiple of ``num_replicas`` (or cut to one when ``drop_last``), and takes
every ``num_replicas``-th index from ``rank``. The shuffle draws
``torch.randperm(n, generator=g)`` from a ``torch.Generator`` seeded with ``seed + epoch``,
so the order is exactly the one compat's ``randperm`` gives for that seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import TypeVar

import compat.torch as torch
from compat.torch import distributed as dist
from compat.torch.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]

T_co = TypeVar("T_co", covariant=True)


class DistributedSampler(Sampler[T_co]):
    """The indices of ``dataset`` that replica ``rank`` of ``num_replicas`` reads.

    ``num_replicas`` and ``rank`` default to the default process group's world size and
    rank; compat runs a single process with no process group, so leaving them out raises
    PyTorch's ``ValueError`` (default process group not initialized), as PyTorch does
    before ``init_process_group``. Call ``set_epoch`` before each epoch to reshuffle.
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank < 0 or rank >= num_replicas:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]"
            )
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            # drop the tail so that every replica gets the same number of samples
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _order(self) -> list[int]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if not self.shuffle:
            return list(range(n))
        g = torch.Generator()
        g.manual_seed(self.seed + self.epoch)
        return torch.randperm(n, generator=g).tolist()

    def __iter__(self) -> Iterator[T_co]:
        order = self._order()
        if self.drop_last:
            order = order[: self.total_size]
        else:
            missing = self.total_size - len(order)
            if missing > 0:
                # pad by repeating the order from its start (cycling when too short)
                reps = math.ceil(missing / len(order))
                order = order + (order * reps)[:missing]
        if len(order) != self.total_size:
            raise AssertionError(f"{len(order)} indices, expected {self.total_size}")
        mine = order[self.rank : self.total_size : self.num_replicas]
        if len(mine) != self.num_samples:
            raise AssertionError(f"{len(mine)} indices, expected {self.num_samples}")
        return iter(mine)  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch: with ``shuffle``, the order of each epoch differs."""
        self.epoch = epoch
