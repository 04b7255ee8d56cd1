"""Programs to JAX: lowering and eager evaluation (names kept for their importers).

:func:`lower_program` (one Python function over ``jax.lax`` for a whole
program) lives in :mod:`funcgrad.core.lowering`; :func:`run_program` (eager
evaluation, compiled once a structure recurs) is :func:`funcgrad.core.compile_cache.run`,
and the executables it compiles live in that one cache.
"""

from __future__ import annotations

from funcgrad.core.compile_cache import run as run_program
from funcgrad.core.lowering import lower_program

__all__ = ["lower_program", "run_program"]
