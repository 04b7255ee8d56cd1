"""``funcgrad.experimental``: the names of ``jax.experimental`` funcgrad has
(``io_callback``; the submodules ``ode`` with ``odeint`` and ``jet``, Taylor mode)."""

from __future__ import annotations

from funcgrad.callbacks import io_callback
from funcgrad.experimental import jet, ode

__all__ = ["io_callback", "jet", "ode"]
