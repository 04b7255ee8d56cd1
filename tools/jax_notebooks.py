"""Run JAX's documentation notebooks under real JAX and under funcgrad (import swapped).

Each notebook's code cells run in order, twice, each time in a fresh subprocess and a
fresh working directory (:mod:`tools.jax_notebooks_child`): once with the real ``jax``
and once with ``jax`` (``jax.numpy``, ``jax.scipy``, ...) resolving to funcgrad through
the conformance runner's swap (:mod:`tools.conformance.shims.jax_swap`), registered for
the notebook's namespace only. The cells' text is upstream's, with the plain text
substitutions listed here (a data download replaced by scikit-learn's digits, fewer
epochs), the same for both runs.

Each cell is compared on what it printed and the repr of its last expression (what
IPython displays): the text around the numbers must be equal (whitespace collapsed,
object addresses blanked) and each number equal within a relative tolerance. A cell
is *same*, *different*, raises only under funcgrad (*fg-error*), only under JAX
(*jax-error*), or under both (a deliberate error demo: then the exception types are
compared, and a match counts as *same*). Cells are not compared when they are

* *skipped*: IPython magics or shell lines (``!pip install``), with the reason; lines
  that only set the display (``%xmode``, ``%matplotlib``) are dropped and the rest of
  the cell is compared;
* *out of scope*: cells that time (``%timeit``: the timed statement runs once, for
  the cells after it), show JAX's IR (``make_jaxpr``, jaxpr text), device names, or
  look up a name the swap marks out of scope.

Usage::

    python tools/jax_notebooks.py --notebooks /tmp/jax-src/docs/notebooks \\
        [--only thinking_in_jax] [--x64] [--json out.json] [-v]

Besides the notebooks of ``docs/notebooks`` the tool runs the tutorial pages of ``docs/``
(``page=True``: *Key concepts*, *Just-in-time compilation*, ..., *External callbacks*),
which are MyST notebooks too; NumPy's global generator is seeded alike in both runs.

The upstream notebooks stay outside the repository; nothing upstream is copied into it.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODES = ("jax", "funcgrad")
#: two printed numbers agree when ``|a - b| <= ATOL + RTOL * max(|a|, |b|)``
RTOL, ATOL = 1e-5, 1e-6


@dataclass
class Notebook:
    """One upstream notebook: its file, the substitutions making it run here."""

    name: str
    subs: list[tuple[str, str]] = field(default_factory=list)  # (regex, replacement)
    files: dict[str, str] = field(default_factory=dict)  # written into the run's folder
    record: list[str] = field(default_factory=list)  # globals compared at the end
    page: bool = False  # a tutorial page of docs/ (not docs/notebooks/)


MNIST_STANDIN = '''
"""Stand-in for torchvision's MNIST: scikit-learn's digits at 28x28, uint8, no download."""
import numpy as np
import torch
from sklearn.datasets import load_digits


class MNIST:
    def __init__(self, root, train=True, download=False, transform=None):
        d = load_digits()
        img = np.kron(d.images * (255 / 16), np.ones((3, 3)))  # 24x24
        img = np.pad(img, ((0, 0), (2, 2), (2, 2))).astype(np.uint8)
        part = slice(0, 1500) if train else slice(1500, None)
        self.data = torch.from_numpy(img[part])
        self.targets = torch.from_numpy(d.target[part].astype(np.int64))
        self.transform = transform

    train_data = test_data = property(lambda self: self.data)
    train_labels = test_labels = property(lambda self: self.targets)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        pic = self.data[i].numpy()
        return (self.transform(pic) if self.transform else pic), int(self.targets[i])
'''

NOTEBOOKS = [
    Notebook("thinking_in_jax"),
    Notebook("autodiff_cookbook"),
    Notebook("Custom_derivative_rules_for_Python_code"),
    Notebook("Common_Gotchas_in_JAX"),
    Notebook("vmapped_log_probs", record=["beta_loc", "beta_log_scale"]),
    Notebook(
        "Neural_Network_and_Data_Loading",
        subs=[
            (r"from torchvision\.datasets import MNIST", "from mnist_standin import MNIST"),
            (r"num_epochs = 8", "num_epochs = 2"),
        ],
        files={"mnist_standin.py": MNIST_STANDIN},
        record=["params"],
    ),
    # not named by the task; runs with a synthetic image for scipy's downloaded one
    Notebook(
        "convolutions",
        subs=[(r"datasets\.face\(\)\.mean\(-1\)", "np.random.RandomState(0).rand(96, 128) * 255")],
        record=["smooth_image", "out"],
    ),
    Notebook("autodiff_remat"),
    Notebook("shard_map"),
    # the tutorial pages of docs/ (MyST notebooks)
    *(
        Notebook(name, page=True)
        for name in (
            "key-concepts",
            "jit-compilation",
            "automatic-vectorization",
            "automatic-differentiation",
            "pytrees",
            "custom_pytrees",
            "random-numbers",
            "control-flow",
            "stateful-computations",
            "gradient-checkpointing",
            "external-callbacks",
            "debugging",
            "higher-order",
            "jacobian-vector-products",
            "complex-differentiation",
            "tracing",
            "parallel",
        )
    ),
]

#: notebooks the task names that the pinned JAX's docs do not have
NOT_FOUND = {"Quickstart": "no quickstart page in docs/ at jax-v0.10.2 (only pallas/quickstart.md)"}

# -- cells ---------------------------------------------------------------------------

_TIMING_MAGIC = re.compile(r"^\s*%%?(timeit|time)\b(?P<rest>.*)$")
_DISPLAY_MAGIC = re.compile(r"^\s*%(xmode|matplotlib|config)\b")
_OTHER_MAGIC = re.compile(r"^\s*(%%?\w+|!)")
_TIMEIT_OPTS = re.compile(r"^(\s*-\w+\s*\S*?(?=\s))*")

#: what makes a cell out of scope: (regex on the cell's code, reason)
SCOPE_CODE = [
    (re.compile(r"\bmake_jaxpr\b|\.jaxpr\b"), "JAX's IR (jaxpr text)"),
    (re.compile(r"\.devices?\(|\.device\b|\bdevices\(\)"), "device names"),
]
#: (regex on either run's output, reason)
SCOPE_OUT = [
    (re.compile(r"\{ lambda |\blet\b.*\bin \("), "JAX's IR (jaxpr text)"),
    (re.compile(r"CpuDevice|TFRT_CPU|cuda:\d|TPU_\d"), "device names"),
    # funcgrad's keys are raw uint32 arrays (docs/jax-coverage.md: typed keys out of scope)
    (re.compile(r"dtype=key<\w+>"), "typed PRNG keys"),
]


def load_cells(path: Path) -> list[str]:
    """The code cells of a notebook (``.ipynb``, or jupytext's MyST ``.md``)."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text())
        return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", path.read_text(), re.M | re.S)
    # jupytext's cell options (":tags: [...]") head a cell's text
    return [re.sub(r"\A(?::[^\n]*\n)+\n?", "", c) for c in cells]


def prepare(src: str) -> tuple[str | None, str, str]:
    """``(code to run, kind, reason)``: kind ``""`` (compared), ``"skipped"`` (not run:
    a magic or shell line) or ``"scope"`` (run for the cells after it, not compared)."""
    kind, reasons, lines = "", [], []
    for line in src.splitlines():
        m = _TIMING_MAGIC.match(line)
        if m:
            kind = "scope"
            reasons.append("timings (%timeit)")
            stmt = _TIMEIT_OPTS.sub("", m.group("rest")).strip()
            if stmt:
                lines.append(line[: len(line) - len(line.lstrip())] + stmt)
            continue
        if _DISPLAY_MAGIC.match(line):
            reasons.append(f"display magic dropped ({line.strip()})")
            continue
        if _OTHER_MAGIC.match(line):
            return None, "skipped", f"IPython magic or shell line ({line.strip()[:60]})"
        lines.append(line)
    code = "\n".join(lines)
    if not code.strip():
        return None, "skipped", "; ".join(reasons) or "empty"
    if not kind:
        for pat, why in SCOPE_CODE:
            if pat.search(code):
                kind = "scope"
                reasons.append(why)
                break
    return code, kind, "; ".join(reasons)


# -- running -------------------------------------------------------------------------


def run_notebook(
    nb: Notebook, src: Path, mode: str, x64: bool, timeout: float
) -> tuple[int, str, list[dict[str, Any]], dict[str, Any], list[tuple[str, str]]]:
    """Run ``nb`` in ``mode``: (return code, stderr tail, cell records, recorded arrays,
    the cells' static classification)."""
    work = Path(tempfile.mkdtemp(prefix=f"jaxnb-{nb.name}-{mode}-"))
    for name, text in nb.files.items():
        (work / name).write_text(text)
    cells = load_cells(src)
    text = "\n\x00\n".join(cells)
    for pat, new in nb.subs:
        text, n = re.subn(pat, new, text)
        if n == 0:
            raise ValueError(f"{nb.name}: substitution {pat!r} matched nothing")
    prepared = [prepare(c) for c in text.split("\n\x00\n")]
    out = work / "cells.jsonl"
    spec = {
        "mode": mode,
        "work": str(work),
        "cells": [code for code, _, _ in prepared],
        "out": str(out),
        "record": nb.record,
    }
    (work / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", JAX_PLATFORMS="cpu")
    env.pop("JAX_ENABLE_X64", None)
    if x64:
        env["JAX_ENABLE_X64"] = "1"
    cmd = [sys.executable, "-m", "tools.jax_notebooks_child", str(work / "spec.json")]
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
        rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        rc, tail = 124, "timed out"
    recs = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    pkl = Path(str(out) + ".pkl")
    arrays = pickle.loads(pkl.read_bytes()) if pkl.exists() else {}
    return rc, tail, recs, arrays, [(k, r) for _, k, r in prepared]


# -- comparing -----------------------------------------------------------------------

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TIMING = re.compile(r"\(?\d+(?:\.\d+)?\s*(?:sec|s|ms|µs|us|ns)\b\)?")
_TOKEN = re.compile(
    r"(?P<word>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<num>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)"
)


def tokens(text: str) -> tuple[str, list[float]]:
    """``text`` as its skeleton (numbers replaced by ``#``, whitespace dropped,
    object addresses and timings blanked) and its numbers."""
    text = _TIMING.sub(" <time> ", _ADDRESS.sub("<addr>", text))
    skeleton, nums, pos = [], [], 0
    for m in _TOKEN.finditer(text):
        skeleton.append(text[pos : m.start()])
        if m.group("num") is not None:
            skeleton.append("#")
            nums.append(float(m.group("num")))
        else:
            skeleton.append(m.group("word"))
        pos = m.end()
    skeleton.append(text[pos:])
    return "".join("".join(skeleton).split()), nums


def max_rel(got: list[float], ref: list[float]) -> float:
    """The largest ``|a - b| / (ATOL / RTOL + max(|a|, |b|))`` over the pairs (NaN-equal)."""
    worst = 0.0
    for a, b in zip(got, ref, strict=True):
        if a == b or (np.isnan(a) and np.isnan(b)):
            continue
        worst = max(worst, abs(a - b) / (ATOL / RTOL + max(abs(a), abs(b))))
    return worst


@dataclass
class Cell:
    """One cell compared."""

    index: int
    status: str  # same, different, fg-error, jax-error, scope, skipped, not-reached
    reason: str = ""
    max_rel: float = 0.0
    code: str = ""
    jax: str = ""
    funcgrad: str = ""


def _shown(rec: dict[str, Any]) -> str:
    text = rec["out"]
    if rec.get("repr") is not None:
        text += ("" if not text or text.endswith("\n") else "\n") + rec["repr"]
    return text


def _exc(rec: dict[str, Any]) -> str:
    e = rec.get("exc")
    return f"{e[0]}: {e[1][:400]}" if e else ""


def _first_difference(ref: dict[str, Any], got: dict[str, Any]) -> str:
    """Where the two cells' displayed lines first differ in text (numbers aside)."""
    a, b = _shown(ref).splitlines(), _shown(got).splitlines()
    for k in range(max(len(a), len(b))):
        la, lb = (a[k] if k < len(a) else ""), (b[k] if k < len(b) else "")
        if tokens(la)[0] != tokens(lb)[0] or len(tokens(la)[1]) != len(tokens(lb)[1]):
            return f" from line {k + 1}: {lb[:60]!r} where JAX shows {la[:60]!r}"
    return ""


def compare_cell(
    i: int, code: str, kind: str, reason: str, ref: dict | None, got: dict | None
) -> Cell:
    """Cell ``i``'s verdict from its two records (``None``: the run did not reach it)."""
    cell = Cell(i, "", reason, code=code[:300])
    if kind == "skipped":
        cell.status = "skipped"
        return cell
    if ref is None or got is None:
        cell.status = "not-reached"
        cell.reason = "the " + ("JAX" if ref is None else "funcgrad") + " run stopped before it"
        return cell
    cell.jax, cell.funcgrad = _shown(ref)[:1500], _shown(got)[:1500]
    if ref["exc"]:
        cell.jax += "\n[raised] " + _exc(ref)
    if got["exc"]:
        cell.funcgrad += "\n[raised] " + _exc(got)
    scope = list(got.get("scope", []))
    if not kind:
        for pat, why in SCOPE_OUT:
            if pat.search(cell.jax) or pat.search(cell.funcgrad):
                scope.append(why)
                break
    if kind == "scope" or scope:
        cell.status = "scope"
        cell.reason = "; ".join(dict.fromkeys(r for r in (*reason.split("; "), *scope) if r))
        if got["exc"] and not ref["exc"]:
            cell.reason += f" [raises only under funcgrad: {_exc(got)[:200]}]"
        return cell
    if got.get("missing"):
        cell.reason = "names funcgrad lacks: " + ", ".join(got["missing"])
    if got["exc"] and not ref["exc"]:
        cell.status = "fg-error"
        return cell
    if ref["exc"] and not got["exc"]:
        cell.status = "jax-error"
        return cell
    if ref["exc"] and got["exc"] and ref["exc"][0] != got["exc"][0]:
        cell.status = "different"
        cell.reason = f"raises {got['exc'][0]} where JAX raises {ref['exc'][0]}"
        return cell
    sk_ref, n_ref = tokens(_shown(ref))
    sk_got, n_got = tokens(_shown(got))
    if sk_ref != sk_got or len(n_ref) != len(n_got):
        cell.status = "different"
        cell.reason = cell.reason or "printed text differs" + _first_difference(ref, got)
        return cell
    cell.max_rel = max_rel(n_got, n_ref)
    cell.status = "same" if cell.max_rel <= RTOL else "different"
    if cell.status == "different":
        cell.reason = f"numbers differ: max rel {cell.max_rel:.2e}"
    elif ref["exc"]:
        cell.reason = f"both raise {ref['exc'][0]}"
    return cell


def compare_arrays(ref: dict[str, Any], got: dict[str, Any]) -> tuple[int, float, str]:
    """The recorded globals compared: (arrays, max relative difference, problem)."""
    n, worst = 0, 0.0
    for name, leaves in ref.items():
        other = got.get(name)
        if other is None or len(other) != len(leaves):
            return n, worst, f"recorded {name!r} missing or of another structure"
        for a, b in zip(other, leaves, strict=True):
            a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
            if a.shape != b.shape:
                return n, worst, f"recorded {name!r}: shapes {a.shape} vs {b.shape}"
            n += 1
            if a.size:
                d = np.where(np.isnan(a) & np.isnan(b), 0.0, np.abs(a - b))
                worst = max(worst, float(np.max(d) / max(float(np.max(np.abs(b))), 1.0)))
    return n, worst, ""


@dataclass
class Report:
    """One notebook compared."""

    name: str
    cells: list[Cell]
    rc: dict[str, int]
    arrays: int = 0
    arrays_max_rel: float = 0.0
    error: str = ""

    def count(self, status: str) -> int:
        """How many cells have ``status``."""
        return sum(c.status == status for c in self.cells)


def check_notebook(nb: Notebook, src: Path, x64: bool, timeout: float) -> Report:
    """Run ``nb`` both ways and compare cell by cell."""
    runs = {m: run_notebook(nb, src, m, x64, timeout) for m in MODES}
    statics = runs["jax"][4]
    by = {m: {r["i"]: r for r in runs[m][2]} for m in MODES}
    cells = load_cells(src)
    cells_out = [
        compare_cell(i, cells[i], kind, reason, by["jax"].get(i), by["funcgrad"].get(i))
        for i, (kind, reason) in enumerate(statics)
    ]
    rep = Report(nb.name, cells_out, {m: runs[m][0] for m in MODES})
    bad = [m for m in MODES if runs[m][0] != 0]
    if bad:
        rep.error = f"{bad[0]} run exited {runs[bad[0]][0]}: {runs[bad[0]][1][-300:]}"
    if nb.record:
        rep.arrays, rep.arrays_max_rel, err = compare_arrays(runs["jax"][3], runs["funcgrad"][3])
        rep.error = rep.error or err
    return rep


# -- command line ----------------------------------------------------------------------

COLUMNS = ("same", "different", "fg-error", "jax-error", "scope", "skipped", "not-reached")


def table(reports: list[Report]) -> str:
    """The per-notebook table (Markdown)."""
    head = "| notebook | cells | " + " | ".join(COLUMNS) + " | of the same: errors both |"
    rows = [head, "|---|" + "---:|" * (len(COLUMNS) + 2)]
    for r in reports:
        both = sum(c.status == "same" and c.reason.startswith("both raise") for c in r.cells)
        counts = " | ".join(str(r.count(s)) for s in COLUMNS)
        rows.append(f"| {r.name} | {len(r.cells)} | {counts} | {both} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen notebooks both ways; print the table and the differences."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebooks", default="/tmp/jax-src/docs/notebooks", type=Path)
    ap.add_argument("--only", default="")
    ap.add_argument("--x64", action="store_true")
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--json", type=Path)
    ap.add_argument("-v", action="store_true", help="list every cell, not only differences")
    args = ap.parse_args(argv)
    only = {s for s in args.only.split(",") if s}
    reports = []
    for nb in NOTEBOOKS:
        if only and nb.name not in only:
            continue
        folder = args.notebooks.parent if nb.page else args.notebooks
        src = folder / f"{nb.name}.ipynb"
        if not src.exists():
            src = folder / f"{nb.name}.md"
        rep = check_notebook(nb, src, args.x64, args.timeout)
        reports.append(rep)
        print(f"== {nb.name}: " + ", ".join(f"{s} {rep.count(s)}" for s in COLUMNS), flush=True)
        if nb.record:
            print(
                f"   final {', '.join(nb.record)}: {rep.arrays} arrays, max rel "
                f"{rep.arrays_max_rel:.2e}"
            )
        if rep.error:
            print(f"   {rep.error}")
        for c in rep.cells:
            noted = c.status == "scope" and "raises only under funcgrad" in c.reason
            if args.v or noted or c.status in ("different", "fg-error", "jax-error", "not-reached"):
                print(f"   cell {c.index:3d} {c.status:11s} {c.reason}")
                if c.status in ("different", "fg-error", "jax-error"):
                    for who in ("jax", "funcgrad"):
                        body = getattr(c, who).strip().replace("\n", "\n" + " " * 16)
                        print(f"        {who:8s}{body[:800]}")
    print()
    print(table(reports))
    for name, why in NOT_FOUND.items():
        print(f"not run: {name}: {why}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in reports], indent=1))
    ok = all(
        r.count("different") + r.count("fg-error") + r.count("jax-error") == 0 for r in reports
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
