"""``funcgrad.experimental``: the names of ``jax.experimental`` funcgrad has
(``io_callback``; the submodule ``ode`` with ``odeint``)."""

from __future__ import annotations

from funcgrad.callbacks import io_callback
from funcgrad.experimental import ode

__all__ = ["io_callback", "ode"]
