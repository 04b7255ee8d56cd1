"""Step-by-step comparison of PyTorch's example programs under real PyTorch and compat.

Each run executes a program (the programs of ``tools/torch_examples.py``, plus variants:
other model kinds, another optimizer, dropout off, float64) twice, once per library,
with the same seed and the same data, for ``--steps N`` training steps, recording at every
``backward`` call the loss and the weights (``tools/torch_examples_shims/_trace.py``).
Step ``k`` is the ``k``-th backward call: its loss, and the weights after the updates
of the ``k-1`` steps before it. Per step it reports the relative difference of the
losses, ``|a - b| / max(|a|, |b|)``, and of the weights, the largest over parameter
tensors of ``max |a - b| / max |a|``, then the first step where either exceeds
``--tol``.

Usage::

    python tools/torch_examples_steps.py --examples /tmp/pt-examples \\
        --nanogpt /tmp/nanoGPT --mingpt /tmp/minGPT --steps 30 [--only wlm_rnn_tanh] \\
        [--tol 1e-3] [--detail] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import torch_examples as tx

#: steps whose losses and weights agree within this are "the same"
TOL = 1e-3
_TINY = 1e-30


def _by_name(name: str) -> tx.Program:
    return next(p for p in tx.PROGRAMS if p.name == name)


def _variant(base: str, name: str, args: Sequence[str] = (), **env: str) -> tx.Program:
    prog = _by_name(base)
    return replace(prog, name=name, args=[*prog.args, *args], env={**prog.env, **env})


#: the runs: every program of tools/torch_examples.py, then variants of some
RUNS: list[tx.Program] = [
    *tx.PROGRAMS,
    _variant("wlm_lstm", "wlm_rnn_tanh", ["--model", "RNN_TANH"]),
    _variant("wlm_lstm", "wlm_rnn_relu", ["--model", "RNN_RELU"]),
    _variant("wlm_lstm", "wlm_lstm_adamw", ["--use-optimizer", "--lr", "0.002"]),
    _variant("wlm_transformer", "wlm_transformer_adamw", ["--use-optimizer", "--lr", "0.002"]),
    _variant("wlm_gru", "wlm_gru_nodropout", ["--dropout", "0"]),
    _variant("wlm_lstm", "wlm_lstm_tied", ["--tied"]),
    _variant("nanogpt", "nanogpt_dropout", ["--dropout=0.1"]),
    _variant("mingpt_adder", "mingpt_adder_2digit", ["--data.ndigit=2"]),
    _variant("time_sequence_prediction", "time_sequence_prediction_long", ["--steps", "4"]),
]

#: runs recorded over more steps than ``--steps``: LBFGS calls backward up to 20 times a
#: step; regression runs until its loss is under 1e-3
MIN_STEPS = {"time_sequence_prediction_long": 90, "regression": 5000}


@dataclass
class StepDiff:
    """One step's relative differences (None: the step exists in one run only)."""

    k: int
    loss_torch: float | None
    loss_compat: float | None
    loss_rel: float | None
    weight_rel: float | None
    worst_param: int | None = None  # index of the parameter tensor with the largest difference
    grad_rel: float | None = None  # the same over the gradients, when they were recorded
    worst_grad: int | None = None


@dataclass
class Comparison:
    """Both runs of one program, step by step."""

    name: str
    steps_torch: int
    steps_compat: int
    rc_torch: int | None = None
    rc_compat: int | None = None
    first_over: int | None = None  # first step where loss or weights differ by more than tol
    max_rel: float = 0.0
    note: str = ""
    steps: list[StepDiff] = field(default_factory=list)


def read_trace(path: Path) -> list[dict[str, Any]]:
    """The step records of a trace file (as many as were written before the process ended).

    Gradient records (``TORCH_EXAMPLES_TRACE_GRADS``) go into their step's record as
    ``"grads"``.
    """
    out: list[dict[str, Any]] = []
    for rec in _records(path):
        if "grads" in rec:
            if out and out[-1]["k"] == rec["k"]:
                out[-1]["grads"] = rec["grads"]
        else:
            out.append(rec)
    return out


