"""``funcgrad.debug``: JAX's ``jax.debug.print`` and ``jax.debug.callback``, and tools
that answer from funcgrad's IR: where a NaN was made (:func:`nans`), why a jitted
function compiled again (:func:`explain_recompiles`), what the reverse pass keeps
(:func:`saved_residuals`), what XLA says a compiled program costs (:func:`cost`) and
where eager work ran, host tier or compiled (:func:`tier_stats`).
:func:`breakpoint` (``jax.debug.breakpoint``) stops in a debugger (:mod:`pdb` unless
another backend is registered with :func:`register_debugger`) on the runtime values
of the caller's locals.

``print``/``callback``/``breakpoint`` work eagerly and under every transform: under ``jit`` the call
is a host callback inside the compiled program, under ``vmap`` it runs once per batch
element, under ``grad``/``jvp`` it sees the primal values (it is not differentiated,
and dead-code elimination keeps it; see :mod:`funcgrad.primitives.effects`).

    >>> import funcgrad as fg
    >>> f = fg.jit(lambda x: (fg.debug.print("x = {}", x), x * 2)[1])
"""

from __future__ import annotations

from funcgrad.debug._breakpoint import DebuggerFrame, breakpoint, register_debugger
from funcgrad.debug._cost import Cost, cost
from funcgrad.debug._nans import nans
from funcgrad.debug._print import callback, print
from funcgrad.debug._recompiles import RecompileWarning, explain_recompiles
from funcgrad.debug._residuals import Residual, SavedResiduals, saved_residuals
from funcgrad.debug._tiers import reset_tier_stats, tier_stats

__all__ = [
    "Cost",
    "DebuggerFrame",
    "RecompileWarning",
    "Residual",
    "SavedResiduals",
    "breakpoint",
    "callback",
    "cost",
    "explain_recompiles",
    "nans",
    "print",
    "register_debugger",
    "reset_tier_stats",
    "saved_residuals",
    "tier_stats",
]
