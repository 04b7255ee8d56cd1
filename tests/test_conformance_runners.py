"""The conformance runners' machinery on tiny self-made test modules (no upstream code).

Each module is run the way ``tools/conformance/run_jax.py`` and ``run_torch.py`` run
JAX's and PyTorch's test files: once against the real library, once with the import
swapped (funcgrad, compat), in two worker processes; the tests check the swap, the
helper shims (same case names in both runs), and the failure classification.
"""

from __future__ import annotations

import pathlib
import textwrap
import time

import pytest

from tools.conformance.common import cause, classify, compare_file, scope_reason

JAX_MODULE = """
from absl.testing import absltest
import jax
import jax.numpy as jnp
from jax import lax
from jax._src import core
from jax._src import test_util as jtu
import numpy as np


class Tiny(jtu.JaxTestCase):
    @jtu.sample_product(shape=[(2,), (3, 4), (5,)], dtype=jtu.dtypes.floating)
    def testSin(self, shape, dtype):
        x = self.rng().randn(*shape).astype(dtype)
        self._CheckAgainstNumpy(np.sin, jnp.sin, lambda: [x])
        self._CompileAndCheck(jnp.sin, lambda: [x])

    def testGrad(self):
        self.assertAllClose(jax.grad(jnp.sin)(0.5), np.cos(np.float32(0.5)))

    def testMissingName(self):
        jnp.a_name_no_library_has(1.0)

    def testWrongError(self):
        with self.assertRaises(KeyError):
            jnp.zeros(2) + jnp.zeros(3)

    def testWrongValue(self):
        upstream = jnp.sin.__module__.startswith("jax")
        self.assertAllClose(np.float32(1.0 if upstream else 2.0), np.float32(1.0))

    def testInternals(self):
        core.get_aval(1.0)

    def testTracesAProgram(self):
        jax.make_jaxpr(jnp.sin)(1.0)
"""

TORCH_MODULE = """
import torch
from torch.testing._internal.common_utils import (
    TestCase, instantiate_parametrized_tests, parametrize, run_tests)
from torch.testing._internal.common_device_type import (
    deviceCountAtLeast, instantiate_device_type_tests)


class TestTiny(TestCase):
    def test_backward(self):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        self.assertEqual(x.grad, torch.tensor([2.0, 4.0]))

    @parametrize("n", [1, 3])
    def test_ones(self, n):
        self.assertEqual(torch.ones(n).sum().item(), n)

    def test_error(self):
        with self.assertRaisesRegex(RuntimeError, "does not require grad"):
            torch.ones(2).sum().backward()

    def test_missing(self):
        torch.a_name_no_library_has()

    def test_cuda_is_out_of_scope(self):
        torch.ones(1).cuda()


instantiate_parametrized_tests(TestTiny)


class TestDevices(TestCase):
    @deviceCountAtLeast(1)
    def test_device_list(self, devices):
        self.assertEqual(devices[0], "cpu")
        self.assertEqual(int(torch.tensor(1e300, dtype=torch.float64)), 1e300)


instantiate_device_type_tests(TestDevices, globals(), only_for="cpu")

if __name__ == "__main__":
    run_tests()
"""


def _write(tmp_path: pathlib.Path, name: str, text: str) -> pathlib.Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_classification_of_records() -> None:
    base = {"id": "T.t", "outcome": "error"}
    missing = {**base, "exc_type": "MissingNameError", "touched": [["missing", "jax.foo"]]}
    assert classify(missing) == "missing name"
    assert cause(missing) == "missing jax.foo"
    attr = {**base, "exc_type": "AttributeError", "message": "module 'x' has no attribute 'y'"}
    assert classify(attr) == "missing name"
    wrong = {**base, "exc_type": "ValueError", "wrong_raises": [["(TypeError,)", "ValueError"]]}
    assert classify(wrong) == "wrong error"
    not_raised = {"id": "T.t", "outcome": "fail", "exc_type": "AssertionError",
                  "message": "TypeError not raised"}  # fmt: skip
    assert classify(not_raised) == "wrong error"
    value = {"id": "T.t", "outcome": "fail", "exc_type": "AssertionError", "message": "x != y"}
    assert classify(value) == "wrong value"
    assert classify({**base, "exc_type": "TypeError", "message": "bad operand 3"}) == "crash"
    assert cause({**base, "exc_type": "TypeError", "message": "bad operand 3"}) == (
        "TypeError: bad operand N"
    )
    assert classify({"id": "T.t", "outcome": "timeout"}) == "crash"
    table = [(r"[Pp]map", "pmap")]
    assert scope_reason("T.testPmapThing", {}, table) == "pmap"
    internal = {"touched": [["internal", "jax._src.core.get_aval"]]}
    assert scope_reason("T.t", internal, table).startswith("uses upstream internals")
    assert scope_reason("T.t", {}, table) == ""