def _records(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if not Path(path).exists():
        return out
    with open(path, "rb") as f:
        while True:
            try:
                out.append(pickle.load(f))
            except EOFError:
                break
            except (pickle.UnpicklingError, ValueError):
                break  # a record cut short by a killed process
    return out


def rel(a: float, b: float) -> float:
    """``|a - b| / max(|a|, |b|)`` (0 when both are 0; inf when exactly one is nan)."""
    if np.isnan(a) and np.isnan(b):
        return 0.0
    if np.isnan(a) or np.isnan(b):
        return float("inf")
    return abs(a - b) / max(abs(a), abs(b), _TINY)


def weight_rel(pt: list[dict[str, Any]], pc: list[dict[str, Any]]) -> tuple[float, int | None, str]:
    """Largest per-tensor ``max |a - b| / max |a|`` over the parameters, its index, and a note.

    A different number of parameters, or different shapes, is reported in the note (and
    as an infinite difference).
    """
    if [p["shape"] for p in pt] != [p["shape"] for p in pc]:
        return float("inf"), None, f"parameters differ: {len(pt)} vs {len(pc)} tensors"
    worst, at = 0.0, None
    for i, (a, b) in enumerate(zip(pt, pc, strict=True)):
        va, vb = a["values"], b["values"]
        if va.size == 0:
            continue
        scale = max(float(np.abs(va).max()), float(np.abs(vb).max()), _TINY)
        d = float(np.abs(va - vb).max()) / scale
        if not np.isfinite(d):
            d = 0.0 if np.array_equal(va, vb, equal_nan=True) else float("inf")
        if d > worst:
            worst, at = d, i
    return worst, at, ""


def compare(
    name: str, torch_recs: list[dict[str, Any]], compat_recs: list[dict[str, Any]], tol: float = TOL
) -> Comparison:
    """Step-by-step differences of two traces; the first step over ``tol``."""
    cmp = Comparison(name, len(torch_recs), len(compat_recs))
    for k in range(max(len(torch_recs), len(compat_recs))):
        if k >= len(torch_recs) or k >= len(compat_recs):
            rt = torch_recs[k] if k < len(torch_recs) else None
            rc = compat_recs[k] if k < len(compat_recs) else None
            lt = rt["loss"] if rt else None
            lc = rc["loss"] if rc else None
            cmp.steps.append(StepDiff(k, lt, lc, None, None))
            if cmp.first_over is None:
                cmp.first_over = k
                cmp.note = (
                    cmp.note or f"step counts differ: {len(torch_recs)} vs {len(compat_recs)}"
                )
            continue
        rt, rc = torch_recs[k], compat_recs[k]
        lt, lc = rt["loss"], rc["loss"]
        lr = None if lt is None or lc is None else rel(lt, lc)
        wr, at, note = weight_rel(rt["params"], rc["params"])
        step = StepDiff(k, lt, lc, lr, wr, at)
        if "grads" in rt and "grads" in rc:
            gt, gc = rt["grads"], rc["grads"]
            pairs = [
                (a, b) for a, b in zip(gt, gc, strict=False) if a is not None and b is not None
            ]
            step.grad_rel, step.worst_grad, _ = weight_rel(
                [a for a, _ in pairs], [b for _, b in pairs]
            )
        cmp.steps.append(step)
        worst = max(lr or 0.0, wr)
        cmp.max_rel = max(cmp.max_rel, worst)
        if worst > tol and cmp.first_over is None:
            cmp.first_over = k
            cmp.note = cmp.note or note
    return cmp


def run_both(
    prog: tx.Program,
    root: Path,
    base: Path,
    steps: int,
    tol: float = TOL,
    timeout: float = 900.0,
    threads: int = 0,
    dtype: str = "",
    grads: bool = False,
    control: bool = False,
) -> Comparison:
    """Run ``prog`` under each library for ``steps`` steps with the recorder on; compare.

    ``dtype`` (e.g. ``"float64"``) sets both runs' default dtype. ``control=True`` makes
    the second run real PyTorch again with one more math-library thread than the first
    (its kernels then round differently): how far PyTorch agrees with itself.
    """
    recs, rcs = {}, {}
    for mode in tx.MODES:
        lib, n_threads = mode, threads
        if control and mode == "compat":
            lib, n_threads = "torch", (threads or 1) + 1
        work = base / prog.name / mode
        trace = base / prog.name / f"{mode}.trace"
        trace.parent.mkdir(parents=True, exist_ok=True)
        trace.unlink(missing_ok=True)
        env = {
            "TORCH_EXAMPLES_TRACE": str(trace),
            "TORCH_EXAMPLES_TRACE_STEPS": str(steps),
            "TORCH_EXAMPLES_SEED": "0",  # the same draws for programs that seed nothing
        }
        if dtype:
            env["TORCH_EXAMPLES_DEFAULT_DTYPE"] = dtype
        if grads:
            env["TORCH_EXAMPLES_TRACE_GRADS"] = "1"
        run = tx.run_program(prog, lib, root, work, timeout, n_threads, extra_env=env)
        rcs[mode] = run.rc
        recs[mode] = read_trace(trace)
        if run.rc != 0:
            print(f"[steps] {prog.name} ({mode}): rc {run.rc} {run.error}", file=sys.stderr)
    cmp = compare(prog.name, recs["torch"], recs["compat"], tol)
    cmp.rc_torch, cmp.rc_compat = rcs["torch"], rcs["compat"]
    if cmp.rc_torch != 0 or cmp.rc_compat != 0:
        exits = f"exit status torch {cmp.rc_torch} / compat {cmp.rc_compat}"
        cmp.note = f"{cmp.note}; {exits}" if cmp.note else exits
    return cmp


def same(c: Comparison) -> bool:
    """Both runs recorded steps, ended alike (exit status) and agree within tol at every step."""
    return c.first_over is None and c.steps_torch > 0 and c.rc_torch == c.rc_compat


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.1e}"


