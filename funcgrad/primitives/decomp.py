"""Primitives of the ``decomp`` family (filled in by issue 13)."""

from __future__ import annotations

FAMILY = "decomp"
