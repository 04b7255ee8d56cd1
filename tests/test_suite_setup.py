"""The test configuration's own assumptions about JAX (tests/conftest.py) and pytest-xdist.

The conftest replaces JAX's private ``jax._src.interpreters.mlir.make_ir_context`` so that
each thread reuses one MLIR context for a batch of lowerings. These tests fail when the
installed JAX no longer has that function, or no longer calls it to lower a program (the
patch would then do nothing, and the suite would silently lose the time it saves).
"""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

REUSE = os.environ.get("FUNCGRAD_TEST_REUSE_IR_CONTEXT") != "0"


def _mlir():
    from jax._src.interpreters import mlir

    return mlir


def test_jax_still_has_the_ir_context_factory_the_conftest_replaces():
    mlir = _mlir()
    assert hasattr(mlir, "make_ir_context"), "JAX renamed make_ir_context: see tests/conftest.py"
    if REUSE:
        assert mlir.make_ir_context.__name__ == "_reused_ir_context"
        # a batch of calls shares one context, and it is a context JAX's lowering accepts
        contexts = [mlir.make_ir_context() for _ in range(3)]
        assert contexts[1] is contexts[2] or contexts[0] is contexts[1]
        assert isinstance(contexts[2], mlir.ir.Context)


def test_jax_lowering_calls_the_ir_context_factory(monkeypatch):
    mlir = _mlir()
    current = mlir.make_ir_context
    calls = []

    def counting():
        calls.append(1)
        return current()

    monkeypatch.setattr(mlir, "make_ir_context", counting)
    x = np.arange(3.0)
    lowered = jax.jit(lambda v: jnp.sin(v) * 3.0 + 0.25).lower(x)
    assert calls, "JAX lowered a program without make_ir_context: the conftest patch is dead"
    assert "sine" in lowered.as_text()


@pytest.mark.skipif(not REUSE, reason="FUNCGRAD_TEST_REUSE_IR_CONTEXT=0")
def test_programs_lowered_in_a_reused_context_compute_the_same():
    f = jax.jit(lambda v: jnp.cumsum(jnp.exp(v)) / 2.0)
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(np.asarray(f(x)), np.cumsum(np.exp(x)) / 2.0, rtol=1e-12)


_GROUPED = r"""
import os
import pytest

@pytest.mark.xdist_group("g")
@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    with open("workers.txt", "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\n")
"""


def test_loadgroup_keeps_a_group_on_one_worker(tmp_path):
    """The addopts' ``--dist loadgroup`` serialises the multi-process and lazy-mode tests by
    keeping each ``xdist_group`` on one worker. Some pytest/pytest-xdist pairs ignore the
    groups silently (pytest 9.2 with pytest-xdist 3.8: pyproject.toml pins pytest below
    9.2); this runs six grouped tests on two workers and fails if they are spread."""
    (tmp_path / "test_grouped.py").write_text(_GROUPED)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-q",
            "-p",
            "no:cacheprovider",
            "test_grouped.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    workers = set((tmp_path / "workers.txt").read_text().split())
    assert len(workers) == 1, f"group 'g' ran on workers {sorted(workers)}:\n{run.stdout}"
