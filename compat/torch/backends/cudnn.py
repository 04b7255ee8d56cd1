"""``torch.backends.cudnn``: settable flags with PyTorch's defaults; no effect in compat."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

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


_FLAGS = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")


@contextlib.contextmanager
def flags(
    enabled: bool = False,
    benchmark: bool = False,
    benchmark_limit: int = 10,
    deterministic: bool = False,
    allow_tf32: bool = True,
    fp32_precision: str = "none",
    depthwise_kernel: str = "auto",
) -> Iterator[None]:
    """The flags set as given inside the block (cuDNN off unless ``enabled``), restored
    after it; as in PyTorch, they change nothing compat computes."""
    module = sys.modules[__name__]
    saved = {name: getattr(module, name) for name in _FLAGS}
    new = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    for name, value in zip(_FLAGS, new):
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
