"""Switches and hooks of ``funcgrad.debug`` read by the core (kept here, below the
interpreters, so they can check one attribute; ``funcgrad.debug`` fills them in).

With nothing enabled each hook point costs one attribute test: ``nans`` (check for
NaN/Inf), ``recompiles`` (explain ``jit`` re-traces).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class _Hooks:
    """The state of the debugging switches (one process-wide instance, :data:`hooks`)."""

    def __init__(self) -> None:
        #: ``funcgrad.debug.nans``: check eager results and program outputs for NaN/Inf
        self.nans = False
        #: ``funcgrad.debug.explain_recompiles``: warn when a jitted function traces again
        self.recompiles = False
        #: depth of program runs in progress under ``nans`` (their ops are not checked
        #: one by one: only the program's outputs are)
        self.in_program = 0
        #: ``(prim, args, params, out)`` -> None; raises for a non-finite eager result
        self.check_eager: Callable[..., None] | None = None
        #: ``(prog, args, outs)`` -> None; raises, locating the origin, for non-finite outs
        self.check_program: Callable[..., None] | None = None
        #: ``(jitted, key, earlier_keys, args, kwargs)`` -> None; warns
        self.explain_recompile: Callable[..., None] | None = None


hooks = _Hooks()


def set_hook(name: str, fn: Any) -> None:
    """Install one of the hooks (``check_eager``, ``check_program``, ``explain_recompile``)."""
    if not hasattr(hooks, name):
        raise AttributeError(name)
    setattr(hooks, name, fn)
