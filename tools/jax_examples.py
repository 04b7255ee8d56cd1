"""Run JAX's example programs under real JAX and under funcgrad (import swapped).

Each program runs twice, each time in a fresh subprocess and a fresh working directory:
once with the real ``jax`` and once with ``jax`` (``jax.numpy``, ``jax.example_libraries``,
...) resolving to funcgrad through the swap of the conformance runner
(:mod:`tools.conformance.shims.jax_swap`), registered for the program's own module and the
data stand-in only. The program text is a copy of upstream's made smaller by plain text
substitutions (fewer epochs or steps, a smaller input), the same for both runs; the data
stand-in (``examples/datasets.py`` in the run's directory: scikit-learn's digits as a small
MNIST, no download) is the same for both runs too.

Compared per program: every number the program printed (timings dropped), line by line,
and the arrays left in the named globals of the program (its final parameters), each with
a relative tolerance. ``--x64`` runs both sides with ``JAX_ENABLE_X64=1`` (in float64 the
two runs agree to ~1e-10 unless a rule differs; float32 rounding grows over a run).

Usage::

    python tools/jax_examples.py --examples /tmp/jax-src/examples --old /tmp/jaxex \\
        [--only gp_regression,resnet50] [--x64] [--json out.json]

The upstream files stay outside the repository; nothing upstream is copied into it.
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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODES = ("jax", "funcgrad")
#: two numbers agree when ``|a - b| <= ATOL + RTOL * max(|a|, |b|)``
RTOL, ATOL = 1e-3, 1e-6


@dataclass
class Program:
    """One upstream program: where it lives, how to make it small, what to compare."""

    name: str
    repo: str  # "examples" (the pinned JAX's examples/) or "old" (older tags' examples/)
    script: str
    subs: list[tuple[str, str]] = field(default_factory=list)  # (regex, replacement)
    args: list[str] = field(default_factory=list)
    record: list[str] = field(default_factory=list)  # globals to compare at exit
    lines: str = ""  # compare only the printed lines matching this regex ("" = all)
    env: dict[str, str] = field(default_factory=dict)  # set in both runs' environment


PROGRAMS = [
    Program("advi", "examples", "advi.py", [(r"range\(100\)", "range(30)")]),
    Program(
        "mnist_classifier",
        "examples",
        "mnist_classifier.py",
        [(r"num_epochs = 10", "num_epochs = 2")],
        record=["params"],
    ),
    Program(
        "mnist_classifier_fromscratch",
        "examples",
        "mnist_classifier_fromscratch.py",
        [(r"num_epochs = 10", "num_epochs = 2")],
        record=["params"],
    ),
    Program(
        "mnist_vae",
        "examples",
        "mnist_vae.py",
        [(r"num_epochs = 100", "num_epochs = 2"), (r"plt\.imsave\([^\n]*", "pass")],
        record=["sampled_images"],  # the last epoch's samples, drawn with the final params
    ),
    Program(
        "gaussian_process_regression",
        "old",
        "gaussian_process_regression.py",
        # all the digits of the printed likelihood (float64 runs compare to ~1e-10)
        [(r"likelihood: %f", "likelihood: %.12e")],
    ),
    # its jaxpr printouts are JAX's IR text (out of scope): only the fit's error compared
    Program("kernel_lsq", "old", "kernel_lsq.py", lines=r"^MSE"),
    Program(
        "resnet50",
        "old",
        "resnet50.py",
        # a 32x32 input (the last stage is then 1x1, so the final pool is 1x1), a batch
        # of 4 and 3 steps: every layer of ResNet-50 kept, in seconds on a CPU
        [
            (r"input_shape = \(224, 224, 3, batch_size\)", "input_shape = (32, 32, 3, batch_size)"),
            (r"AvgPool\(\(7, 7\)\)", "AvgPool((1, 1))"),
            (r"batch_size = 8", "batch_size = 4"),
            (r"num_steps = 10", "num_steps = 3"),
            # images in the default float dtype (float64 under --x64, as the weights)
            (r"astype\('float32'\)", "astype(jnp.zeros(()).dtype)"),
        ],
        record=["trained_params"],
    ),
    Program(
        "spmd_mnist_classifier_fromscratch",
        "examples",
        "spmd_mnist_classifier_fromscratch.py",
        [(r"num_epochs = 10", "num_epochs = 2")],
        record=["replicated_params"],
        # three CPU devices in one process, the mesh's batch axis over them: the stand-in
        # MNIST's 1,500 training and 297 test rows divide by 3 (the program reshards the
        # whole sets over the batch axis), and the batch of 128 becomes 126
        env={"XLA_FLAGS": "--xla_force_host_platform_device_count=3"},
    ),
]

#: programs of the pinned examples/ not run, and why
NOT_RUN = {
    "differentially_private_sgd": "needs dp_accounting (not installed)",
    "onnx2xla": "needs onnx and a downloaded model",
}

DATASETS = '''
"""Stand-in for JAX's examples/datasets.py: scikit-learn's digits as a small MNIST."""
import numpy as np
from sklearn.datasets import load_digits


def _one_hot(x, k, dtype=np.float32):
    return np.array(x[:, None] == np.arange(k), dtype)


def mnist_raw():
    d = load_digits()
    img = np.kron(d.images / 16.0, np.ones((3, 3)))  # 24x24
    img = np.pad(img, ((0, 0), (2, 2), (2, 2))).astype(np.float32)
    return img[:1500], d.target[:1500], img[1500:], d.target[1500:]


def mnist(permute_train=False):
    tr, trl, te, tel = mnist_raw()
    tr, te = tr.reshape(len(tr), -1), te.reshape(len(te), -1)
    trl, tel = _one_hot(trl, 10), _one_hot(tel, 10)
    if permute_train:
        perm = np.random.RandomState(0).permutation(tr.shape[0])
        tr, trl = tr[perm], trl[perm]
    return tr, trl, te, tel
'''

CHILD = """
import os, pickle, runpy, sys
import numpy as np
spec = pickle.loads(bytes.fromhex(sys.argv[1]))
sys.path.insert(0, spec["work"])
if spec["mode"] == "funcgrad":
    from tools.conformance.shims.jax_swap import make_swap
    swap = make_swap()
    for m in ("__main__", "examples.datasets", "datasets"):
        swap.add_importer(m)
    swap.install()
