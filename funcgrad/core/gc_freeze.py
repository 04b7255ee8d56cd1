"""Python's cyclic garbage collector and the objects imports leave behind.

Importing JAX, NumPy, SciPy and funcgrad leaves ~120,000 objects alive for
the life of the process. Python's full (generation-2) collection scans every one of
them each time the objects that survived into that generation have grown by a
quarter, and eager work (compat's op traces, a growing sequence retracing each op at
its new length) makes such survivors steadily: measured here, half the wall time of
a small GPT generating 16 tokens (0.13 of 0.28 s) went to those full collections.

:func:`freeze` moves every object alive now into the collector's permanent
generation (:func:`gc.freeze`), which collections no longer scan; objects are still
freed by reference counting, only cycles among them are never collected (for modules,
classes and functions that live as long as the process anyway). ``import funcgrad`` and
``import compat.torch`` call it at their end. Set ``FUNCGRAD_GC_FREEZE=0`` in the
environment to keep the collector as Python's default, or
``funcgrad.config.update("funcgrad_gc_freeze", False)`` to unfreeze later.
"""

from __future__ import annotations

import gc
import os

from funcgrad import config

_ENV = "FUNCGRAD_GC_FREEZE"


def _enabled() -> bool:
    return os.environ.get(_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def freeze() -> None:
    """Move the objects alive now out of the collector's scans (when the option is on)."""
    if config.read("funcgrad_gc_freeze"):
        gc.freeze()


def _on_change(on: bool) -> None:
    if on:
        gc.freeze()
    else:
        gc.unfreeze()


config.define(
    "funcgrad_gc_freeze",
    _enabled(),
    "Keep the objects alive at import out of Python's full garbage collections "
    f"(gc.freeze); default on, off with {_ENV}=0 (see funcgrad.core.gc_freeze).",
    _on_change,
)
