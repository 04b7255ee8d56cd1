"""Test configuration: float64 on (tests/compat turn it off per test), hypothesis profiles."""

import os

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
