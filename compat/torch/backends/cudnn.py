"""``torch.backends.cudnn``: settable flags with PyTorch's defaults; no effect in compat."""

from __future__ import annotations

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """cuDNN is never used by compat (as a CPU-only PyTorch build reports)."""
    return False


def version() -> None:
    return None
