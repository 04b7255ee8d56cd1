"""``funcgrad.experimental``: the names of ``jax.experimental`` funcgrad has
(``io_callback``; the submodules ``ode`` with ``odeint``, ``jet``, Taylor mode, and
``checkify``, functional error checks)."""

from __future__ import annotations

from funcgrad.callbacks import io_callback
from funcgrad.experimental import checkify, jet, ode

__all__ = ["checkify", "io_callback", "jet", "ode"]
