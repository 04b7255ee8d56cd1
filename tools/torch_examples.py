"""Time PyTorch's example programs under real PyTorch and under compat (import swapped).

Each program runs twice, each time in a fresh subprocess and a fresh working directory:
once with the real ``torch`` and once with ``torch``/``torch.*`` mapped to ``compat.torch``
(``tools/torch_examples_shims/_bootstrap.py``). Both runs use the same ``torchvision``
stand-in (``tools/torch_examples_shims/torchvision``: no downloads, data made from
scikit-learn's digits or random), the same small-run flags and the same generated data
files, so the comparison is like for like. Recorded per program: whole-program wall time
(process start to exit), the steady step (median time between successive optimizer
steps, or ``backward`` calls where a program has no optimizer, after the first few), the
time to the end of the first step, exit status, and the last loss the program printed.

Usage::

    python tools/torch_examples.py --examples /tmp/pt-examples \\
        --nanogpt /tmp/nanoGPT --mingpt /tmp/minGPT [--only mnist,vae] [--json out.json]

The checkouts stay outside the repository; nothing upstream is copied into it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import pickle
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SHIMS = HERE / "torch_examples_shims"
BOOTSTRAP = SHIMS / "_bootstrap.py"
MODES = ("torch", "compat")
#: the default pattern for a printed loss: the number after the last "loss"
LOSS_RE = r"loss\w*[^0-9\n-]{0,12}?(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
#: losses agree when within this relative (or absolute) distance: the two runs start
#: from different random weights (compat's generator is not PyTorch's)
LOSS_RTOL, LOSS_ATOL = 0.25, 0.05

Setup = Callable[[Path, Path], None]


@dataclass
class Program:
    """One program to time: where it lives, how to run it small, what to read back."""

    name: str
    repo: str  # key of the checkout: "examples", "nanogpt", "mingpt" (or any for tests)
    script: str  # path inside the checkout
    args: list[str] = field(default_factory=list)  # "{work}" is the run's directory
    setup: Setup | None = None  # (work dir, checkout) -> None, before each run, untimed
    env: dict[str, str] = field(default_factory=dict)
    loss_re: str | None = LOSS_RE
    pythonpath: list[str] = field(default_factory=list)  # dirs inside the checkout


@dataclass
class Run:
    """The outcome of one program in one mode."""

    mode: str
    rc: int | None
    wall_s: float
    steady_step_s: float | None = None
    first_step_s: float | None = None
    n_steps: int = 0
    step_kind: str = ""
    final_loss: float | None = None
    error: str = ""
    log: str = ""


@dataclass
class Pair:
    """Both runs of one program and their ratios (compat / torch)."""

    name: str
    torch: Run
    compat: Run
    ratio: float | None = None
    step_ratio: float | None = None
    loss_agree: bool | None = None


# ---------------------------------------------------------------------------
# setups: data files the programs read, made here (never downloaded)
# ---------------------------------------------------------------------------


def _setup_results_dir(work: Path, root: Path) -> None:
    (work / "results").mkdir(exist_ok=True)


_SINE = """
import numpy as np, torch
rng = np.random.default_rng(2)
t = np.arange(300)[None, :] + rng.integers(-80, 80, (100, 1))
torch.save(np.sin(t / 20.0).astype("float64"), "traindata.pt")
"""


def _setup_sine(work: Path, root: Path) -> None:
    """``traindata.pt``: 100 phase-shifted sine waves of 300 points (the example's are 1,000)."""
    subprocess.run([sys.executable, "-c", _SINE], cwd=work, check=True, capture_output=True)


def _take_tokens(lines: list[str], start: int, n_tokens: int) -> tuple[list[str], int]:
    out, count, i = [], 0, start
    while i < len(lines) and count < n_tokens:
        out.append(lines[i])
        count += len(lines[i].split()) + 1
        i += 1
    return out, i


def _setup_corpus(work: Path, root: Path) -> None:
    """A small word corpus from the checkout's WikiText-2 validation/test files."""
    src = root / "word_language_model" / "data" / "wikitext-2"
    valid = src.joinpath("valid.txt").read_text(encoding="utf8").splitlines(keepends=True)
    test = src.joinpath("test.txt").read_text(encoding="utf8").splitlines(keepends=True)
    data = work / "data"
    data.mkdir(exist_ok=True)
    train, _ = _take_tokens(valid, 0, 15_000)
    val, i = _take_tokens(test, 0, 3_000)
    tst, _ = _take_tokens(test, i, 3_000)
    for name, part in (("train", train), ("valid", val), ("test", tst)):
        (data / f"{name}.txt").write_text("".join(part), encoding="utf8")


def _setup_style(work: Path, root: Path) -> None:
    """16 random 64x64 JPEG content images in one class folder and a style image."""
    from PIL import Image

    rng = np.random.default_rng(0)
    folder = work / "images" / "all"
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(16):
        arr = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
        Image.fromarray(arr).save(folder / f"{k}.jpg")
    Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(work / "style.jpg")
    (work / "models").mkdir(exist_ok=True)


def _setup_nanogpt(work: Path, root: Path) -> None:
    """A character-level data set (uint16 train/val bins and meta.pkl) and nanoGPT's configurator."""
    shutil.copy(root / "configurator.py", work / "configurator.py")  # train.py execs it from cwd
    text = Path(np.__file__).parent.joinpath("_core", "fromnumeric.py").read_text(encoding="utf8")
    text = text[:200_000]
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text], dtype=np.uint16)
    data = work / "data" / "synth"
    data.mkdir(parents=True, exist_ok=True)
    cut = int(len(ids) * 0.9)
    ids[:cut].tofile(data / "train.bin")
    ids[cut:].tofile(data / "val.bin")
    with open(data / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars))}, f)


