"""Fetchers: turn the sampler's next key (or list of keys) into a collated batch.

The same objects run in the main process (``num_workers=0``) and in worker processes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat.torch.utils.data.collate import default_collate
from compat.torch.utils.data.dataset import collated_rows


class MapFetcher:
    """Map-style: ``collate_fn([dataset[i] for i in keys])`` (or ``dataset.__getitems__(keys)``)."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, key: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[key])
        if self.collate_fn is default_collate:
            fast = collated_rows(self.dataset, key)
            if fast is not None:
                return fast
        many = getattr(self.dataset, "__getitems__", None)
        samples = many(key) if callable(many) else [self.dataset[i] for i in key]
        return self.collate_fn(samples)


class IterableFetcher:
    """Iterable-style: the next ``len(keys)`` items of the dataset's iterator (the keys are
    placeholders); ``StopIteration`` once it is exhausted (or the last batch is short and
    ``drop_last``)."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable, drop_last: bool):
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, key: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        samples = []
        for _ in key:
            try:
                samples.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not samples or (self.drop_last and len(samples) < len(key)):
            raise StopIteration
        return self.collate_fn(samples)


def make_fetcher(
    iterable: bool, dataset: Any, auto_collation: bool, collate_fn: Callable, drop_last: bool
) -> MapFetcher | IterableFetcher:
    kind = IterableFetcher if iterable else MapFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
