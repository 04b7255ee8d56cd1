"""Primitives of the ``special`` family (filled in by issue 13)."""

from __future__ import annotations

FAMILY = "special"
