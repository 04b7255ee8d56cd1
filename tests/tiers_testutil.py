"""Shared pieces of the tier-policy tests (test_tiers*.py): the compile policy restored
after each test, and a stand-in clock for :mod:`funcgrad.core.tiers`."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from funcgrad.core import compile_cache


@pytest.fixture
def policy():
    """The compile policy, restored after the test."""
    p = compile_cache.POLICY
    saved = dict(vars(p))
    yield p
    vars(p).update(saved)


class Clock:
    """A stand-in for ``time`` in :mod:`funcgrad.core.tiers`: every timed call (a pair of
    ``perf_counter_ns`` reads) lasts ``us`` microseconds, or the next of a sequence; the
    process's CPU time (``process_time_ns``) advances by ``cpu_us`` per read pair (by
    nothing unless given: a call's CPU time within its wall time)."""

    def __init__(self, us: float | Sequence[float], cpu_us: float = 0.0) -> None:
        self.durations = None if isinstance(us, (int, float)) else list(us)
        self.us, self.now, self.starting = us, 0, True
        self.cpu_us, self.cpu_now, self.cpu_starting = cpu_us, 0, True
        self.perf_counter = time.perf_counter

    def process_time_ns(self) -> int:
        if not self.cpu_starting:
            self.cpu_now += int(self.cpu_us * 1e3)
        self.cpu_starting = not self.cpu_starting
        return self.cpu_now

    def perf_counter_ns(self) -> int:
        if not self.starting:
            us = self.us if self.durations is None else self.durations.pop(0)
            self.now += int(us * 1e3)
        self.starting = not self.starting
        return self.now


class ManualClock:
    """A stand-in for ``time`` in :mod:`funcgrad.core.tiers` that moves only when the
    test says so (``advance``): the caller's work between calls, in microseconds."""

    def __init__(self) -> None:
        self.now = 0
        self.perf_counter = time.perf_counter

    def advance(self, us: float) -> None:
        self.now += int(us * 1e3)

    def perf_counter_ns(self) -> int:
        return self.now

    def process_time_ns(self) -> int:
        return 0  # (not modelled: a call's CPU time within its wall time)
