"""``torch.distributed`` on JAX's distributed runtime (``funcgrad.distributed``).

``init_process_group`` joins the processes of a run (``env://``, ``tcp://`` or
``file://``; backend ``gloo`` carries the collectives on CPU devices, ``nccl`` on GPU
devices); the collectives run as XLA collectives between one device per process, and
write their results into the tensors in place as PyTorch's do. Collectives are
synchronous (``async_op=True`` returns a completed :class:`Work`); ``isend``/``irecv``
are queued until a handle is waited on (see ``_p2p``).

Timeouts (the ``timeout`` argument, 45 s by default, unlike PyTorch's 30 minutes)
bound every wait on the other processes; a process that dies makes the others fail
within 30 s (JAX's heartbeat timeout) with an error, never a hang. A process calls
``init_process_group`` before it creates tensors (JAX fixes the devices of all
processes when its backend starts).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Sequence
from typing import Any

import funcgrad.distributed as fd
from compat._core import device as _dev
from compat.torch.distributed._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    monitored_barrier,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from compat.torch.distributed._group import (
    Backend,
    DistBackendError,
    DistError,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    Work,
    _world,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
)
from compat.torch.distributed._objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from compat.torch.distributed._p2p import (
    P2POp,
    batch_isend_irecv,
    irecv,
    isend,
    recv,
    send,
)
from compat.torch.distributed._rendezvous import rendezvous

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "GroupMember",
    "P2POp",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
]


# ---------------------------------------------------------------------- set-up and queries
def is_available() -> bool:
    return True


def is_gloo_available() -> bool:
    return True


def is_nccl_available() -> bool:
    return bool(_dev.gpus())


def is_mpi_available() -> bool:
    return False


def is_initialized() -> bool:
    return GroupMember.WORLD is not None


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def _backend_name(backend: str | None) -> str:
    """The backend ``backend`` names; ``None`` or ``"cpu:gloo,cuda:nccl"`` give ``"auto"``,
    decided once the runtime is up (asking for GPUs before it would start JAX's backend)."""
    if backend is None:
        return "auto"
    name = str(backend).lower()
    if ":" in name:  # "cpu:gloo,cuda:nccl": the device kind compat has picks one
        pairs = dict(p.split(":", 1) for p in name.split(","))
        if set(pairs.values()) == {Backend.GLOO, Backend.NCCL}:
            return "auto"
        name = next(iter(pairs.values()))
    if name not in (Backend.GLOO, Backend.NCCL, Backend.MPI):
        raise AssertionError(f"Unknown backend type {backend}")
    if name == Backend.MPI:
        raise RuntimeError("Distributed package doesn't have MPI built in")
    return name


def _seconds(timeout: Any) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return float(timeout)


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: datetime.timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store: Any = None,
    group_name: str = "",
    pg_options: Any = None,
    device_id: Any = None,
) -> None:
    """Join the default process group (see the module docstring for the init methods).

    Raises:
        ValueError: a second call (PyTorch's "twice" error), missing rank or world size.
        RuntimeError: an unknown init method, a backend without devices, a process that
            cannot reach the coordinator.
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("init_process_group: store= is not supported; use init_method")
    name = _backend_name(backend)
    seconds = _seconds(timeout)
    if seconds is not None:
        fd.set_collective_timeout(seconds)
    addr, rank, world_size = rendezvous(
        init_method or "env://", rank, world_size, fd.collective_timeout()
    )
    if fd.is_initialized():  # after destroy_process_group, or funcgrad set up the run
        if (fd.process_index(), fd.process_count()) != (rank, world_size):
            raise RuntimeError(
                f"init_process_group: rank {rank} of {world_size} does not match the running "
                f"distributed runtime (process {fd.process_index()} of {fd.process_count()})"
            )
    else:
        # one GPU per process, as torchrun's LOCAL_RANK says (CPU processes use their CPU)
        local = os.environ.get("LOCAL_RANK") if name != Backend.GLOO else None
        try:
            fd.initialize(addr, world_size, rank, None if local is None else [int(local)])
        except RuntimeError as e:
            raise DistBackendError(str(e)) from None
    if name == "auto":
        name = Backend.NCCL if _dev.gpus() else Backend.GLOO
    if name == Backend.NCCL and not _dev.gpus():
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    platform = "gpu" if name == Backend.NCCL else "cpu"
    GroupMember.WORLD = ProcessGroup(fd.ProcessGroup(None, platform, gid="world"), name)


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Forget ``group`` (the default group: every group). JAX's runtime stays up, so a
    later ``init_process_group`` with the same rank and world size joins again."""
    if GroupMember.WORLD is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is GroupMember.WORLD:
        GroupMember.WORLD = None


def new_group(
    ranks: Sequence[int] | None = None,
    timeout: datetime.timedelta | None = None,
    backend: str | None = None,
    pg_options: Any = None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
    device_id: Any = None,
) -> Any:
    """A group of ``ranks`` (all processes by default). Every process calls it, members or
    not, in the same order; a non-member gets ``GroupMember.NON_GROUP_MEMBER``."""
    world = _world()
    name = _backend_name(backend)
    if name == "auto":
        name = world._backend
    g = fd.ProcessGroup(ranks, "gpu" if name == Backend.NCCL else "cpu")
    if g.rank < 0:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(g, name)
