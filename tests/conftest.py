"""Test configuration: float64 on (tests/compat turn it off per test), hypothesis profiles,
and XLA's CPU compiler set for many small programs."""

import os

# The suite compiles thousands of tiny programs, so its time is mostly XLA's fixed cost per
# compilation. XLA's MLIR fusion emitters (the CPU default) take about twice as long per
# compilation as its classic LLVM emitters (measured: 45 -> 25 ms for ``x + 1``), and both
# are XLA's own code generators for the same HLO, so the tests use the classic ones. Set
# before JAX creates its CPU client (the first computation), inherited by subprocesses.
if "--xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false"
    ).strip()

import jax
from hypothesis import HealthCheck, settings

jax.config.update("jax_enable_x64", True)

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