def table(cmps: Sequence[Comparison], tol: float = TOL) -> str:
    """A Markdown table: steps, first step over ``tol``, differences at steps 1, 5 and the last."""
    lines = [
        "| run | steps torch / compat | first step > tol | rel diff at step 1 | at step 5 "
        "| at the last step | max rel diff | note |",
        "|" + "---|" * 8,
    ]
    n_same = 0
    for c in cmps:
        worst = [
            None if s.loss_rel is None else max(s.loss_rel, s.weight_rel or 0.0) for s in c.steps
        ]
        pick = [worst[i] if i < len(worst) else None for i in (1, 5)]
        last = next((w for w in reversed(worst) if w is not None), None)
        first = "none" if c.first_over is None else str(c.first_over)
        n_same += same(c)
        lines.append(
            f"| {c.name} | {c.steps_torch} / {c.steps_compat} | {first} | {_f(pick[0])} "
            f"| {_f(pick[1])} | {_f(last)} | {c.max_rel:.1e} | {c.note} |"
        )
    lines.append("")
    lines.append(f"Same to {tol:g} at every step: {n_same} of {len(cmps)} runs.")
    return "\n".join(lines)


def detail(c: Comparison) -> str:
    """Per step: both losses and the relative differences."""
    rows = [
        f"{c.name}: step, loss torch, loss compat, loss rel, weight rel (worst tensor)"
        " [, grad rel (worst tensor)]"
    ]
    for s in c.steps:
        grads = "" if s.grad_rel is None else f"  {_f(s.grad_rel)} ({s.worst_grad})"
        rows.append(
            f"  {s.k:4d}  {s.loss_torch!s:>22}  {s.loss_compat!s:>22}  {_f(s.loss_rel)}  "
            f"{_f(s.weight_rel)} ({s.worst_param}){grads}"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run the chosen programs step by step under both libraries."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=Path, help="checkout of pytorch/examples")
    ap.add_argument("--nanogpt", type=Path, help="checkout of karpathy/nanoGPT")
    ap.add_argument("--mingpt", type=Path, help="checkout of karpathy/minGPT")
    ap.add_argument("--only", default="", help="comma-separated run names")
    ap.add_argument("--skip", default="", help="comma-separated run names to leave out")
    ap.add_argument("--steps", type=int, default=30, help="training steps (backward calls) per run")
    ap.add_argument("--tol", type=float, default=TOL, help="relative difference that counts")
    ap.add_argument("--detail", action="store_true", help="print every step's differences")
    ap.add_argument("--grads", action="store_true", help="also record and compare gradients")
    ap.add_argument(
        "--control",
        action="store_true",
        help="second run: PyTorch with one more thread instead of compat (PyTorch vs itself)",
    )
    ap.add_argument(
        "--dtype", default="", help="default dtype for both runs (e.g. float64: the rounding check)"
    )
    ap.add_argument("--json", type=Path, help="write the comparisons here")
    ap.add_argument("--workdir", type=Path, help="where runs happen (default: a new temp dir)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    ap.add_argument("--threads", type=int, default=1, help="cap math-library threads (0: as is)")
    ap.add_argument("--compat-root", type=Path, help="funcgrad checkout to import compat from")
    ap.add_argument("--list", action="store_true", help="list the runs and exit")
    ns = ap.parse_args(argv)
    if ns.list:
        for p in RUNS:
            print(f"{p.name}: {p.repo}/{p.script} {' '.join(p.args)}")
        return 0
    roots = {"examples": ns.examples, "nanogpt": ns.nanogpt, "mingpt": ns.mingpt}
    only = {n for n in ns.only.split(",") if n}
    skip = {n for n in ns.skip.split(",") if n}
    base = ns.workdir or Path(tempfile.mkdtemp(prefix="torch_steps_"))
    if ns.compat_root:
        os.environ["TORCH_EXAMPLES_COMPAT_ROOT"] = str(ns.compat_root.resolve())
    cmps = []
    for prog in RUNS:
        root = roots.get(prog.repo)
        if (only and prog.name not in only) or prog.name in skip or root is None:
            continue
        print(f"[steps] {prog.name} ...", file=sys.stderr, flush=True)
        c = run_both(
            prog,
            Path(root).resolve(),
            base,
            max(ns.steps, MIN_STEPS.get(prog.name, 0)),
            ns.tol,
            ns.timeout,
            ns.threads,
            ns.dtype,
            ns.grads,
            ns.control,
        )
        print(f"[steps] {prog.name}: first step over tol: {c.first_over}", file=sys.stderr)
        if ns.detail:
            print(detail(c), flush=True)
        cmps.append(c)
    print(table(cmps, ns.tol))
    print(f"\nTraces and logs: {base}")
    if ns.json:
        ns.json.write_text(json.dumps({"tol": ns.tol, "runs": [asdict(c) for c in cmps]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