sys.argv = [spec["script"], *spec["args"]]
g = {}
try:
    g = runpy.run_path(spec["script"], run_name="__main__")
except SystemExit as e:
    if e.code not in (None, 0):
        raise

def leaves(x):
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for y in x for v in leaves(y)]
    if x is None:
        return []
    return [np.asarray(x)]

rec = {name: leaves(g[name]) for name in spec["record"] if name in g}
with open(spec["out"], "wb") as f:
    pickle.dump(rec, f)
"""


@dataclass
class Result:
    """One program compared: whether both ran, and the largest relative difference."""

    name: str
    rc: dict[str, int]
    numbers: int = 0
    max_rel_printed: float = 0.0
    arrays: int = 0
    max_rel_arrays: float = 0.0
    match: bool = False
    error: str = ""


_TIMING = re.compile(r"\(?\d+(?:\.\d+)?\s*sec\)?")
_WORDNUM = re.compile(r"[A-Za-z_]+\d+")  # float32, x64: names, not numbers
_NUMBER = re.compile(r"-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+|(?<![\w.])-?\d+(?![\w.])")


def printed_numbers(text: str, lines: str = "") -> list[list[float]]:
    """The numbers of each printed line (timings and names with digits dropped)."""
    rows = []
    for line in text.splitlines():
        if lines and not re.search(lines, line):
            continue
        line = _WORDNUM.sub(" ", _TIMING.sub(" ", line))
        nums = [float(m) for m in _NUMBER.findall(line)]
        if nums:
            rows.append(nums)
    return rows


def rel(a: np.ndarray, b: np.ndarray) -> float:
    """``max |a - b| / max(|b|)`` (absolute where ``b`` is all zero), NaN-equal."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    both_nan = np.isnan(a) & np.isnan(b)
    d = np.where(both_nan, 0.0, np.abs(a - b))
    if d.size == 0:
        return 0.0
    scale = max(float(np.nanmax(np.abs(b))) if b.size else 0.0, 1.0 if ATOL else 0.0)
    return float(np.nanmax(d) / scale) if np.isfinite(d).all() else float("inf")