def _setup_cora(work: Path, root: Path) -> None:
    """A Cora-shaped citation graph (2,000 papers, 500 binary word features, 7 classes,
    4,000 citations, mostly within a class; features drawn from a per-class vocabulary)
    in ``cora/`` and as ``_downloads/cora.tgz``, which the ``requests`` stand-in serves to
    the gcn example's download."""
    rng = np.random.default_rng(0)
    n, f, c, e = 2000, 500, 7, 4000
    labels = rng.integers(0, c, n)
    ids = rng.choice(1_000_000, n, replace=False)
    vocab = rng.random((c, f)) < 0.1
    words = np.zeros((n, f), dtype=np.int64)
    for i in range(n):
        pool = np.flatnonzero(vocab[labels[i]]) if rng.random() < 0.8 else np.arange(f)
        words[i, rng.choice(pool, 8, replace=False)] = 1
    src = rng.integers(0, n, e)
    same = rng.random(e) < 0.8
    by_class = [np.flatnonzero(labels == k) for k in range(c)]
    dst = np.array(
        [rng.choice(by_class[labels[s]]) if m else rng.integers(0, n) for s, m in zip(src, same)]
    )
    folder = work / "cora"
    folder.mkdir(exist_ok=True)
    with open(folder / "cora.content", "w") as fh:
        for i in range(n):
            fh.write("\t".join([str(ids[i]), *map(str, words[i]), f"Class_{labels[i]}"]) + "\n")
    with open(folder / "cora.cites", "w") as fh:
        fh.writelines(f"{ids[a]}\t{ids[b]}\n" for a, b in zip(src, dst))
    (work / "_downloads").mkdir(exist_ok=True)
    with tarfile.open(work / "_downloads" / "cora.tgz", "w:gz") as tgz:
        tgz.add(folder, arcname="cora")


