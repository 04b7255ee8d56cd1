"""Process groups: collectives between processes on their process-local arrays.

A :class:`ProcessGroup` is a list of processes and a one-axis mesh holding one device
of each (axis ``"processes"``, in the group's rank order). A collective stacks every
process's array into a global array of shape ``(group size, *shape)`` sharded over that
axis, runs a small ``funcgrad.jit`` program on it (a sum over the axis, an index, ...)
whose output sharding asks XLA for the communication (an all-reduce, an all-gather, a
reduce-scatter), and returns this process's shard. The communication is XLA's: gloo on
CPU, NCCL on GPU. Programs are funcgrad programs, compiled once per signature through
the one compile cache.

Before a signature (collective, shape, dtype) is first used in a group, the processes
compare it through the coordination service's key-value store: different shapes or
dtypes are a :class:`CollectiveError` naming both, instead of a crash inside gloo; a
process that does not arrive within :func:`collective_timeout` seconds is one too.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import funcgrad.numpy as fnp
from funcgrad.api._shard_map import shard_map
from funcgrad.core import compile_cache
from funcgrad.core.ir import Program
from funcgrad.distributed._runtime import (
    CollectiveError,
    block_assembler,
    collective_timeout,
    host_to_device,
    kv_client,
    local_executable,
    process_count,
    process_index,
)
from funcgrad.jit import jit
from funcgrad.lax import ppermute

__all__ = ["REDUCE_OPS", "ProcessGroup", "world"]

AXIS = "processes"
#: reduction names accepted by :meth:`ProcessGroup.all_reduce`
REDUCE_OPS = ("sum", "avg", "product", "min", "max", "band", "bor", "bxor")
_BITWISE = {"band": fnp.bitwise_and, "bor": fnp.bitwise_or, "bxor": fnp.bitwise_xor}


def _reduce(op: str, g: Any) -> Any:
    """``g`` reduced over its leading (process) axis with ``op``, in ``g``'s dtype."""
    dtype = g.dtype
    if op in _BITWISE:
        if not (fnp.issubdtype(dtype, fnp.integer) or dtype == np.bool_):
            raise TypeError(f"reduce op {op!r} needs an integer or bool array, got {dtype}")
        out = g[0]
        for i in range(1, g.shape[0]):
            out = _BITWISE[op](out, g[i])
        return out
    if op in ("sum", "avg"):
        out = fnp.sum(g, axis=0, dtype=dtype)
        if op == "avg":
            out = out / g.shape[0]
    elif op == "product":
        out = fnp.prod(g, axis=0, dtype=dtype)
    elif op == "min":
        out = fnp.min(g, axis=0)
    elif op == "max":
        out = fnp.max(g, axis=0)
    else:
        raise ValueError(f"unknown reduce op {op!r}; expected one of {REDUCE_OPS}")
    return out.astype(dtype)


def _offsets(shapes: Sequence[tuple[int, ...]]) -> list[int]:
    """Where each array of ``shapes`` starts in their joined flat buffer, and its length."""
    return [0, *np.cumsum([math.prod(s) for s in shapes], dtype=np.int64).tolist()]


def _split(flat: Any, shapes: tuple[tuple[int, ...], ...]) -> list:
    """``flat`` cut into consecutive arrays of ``shapes`` (NumPy views, no copies; or, traced,
    the slices of the cutting program)."""
    ends = _offsets(shapes)
    return [flat[a:b].reshape(s) for a, b, s in zip(ends[:-1], ends[1:], shapes)]


@jit
def _join(*xs: Any) -> Any:
    """Arrays raveled and joined into one flat buffer (on their device)."""
    return fnp.concatenate([fnp.ravel(x) for x in xs])


@compile_cache.register_lru_kind("distributed_cutters")
@functools.lru_cache(maxsize=1024)
def _cutter(shapes: tuple[tuple[int, ...], ...]) -> Callable:
    """A jitted function cutting a flat buffer back into arrays of ``shapes`` (the group
    collectives call it; a :class:`~funcgrad.distributed.Bucket` compiles its trace)."""

    def cut(flat: Any) -> list:
        return _split(flat, shapes)

    return jit(cut)