def run_one(prog: Program, src: Path, mode: str, x64: bool, timeout: float) -> tuple:
    """Run ``prog`` in ``mode``: (return code, stdout+stderr, recorded arrays)."""
    work = Path(tempfile.mkdtemp(prefix=f"jaxex-{prog.name}-{mode}-"))
    (work / "examples").mkdir()
    (work / "examples" / "__init__.py").write_text("")
    (work / "examples" / "datasets.py").write_text(DATASETS)
    (work / "datasets.py").write_text(DATASETS)
    text = src.read_text()
    for pat, new in prog.subs:
        text, n = re.subn(pat, new, text)
        if n == 0:
            raise ValueError(f"{prog.name}: substitution {pat!r} matched nothing")
    script = work / prog.script
    script.write_text(text)
    out = work / "record.pkl"
    spec = {
        "mode": mode,
        "work": str(work),
        "script": str(script),
        "args": prog.args,
        "record": prog.record,
        "out": str(out),
    }
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", JAX_PLATFORMS="cpu")
    env.update(prog.env)
    env.pop("JAX_ENABLE_X64", None)
    if x64:
        env["JAX_ENABLE_X64"] = "1"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, pickle.dumps(spec).hex()],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return 124, "timed out", {}
    rec = pickle.loads(out.read_bytes()) if out.exists() else {}
    return proc.returncode, proc.stdout + "\n--stderr--\n" + proc.stderr, rec


def compare(prog: Program, runs: dict[str, tuple]) -> Result:
    """Both runs of ``prog`` compared number for number."""
    res = Result(prog.name, {m: r[0] for m, r in runs.items()})
    if any(r[0] != 0 for r in runs.values()):
        bad = [m for m, r in runs.items() if r[0] != 0]
        res.error = f"{bad[0]} failed: " + runs[bad[0]][1].strip().splitlines()[-1][:300]
        return res
    out = {m: printed_numbers(r[1].split("\n--stderr--\n")[0], prog.lines) for m, r in runs.items()}
    ref, got = out["jax"], out["funcgrad"]
    if len(ref) != len(got) or any(len(a) != len(b) for a, b in zip(ref, got, strict=False)):
        res.error = f"printed output differs in shape: {len(ref)} vs {len(got)} lines"
        return res
    for a, b in zip(got, ref, strict=True):
        for x, y in zip(a, b, strict=True):
            res.numbers += 1
            d = abs(x - y) / max(abs(y), 1.0)
            res.max_rel_printed = max(res.max_rel_printed, d)
    for name in prog.record:
        ra, rb = runs["funcgrad"][2].get(name), runs["jax"][2].get(name)
        if ra is None or rb is None or len(ra) != len(rb):
            res.error = f"recorded {name!r} missing or of another structure"
            return res
        for a, b in zip(ra, rb, strict=True):
            res.arrays += 1
            res.max_rel_arrays = max(res.max_rel_arrays, rel(a, b))
    res.match = res.max_rel_printed <= RTOL and res.max_rel_arrays <= RTOL
    return res


def main(argv: list[str] | None = None) -> int:
    """Command line: run the chosen programs both ways and print one line each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", default="/tmp/jax-src/examples", type=Path)
    ap.add_argument("--old", default="/tmp/jaxex", type=Path)
    ap.add_argument("--only", default="")
    ap.add_argument("--x64", action="store_true")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="folder for each run's output")
    args = ap.parse_args(argv)
    only = {s for s in args.only.split(",") if s}
    results = []
    for prog in PROGRAMS:
        if only and prog.name not in only:
            continue
        src = (args.examples if prog.repo == "examples" else args.old) / prog.script
        runs = {m: run_one(prog, src, m, args.x64, args.timeout) for m in MODES}
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for m, r in runs.items():
                (args.keep / f"{prog.name}.{m}.txt").write_text(r[1])
        res = compare(prog, runs)
        results.append(res)
        verdict = "match" if res.match else "DIFFER"
        print(
            f"{prog.name:32s} {verdict:6s} printed {res.numbers:4d} max rel "
            f"{res.max_rel_printed:.2e}  arrays {res.arrays:4d} max rel "
            f"{res.max_rel_arrays:.2e} {res.error}",
            flush=True,
        )
    n = sum(r.match for r in results)
    print(f"{n} of {len(results)} programs match (rtol {RTOL:g}{', x64' if args.x64 else ''})")
    for name, why in NOT_RUN.items():
        print(f"not run: {name}: {why}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0 if n == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
