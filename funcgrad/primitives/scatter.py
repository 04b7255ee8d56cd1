"""Primitives of the ``scatter`` family (filled in by issue 13)."""

from __future__ import annotations

FAMILY = "scatter"
