"""``torch.distributed`` on JAX's distributed runtime (``funcgrad.distributed``).

``init_process_group`` joins the processes of a run (``env://``, ``tcp://`` or
``file://``; backend ``gloo`` carries the collectives on CPU devices, ``nccl`` on GPU
devices); the collectives run as XLA collectives between one device per process, and
write their results into the tensors in place as PyTorch's do. All calls are
synchronous: ``async_op=True`` returns a completed :class:`Work`.

Timeouts (the ``timeout`` argument, 45 s by default, unlike PyTorch's 30 minutes)
bound every wait on the other processes; a process that dies makes the others fail
within 30 s (JAX's heartbeat timeout) with an error, never a hang. A process calls
``init_process_group`` before it creates tensors (JAX fixes the devices of all
processes when its backend starts).
"""

from __future__ import annotations

import datetime
import enum
import os
import warnings
from collections.abc import Sequence
from typing import Any

import funcgrad.distributed as fd
from compat._core import device as _dev
from compat._core.tensor import Tensor
from compat.torch.distributed._rendezvous import rendezvous

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "GroupMember",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "destroy_process_group",
    "gather",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_process_group",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_nccl_available",
    "is_torchelastic_launched",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "send",
]

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


def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False):
    """Reduce ``tensor`` over the group with ``op``, in place on every process."""
    g = _group(group)
    if _not_member(g, "all_reduce"):
        return None
    x = _array(tensor, "all_reduce")
    _write(tensor, _call(g._g.all_reduce, x, _op(op)))
    return _done(async_op)


def reduce(
    tensor: Tensor,
    dst: int | None = None,
    op: Any = ReduceOp.SUM,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
):
    """Reduce ``tensor`` over the group into rank ``dst``'s tensor (others keep theirs)."""
    g = _group(group)
    if _not_member(g, "reduce"):
        return None
    d = (
        group_dst
        if group_dst is not None
        else _rank_in(g, 0 if dst is None else dst, "reduce", "dst")
    )
    out = _call(g._g.all_reduce, _array(tensor, "reduce"), _op(op))
    if g._g.rank == d:
        _write(tensor, out)
    return _done(async_op)


def broadcast(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_src: int | None = None,
):
    """Rank ``src``'s ``tensor`` copied into every process's ``tensor``."""
    g = _group(group)
    if _not_member(g, "broadcast"):
        return None
    s = (
        group_src
        if group_src is not None
        else _rank_in(g, 0 if src is None else src, "broadcast", "root")
    )
    _write(tensor, _call(g._g.broadcast, _array(tensor, "broadcast"), s))
    return _done(async_op)


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None, async_op: bool = False):
    """Every process's ``tensor`` into ``tensor_list`` (one entry per rank)."""
    g = _group(group)
    if _not_member(g, "all_gather"):
        return None
    if len(tensor_list) != g._g.size:
        raise ValueError(
            f"all_gather: tensor_list has {len(tensor_list)} entries for a group of "
            f"{g._g.size} processes"
        )
    x = _array(tensor, "all_gather")
    for i, t in enumerate(tensor_list):
        if tuple(t.shape) != tuple(x.shape):
            raise RuntimeError(
                f"all_gather: invalid tensor size at index {i} (expected {tuple(x.shape)}, "
                f"got {tuple(t.shape)})"
            )
    out = _call(g._g.all_gather, x)
    for i, t in enumerate(tensor_list):
        _write(t, out[i])
    return _done(async_op)


def all_gather_into_tensor(
    output_tensor: Tensor, input_tensor: Tensor, group: Any = None, async_op: bool = False
):
    """Every process's ``input_tensor`` concatenated along dim 0 into ``output_tensor``."""
    g = _group(group)
    if _not_member(g, "all_gather_into_tensor"):
        return None
    x = _array(input_tensor, "all_gather_into_tensor")
    n = g._g.size
    want = (n * x.shape[0], *x.shape[1:]) if x.ndim else (n,)
    if tuple(output_tensor.shape) != want:
        raise RuntimeError(
            f"all_gather_into_tensor: output of shape {tuple(output_tensor.shape)} does not hold "
            f"{n} inputs of shape {tuple(x.shape)} concatenated along dim 0 (expected {want})"
        )
    out = _call(g._g.all_gather, x)
    _write(output_tensor, out.reshape(tuple(output_tensor.shape)))
    return _done(async_op)


def reduce_scatter_tensor(
    output: Tensor, input: Tensor, op: Any = ReduceOp.SUM, group: Any = None, async_op: bool = False
):
    """Reduce ``input`` (``size`` chunks along dim 0) over the group; rank ``i`` gets chunk ``i``."""
    g = _group(group)
    if _not_member(g, "reduce_scatter_tensor"):
        return None
    x = _array(input, "reduce_scatter_tensor")
    n = g._g.size
    o = tuple(output.shape)
    if x.shape != ((n * o[0], *o[1:]) if o else (n,)):
        raise RuntimeError(
            f"reduce_scatter_tensor: input of shape {tuple(x.shape)} is not {n} chunks of the "
            f"output's shape {o} along dim 0"
        )
    out = _call(g._g.reduce_scatter, x.reshape((n, *o)), _op(op))
    _write(output, out)
    return _done(async_op)


def gather(
    tensor: Tensor,
    gather_list: list | None = None,
    dst: int | None = None,
    group: Any = None,
    async_op: bool = False,
    group_dst: int | None = None,
):
    """Every process's ``tensor`` into rank ``dst``'s ``gather_list``."""
    g = _group(group)
    if _not_member(g, "gather"):
        return None
    d = (
        group_dst
        if group_dst is not None
        else _rank_in(g, 0 if dst is None else dst, "gather", "dst")
    )
    out = _call(g._g.all_gather, _array(tensor, "gather"))
    if g._g.rank == d:
        if gather_list is None or len(gather_list) != g._g.size:
            raise ValueError("gather: the destination needs a gather_list with one entry per rank")
        for i, t in enumerate(gather_list):
            _write(t, out[i])
    return _done(async_op)


def send(
    tensor: Tensor,
    dst: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> None:
    """Send ``tensor`` to rank ``dst``, which calls :func:`recv` for it."""
    g = _group(group)
    if _not_member(g, "send"):
        return
    d = (
        group_dst
        if group_dst is not None
        else _rank_in(g, -1 if dst is None else dst, "send", "destination")
    )
    if d == g._g.rank:
        raise ValueError(
            "Invalid destination rank: destination rank should not be the same as the rank of "
            "the current process."
        )
    _call(g._g.send_recv, _array(tensor, "send"), g._g.rank, d)


def recv(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
) -> int:
    """Receive into ``tensor`` what rank ``src`` sends; returns ``src``."""
    g = _group(group)
    if _not_member(g, "recv"):
        return -1
    if src is None and group_src is None:
        raise ValueError("recv: compat needs src (receiving from any rank is not supported)")
    s = group_src if group_src is not None else _rank_in(g, src, "recv", "source")
    if s == g._g.rank:
        raise ValueError(
            "Invalid source rank: source rank should not be the same as the rank of the current "
            "process."
        )
    _write(tensor, _call(g._g.send_recv, _array(tensor, "recv"), s, g._g.rank))
    return g._g.ranks[s]


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None):
    """Wait until every process of the group reaches the barrier."""
    g = _group(group)
    if _not_member(g, "barrier"):
        return None
    _call(g._g.barrier, "barrier")
    return _done(async_op)
