"""examples/port_torch.py runs unchanged on compat.torch and on real PyTorch, reaching the
same test accuracy within noise (subprocesses, with the default float32)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest
from torch_oracle import import_real_torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "port_torch.py"
EPOCHS = 5


def _run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("JAX_ENABLE_X64", None)
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _accuracies(stdout: str) -> list[float]:
    return [float(a) for a in re.findall(r"test acc (\d\.\d{4})", stdout)]


def _final_accuracy(proc: subprocess.CompletedProcess) -> float:
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"test accuracy: (\d\.\d{4})", last)
    assert m, proc.stdout
    return float(m.group(1))


@pytest.fixture(scope="module")
def compat_run() -> subprocess.CompletedProcess:
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    return _run("--backend", "compat", "--epochs", str(EPOCHS))


def test_the_port_is_only_the_import_lines():
    source = SCRIPT.read_text()
    code_lines = [ln for ln in source.splitlines() if ln and not ln.lstrip().startswith("#")]
    first_imports = [ln for ln in code_lines if ln.startswith("import ")][:3]
    assert first_imports == [
        "import compat.torch as torch",
        "import compat.torch.nn as nn",
        "import compat.torch.optim as optim",
    ]
    assert "#     import torch" in source  # the real-PyTorch replacement, shown in a comment
    body = source[source.index("def load_data") :]
    assert "compat." not in body  # the training code itself is plain PyTorch


# the tests reading ``compat_run`` run on one xdist worker, so the compat training run
# (~4 s CPU) is made once per run, not once in each worker that draws one of them
ON_COMPAT_RUN = pytest.mark.xdist_group("port_example_compat_run")


@ON_COMPAT_RUN
def test_compat_backend_trains(compat_run):
    acc = _final_accuracy(compat_run)
    assert acc >= 0.9
    per_epoch = _accuracies(compat_run.stdout)
    assert len(per_epoch) == EPOCHS
    assert "backend: compat" in compat_run.stdout
    assert "epoch" in compat_run.stderr and "it/s" in compat_run.stderr  # the tqdm bar
    losses = [float(x) for x in re.findall(r"train loss (\d+\.\d+)", compat_run.stdout)]
    assert losses[-1] < losses[0]


@ON_COMPAT_RUN
def test_same_script_on_real_pytorch_reaches_the_same_accuracy(compat_run):
    import_real_torch()
    proc = _run("--backend", "torch", "--epochs", str(EPOCHS), "--no-progress")
    torch_acc = _final_accuracy(proc)
    assert "backend: torch" in proc.stdout
    compat_acc = _final_accuracy(compat_run)
    assert torch_acc >= 0.9 and compat_acc >= 0.9
    # Different random streams (init, dropout), same recipe: agreement within noise.
    assert abs(torch_acc - compat_acc) <= 0.04, (torch_acc, compat_acc)


def test_cnn_with_conv_batchnorm_pooling_and_a_schedule_matches_real_pytorch():
    """The CNN variant (Conv2d, BatchNorm2d, MaxPool2d, AdaptiveAvgPool2d, Flatten, cosine
    LR schedule) trains unchanged on both backends to the same accuracy within noise."""
    pytest.importorskip("sklearn")
    import_real_torch()
    args = ("--model", "cnn", "--epochs", "5", "--lr", "0.01", "--no-progress")
    compat_acc = _final_accuracy(_run("--backend", "compat", *args))
    torch_acc = _final_accuracy(_run("--backend", "torch", *args))
    assert compat_acc >= 0.93 and torch_acc >= 0.93, (compat_acc, torch_acc)
    assert abs(torch_acc - compat_acc) <= 0.04, (torch_acc, compat_acc)


def test_help_lists_the_backend_flag():
    proc = _run("--help", timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for flag in (
        "--backend",
        "--model",
        "--epochs",
        "--batch-size",
        "--lr",
        "--seed",
        "--no-progress",
    ):
        assert flag in proc.stdout
