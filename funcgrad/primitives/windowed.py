"""Primitives of the ``windowed`` family (filled in by issue 13)."""

from __future__ import annotations

FAMILY = "windowed"
