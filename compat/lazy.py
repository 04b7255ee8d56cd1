"""Lazy execution for compat: a whole training step as one XLA program.

With lazy execution on, compat's ops do not run when called: each is appended to a
pending graph (its shapes, dtypes and errors are still checked at the call), and
the graph is evaluated when Python needs a value (``.item()``, printing,
``.numpy()``, a data-dependent shape...), at the end of ``optimizer.step()``, at
:func:`mark_step`, or when it grows past ``POLICY.max_pending`` nodes. A graph
structure seen for the ``POLICY.compile_after``-th time is compiled into one program
(forward, backward and optimizer update fused by XLA) and dispatched once per step;
earlier sightings, and structures that never recur, run op by op as eager execution
does. See ``docs/compat.md`` ("Lazy execution").

    import compat.lazy
    compat.lazy.enable()          # this thread; compat.lazy.set_default(True): all threads
    with compat.lazy.enabled(False):
        ...                       # eager inside
"""

from __future__ import annotations

from typing import Any

from funcgrad._compat_contract import lazy as _lazy

__all__ = [
    "POLICY",
    "clear_cache",
    "disable",
    "enable",
    "enabled",
    "is_enabled",
    "mark_step",
    "reset_stats",
    "set_default",
    "stats",
]

#: when the pending graph is evaluated and when a structure is compiled (see its fields)
POLICY = _lazy.POLICY
enabled = _lazy.enabled
set_default = _lazy.set_default
mark_step = _lazy.mark_step
reset_stats = _lazy.reset_stats
#: forget every structure seen (their compiled programs stay in the compile cache)
clear_cache = _lazy.clear_structures


def enable() -> None:
    """Turn lazy execution on in this thread."""
    _lazy.set_enabled(True)


def disable() -> None:
    """Turn lazy execution off in this thread (what is pending is evaluated first)."""
    _lazy.set_enabled(False)


def is_enabled() -> bool:
    """Whether ops are deferred in this thread."""
    return _lazy.is_on()


def stats() -> dict[str, Any]:
    """Counters since the last :func:`reset_stats`: ``flushes`` (evaluations of the
    pending graph), ``fused`` (of them, run as one compiled program), ``eager`` (run op
    by op), ``compiled`` (new programs), ``nodes`` (ops evaluated), and ``reasons``:
    why each evaluation happened (``"value read at file.py:12"``, the step boundary...),
    and ``changes``: why a structure was new (which call differs from the structure last
    evaluated at the same place, with its input shapes)."""
    return _lazy.stats()
