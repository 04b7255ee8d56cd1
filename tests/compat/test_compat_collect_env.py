"""``torch.utils.collect_env`` against PyTorch 2.13's on the same machine: the lines both
reports give (OS, libc, Python version and platform, CUDA availability) are equal,
PyTorch's layout (its headings, in its order), and the stack under compat reported
truthfully (compat's, funcgrad's, JAX's and NumPy's versions; JAX's backend and devices;
the installed distributions' versions as their metadata says)."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import jax
import numpy as np

import compat.torch as ctorch
import compat.torch.utils.collect_env as cenv
import funcgrad


def _lines(report: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in report.splitlines() if ": " in line)


def test_shared_lines_equal_pytorchs(real_torch):
    from torch.utils import collect_env as tenv  # (the oracle's own module)

    ours, theirs = _lines(cenv.get_pretty_env_info()), _lines(tenv.get_pretty_env_info())
    for key in ("Is debug build", "OS", "Libc version", "Python version", "Python platform"):
        assert ours[key] == theirs[key], key
    assert ours["Is CUDA available"] == theirs["Is CUDA available"] == "False"


def test_layout_follows_pytorchs(real_torch):
    from torch.utils.collect_env import env_info_fmt

    report = cenv.get_pretty_env_info()
    heads = [line.split(":")[0] for line in env_info_fmt.splitlines() if ":" in line]
    ours = [line.split(":")[0] for line in report.splitlines() if ":" in line]
    shared = [h for h in heads if h in ours]
    assert shared == [h for h in ours if h in heads]  # (PyTorch's order)
    for head in ("PyTorch version", "OS", "Python version", "Is CUDA available", "CPU"):
        assert head in shared
    assert ours[-1] == "Versions of relevant libraries" or "[pip3]" in report.splitlines()[-1]


def test_reports_the_stack_truthfully():
    info = cenv.get_env_info()
    got = _lines(cenv.pretty_str(info))
    assert got["PyTorch version"] == ctorch.__version__
    assert got["funcgrad version"] == funcgrad.__version__
    assert got["JAX version"] == jax.__version__
    assert got["NumPy version"] == np.__version__
    assert got["JAX backend"] == jax.default_backend()
    assert sum(int(p.split(" x ")[0]) for p in got["JAX devices"].split(", ")) == len(jax.devices())
    libs = cenv.get_pretty_env_info().split("Versions of relevant libraries:\n")[1].splitlines()
    for dist in ("jax", "jaxlib", "numpy", "funcgrad"):
        assert f"[pip3] {dist}=={importlib.metadata.version(dist)}" in libs


def test_missing_values_read_could_not_collect():
    info = cenv.get_env_info()._replace(os=None, pip_packages="")
    got = cenv.pretty_str(info)
    assert "OS: Could not collect" in got.splitlines()
    assert got.endswith("Versions of relevant libraries:\nNo relevant packages")


def test_main_prints_the_report():
    out = subprocess.run(
        [sys.executable, "-m", "compat.torch.utils.collect_env"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert out.startswith("Collecting environment information...\nPyTorch version: ")
    assert f"JAX version: {jax.__version__}" in out.splitlines()
