"""``torch.random``: the global generator's seeding and state functions and ``fork_rng``.

The generator is PyTorch's CPU mt19937 stream (``compat._core.rng``); states are PyTorch's
5056-byte ``ByteTensor`` layout."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from compat._core.creation import (
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]


@contextlib.contextmanager
def fork_rng(
    devices: Any = None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str | None = None,
) -> Iterator[None]:
    """Run the block with the global generator's state saved and restored afterwards
    (compat has one CPU stream, so ``devices``/``device_type`` change nothing)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
