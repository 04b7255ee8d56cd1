"""``torch.backends.mps``: compat has no MPS device."""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
