"""Process-wide switches PyTorch programs set: matmul precision, determinism, threads.

They are recorded and read back as PyTorch does; compat's computations are not
affected (XLA chooses matmul precision and threading; compat's ops are deterministic
on the CPU)."""

from __future__ import annotations

import os
import warnings

from compat._core.ops import _common as _ops_common

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_float32_matmul_precision",
    "get_num_interop_threads",
    "get_num_threads",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_warn_always_enabled",
    "set_float32_matmul_precision",
    "set_num_interop_threads",
    "set_num_threads",
    "set_warn_always",
    "use_deterministic_algorithms",
]

_state = {
    "precision": "highest",
    "deterministic": False,
    "warn_only": False,
    "threads": os.cpu_count() or 1,
    "interop": os.cpu_count() or 1,
}


def set_float32_matmul_precision(precision: str) -> None:
    """``'highest'``, ``'high'`` or ``'medium'``; anything else warns and is ignored."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    if not isinstance(mode, bool):
        raise TypeError(
            "_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
            f"{type(mode).__name__}"
        )
    _state["deterministic"] = mode
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_num_threads(num: int) -> None:
    if not isinstance(num, int) or isinstance(num, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _state["threads"] = num


def get_num_threads() -> int:
    return _state["threads"]


def set_num_interop_threads(num: int) -> None:
    if num <= 0:
        raise RuntimeError("Expected num_threads > 0, but got: " + str(num))
    _state["interop"] = int(num)


def get_num_interop_threads() -> int:
    return _state["interop"]


def set_warn_always(b: bool) -> None:
    """Make the warnings PyTorch gives once per process (the deprecated ``torch.svd``,
    ``torch.lu``, ... ops) warn every time, or once again (``False``)."""
    _ops_common.WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` is on."""
    return _ops_common.WARN_ALWAYS[0]
