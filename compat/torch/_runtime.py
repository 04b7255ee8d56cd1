"""Process-wide switches PyTorch programs set: matmul precision, determinism, threads.

They are recorded and read back as PyTorch does. Matmul precision and determinism do
not change compat's computations (XLA chooses matmul precision; compat's ops are
deterministic on the CPU). The intra-op thread count starts as PyTorch's
(``OMP_NUM_THREADS``, else the cores), and ``set_num_threads(n)`` before the first tensor
sizes XLA's CPU thread pool (``funcgrad_cpu_threads``); XLA sizes it once, when its CPU
client starts, so a later call is recorded only, and ``PJRT_NPROC``/``NPROC`` in the
environment (XLA's own setting) win. ``OMP_NUM_THREADS`` alone does not size XLA's pool:
torchrun-style launchers set it to 1 for every worker, and with one pool thread XLA's CPU
collectives (gloo) took ~4 ms an all-reduce instead of ~0.8 (docs/design.md)."""

from __future__ import annotations

import contextlib
import importlib
import os
import warnings
from typing import Any

import funcgrad
from compat._core import creation as _creation
from compat._core import device as _device
from compat._core import dtypes as _dt
from compat._core.ops import _common as _ops_common

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_default_device",
    "get_float32_matmul_precision",
    "get_num_interop_threads",
    "get_num_threads",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_warn_always_enabled",
    "set_default_device",
    "set_default_tensor_type",
    "set_float32_matmul_precision",
    "set_num_interop_threads",
    "set_num_threads",
    "set_warn_always",
    "use_deterministic_algorithms",
]

#: XLA's CPU pool size chosen in the environment (XLA's own variables), left alone
_POOL_FROM_ENV = any(os.environ.get(v, "").strip() for v in ("PJRT_NPROC", "NPROC"))


def _omp_threads() -> int | None:
    """``OMP_NUM_THREADS`` as PyTorch reads it for its intra-op pool, if set."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def _size_pool(num: int) -> None:
    """Give XLA's CPU intra-op pool ``num`` threads while its client has not started."""
    if _POOL_FROM_ENV:
        return
    # (once XLA's pool has started nothing resizes it: the count is recorded only)
    with contextlib.suppress(RuntimeError):
        funcgrad.config.update("funcgrad_cpu_threads", num)


_state = {
    "precision": "highest",
    "deterministic": False,
    "warn_only": False,
    "threads": min(_omp_threads() or os.cpu_count() or 1, os.cpu_count() or 1),
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


def _thread_count(name: str, num: Any) -> int:
    """PyTorch's checks of a thread count: an int (not a bool) that fits a C ``int``,
    positive."""
    if not isinstance(num, int) or isinstance(num, bool):
        raise RuntimeError(f"{name} expects an int, but got {type(num).__name__}")
    if not -(2**63) <= num < 2**63:
        raise ValueError("Overflow when unpacking long long")
    if not -(2**31) <= num < 2**31:
        raise ValueError("Overflow when unpacking long")
    if num <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return num


def set_num_threads(num: int) -> None:
    """Set the intra-op thread count: XLA's CPU pool size if no tensor exists yet (XLA
    sizes its pool once, when its client starts), recorded and read back always."""
    _state["threads"] = _thread_count("set_num_threads", num)
    _size_pool(_state["threads"])


def get_num_threads() -> int:
    return _state["threads"]


def set_num_interop_threads(num: int) -> None:
    """Record the inter-op thread count (XLA schedules compat's work)."""
    _state["interop"] = _thread_count("set_num_interop_threads", num)


def get_num_interop_threads() -> int:
    return _state["interop"]


def set_warn_always(b: bool) -> None:
    """Make the warnings PyTorch gives once per process (the deprecated ``torch.svd``,
    ``torch.lu``, ... ops) warn every time, or once again (``False``)."""
    _ops_common.WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    """Whether :func:`set_warn_always` is on."""
    return _ops_common.WARN_ALWAYS[0]


#: ``torch.set_default_device``/``get_default_device`` (per thread, as PyTorch's)
set_default_device = _device.set_default_device
get_default_device = _device.get_default_device


def set_default_tensor_type(t: Any, /) -> None:
    """PyTorch's deprecated ``set_default_tensor_type``: a legacy tensor type
    (``torch.DoubleTensor``, or its dotted name) sets the default dtype; only floating
    types are accepted, as PyTorch's (its deprecation warning once)."""
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        module, _, name = t.rpartition(".")
        if not module:
            raise ModuleNotFoundError(f"No module named {t!r}")
        base = "compat.torch" + module[len("torch") :] if module.startswith("torch") else module
        t = getattr(importlib.import_module(base), name)
    _ops_common.warn_once(
        "set_default_tensor_type",
        "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
        "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
    )
    if not isinstance(t, _creation._LegacyTensorType):
        raise TypeError(
            "invalid type object: only floating-point types are supported as the default type"
        )
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dt.set_default_dtype(t.dtype)