def test_jax_runner_machinery(tmp_path: pathlib.Path) -> None:
    from tools.conformance.run_jax import OUT_OF_SCOPE

    path = _write(tmp_path, "tiny_jax_test.py", JAX_MODULE)
    env = {"JAX_NUM_GENERATED_CASES": "2", "JAX_PLATFORMS": "cpu"}
    res = compare_file("jax", path, 2, 60.0, OUT_OF_SCOPE, env, parallel=False)
    # the same cases, named the same, in both runs (JAX's own jtu vs the shim)
    assert set(res.upstream) == set(res.swapped)
    assert sorted(i for i in res.upstream if i.startswith("Tiny.testSin")) == [
        "Tiny.testSin0",
        "Tiny.testSin1",
    ]
    up = {i: r["outcome"] for i, r in res.upstream.items()}
    assert up["Tiny.testGrad"] == "pass" and up["Tiny.testWrongValue"] == "pass"
    sw = res.swapped
    assert sw["Tiny.testSin0"]["outcome"] == "pass"
    assert sw["Tiny.testGrad"]["outcome"] == "pass"
    assert classify(sw["Tiny.testMissingName"]) == "missing name"
    assert classify(sw["Tiny.testWrongError"]) == "wrong error"
    assert classify(sw["Tiny.testWrongValue"]) == "wrong value", sw["Tiny.testWrongValue"]
    assert res.out_of_scope["Tiny.testInternals"].startswith("uses upstream internals")
    assert res.out_of_scope["Tiny.testTracesAProgram"].startswith("jaxpr")
    assert "Tiny.testGrad" in res.passed


def test_torch_runner_machinery(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("torch")  # the baseline run is PyTorch's (expecttest: the test extra)
    from tools.conformance.run_torch import OUT_OF_SCOPE

    path = _write(tmp_path, "tiny_torch_test.py", TORCH_MODULE)
    res = compare_file("torch", path, 0, 60.0, OUT_OF_SCOPE, {}, parallel=False)
    assert set(res.upstream) == set(res.swapped)
    assert {"TestTiny.test_ones_n_1", "TestTiny.test_ones_n_3"} <= set(res.upstream)
    sw = res.swapped
    for name in (
        "TestTiny.test_backward",
        "TestTiny.test_ones_n_1",
        "TestTiny.test_ones_n_3",
        "TestTiny.test_error",
        "TestDevicesCPU.test_device_list_cpu",
    ):
        assert res.upstream[name]["outcome"] == "pass", res.upstream[name]
        assert sw[name]["outcome"] == "pass", sw[name]
    assert res.upstream["TestTiny.test_missing"]["outcome"] == "error"
    assert classify(sw["TestTiny.test_missing"]) == "missing name"
    assert res.out_of_scope["TestTiny.test_cuda_is_out_of_scope"] == "CUDA and other accelerators"


LEFT_BEHIND = """
import os
import pathlib
import subprocess
import sys

from absl.testing import absltest
from jax._src import test_util as jtu


class LeavesAProcess(jtu.JaxTestCase):
    def testStartsASleeper(self):
        # a child that outlives the worker and holds its standard error (a DataLoader
        # worker, multiprocessing's resource tracker)
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(os.environ["SLEEPER_PIDS"], "a") as f:
            f.write(f"{p.pid}\\n")


if __name__ == "__main__":
    absltest.main()
"""


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def test_runner_ends_what_a_worker_leaves_behind(tmp_path: pathlib.Path) -> None:
    """A process a test leaves running neither holds the runner (it waited on the worker's
    stderr pipe until the process ended) nor outlives the run."""
    from tools.conformance.run_jax import OUT_OF_SCOPE

    path = _write(tmp_path, "left_behind_test.py", LEFT_BEHIND)
    pids = tmp_path / "pids"
    env = {"JAX_PLATFORMS": "cpu", "SLEEPER_PIDS": str(pids)}
    res = compare_file("jax", path, 1, 60.0, OUT_OF_SCOPE, env, parallel=False)
    assert res.swapped["LeavesAProcess.testStartsASleeper"]["outcome"] == "pass"
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2  # one per run
    # (SIGKILL is delivered asynchronously: give the processes a moment to go)
    deadline = time.monotonic() + 30
    while any(_running(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(p) for p in started)
