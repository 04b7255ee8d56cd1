"""``funcgrad.experimental``: the names of ``jax.experimental`` funcgrad has
(``io_callback``)."""

from __future__ import annotations

from funcgrad.callbacks import io_callback

__all__ = ["io_callback"]
