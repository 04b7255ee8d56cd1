"""Test configuration: float64 on (tests/compat turn it off per test), hypothesis profiles,
and JAX/XLA set for many small programs that run once (classic emitters, optimisation
level 0, one compilation cache for the run, reused MLIR contexts)."""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import threading

# The suite compiles thousands of tiny programs, so its time is mostly XLA's fixed cost per
# compilation. XLA's MLIR fusion emitters (the CPU default) take about twice as long per
# compilation as its classic LLVM emitters (measured: 45 -> 25 ms for ``x + 1``), and both
# are XLA's own code generators for the same HLO, so the tests use the classic ones. Set
# before JAX creates its CPU client (the first computation), inherited by subprocesses.
# XLA aborts the process on a flag it does not know, and newer XLAs retired this one, so
# a child process tries it first (once: xdist's workers inherit the answer through the
# environment).
if "--xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", "") and not (
    os.environ.get("FUNCGRAD_TESTS_NO_CLASSIC_EMITTERS")
):
    if (
        subprocess.run(
            [sys.executable, "-c", "import jax; jax.numpy.zeros(1).block_until_ready()"],
            env={
                **os.environ,
                "JAX_PLATFORMS": "cpu",
                "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")
                + " --xla_cpu_use_fusion_emitters=false",
            },
            capture_output=True,
            check=False,
        ).returncode
        == 0
    ):
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false"
        ).strip()
    else:
        os.environ["FUNCGRAD_TESTS_NO_CLASSIC_EMITTERS"] = "1"

# Bytecode: with PYTHONDONTWRITEBYTECODE set (this machine sets it) nothing writes .pyc
# files, so every Python process of the run -- both xdist workers and the
# subprocesses the suite starts (distributed, fresh-interpreter, example tests) --
# compiled funcgrad, compat and the test modules from source again (~1.1 s CPU per
# process for funcgrad + compat). The run writes them (to the gitignored __pycache__
# folders; site-packages already has its own) and its subprocesses read them. Measured on
# five subprocess-heavy files from a fresh tree (-n 0): 50.3 -> 42.9 s CPU.
# FUNCGRAD_TEST_WRITE_BYTECODE=0 keeps the caller's setting.
if os.environ.get("FUNCGRAD_TEST_WRITE_BYTECODE") != "0":
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import jax
from hypothesis import HealthCheck, settings

jax.config.update("jax_enable_x64", True)
# JAX's own switch for programs that run once: XLA at optimisation level 0 without its
# expensive LLVM passes (the suite's programs run once, so their compile time counts, not
# their speed; -23 % CPU on the heaviest files). The programs mean the same, and the
# samplers stay bit-identical to JAX's at either level (docs/design.md). Subprocesses
# inherit it through the environment variable; JAX_DISABLE_MOST_OPTIMIZATIONS=0 runs the
# suite at XLA's defaults.
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
jax.config.update(
    "jax_disable_most_optimizations", os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"] == "1"
)

# One XLA compilation cache for the whole run (JAX's persistent cache, in a temporary
# directory the run removes at exit): identical programs compiled by different tests or by
# the other xdist worker are compiled once (measured: a third of the programs one worker
# compiles, the other compiles too; -7 % of the time of the heaviest files). The controller
# (or a run without xdist) creates the directory; workers find it in the environment.
if "FUNCGRAD_TEST_XLA_CACHE" not in os.environ:
    os.environ["FUNCGRAD_TEST_XLA_CACHE"] = tempfile.mkdtemp(prefix="funcgrad-xla-cache-")
    atexit.register(shutil.rmtree, os.environ["FUNCGRAD_TEST_XLA_CACHE"], True)
jax.config.update("jax_compilation_cache_dir", os.environ["FUNCGRAD_TEST_XLA_CACHE"])
# the suite's subprocesses (which do not load this file) use the run's cache too
os.environ.setdefault("FUNCGRAD_CACHE_DIR", os.environ["FUNCGRAD_TEST_XLA_CACHE"])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

# JAX builds a fresh MLIR context for every program it lowers (its private
# ``jax._src.interpreters.mlir.make_ir_context``), and loading the dialects into one costs
# more than lowering a small program. The suite lowers tens of thousands of programs, so
# each thread reuses one context for a batch of lowerings (a fresh one every 256, which
# bounds what the context accumulates). The programs are the same; only the container
# their IR is built in is shared. Measured again on JAX 0.10.2 (3.5 ms per fresh context):
# test_lax.py + primitives/test_shape_smoke.py (-n 0, two runs each) take 29-33 s of CPU
# with the reuse and 39-43 s without. This is the one place the suite patches a JAX private:
# tests/test_suite_setup.py fails when the installed JAX no longer has the function or
# its lowering no longer calls it. FUNCGRAD_TEST_REUSE_IR_CONTEXT=0 turns it off.
try:
    from jax._src.interpreters import mlir as _mlir
except ImportError:  # JAX moved it: the suite runs without the reuse, the test says so
    _mlir = None
_fresh_ir_context = getattr(_mlir, "make_ir_context", None)
_ir_contexts = threading.local()


def _reused_ir_context() -> object:
    uses = getattr(_ir_contexts, "uses", 0)
    if uses % 256 == 0:
        _ir_contexts.context = _fresh_ir_context()
    _ir_contexts.uses = uses + 1
    return _ir_contexts.context


if _fresh_ir_context is not None and os.environ.get("FUNCGRAD_TEST_REUSE_IR_CONTEXT") != "0":
    _mlir.make_ir_context = _reused_ir_context

# the tier-policy tests' shared fixture (``policy``), loaded after the settings above; and
# the per-test profile (tests/suite_profile.py) when FUNCGRAD_TEST_PROFILE names a folder
pytest_plugins = ["tiers_testutil"] + (
    ["suite_profile"] if os.environ.get("FUNCGRAD_TEST_PROFILE") else []
)

settings.register_profile(
    "default",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# CI: derandomized and fewer examples per property, to keep the suite within its 30-minute
# budget on 2 cores; run locally (no CI variable) for the fuller default search
settings.register_profile(
    "ci", parent=settings.get_profile("default"), derandomize=True, max_examples=8
)
settings.load_profile("ci" if os.environ.get("CI") else "default")
