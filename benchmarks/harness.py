"""Side-by-side timing of funcgrad against JAX and PyTorch.

A workload is a function decorated with :func:`workload` that prepares its
inputs and returns ``{impl_name: zero_arg_callable}``, for example
``{"funcgrad": f1, "jax": f2, "torch": f3}``. Each callable does the work of
one call (inputs are captured in closures; setup cost stays in the workload
function) and returns its result. The harness waits for jax arrays anywhere in
that result (a pytree), so a callable must return them rather than wrappers
around them: return a compat Tensor's underlying array, not the Tensor, or the
asynchronous jax dispatch is timed instead of the work. Workloads live in
``benchmarks/wl_*.py`` modules, which are imported automatically.

Timing protocol, per workload:

1. Warm up: call every impl once and wait for its result
   (``jax.block_until_ready``; numpy and torch CPU are synchronous), so
   tracing and XLA compilation are not timed.
2. Calibrate: per impl, find the number of calls ``n`` such that a batch of
   ``n`` calls takes at least ``min_batch_time`` seconds.
3. Measure: ``rounds`` rounds; in each round every impl times one batch, in
   round-robin order rotated by one each round so no impl always runs first.
   Every call's result is blocked on before the next call starts, so the
   figure is per-call latency, not pipelined dispatch throughput.
4. Report the median over rounds of ``batch_time / n`` per impl, and the
   ratio ``subject / other`` of medians (the subject is ``funcgrad`` unless a
   workload says otherwise): above 1 means the subject is slower. Two more
   robust views of the same ratio are printed beside it: the median of the
   per-round ratios (each round times both impls back to back, so slow drifts
   of the machine cancel) and the ratio of the minima (the least disturbed
   batch of each).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import importlib
import json
import math
import os
import pkgutil
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import jax
import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPORT_JSON = BENCH_DIR / "results.json"
REPORT_PNG = BENCH_DIR / "ratios.png"

Impls = Mapping[str, Callable[[], Any]]


@dataclasses.dataclass(frozen=True)
class Workload:
    """A registered workload: a factory returning ``{impl_name: callable}``."""

    name: str
    group: str
    factory: Callable[[], Impls]
    subject: str = "funcgrad"
    description: str = ""


REGISTRY: dict[str, Workload] = {}


def workload(
    name: str, group: str, *, subject: str = "funcgrad"
) -> Callable[[Callable[[], Impls]], Callable[[], Impls]]:
    """Register a workload factory under ``name`` in ``group``.

    Args:
        name: unique workload name, e.g. ``"mlp.grad.b128"``.
        group: a coarse category used in the table and chart, e.g. ``"grad"``.
        subject: the impl whose time is divided by every other impl's time.

    Example:
        In a ``benchmarks/wl_*.py`` module::

            @workload("example.add", group="example", subject="jax")
            def add():
                x = jnp.ones(10)
                return {"jax": lambda: x + x, "numpy": lambda: np.add(1.0, 2.0)}
    """

    def register(factory: Callable[[], Impls]) -> Callable[[], Impls]:
        if name in REGISTRY:
            raise ValueError(f"workload {name!r} is registered twice")
        doc = (factory.__doc__ or "").strip().splitlines()
        REGISTRY[name] = Workload(name, group, factory, subject, doc[0] if doc else "")
        return factory

    return register


def try_import_torch() -> ModuleType | None:
    """Return the ``torch`` module, or ``None`` when PyTorch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def compat_and_torch() -> list[tuple[str, ModuleType, Callable[[Any], Any]]]:
    """``(label, library, data_of)`` for compat.torch (labelled ``funcgrad``, ``data_of``
    its tensor's funcgrad array) and, when installed, PyTorch (``data_of`` the tensor)."""
    import compat.torch as ctorch  # lazy, as in the workloads: funcgrad-only runs skip compat

    libs: list[tuple[str, ModuleType, Callable[[Any], Any]]] = [
        ("funcgrad", ctorch, lambda t: t._data)
    ]
    torch = try_import_torch()
    if torch is not None:
        libs.append(("torch", torch, lambda t: t))
    return libs


def load_workloads() -> dict[str, Workload]:
    """Import every ``benchmarks/wl_*.py`` module and return the registry."""
    for info in sorted(pkgutil.iter_modules([str(BENCH_DIR)]), key=lambda m: m.name):
        if info.name.startswith("wl_"):
            importlib.import_module(f"{__package__ or 'benchmarks'}.{info.name}")
    return REGISTRY


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


