"""The examples run end to end on real data (in a subprocess, with the default float32)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _run_example(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("JAX_ENABLE_X64", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_train_digits(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    pytest.importorskip("matplotlib")
    out_dir = tmp_path / "digits"
    proc = _run_example(
        "train_digits.py", "--epochs", "8", "--seed", "1", "--out-dir", str(out_dir)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"test accuracy: (\d\.\d{4})", last)
    assert m, proc.stdout
    assert float(m.group(1)) >= 0.9
    png = out_dir / "training.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    metrics = json.loads((out_dir / "metrics.json").read_text())
    assert len(metrics["history"]["test_acc"]) == 8
    assert metrics["history"]["train_loss"][-1] < metrics["history"]["train_loss"][0]
    assert "epoch" in proc.stderr  # the tqdm bar


def test_train_digits_help():
    proc = _run_example("train_digits.py", "--help", timeout=60)
    assert proc.returncode == 0
    for flag in ("--epochs", "--batch-size", "--lr", "--seed", "--out-dir"):
        assert flag in proc.stdout
