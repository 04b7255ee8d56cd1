"""``torch.backends.mkldnn``: compat has no oneDNN kernels (XLA compiles its own)."""

from __future__ import annotations


def is_available() -> bool:
    """Whether oneDNN kernels can be used: never in compat."""
    return False