def _function(size: int, kind: str, arg: Any) -> Callable:
    """The program of a collective of ``kind`` over ``size`` members' stacked arrays."""
    if kind in ("reduce", "reduce_scatter"):
        fn = functools.partial(_reduce, arg)
    elif kind == "gather":
        fn = _copy
    elif kind == "pick":
        fn = functools.partial(_pick, arg)
    elif kind == "all_to_all":
        fn = _transpose_blocks
    else:
        raise AssertionError(kind)

    def program(*gs: Any) -> list:  # blocks of rows -> a leading process axis
        return [fn(g.reshape((size, g.shape[0] // size, *g.shape[1:]))) for g in gs]

    return program


def _exchange(mesh: Mesh, op: str) -> Callable:
    """The all-reduce of a group of two as an exchange: over ``mesh`` (two devices), each
    member sends its blocks to the other (one collective permute) and reduces the pair
    itself; blocks in, blocks out. Every reduction of two operands is commutative, so both
    members get the same bits as from the all-reduce, in one message each way where XLA's
    CPU all-reduce of two takes two rounds (a reduce-scatter, an all-gather): 85,000
    floats 0.61-0.64 -> 0.38-0.43 ms between two processes (docs/benchmarks.md)."""

    def blocks(*xs: Any) -> list:
        return [exchange_reduce(op, x) for x in xs]

    spec = PartitionSpec(AXIS)
    return shard_map(blocks, mesh=mesh, in_specs=spec, out_specs=spec)


def exchange_reduce(op: str, x: Any) -> Any:
    """Inside a ``shard_map`` over a group of two's mesh: this member's block ``x``
    reduced with ``op`` with the other member's (see :func:`_exchange`)."""
    return _reduce(op, fnp.stack([x, ppermute(x, AXIS, [(0, 1), (1, 0)])]))


def exchanges(group_size: int, kind: str) -> bool:
    """Whether a collective of ``kind`` over a group of ``group_size`` runs as
    :func:`_exchange` (its outputs are then blocks of a global array, not replicated)."""
    return kind == "reduce" and group_size == 2


@compile_cache.register_lru_kind("distributed_programs")
@functools.lru_cache(maxsize=1024)
def _traced(size: int, kind: str, arg: Any, avals: tuple, mesh: Mesh | None = None) -> Program:
    """The traced program of a collective for stacked arrays of ``avals`` (shape, dtype);
    a group of two's all-reduce (:func:`exchanges`) is traced over its ``mesh``."""
    fn = _exchange(mesh, arg) if exchanges(size, kind) else _function(size, kind, arg)
    return jit(fn).trace(*(jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in avals)).jaxpr


def _copy(g: Any) -> Any:
    return g + fnp.zeros((), g.dtype)


def _pick(i: int, g: Any) -> Any:
    return g[i]


def _transpose_blocks(g: Any) -> Any:
    """``(sender, receiver, ...)`` blocks to ``(receiver, sender, ...)``: an all-to-all."""
    return fnp.swapaxes(g, 0, 1)


_FAILED = "funcgrad/failed"


def _failed(message: str) -> CollectiveError:
    """The error to raise, first published so that processes waiting on this one stop."""
    with contextlib.suppress(Exception):  # the service may be gone: the error stands alone
        kv_client().key_value_set(_FAILED, message, allow_overwrite=True)
    return CollectiveError(message)


def _wait_for(client: Any, key: str, process: int, what: str) -> str:
    """The value of ``key`` that ``process`` sets, waiting at most :func:`collective_timeout`
    seconds; stops early when another process failed (it published its error). A process
    that died silently is noticed by the runtime's heartbeat, which ends this one.
    (JAX's live-node query is no test here: it raises unless the asking process is in
    the list, and with it in the list it is a barrier the peer must join.)"""
    timeout = collective_timeout()
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            return client.blocking_key_value_get(key, max(1, int(min(left, 1.0) * 1000)))
        except Exception:
            pass
        failed = _try_get(client, _FAILED)
        if failed:
            raise CollectiveError(f"{what}: stopped because another process failed: {failed}")
        if time.monotonic() >= deadline:
            raise _failed(
                f"{what}: process {process} did not reach this collective within {timeout:g} s "
                "(it may be waiting in another collective)"
            )


def _try_get(client: Any, key: str) -> str | None:
    try:
        return client.key_value_try_get(key)
    except Exception:  # not set
        return None


def _device_of(process: int, platform: str | None) -> Any:
    for d in jax.devices(platform):
        if d.process_index == process:
            return d
    raise CollectiveError(f"process {process} has no {platform or 'default'} device")


class ProcessGroup:
    """A group of processes and the collectives between them.

    Args:
        ranks: the processes (global indices) in the group; all of them by default.
            Every process constructs every group, members or not, in the same order.
        platform: the devices that carry the collectives (``"cpu"``: gloo; ``"gpu"``:
            NCCL); JAX's default backend when ``None``.

    Raises:
        ValueError: a rank out of range or repeated.
    """

    _count = 0

    def __init__(
        self,
        ranks: Sequence[int] | None = None,
        platform: str | None = None,
        *,
        gid: str | None = None,
    ) -> None:
        n = process_count()
        ranks = list(range(n)) if ranks is None else sorted(int(r) for r in ranks)
        if len(set(ranks)) != len(ranks) or any(not 0 <= r < n for r in ranks):
            raise ValueError(f"ProcessGroup: ranks {ranks} must be distinct and in [0, {n - 1}]")
        if gid is None:  # groups made by every process in the same order share a number
            ProcessGroup._count += 1
            gid = str(ProcessGroup._count)
        self.gid = gid
        self.ranks = tuple(ranks)
        self.size = len(ranks)
        me = process_index()
        self.rank = ranks.index(me) if me in ranks else -1
        self.platform = platform
        self.device = _device_of(me, platform)
        self._mesh: Mesh | None = None
        self._checked: set[tuple] = set()
        self._checks = 0
        self._pairs: dict[tuple[int, int], ProcessGroup] = {}

    def __repr__(self) -> str:
        return f"ProcessGroup(ranks={list(self.ranks)}, rank={self.rank})"

    # ------------------------------------------------------------------ plumbing
    @property
    def mesh(self) -> Mesh:
        """The one-axis mesh (``"processes"``) of one device per member process."""
        if self._mesh is None:
            devs = [_device_of(r, self.platform) for r in self.ranks]
            self._mesh = Mesh(np.array(devs), (AXIS,))
        return self._mesh

    def _member(self, what: str) -> None:
        if self.rank < 0:
            raise _failed(f"{what}: process {process_index()} is not in {self!r}")

    def _agree(self, what: str, key: tuple) -> None:
        """Check (once per signature) that every member calls ``what`` with ``key``."""
        if key in self._checked or self.size == 1:
            return
        client = kv_client()
        self._checks += 1
        prefix = f"funcgrad/g{self.gid}/c{self._checks}/"
        mine = repr(key)
        client.key_value_set(prefix + str(self.rank), mine)
        for r in range(self.size):
            if r != self.rank:
                theirs = _wait_for(client, prefix + str(r), self.ranks[r], what)
                if theirs != mine:
                    raise _failed(
                        f"{what}: processes disagree on the call: process {process_index()} "
                        f"has {mine}, process {self.ranks[r]} has {theirs}"
                    )
        self._checked.add(key)

    def _block(self, x: Any) -> Any:
        """This process's block of the global ``(size * n, ...)`` array of a collective:
        ``x`` (of shape ``(n, ...)``; a scalar counts as shape ``(1,)``) on this process's
        device of the group."""
        if not isinstance(x, jax.Array):
            x = np.asarray(x)
        if x.ndim == 0:
            x = x.reshape((1,))
        if not isinstance(x, jax.Array):
            return host_to_device(x, self.device)
        if x.devices() != {self.device}:
            x = jax.device_put(x, self.device)
        return x

    @functools.cached_property
    def _shardings(self) -> tuple[NamedSharding, NamedSharding]:
        """The stacked arrays' sharding (a block per member) and the replicated one."""
        return NamedSharding(self.mesh, PartitionSpec(AXIS)), NamedSharding(
            self.mesh, PartitionSpec()
        )

    def _run(self, what: str, kind: str, arg: Any, x: Any) -> Any:
        return self._run_many(what, kind, arg, [x])[0]

    def _run_many(self, what: str, kind: str, arg: Any, xs: Sequence[Any]) -> list:
        """One program over the stacked ``xs``; this process's part of each output. Several
        arrays of one dtype travel as one flat buffer (one collective, as PyTorch's buckets)."""
        self._member(what)
        sig = tuple((tuple(np.shape(x)), str(np.dtype(x.dtype))) for x in xs)
        self._agree(what, (what, arg, *sig))
        if self.size == 1 and kind != "reduce_scatter":
            if kind == "gather":
                return [jax.device_put(x, self.device)[None] for x in xs]
            return list(xs)
        if len(xs) > 1 and kind in ("reduce", "pick") and len({s[1] for s in sig}) == 1:
            shapes = tuple(s[0] for s in sig)
            if self.device.platform == "cpu" and not any(isinstance(x, jax.Array) for x in xs):
                # host values (compat's host tier): NumPy joins and splits them for free
                flat = np.concatenate([np.asarray(x).reshape(-1) for x in xs])
                out = np.asarray(self._collect(what, kind, arg, [flat])[0])
                return _split(out, shapes)
            # device arrays: joined and cut on the device (no copy to the host); the
            # collective gets one operand, which is what its dispatch costs scale with
            flat = self._collect(what, kind, arg, [_join(*xs)])[0]
            return list(_cutter(shapes)(flat))
        outs = self._collect(what, kind, arg, xs)
        for i, (shape, _) in enumerate(sig):
            if shape == ():  # a scalar travelled as shape (1,)
                outs[i] = outs[i].reshape((self.size,) if kind == "gather" else ())
        return outs

    def _collect(self, what: str, kind: str, arg: Any, xs: Sequence[Any]) -> list:
        try:
            blocks = [self._block(x) for x in xs]
            avals = tuple(((self.size * b.shape[0], *b.shape[1:]), b.dtype) for b in blocks)
            local = _executable(self, kind, arg, avals)(blocks)
            jax.block_until_ready(local)
        except CollectiveError:
            raise
        except Exception as e:
            raise _failed(
                f"{what}: the collective failed on process {process_index()} (a peer process "
                f"may have exited): {e}"
            ) from None
        return local

    # ------------------------------------------------------------------ collectives
    def all_reduce(self, x: Any, op: str = "sum") -> Any:
        """``x`` reduced over the group with ``op`` (one of :data:`REDUCE_OPS`), on every member."""
        if op not in REDUCE_OPS:
            raise ValueError(f"all_reduce: unknown reduce op {op!r}; expected one of {REDUCE_OPS}")
        return self._run("all_reduce", "reduce", op, x)

    def all_reduce_many(self, xs: Sequence[Any], op: str = "sum") -> list:
        """Each array of ``xs`` reduced over the group, in one program (one launch)."""
        if op not in REDUCE_OPS:
            raise ValueError(f"all_reduce: unknown reduce op {op!r}; expected one of {REDUCE_OPS}")
        return self._run_many("all_reduce", "reduce", op, xs)

    def broadcast_many(self, xs: Sequence[Any], src: int = 0) -> list:
        """Member ``src``'s arrays ``xs`` on every member, in one program."""
        if not 0 <= src < self.size:
            raise ValueError(f"broadcast: src {src} is not a rank of {self!r}")
        return self._run_many("broadcast", "pick", src, xs)

    def all_gather(self, x: Any) -> Any:
        """Every member's ``x`` stacked along a new leading axis of size ``self.size``."""
        return self._run("all_gather", "gather", None, x)

    def broadcast(self, x: Any, src: int = 0) -> Any:
        """Member ``src``'s ``x`` (group rank), on every member; ``x`` gives the shape elsewhere."""
        if not 0 <= src < self.size:
            raise ValueError(f"broadcast: src {src} is not a rank of {self!r}")
        return self._run("broadcast", "pick", src, x)

    def reduce_scatter(self, x: Any, op: str = "sum") -> Any:
        """Reduce ``x`` of shape ``(size, *s)`` over the group; member ``i`` gets row ``i``."""
        if op not in REDUCE_OPS:
            raise ValueError(f"reduce_scatter: unknown reduce op {op!r}")
        if np.ndim(x) == 0 or np.shape(x)[0] != self.size:
            raise ValueError(
                f"reduce_scatter: input of shape {tuple(np.shape(x))} needs a leading axis of "
                f"the group size {self.size}"
            )
        if self.size == 1:
            return x[0]
        return self._run("reduce_scatter", "reduce_scatter", op, x)[0]

    def all_to_all(self, x: Any) -> Any:
        """Exchange blocks: ``x`` of shape ``(size, *s)``; member ``i`` gets, as row ``j`` of
        its result, row ``i`` of member ``j``'s ``x``."""
        if np.ndim(x) == 0 or np.shape(x)[0] != self.size:
            raise ValueError(
                f"all_to_all: input of shape {tuple(np.shape(x))} needs a leading axis of "
                f"the group size {self.size}"
            )
        if self.size == 1:
            return x
        return self._run("all_to_all", "all_to_all", None, x)[0]

    def pair(self, a: int, b: int) -> ProcessGroup:
        """The two-member group of members ``a`` and ``b`` (group ranks), made once per pair."""
        key = (min(a, b), max(a, b))
        g = self._pairs.get(key)
        if g is None:  # made by the two members only: named by them, not by the counter
            a, b = self.ranks[key[0]], self.ranks[key[1]]
            g = ProcessGroup((a, b), self.platform, gid=f"{self.gid}p{a}-{b}")
            self._pairs[key] = g
        return g

    def send_recv(self, x: Any, src: int, dst: int) -> Any:
        """Point to point: member ``src``'s ``x`` arrives at member ``dst`` (group ranks)."""
        if src == dst:
            raise ValueError(f"send/recv: source and destination are both rank {src}")
        p = self.pair(src, dst)
        return p.broadcast(x, 0 if src < dst else 1)

    def barrier(self, name: str = "barrier") -> None:
        """Wait until every member reached this barrier (at most :func:`collective_timeout` s)."""
        self._member(name)
        if self.size == 1:
            return
        self._checks += 1
        timeout = collective_timeout()
        try:
            kv_client().wait_at_barrier(
                f"funcgrad/g{self.gid}/b{self._checks}", int(timeout * 1000), list(self.ranks)
            )
        except Exception as e:
            raise _failed(
                f"{name}: not every process of {self!r} arrived within {timeout:g} s: {e}"
            ) from None


@compile_cache.register_lru_kind("distributed_executables")
@functools.lru_cache(maxsize=1024)
def _executable(group: ProcessGroup, kind: str, arg: Any, avals: tuple) -> Callable[[list], list]:
    """The executable of ``group``'s collective of ``kind`` on stacked arrays of ``avals``
    (global shapes and dtypes), called with this process's blocks and returning its
    blocks of the outputs. Its traced program is kept per signature and its executable
    comes from the one compile cache (as ``fg.jit`` with shardings, without its per-call
    argument handling); kept here per group and signature, a call skips building the
    cache's key (about 60 us per call, measured on a loaded machine). Where JAX's
    runtime executable is reachable (:func:`local_executable`) it is called with the
    blocks directly; otherwise each block is wrapped as a global array."""
    blockwise = exchanges(group.size, kind) or kind in ("reduce_scatter", "all_to_all")
    prog = _traced(group.size, kind, arg, avals, group.mesh if blockwise else None)
    sharded, replicated = group._shardings
    out = sharded if blockwise else replicated
    n = len(prog.consts)
    fn = compile_cache.compiled(
        prog,
        name=f"collective_{kind}",
        in_shardings=(None,) * n + (sharded,) * len(avals),
        out_shardings=out,
    )
    if not n:
        direct = local_executable(
            fn, [jax.ShapeDtypeStruct(shape, dtype, sharding=sharded) for shape, dtype in avals]
        )
        if direct is not None:
            return direct
    consts = tuple(prog.consts)
    assemble = [block_assembler(shape, dtype, sharded) for shape, dtype in avals]

    def call(blocks: list) -> list:
        outs = fn(*consts, *(a(b) for a, b in zip(assemble, blocks)))
        return [o.addressable_data(0) for o in outs]

    return call


@functools.cache
def world(platform: str | None = None) -> ProcessGroup:
    """The group of all processes on ``platform``'s devices (made once per platform)."""
    return ProcessGroup(None, platform, gid=f"w{platform or ''}")