def _block(out: Any) -> None:
    # Waits for jax arrays anywhere in the pytree; other leaves pass through.
    jax.block_until_ready(out)


def _time_batch(fn: Callable[[], Any], n: int) -> float:
    """Seconds for ``n`` back-to-back calls, each blocked on, with GC paused."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(n):
            _block(fn())
        return time.perf_counter() - start
    finally:
        if gc_was_enabled:
            gc.enable()


def _calibrate(fn: Callable[[], Any], min_batch_time: float, max_calls: int) -> int:
    """A call count (at most ``max_calls``) whose batch takes at least ``min_batch_time``."""
    n = 1
    while True:
        elapsed = _time_batch(fn, n)
        if elapsed >= min_batch_time or n >= max_calls:
            return n
        # Aim 20% past the target from the current estimate, at least doubling.
        per_call = max(elapsed / n, 1e-9)
        n = min(max_calls, max(2 * n, math.ceil(1.2 * min_batch_time / per_call)))


@dataclasses.dataclass
class ImplResult:
    median_s: float
    min_s: float
    iqr_s: float
    calls_per_batch: int
    rounds: int


@dataclasses.dataclass
class WorkloadResult:
    name: str
    group: str
    subject: str
    impls: dict[str, ImplResult]
    ratios: dict[str, float]
    errors: dict[str, str]
    paired_ratios: dict[str, float] = dataclasses.field(default_factory=dict)
    min_ratios: dict[str, float] = dataclasses.field(default_factory=dict)


def run_workload(
    wl: Workload, *, rounds: int, min_batch_time: float, max_calls: int = 1_000_000
) -> WorkloadResult:
    """Warm up, calibrate and time every impl of ``wl`` (see module docstring)."""
    errors: dict[str, str] = {}
    try:
        impls = dict(wl.factory())
    except Exception as exc:
        traceback.print_exc()
        return WorkloadResult(
            wl.name, wl.group, wl.subject, {}, {}, {"<setup>": f"{type(exc).__name__}: {exc}"}
        )

    ready: dict[str, Callable[[], Any]] = {}
    for impl, fn in impls.items():
        try:
            _block(fn())  # warmup: tracing, compilation, caches
            ready[impl] = fn
        except Exception as exc:
            traceback.print_exc()
            errors[impl] = f"{type(exc).__name__}: {exc}"

    calls = {impl: _calibrate(fn, min_batch_time, max_calls) for impl, fn in ready.items()}
    per_call: dict[str, list[float]] = {impl: [] for impl in ready}
    order = list(ready)
    for r in range(rounds):
        gc.collect()
        shift = r % len(order) if order else 0
        for impl in order[shift:] + order[:shift]:
            per_call[impl].append(_time_batch(ready[impl], calls[impl]) / calls[impl])

    results: dict[str, ImplResult] = {}
    for impl, samples in per_call.items():
        q1, _, q3 = statistics.quantiles(samples, n=4) if len(samples) > 1 else (0.0, 0.0, 0.0)
        results[impl] = ImplResult(
            median_s=statistics.median(samples),
            min_s=min(samples),
            iqr_s=q3 - q1,
            calls_per_batch=calls[impl],
            rounds=len(samples),
        )

    ratios: dict[str, float] = {}
    paired: dict[str, float] = {}
    minima: dict[str, float] = {}
    if wl.subject in results:
        sub = per_call[wl.subject]
        for impl, res in results.items():
            if impl != wl.subject:
                key = f"{wl.subject}/{impl}"
                ratios[key] = results[wl.subject].median_s / res.median_s
                paired[key] = statistics.median(a / b for a, b in zip(sub, per_call[impl]))
                minima[key] = results[wl.subject].min_s / res.min_s
    return WorkloadResult(wl.name, wl.group, wl.subject, results, ratios, errors, paired, minima)


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    """Describe the machine and library versions the numbers were taken on."""
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "jax": jax.__version__,
        "jax_backend": jax.default_backend(),
        "jax_devices": [str(d) for d in jax.devices()],
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "torch": None,
        "torch_threads": None,
        "git_commit": None,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    torch = try_import_torch()
    if torch is not None:
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    with contextlib.suppress(OSError, subprocess.CalledProcessError):
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=BENCH_DIR,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    return info


def _fmt_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:7.2f} {unit}"
    return f"{seconds / 1e-9:7.1f} ns"


def format_table(results: list[WorkloadResult]) -> str:
    """One row per (workload, impl): median per-call time, interquartile range, ratio."""
    header = ("workload", "group", "impl", "median", "iqr/median", "calls×rounds", "ratio")
    rows: list[tuple[str, ...]] = []
    for res in results:
        for impl, r in res.impls.items():
            key = f"{res.subject}/{impl}"
            ratio = ""
            if key in res.ratios:
                ratio = (
                    f"{key} = {res.ratios[key]:.2f}× (paired {res.paired_ratios[key]:.2f}×, "
                    f"min {res.min_ratios[key]:.2f}×)"
                )
            spread = f"{100 * r.iqr_s / r.median_s:.0f}%" if r.median_s else ""
            rows.append(
                (
                    res.name,
                    res.group,
                    impl,
                    _fmt_time(r.median_s),
                    spread,
                    f"{r.calls_per_batch}×{r.rounds}",
                    ratio,
                )
            )
        for impl, err in res.errors.items():
            rows.append((res.name, res.group, impl, "FAILED", "", "", err[:60]))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def to_json(results: list[WorkloadResult], settings: dict[str, Any]) -> dict[str, Any]:
    return {
        "machine": machine_info(),
        "settings": settings,
        "workloads": [dataclasses.asdict(r) for r in results],
    }


def plot_ratios(results: list[WorkloadResult], path: Path) -> None:
    """Bar chart of every ``subject/impl`` ratio per workload (log scale, 1× line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    rows = [(f"{r.name}  [{k}]", v) for r in results for k, v in sorted(r.ratios.items())]
    fig, ax = plt.subplots(figsize=(9.0, 1.2 + 0.32 * max(1, len(rows))))
    if not rows:
        ax.text(0.5, 0.5, "no ratios to plot", ha="center", va="center", transform=ax.transAxes)
    else:
        ys = np.arange(len(rows))[::-1]
        values = [v for _, v in rows]
        colors = ["tab:green" if v <= 1.05 else "tab:orange" for v in values]
        # bars grow from the 1x line: right when the subject is slower, left when faster
        ax.barh(ys, [v - 1.0 for v in values], left=1.0, color=colors, height=0.6)
        for y, v in zip(ys, values):
            ax.text(v, y, f" {v:.2f}×", va="center", ha="left" if v >= 1 else "right", fontsize=7)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g×"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_yticks(ys, [name for name, _ in rows], fontsize=7)
        ax.set_xlabel("time ratio subject / other (right of 1: subject slower)")
    ax.set_title("median per-call time ratios")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description="Time funcgrad against jax and torch."
    )
    parser.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="SUBSTR",
        help="run workloads whose name or group contains SUBSTR (repeatable: any match)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write results as JSON")
    parser.add_argument(
        "--report",
        action="store_true",
        help=f"write {REPORT_JSON.relative_to(BENCH_DIR.parent)} and "
        f"{REPORT_PNG.relative_to(BENCH_DIR.parent)}",
    )
    parser.add_argument("--rounds", type=int, default=25, help="timed rounds per impl")
    parser.add_argument(
        "--min-batch-time",
        type=float,
        default=0.05,
        metavar="SECONDS",
        help="calls per batch are calibrated so a batch lasts at least this long",
    )
    parser.add_argument("--list", action="store_true", help="list workloads and exit")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    registry = load_workloads()
    selected = [
        wl
        for wl in registry.values()
        if not args.filter or any(s in wl.name or s in wl.group for s in args.filter)
    ]
    if args.list:
        for wl in selected:
            print(f"{wl.name:40s} {wl.group:12s} {wl.description}")
        return 0
    if not selected:
        print(f"no workload matches {args.filter}", file=sys.stderr)
        return 2

    results: list[WorkloadResult] = []
    for wl in selected:
        print(f"running {wl.name} ...", file=sys.stderr, flush=True)
        results.append(run_workload(wl, rounds=args.rounds, min_batch_time=args.min_batch_time))
    print(format_table(results))

    settings = {"rounds": args.rounds, "min_batch_time": args.min_batch_time}
    if args.json or args.report:
        payload = to_json(results, settings)
        text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(text, encoding="utf-8")
            print(f"wrote {args.json}", file=sys.stderr)
        if args.report:
            REPORT_JSON.write_text(text, encoding="utf-8")
            plot_ratios(results, REPORT_PNG)
            print(f"wrote {REPORT_JSON} and {REPORT_PNG}", file=sys.stderr)

    failed = [f"{r.name}:{impl}" for r in results for impl in r.errors]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
