"""Process groups of compat's ``torch.distributed``: the handles, the default group and
the plumbing every collective shares (group lookup, membership, errors)."""

from __future__ import annotations

import enum
import warnings
from typing import Any

import numpy as np

import funcgrad.distributed as fd
from compat._core.tensor import Tensor
from funcgrad._compat_contract import x64

_NOT_INIT = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)


class DistError(RuntimeError):
    """An error of the distributed package (PyTorch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective failed in the backend: a peer exited, timed out or disagreed."""


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


class Backend(str):
    """A backend name: ``Backend("gloo") == "gloo"``."""

    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name: str) -> Backend:
        low = str(name).lower()
        if low not in (cls.GLOO, cls.NCCL, cls.MPI):
            raise ValueError(f"Unknown backend type {name}")
        return super().__new__(cls, low)


class Work:
    """The handle of a collective; compat's collectives are done when they return."""

    def wait(self, timeout: Any = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True


class ProcessGroup:
    """A group of processes (made by ``init_process_group`` or ``new_group``)."""

    def __init__(self, group: fd.ProcessGroup, backend: str) -> None:
        self._g = group
        self._backend = backend

    def rank(self) -> int:
        return self._g.rank

    def size(self) -> int:
        return self._g.size

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._backend!r}, ranks={list(self._g.ranks)})"


class GroupMember:
    """``GroupMember.WORLD`` (the default group) and ``NON_GROUP_MEMBER``."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


_OPS = {
    ReduceOp.SUM: "sum",
    ReduceOp.PRODUCT: "product",
    ReduceOp.MIN: "min",
    ReduceOp.MAX: "max",
    ReduceOp.BAND: "band",
    ReduceOp.BOR: "bor",
    ReduceOp.BXOR: "bxor",
    ReduceOp.AVG: "avg",
}


def _world() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INIT)
    return GroupMember.WORLD


def _group(group: Any) -> ProcessGroup:
    world = _world()
    if group is None or group is GroupMember.WORLD:
        return world
    if group is GroupMember.NON_GROUP_MEMBER:
        return group
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup, got {type(group).__name__}")
    return group


def get_rank(group: Any = None) -> int:
    """This process's rank in ``group`` (-1 if it is not a member)."""
    g = _group(group)
    return -1 if g is GroupMember.NON_GROUP_MEMBER else g._g.rank


def get_world_size(group: Any = None) -> int:
    """How many processes ``group`` has (-1 if this process is not a member)."""
    g = _group(group)
    return -1 if g is GroupMember.NON_GROUP_MEMBER else g._g.size


def get_backend(group: Any = None) -> str:
    """The backend name of ``group`` (``"gloo"`` or ``"nccl"``)."""
    g = _group(group)
    if g is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return g._backend


# ---------------------------------------------------------------------- collectives
def _not_member(g: Any, what: str) -> bool:
    if g is GroupMember.NON_GROUP_MEMBER:
        warnings.warn(
            f"Running {what} on global rank {fd.process_index()} which does not belong to "
            "the given group.",
            stacklevel=3,
        )
        return True
    return False


def _array(t: Any, what: str) -> Any:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected a Tensor, got {type(t).__name__}")
    return t._st.array


def _write(t: Tensor, value: Any) -> None:
    t._set_data_inplace(value)


@x64  # as compat's ops: a float64 tensor's collective stays float64 (it came back float32)
def _call(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except fd.CollectiveError as e:
        raise DistBackendError(str(e)) from None


def _op(op: Any) -> str:
    try:
        return _OPS[op]
    except (KeyError, TypeError):
        raise ValueError(f"unknown reduce op {op!r}") from None


def _rank_in(g: ProcessGroup, r: int, what: str, role: str) -> int:
    """Group rank of global rank ``r`` (``group_dst``/``group_src`` are group ranks)."""
    if r not in g._g.ranks:
        raise ValueError(f"{what}: invalid {role} rank {r} for {g!r}")
    return g._g.ranks.index(r)


def _done(async_op: bool) -> Work | None:
    return Work() if async_op else None


def get_process_group_ranks(group: Any) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    g = _group(group)
    if g is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return list(g._g.ranks)


def get_global_rank(group: Any, group_rank: int) -> int:
    """The global rank of ``group``'s member ``group_rank``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group: Any, global_rank: int) -> int:
    """The rank in ``group`` of the process whose global rank is ``global_rank``."""
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def _bucket(n: int) -> int:
    """Byte-buffer size for ``n`` bytes: powers of two (at least 64), so that messages of
    many sizes share few compiled programs."""
    return max(64, 1 << max(0, n - 1).bit_length())


def _padded(data: bytes, size: int) -> np.ndarray:
    """``data`` as a ``uint8`` array of ``size`` bytes, zero-padded."""
    buf = np.zeros(size, np.uint8)
    buf[: len(data)] = np.frombuffer(data, np.uint8)
    return buf