_MNIST = {"TORCH_EXAMPLES_MNIST_TRAIN": "3200", "TORCH_EXAMPLES_MNIST_TEST": "500"}  # 50 steps
_WLM = ["--epochs", "1", "--emsize", "64", "--nhid", "64", "--log-interval", "5"]
_WLM += ["--data", "{work}/data", "--save", "{work}/model.pt"]
_NANOGPT = [
    "--dataset=synth", "--device=cpu", "--compile=False", "--dtype=float32",
    "--max_iters=20", "--eval_iters=2", "--eval_interval=1000", "--log_interval=1",
    "--block_size=64", "--batch_size=12", "--n_layer=4", "--n_head=4", "--n_embd=128",
    "--gradient_accumulation_steps=1", "--warmup_iters=2", "--lr_decay_iters=20",
    "--always_save_checkpoint=False", "--out_dir={work}/out",
]  # fmt: skip

PROGRAMS: list[Program] = [
    Program("mnist", "examples", "mnist/main.py", ["--epochs", "1", "--log-interval", "5"], env=_MNIST),
    Program(
        "vae", "examples", "vae/main.py",
        ["--epochs", "1", "--batch-size", "64", "--log-interval", "5"],
        setup=_setup_results_dir, env=_MNIST,
    ),
    Program("mnist_rnn", "examples", "mnist_rnn/main.py", ["--epochs", "1", "--log-interval", "5"], env=_MNIST),
    Program(
        "siamese_network", "examples", "siamese_network/main.py",
        ["--epochs", "1", "--log-interval", "5"],
        env={**_MNIST, "TORCH_EXAMPLES_MNIST_TRAIN": "1600"},
    ),
    Program("regression", "examples", "regression/main.py"),
    Program(
        "mnist_forward_forward", "examples", "mnist_forward_forward/main.py",
        ["--epochs", "20", "--train_size", "1000", "--test_size", "200", "--log-interval", "5"],
        env=_MNIST,
    ),
    Program(
        "mnist_hogwild", "examples", "mnist_hogwild/main.py",
        ["--epochs", "1", "--num-processes", "2", "--log-interval", "5"],
        env={**_MNIST, "TORCH_EXAMPLES_MNIST_TRAIN": "1600"},
    ),
    Program(
        "dcgan", "examples", "dcgan/main.py",
        ["--dataset", "fake", "--niter", "1", "--workers", "0", "--batchSize", "16",
         "--ngf", "16", "--ndf", "16", "--manualSeed", "1", "--outf", "{work}"],
        env={"TORCH_EXAMPLES_FAKE_SIZE": "320"},
    ),
    Program(
        "rl_reinforce", "examples", "reinforcement_learning/reinforce.py",
        env={"TORCH_EXAMPLES_MAX_STEPS": "50"}, loss_re=None,
    ),
    Program(
        "rl_actor_critic", "examples", "reinforcement_learning/actor_critic.py",
        env={"TORCH_EXAMPLES_MAX_STEPS": "50"}, loss_re=None,
    ),
    Program(
        "time_sequence_prediction", "examples", "time_sequence_prediction/train.py",
        ["--steps", "1"], setup=_setup_sine,
        # its data file holds a NumPy array: add_safe_globals for it, in both runs (compat
        # does not read PyTorch's TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD switch)
        env={"TORCH_EXAMPLES_NUMPY_LOADS": "1"},
    ),
    Program("wlm_lstm", "examples", "word_language_model/main.py", [*_WLM, "--model", "LSTM"], setup=_setup_corpus),
    Program("wlm_gru", "examples", "word_language_model/main.py", [*_WLM, "--model", "GRU"], setup=_setup_corpus),
    Program(
        "wlm_transformer", "examples", "word_language_model/main.py",
        [*_WLM, "--model", "Transformer"], setup=_setup_corpus,
    ),
    Program(
        "fast_neural_style", "examples", "fast_neural_style/neural_style/neural_style.py",
        ["train", "--dataset", "{work}/images", "--style-image", "{work}/style.jpg",
         "--save-model-dir", "{work}/models", "--epochs", "1", "--batch-size", "2",
         "--image-size", "64", "--log-interval", "2"],
        setup=_setup_style, loss_re=r"total:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)",
    ),
    Program(
        "gcn", "examples", "gcn/main.py", ["--epochs", "30", "--val-every", "5"],
        setup=_setup_cora,
    ),
    Program(
        "gat", "examples", "gat/main.py",
        ["--epochs", "10", "--val-every", "5", "--num-heads", "2", "--hidden-dim", "16"],
        setup=_setup_cora,
    ),
    Program("nanogpt", "nanogpt", "train.py", _NANOGPT, setup=_setup_nanogpt),
    Program(
        "mingpt_adder", "mingpt", "projects/adder/adder.py",
        ["--trainer.max_iters=100", "--trainer.num_workers=0", "--data.ndigit=1",
         "--system.work_dir='{work}/out'"],  # minGPT literal_evals values
        pythonpath=["."],
    ),
]  # fmt: skip


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------


