"""A prepared all-reduce of a fixed list of arrays: what data parallelism repeats every step.

:meth:`ProcessGroup.all_reduce_many` works out, at each call, the signature of its
arrays, checks it (once) with the other members, traces (once) and looks up its
programs. A training loop averages the same gradients every step, so a :class:`Bucket`
does all that once, when it is made, and each call is one dispatch of one program over
the process mesh, with each array as this process's block of one operand: inside, the
blocks are joined into one flat buffer, XLA's all-reduce runs once on it, the
reduction is finished (``avg``'s division) and the result is cut back into arrays of
the bucket's shapes, all fused by XLA. The program is called through JAX's runtime
executable with the arrays as they are and hands back this process's outputs
(:func:`~funcgrad.distributed._runtime.local_executable`): no global array is built,
in or out (where this JAX's executable is out of reach, each array is wrapped as its
block of a global array).

The program is the same whatever the arrays' kind: every member must run the same
program, and whether a member's gradients are host values or device arrays is its own
tiers' choice. Host values (compat's host tier) are put on the device first and come
back as NumPy arrays read from the outputs (without a copy on a CPU device); device
arrays come back as device arrays, which a compiled optimizer step takes as they are.
An earlier version joined and cut around a one-operand all-reduce in separate
programs: three dispatches and two more passes over the buffer per call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import compile_cache
from funcgrad.distributed._groups import (
    REDUCE_OPS,
    ProcessGroup,
    _failed,
    _offsets,
    _reduce,
    _split,
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


def _program(size: int, shapes: tuple[tuple[int, ...], ...], op: str) -> Callable:
    """The bucket's program over the process mesh: each argument the global array of one
    of the bucket's arrays (the members' blocks stacked along its first axis; a 0-d
    array's block has shape ``(1,)``), joined into one ``(size, n)`` buffer, reduced
    over the members with ``op`` (one all-reduce of the flat buffer) and cut back into
    arrays of ``shapes``."""

    def program(*gs: Any) -> list:
        rows = fnp.concatenate([g.reshape((size, -1)) for g in gs], axis=1)
        return _split(_reduce(op, rows), shapes)

    return program


def _reducer(
    group: ProcessGroup, shapes: tuple[tuple[int, ...], ...], dtype: np.dtype, op: str
) -> tuple[Callable[[list], list], bool]:
    """The bucket's compiled program (:func:`_program`) as a function of this process's
    blocks (one device array per array of ``shapes``, a 0-d one reshaped to ``(1,)``)
    returning this process's copy of each reduced array; and whether it calls JAX's
    runtime executable with the blocks directly (no global array in or out)."""
    size = group.size
    avals = [
        jax.ShapeDtypeStruct((size * b[0], *b[1:]), dtype) for b in (s or (1,) for s in shapes)
    ]
    prog = jit(_program(size, shapes, op)).trace(*avals)
    sharded, replicated = group._shardings
    n = len(prog.consts)
    fn = compile_cache.compiled(
        prog,
        name="bucket_all_reduce",
        in_shardings=(None,) * n + (sharded,) * len(avals),
        out_shardings=replicated,
    )
    if not n:
        direct = local_executable(
            fn, [jax.ShapeDtypeStruct(a.shape, dtype, sharding=sharded) for a in avals]
        )
        if direct is not None:
            return direct, True
    consts = tuple(prog.consts)
    assemble = [block_assembler(a.shape, dtype, sharded) for a in avals]

    def call(blocks: list) -> list:
        outs = fn(*consts, *(f(b) for f, b in zip(assemble, blocks)))
        return [o.addressable_data(0) for o in outs]

    return call, False


class Bucket:
    """An all-reduce of arrays of fixed shapes and one dtype, prepared once, called often.

    Made in every member of ``group`` at the same point of the program (the members
    compare the signature then, as a first collective call does). Calling it with arrays
    of the bucket's shapes returns, on every member, each array reduced over the group:
    device arrays (on this process's device of the group) for device arrays, or for
    host values among device arrays; read-only NumPy arrays for host values.

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
        #: whether the collective runs through JAX's runtime executable (no global arrays)
        self._direct = False
        if group.size > 1:
            self._reduce, self._direct = _reducer(group, self.shapes, self.dtype, op)

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
        g = self.group
        if g.size == 1:
            return list(xs)
        dev = g.device
        try:
            host = True
            blocks = []
            for x, s in zip(xs, self.shapes):
                if isinstance(x, jax.Array) and s:
                    host = False
                    if x.devices() != {dev}:
                        x = jax.device_put(x, dev)
                else:  # a host value (compat's host tier), or a 0-d array: its (1,) block
                    host = host and not isinstance(x, jax.Array)
                    x = host_to_device(np.asarray(x, self.dtype).reshape(s or (1,)), dev)
                blocks.append(x)
            local = self._reduce(blocks)
            jax.block_until_ready(local)
            if host:  # host values in, host values out (read without a copy on a CPU)
                local = [np.asarray(o) for o in local]
        except CollectiveError:
            raise
        except Exception as e:
            raise _failed(
                f"all_reduce: the collective failed on process {process_index()} (a peer "
                f"process may have exited): {e}"
            ) from None
        return local
