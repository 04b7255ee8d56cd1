"""``torch.distributed``: a single-process stand-in.

No process group can be created (``init_process_group`` raises NotImplementedError),
so ``is_initialized()`` is ``False`` and every collective or query that needs the
default group raises PyTorch's ``ValueError``. ``is_available()`` is ``False``:
compat has no distributed backend. Programs that guard distributed code with
``dist.is_available() and dist.is_initialized()`` run their single-process branch.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = [
    "ReduceOp",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "destroy_process_group",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_initialized",
    "reduce",
]

_NOT_INIT = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class ReduceOp(enum.Enum):
    """Reduction kinds of the collectives."""

    SUM = 0
    PRODUCT = 1
    MIN = 2
    MAX = 3
    BAND = 4
    BOR = 5
    BXOR = 6
    AVG = 7


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def init_process_group(*args: Any, **kwargs: Any) -> None:
    raise NotImplementedError(
        "torch.distributed.init_process_group: compat.torch runs in a single process"
    )


def _no_group(*args: Any, **kwargs: Any) -> Any:
    raise ValueError(_NOT_INIT)


def get_rank(group: Any = None) -> int:
    return _no_group()


def get_world_size(group: Any = None) -> int:
    return _no_group()


def get_backend(group: Any = None) -> str:
    return _no_group()


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> None:
    _no_group()


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False):
    _no_group()


def reduce(tensor: Any, dst: int = 0, op: Any = ReduceOp.SUM, group: Any = None, **kw: Any):
    _no_group()


def broadcast(tensor: Any, src: int = 0, group: Any = None, async_op: bool = False) -> None:
    _no_group()


def all_gather(tensor_list: Any, tensor: Any, group: Any = None, async_op: bool = False):
    _no_group()


def destroy_process_group(group: Any = None) -> None:
    raise AssertionError("Process group cannot be None")