def steady_step(events: Sequence[float]) -> float | None:
    """Median interval between successive events over the later half (None under 5 events).

    The later half, not all but the first few: compat's execution tiers keep switching
    to compiled code over the first dozens of steps.
    """
    if len(events) < 5:
        return None
    gaps = [b - a for a, b in itertools.pairwise(events)]
    return statistics.median(gaps[len(gaps) // 2 :] if len(gaps) >= 8 else gaps[1:])


def last_loss(text: str, pattern: str | None) -> float | None:
    """The last number ``pattern`` captures in ``text`` (case-insensitive), or None."""
    if pattern is None:
        return None
    found = re.findall(pattern, text, flags=re.IGNORECASE)
    if not found:
        return None
    try:
        return float(found[-1])
    except ValueError:
        return None


def _error_line(stderr: str, stdout: str) -> str:
    """The last line of a traceback (or of the output): the error to report."""
    for text in (stderr, stdout):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if lines:
            return lines[-1][:300]
    return ""


def run_program(
    prog: Program,
    mode: str,
    root: Path,
    work: Path,
    timeout: float = 900.0,
    threads: int = 0,
    extra_env: dict[str, str] | None = None,
) -> Run:
    """Run ``prog`` once in ``mode`` ("torch" or "compat") in a fresh ``work`` directory.

    ``threads`` > 0 caps the math libraries' threads (OpenMP/MKL/OpenBLAS; with 1, XLA's too);
    ``extra_env`` is set last (e.g. the step recorder's ``TORCH_EXAMPLES_TRACE``).
    """
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    if prog.setup is not None:
        prog.setup(work, root)
    timing = work / "_timing.json"
    env = dict(os.environ)
    env.update(prog.env)
    env["TORCH_EXAMPLES_TIMING"] = str(timing)
    env["MPLBACKEND"] = "Agg"
    env.update(extra_env or {})
    if threads:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[var] = str(threads)
        if threads == 1:
            xla = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
            env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {xla}".strip()
    paths = [str(root / p) for p in prog.pythonpath] + [str(SHIMS)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    args = [a.replace("{work}", str(work)) for a in prog.args]
    cmd = [sys.executable, str(BOOTSTRAP), mode, str(root / prog.script), *args]
    out_path, err_path = work / "_stdout.txt", work / "_stderr.txt"
    start_wall = time.time()
    t0 = time.perf_counter()
    rc: int | None
    with open(out_path, "w") as out, open(err_path, "w") as err:
        try:
            rc = subprocess.run(
                cmd, cwd=work, env=env, stdout=out, stderr=err, timeout=timeout
            ).returncode
        except subprocess.TimeoutExpired:
            rc = None
    wall = time.perf_counter() - t0
    stdout = out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    run = Run(mode=mode, rc=rc, wall_s=wall, log=str(work))
    if timing.exists():
        events = json.loads(timing.read_text())
        kind = "step" if len(events["step"]) >= 5 else "backward"
        if len(events[kind]) < 5 and events["step"]:
            kind = "step"
        chosen = events[kind]
        run.step_kind, run.n_steps = kind, len(chosen)
        run.steady_step_s = steady_step(chosen)
        run.first_step_s = chosen[0] - start_wall if chosen else None
    run.final_loss = last_loss(stdout, prog.loss_re)
    if rc is None:
        run.error = f"timed out after {timeout:.0f} s"
    elif rc != 0:
        run.error = _error_line(stderr, stdout)
    return run


def losses_agree(a: float | None, b: float | None) -> bool | None:
    """Loose agreement of two printed losses (None when either is missing)."""
    if a is None or b is None:
        return None
    return abs(a - b) <= max(LOSS_RTOL * max(abs(a), abs(b)), LOSS_ATOL)


def run_pair(
    prog: Program, root: Path, base: Path, timeout: float = 900.0, threads: int = 0
) -> Pair:
    """Run ``prog`` under real PyTorch, then under compat, and compare."""
    runs = {m: run_program(prog, m, root, base / prog.name / m, timeout, threads) for m in MODES}
    t, c = runs["torch"], runs["compat"]
    pair = Pair(prog.name, t, c)
    if t.rc == 0 and c.rc == 0:
        pair.ratio = c.wall_s / t.wall_s
        if t.steady_step_s and c.steady_step_s:
            pair.step_ratio = c.steady_step_s / t.steady_step_s
        pair.loss_agree = losses_agree(t.final_loss, c.final_loss)
    return pair


# ---------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------


def _f(x: float | None, fmt: str) -> str:
    return "–" if x is None else format(x, fmt)


def summary(pairs: Sequence[Pair]) -> dict[str, Any]:
    """Medians and worst cases over the programs that ran to the end both ways."""
    ratios = [p.ratio for p in pairs if p.ratio is not None]
    steps = [p.step_ratio for p in pairs if p.step_ratio is not None]
    return {
        "programs": len(pairs),
        "ran_both": len(ratios),
        "failed_compat": [p.name for p in pairs if p.compat.rc != 0 and p.torch.rc == 0],
        "median_ratio": statistics.median(ratios) if ratios else None,
        "max_ratio": max(ratios) if ratios else None,
        "median_step_ratio": statistics.median(steps) if steps else None,
        "max_step_ratio": max(steps) if steps else None,
        "steps_over_3x": [p.name for p in pairs if p.step_ratio is not None and p.step_ratio > 3],
    }


def table(pairs: Sequence[Pair]) -> str:
    """A Markdown table of the pairs, then the medians."""
    head = (
        "| program | torch s | compat s | ratio | torch step ms | compat step ms | step ratio "
        "| 1st step torch/compat s | loss torch / compat | agree |"
    )
    lines = [head, "|" + "---|" * 10]
    for p in pairs:
        t, c = p.torch, p.compat
        agree = {True: "yes", False: "no", None: "–"}[p.loss_agree]
        ratio = _f(p.ratio, ".1f") + "×" if p.ratio is not None else ""
        if c.rc != 0:
            ratio = f"compat failed: {c.error}"
        if t.rc != 0:
            ratio = f"torch failed: {t.error}"
        step_ms = [_f(r.steady_step_s and r.steady_step_s * 1e3, ".1f") for r in (t, c)]
        if c.step_kind:
            step_ms[1] += f" ({c.step_kind} ×{c.n_steps})"
        lines.append(
            f"| {p.name} | {t.wall_s:.1f} | {c.wall_s:.1f} | {ratio} | {step_ms[0]} | {step_ms[1]} "
            f"| {_f(p.step_ratio, '.1f')} | {_f(t.first_step_s, '.1f')} / {_f(c.first_step_s, '.1f')} "
            f"| {_f(t.final_loss, '.4g')} / {_f(c.final_loss, '.4g')} | {agree} |"
        )
    s = summary(pairs)
    lines.append("")
    lines.append(
        f"Ran both ways: {s['ran_both']}/{s['programs']}. Whole-program wall time, compat / PyTorch: "
        f"median {_f(s['median_ratio'], '.2f')}×, worst {_f(s['max_ratio'], '.1f')}×. "
        f"Steady step: median {_f(s['median_step_ratio'], '.2f')}×, worst {_f(s['max_step_ratio'], '.1f')}×."
    )
    if s["failed_compat"]:
        lines.append(f"Failed under compat: {', '.join(s['failed_compat'])}.")
    return "\n".join(lines)


def load_pairs(path: Path) -> list[Pair]:
    """The pairs a ``--json`` file holds."""
    pairs = []
    for d in json.loads(Path(path).read_text())["programs"]:
        d = dict(d)
        d["torch"], d["compat"] = Run(**d["torch"]), Run(**d["compat"])
        pairs.append(Pair(**d))
    return pairs


NOTE = (
    "torchvision is a stand-in (tools/torch_examples_shims/torchvision: digits-derived MNIST, "
    "random FakeData/images, random-init resnet18/vgg16), the same for both runs."
)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run the programs whose checkouts are given and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=Path, help="checkout of pytorch/examples")
    ap.add_argument("--nanogpt", type=Path, help="checkout of karpathy/nanoGPT")
    ap.add_argument("--mingpt", type=Path, help="checkout of karpathy/minGPT")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--workdir", type=Path, help="where runs happen (default: a new temp dir)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    ap.add_argument("--threads", type=int, default=0, help="cap math-library threads (0: as is)")
    ap.add_argument(
        "--compat-root",
        type=Path,
        help="funcgrad checkout to import compat from (default: this one); e.g. an export of HEAD",
    )
    ap.add_argument(
        "--from-json",
        type=Path,
        nargs="+",
        help="print the table of saved results (later files replace programs of earlier ones)",
    )
    ap.add_argument("--list", action="store_true", help="list the programs and exit")
    ns = ap.parse_args(argv)
    if ns.list:
        for p in PROGRAMS:
            print(f"{p.name}: {p.repo}/{p.script} {' '.join(p.args)}")
        return 0
    if ns.from_json:
        merged: dict[str, Pair] = {}
        for path in ns.from_json:
            merged.update((p.name, p) for p in load_pairs(path))
        order = [p.name for p in PROGRAMS]
        print(table(sorted(merged.values(), key=lambda p: (order + [p.name]).index(p.name))))
        return 0
    roots = {"examples": ns.examples, "nanogpt": ns.nanogpt, "mingpt": ns.mingpt}
    only = {n for n in ns.only.split(",") if n}
    base = ns.workdir or Path(tempfile.mkdtemp(prefix="torch_examples_"))
    if ns.compat_root:
        os.environ["TORCH_EXAMPLES_COMPAT_ROOT"] = str(ns.compat_root.resolve())
    pairs: list[Pair] = []
    for prog in PROGRAMS:
        root = roots.get(prog.repo)
        if (only and prog.name not in only) or root is None:
            continue
        print(f"[torch_examples] {prog.name} ...", file=sys.stderr, flush=True)
        pair = run_pair(prog, Path(root).resolve(), base, ns.timeout, ns.threads)
        print(
            f"[torch_examples] {prog.name}: torch {pair.torch.wall_s:.1f} s (rc {pair.torch.rc}), "
            f"compat {pair.compat.wall_s:.1f} s (rc {pair.compat.rc}) {pair.compat.error}",
            file=sys.stderr,
            flush=True,
        )
        pairs.append(pair)
    print(table(pairs))
    print(f"\n{NOTE}\nLogs: {base}")
    if ns.json:
        doc = {
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "note": NOTE,
            "threads": ns.threads or "as is",
            "compat_root": str(ns.compat_root or HERE.parent),
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "summary": summary(pairs),
            "programs": [asdict(p) for p in pairs],
        }
        ns.json.write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
