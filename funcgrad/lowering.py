"""Programs to JAX: lowering and eager evaluation (names kept for their importers).

:func:`lower_program` (one Python function over ``jax.lax`` for a whole
program) lives in :mod:`funcgrad.core.lowering`; :func:`run_program` (eager
evaluation: the host tier while cold, compiled in the background once hot) is
:func:`funcgrad.core.tiers.run`, and the executables it compiles live in the one
compile cache.
"""

from __future__ import annotations

from funcgrad.core.lowering import lower_program
from funcgrad.core.tiers import run as run_program

__all__ = ["lower_program", "run_program"]
