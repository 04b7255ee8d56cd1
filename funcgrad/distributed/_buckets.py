"""A prepared all-reduce of a fixed list of arrays: what data parallelism repeats every step.

:meth:`ProcessGroup.all_reduce_many` works out, at each call, the signature of its
arrays, checks it (once) with the other members, traces (once) and looks up its
programs. A training loop averages the same gradients every step, so a :class:`Bucket`
does all that once, when it is made, and each call runs one of two programs over the
process mesh, called through JAX's runtime executable with this process's blocks as
they are and handing back this process's outputs
(:func:`~funcgrad.distributed._runtime.local_executable`; no global array in or out):

* the **joined** program: one flat buffer as this process's block (XLA's all-reduce of
  the blocks and the reduction's finish, ``avg``'s division: a flat buffer out). The
  join and the cut are this process's own: host values (compat's host tier) are joined
  by NumPy into a buffer the bucket owns and come back as NumPy views of the result,
  device arrays are joined and cut by compiled local programs (three dispatches);
* the **one program**: each array its own operand, joined, all-reduced once, finished
  and cut inside, fused by XLA (one dispatch; device arrays in and out).

The one program costs less for device arrays and more for host values (each a block of
its own, each output read back), so the arrays' kind picks it; but every member must
run the same program, and the kind is each member's own (its tiers' choice, by timings).
So the members vote: every call carries one more element, this member's *host vote*
(1 when all its arrays are host values, else 0), reduced with the arrays, and the
reduced vote, the same number in every member, decides the next call's program: the one
program when it is 0 (no member had host values), the joined one otherwise. The first
call runs the joined program; a member whose arrays' kind differs from the program
the vote chose moves them (host values to the device, or the joined program's
join, which takes either kind). The vote rides in the reductions that can carry it
(``sum``, ``avg``, ``max`` of a numeric dtype: all zero reduces to zero and nothing
else does); other buckets always run the joined program.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import PartitionSpec

import funcgrad.numpy as fnp
from funcgrad.api._shard_map import shard_map
from funcgrad.core import compile_cache
from funcgrad.distributed._groups import (
    AXIS,
    REDUCE_OPS,
    ProcessGroup,
    _cutter,
    _exchange,
    _failed,
    _join,
    _offsets,
    _reduce,
    _split,
    exchange_reduce,
    exchanges,
)
from funcgrad.distributed._runtime import (
    CollectiveError,
    block_assembler,
    host_to_device,
    local_executable,
    process_index,
)
from funcgrad.jit import jit

__all__ = ["Bucket"]

#: the reductions that carry the members' host vote (zero everywhere reduces to zero,
#: and any member's 1 to a nonzero value)
VOTING_OPS = ("sum", "avg", "max")


def _local(f: Any, name: str, *structs: jax.ShapeDtypeStruct) -> Callable:
    """``f`` (a jitted function) traced at ``structs`` and compiled through the cache store:
    a function of the operands alone (its constants bound)."""
    prog = f.trace(*structs).jaxpr
    fn = compile_cache.compiled(prog, name=name)
    consts = tuple(prog.consts)
    return lambda *xs: fn(*consts, *xs)


def _aligned_empty(n: int, dtype: np.dtype) -> np.ndarray:
    """An uninitialised array of ``n`` elements whose data is 64-byte aligned (what a CPU
    device array needs to share a host buffer's memory instead of copying it)."""
    raw = np.empty(n * dtype.itemsize + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + n * dtype.itemsize].view(dtype)


def _shares_memory(dev: jax.Array, host: np.ndarray) -> bool:
    """Whether device array ``dev`` holds its data in ``host``'s memory (a CPU device's
    zero-copy transfer; ``False`` where the pointer cannot be read)."""
    try:
        return dev.unsafe_buffer_pointer() == host.ctypes.data
    except Exception:  # (not a single-buffer array, or another backend's)
        return False


def _mesh_program(
    group: ProcessGroup,
    fn: Callable,
    shapes: Sequence[tuple[int, ...]],
    dtype: np.dtype,
    *,
    blockwise: bool = False,
) -> tuple[Callable[[list], list], bool]:
    """``fn`` over the process mesh, each argument the global array whose blocks (one per
    member, stacked along the first axis) have ``shapes``, outputs replicated (with
    ``blockwise``, blocks as the arguments'): a function of this process's blocks
    returning its outputs; and whether it calls JAX's runtime executable with the blocks
    directly (no global array in or out)."""
    size = group.size
    avals = [jax.ShapeDtypeStruct((size * s[0], *s[1:]), dtype) for s in shapes]
    prog = jit(fn).trace(*avals).jaxpr
    sharded, replicated = group._shardings
    n = len(prog.consts)
    compiled = compile_cache.compiled(
        prog,
        name="bucket_all_reduce",
        in_shardings=(None,) * n + (sharded,) * len(avals),
        out_shardings=sharded if blockwise else replicated,
    )
    if not n:
        direct = local_executable(
            compiled, [jax.ShapeDtypeStruct(a.shape, dtype, sharding=sharded) for a in avals]
        )
        if direct is not None:
            return direct, True
    consts = tuple(prog.consts)
    assemble = [block_assembler(a.shape, dtype, sharded) for a in avals]

    def call(blocks: list) -> list:
        outs = compiled(*consts, *(f(b) for f, b in zip(assemble, blocks)))
        return [o.addressable_data(0) for o in outs]

    return call, False


def _joined_program(size: int, n: int, op: str) -> Callable:
    """The joined program: the members' flat buffers of ``n`` elements reduced."""

    def program(g: Any) -> Any:
        return _reduce(op, g.reshape((size, n)))

    return program


def _one_program(size: int, shapes: tuple[tuple[int, ...], ...], op: str) -> Callable:
    """The one program: each argument the global array of one of the bucket's arrays (a
    0-d array's block has shape ``(1,)``), joined into one ``(size, n)`` buffer, reduced
    over the members with ``op`` (one all-reduce of the flat buffer) and cut back."""

    def program(*gs: Any) -> list:
        rows = fnp.concatenate([g.reshape((size, -1)) for g in gs], axis=1)
        return _split(_reduce(op, rows), shapes)

    return program


def _one_exchange(group: ProcessGroup, blocks: tuple[tuple[int, ...], ...], op: str) -> Callable:
    """The one program of a group of two: each member joins its blocks, exchanges the
    joined buffer with the other member and reduces the pair (one collective permute, as
    :func:`~funcgrad.distributed._groups._exchange`), then cuts it back into ``blocks``;
    blocks out, as in."""

    def per_member(*xs: Any) -> list:
        flat = fnp.concatenate([x.reshape(-1) for x in xs])
        return _split(exchange_reduce(op, flat), blocks)

    spec = PartitionSpec(AXIS)
    return shard_map(per_member, mesh=group.mesh, in_specs=spec, out_specs=spec)


def _reshaped(call: Callable[[list], list], scalars: list[int]) -> Callable[[list], list]:
    """``call`` with its outputs at ``scalars`` (blocks of shape ``(1,)``) made 0-d."""

    def reshaped(blocks: list) -> list:
        out = call(blocks)
        for i in scalars:
            out[i] = out[i].reshape(())
        return out

    return reshaped


class Bucket:
    """An all-reduce of arrays of fixed shapes and one dtype, prepared once, called often.

    Made in every member of ``group`` at the same point of the program (the members
    compare the signature then, as a first collective call does). Calling it with arrays
    of the bucket's shapes returns, on every member, each array reduced over the group:
    device arrays (on this process's device of the group) for device arrays, or for
    host values among device arrays; read-only NumPy arrays for host values. Which of
    its two programs a call runs is decided by the members together (the module
    docstring); :attr:`calls` counts the calls of each.

    Args:
        group: the process group.
        shapes: the arrays' shapes, in call order.
        dtype: their dtype (one dtype per bucket, as PyTorch's buckets).
        op: the reduction, one of :data:`REDUCE_OPS`.

    Raises:
        ValueError: an unknown ``op`` or no arrays.
        CollectiveError: this process is not a member, or the members disagree on the
            signature.

    Example:
        >>> b = Bucket(world(), [(3, 2), (2,)], np.float32, "avg")  # doctest: +SKIP
        >>> w_avg, b_avg = b([w, bias])  # doctest: +SKIP
    """

    def __init__(
        self, group: ProcessGroup, shapes: Sequence[Sequence[int]], dtype: Any, op: str = "sum"
    ) -> None:
        if op not in REDUCE_OPS:
            raise ValueError(f"all_reduce: unknown reduce op {op!r}; expected one of {REDUCE_OPS}")
        if not shapes:
            raise ValueError("all_reduce: a bucket needs at least one array")
        self.group, self.op = group, op
        self.shapes = tuple(tuple(int(d) for d in s) for s in shapes)
        self.dtype = np.dtype(dtype)
        group._member("all_reduce")
        # the key the generic path uses for the same arrays, so both paths check alike
        group._agree("all_reduce", ("all_reduce", op, *((s, str(self.dtype)) for s in self.shapes)))
        self._numel = _offsets(self.shapes)[-1]
        #: whether the members vote on the program (one more element, last, per call)
        self._votes = op in VOTING_OPS and self.dtype.kind in "iufc"
        #: the program of the next call, the same in every member: the one program when
        #: the last call's reduced host vote was 0
        self._one_next = False
        #: calls per program: ``{"joined": ..., "one_program": ...}``
        self.calls = {"joined": 0, "one_program": 0}
        #: whether the joined program runs through JAX's runtime executable
        self._direct = False
        self._one: Callable[[list], list] | None = None  # built when the vote first asks
        if group.size > 1:
            # the shapes the programs carry: the vote, a (1,) array, rides last
            self._carried = self.shapes + (((1,),) if self._votes else ())
            aval = jax.ShapeDtypeStruct
            join = _local(_join, "bucket_join", *(aval(s, self.dtype) for s in self._carried))
            self._join = lambda xs: join(*xs)[0]
            total = _offsets(self._carried)[-1]
            self._cut = _local(_cutter(self._carried), "bucket_cut", aval((total,), self.dtype))
            #: host values are joined here: one buffer, written every call (no fresh
            #: pages to fault in), which the collective's input shares on a CPU device
            self._flat = _aligned_empty(total, self.dtype)
            #: the device array sharing ``_flat``'s memory, made at the first call where
            #: the device can share it (a CPU device), then passed every call: each call
            #: writes the buffer, runs the program and waits for its result, so no
            #: program is reading it when the next call writes (a transfer per call cost
            #: ~35 us of main-thread CPU after a collective, ~4 us alone)
            self._flat_dev: jax.Array | None = None
            offsets = _offsets(self._carried)
            self._pieces = [
                (slice(a, b), s) for a, b, s in zip(offsets[:-1], offsets[1:], self._carried)
            ]
            if exchanges(group.size, "reduce"):  # a group of two: an exchange
                prog, pair = _exchange(group.mesh, op), True
            else:
                prog, pair = _joined_program(group.size, total, op), False
            joined, self._direct = _mesh_program(
                group, prog, [(total,)], self.dtype, blockwise=pair
            )
            self._reduce = lambda flat: joined([flat])[0]
            dev = group.device
            #: the vote of a member with device arrays, and of one with host values
            self._ballots = tuple(host_to_device(np.full(1, v, self.dtype), dev) for v in (0, 1))
            self._host_ballot = np.ones(1, self.dtype)

    def __repr__(self) -> str:
        return f"Bucket({len(self.shapes)} arrays, {self._numel} {self.dtype}, {self.op!r})"

    def __call__(self, xs: Sequence[Any]) -> list:
        """Each array of ``xs`` reduced over the group (see the class docstring)."""
        if len(xs) != len(self.shapes) or any(
            tuple(x.shape) != s or x.dtype != self.dtype for x, s in zip(xs, self.shapes)
        ):
            got = [(tuple(np.shape(x)), str(np.result_type(x))) for x in xs]
            raise ValueError(
                f"all_reduce: the bucket holds arrays of shapes {list(self.shapes)} and dtype "
                f"{self.dtype}, got {got}"
            )
        if self.group.size == 1:
            return list(xs)
        try:
            on_device = [isinstance(x, jax.Array) for x in xs]
            host = not any(on_device)
            if self._one_next:
                out = self._call_one(xs, on_device, host)
            else:
                out = self._call_joined(xs, on_device, host)
        except CollectiveError:
            raise
        except Exception as e:
            raise _failed(
                f"all_reduce: the collective failed on process {process_index()} (a peer "
                f"process may have exited): {e}"
            ) from None
        if self._votes:  # the members' reduced vote, the same number everywhere
            self._one_next = not out.pop()[0]
        return out

    def _call_joined(self, xs: Sequence[Any], on_device: list[bool], host: bool) -> list:
        """The joined program: NumPy's join and cut for host values, compiled local ones
        for device arrays."""
        self.calls["joined"] += 1
        dev = self.group.device
        if host:  # host values (compat's host tier): NumPy joins and cuts
            parts = [np.asarray(x).reshape(-1) for x in xs]
            if self._votes:
                parts.append(self._host_ballot)
            flat = np.concatenate(parts, out=self._flat)
            dev_in = self._flat_dev
            if dev_in is None:
                dev_in = host_to_device(flat, dev, alias=True)
                if _shares_memory(dev_in, flat):  # (a CPU device: kept, see __init__)
                    self._flat_dev = dev_in
            # (waits for the result: the next call rewrites the buffer it shares)
            res = np.asarray(self._reduce(dev_in))
            return [res[i].reshape(s) for i, s in self._pieces]
        # (a host value among device arrays: a zero gradient, say, moves over)
        arrays = [x if d else host_to_device(np.asarray(x), dev) for x, d in zip(xs, on_device)]
        if self._votes:
            arrays.append(self._ballots[0])
        flat = self._join(arrays)
        if flat.devices() != {dev}:
            flat = jax.device_put(flat, dev)
        local = list(self._cut(self._reduce(flat)))
        jax.block_until_ready(local)
        if self._votes:
            local[-1] = np.asarray(local[-1])
        return local

    def _call_one(self, xs: Sequence[Any], on_device: list[bool], host: bool) -> list:
        """The one program: each array a block of its own (host values moved over)."""
        self.calls["one_program"] += 1
        if self._one is None:
            blocks = tuple(s or (1,) for s in self._carried)
            if exchanges(self.group.size, "reduce"):  # a group of two: an exchange
                prog = _one_exchange(self.group, blocks, self.op)
                one = _mesh_program(self.group, prog, blocks, self.dtype, blockwise=True)[0]
                scalars = [i for i, s in enumerate(self._carried) if not s]
                self._one = _reshaped(one, scalars) if scalars else one
            else:
                prog = _one_program(self.group.size, self._carried, self.op)
                self._one = _mesh_program(self.group, prog, blocks, self.dtype)[0]
        dev = self.group.device
        blocks = []
        for x, s, d in zip(xs, self.shapes, on_device):
            if d and s:
                if x.devices() != {dev}:
                    x = jax.device_put(x, dev)
            else:  # a host value, or a 0-d array: its (1,) block
                x = host_to_device(np.asarray(x, self.dtype).reshape(s or (1,)), dev)
            blocks.append(x)
        if self._votes:
            blocks.append(self._ballots[1 if host else 0])
        local = self._one(blocks)
        jax.block_until_ready(local)
        if host:  # host values in, host values out (read without a copy on a CPU)
            return [np.asarray(o) for o in local]
        if self._votes:
            local[-1] = np.asarray(local[-1])
        return local
