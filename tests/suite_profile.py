"""A per-test profile of the suite, loaded by tests/conftest.py only when
``FUNCGRAD_TEST_PROFILE`` names a directory (it costs nothing otherwise).

Each process (the controller or an xdist worker) writes one JSON-lines file there: per
test its wall and process CPU seconds (all threads: XLA compiles on its own), the CPU
seconds of the subprocesses it waited for, the XLA
backend compiles it caused and their seconds, and the persistent cache's hits; setup and
teardown count with the test that ran them (a module fixture's cost lands on the first
test of its module). A last line gives the process's collection CPU and its totals.
Summarise with ``python tests/suite_profile.py DIR``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import jax
import pytest

_counts = {"compiles": 0, "compile_s": 0.0, "hits": 0}
_out: list = []


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _on_duration(event: str, duration: float, **_: object) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _counts["compiles"] += 1
        _counts["compile_s"] += duration


def _on_event(event: str, **_: object) -> None:
    if event == "/jax/compilation_cache/cache_hits":
        _counts["hits"] += 1


def pytest_configure(config: pytest.Config) -> None:
    """Open this process's profile file and listen to JAX's compile events."""
    folder = Path(os.environ["FUNCGRAD_TEST_PROFILE"])
    folder.mkdir(parents=True, exist_ok=True)
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _out.append(open(folder / f"{name}.jsonl", "w"))  # noqa: SIM115 (closed at unconfigure)
    jax.monitoring.register_event_duration_secs_listener(_on_duration)
    jax.monitoring.register_event_listener(_on_event)
    config._suite_profile_start = _cpu()  # type: ignore[attr-defined]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Record what collecting cost this process."""
    start = session.config._suite_profile_start  # type: ignore[attr-defined]
    _write({"collect_cpu": _cpu() - start, "tests": len(session.items)})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Time one test, its setup and teardown included."""
    before = dict(_counts)
    cpu, child, wall = _cpu(), _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    yield
    _write(
        {
            "id": item.nodeid,
            "wall": time.perf_counter() - wall,
            "cpu": _cpu() - cpu,
            "child_cpu": _cpu(resource.RUSAGE_CHILDREN) - child,
            **{k: _counts[k] - before[k] for k in _counts},
        }
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    """Record the process's totals and close its file."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    _write(
        {
            "total_cpu": usage.ru_utime + usage.ru_stime,
            "children_cpu": children.ru_utime + children.ru_stime,
            **_counts,
        }
    )
    _out.pop().close()


def _write(record: dict) -> None:
    _out[0].write(json.dumps(record) + "\n")
    _out[0].flush()


def summarise(folder: Path, top: int = 40) -> None:
    """Print the profile's totals, then its files and tests by CPU (own + subprocesses)."""
    by_file: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0, 0])
    tests = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            if "id" not in rec:
                print(path.name, {k: round(v, 1) for k, v in rec.items()})
                continue
            rec.setdefault("child_cpu", 0.0)
            tests.append(rec)
            row = by_file[rec["id"].split("::")[0]]
            for i, key in enumerate(("cpu", "child_cpu", "wall", "compiles", "hits"), 1):
                row[i] += rec[key]
            row[0] += 1
    own, sub = sum(t["cpu"] for t in tests), sum(t["child_cpu"] for t in tests)
    print(f"in tests: {own:.1f} s CPU + {sub:.1f} s in subprocesses, {len(tests)} tests")
    print(f"{'file':56} {'tests':>6} {'cpu':>7} {'sub':>6} {'wall':>7} {'compiles':>8} {'hits':>6}")
    ranked = sorted(by_file.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))
    for name, (n, cpu, sub, wall, compiles, hits) in ranked[:top]:
        print(f"{name:56} {n:6d} {cpu:7.1f} {sub:6.1f} {wall:7.1f} {compiles:8d} {hits:6d}")
    print()
    for rec in sorted(tests, key=lambda r: -(r["cpu"] + r["child_cpu"]))[:top]:
        print(
            f"{rec['cpu']:7.2f} {rec['child_cpu']:6.2f} {rec['wall']:7.2f} "
            f"{rec['compiles']:5d} {rec['id']}"
        )


if __name__ == "__main__":
    summarise(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 40)
