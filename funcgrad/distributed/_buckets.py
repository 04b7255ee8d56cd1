"""A prepared all-reduce of a fixed list of arrays: what data parallelism repeats every step.

:meth:`ProcessGroup.all_reduce_many` works out, at each call, the signature of its
arrays, checks it (once) with the other members, traces (once) and looks up its
programs. A training loop averages the same gradients every step, so a :class:`Bucket`
does all that once, when it is made, and each call is: join the arrays into one flat
buffer, run one program over the process mesh with that buffer as this process's block
(XLA's all-reduce of the blocks and the reduction's finish, ``avg``'s division: a flat
buffer out), and cut the result back into arrays of the bucket's shapes. The program
is called through JAX's runtime executable with the buffer as it is and hands back this
process's output (:func:`~funcgrad.distributed._runtime.local_executable`): no global
array is built, in or out (where this JAX's executable is out of reach, the buffer is
wrapped as its block of a global array).

The collective is the same program whatever the arrays' kind: every member must run
the same program, and whether a member's gradients are host values or device arrays is
its own tiers' choice. The join and the cut follow the kind, on this process alone:
host values (compat's host tier) are joined by NumPy and come back as NumPy views of
the result (on a CPU device the result is read without a copy), device arrays are
joined and cut by compiled local programs and stay on the device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from funcgrad.core import compile_cache
from funcgrad.distributed._groups import (
    REDUCE_OPS,
    ProcessGroup,
    _cutter,
    _failed,
    _join,
    _offsets,
    _reduce,
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


def _local(f: Any, name: str, *structs: jax.ShapeDtypeStruct) -> Callable:
    """``f`` (a jitted function) traced at ``structs`` and compiled through the cache store:
    a function of the operands alone (its constants bound)."""
    prog = f.trace(*structs)
    fn = compile_cache.compiled(prog, name=name)
    consts = tuple(prog.consts)
    return lambda *xs: fn(*consts, *xs)


def _aligned_empty(n: int, dtype: np.dtype) -> np.ndarray:
    """An uninitialised array of ``n`` elements whose data is 64-byte aligned (what a CPU
    device array needs to share a host buffer's memory instead of copying it)."""
    raw = np.empty(n * dtype.itemsize + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start : start + n * dtype.itemsize].view(dtype)


def _reducer(
    group: ProcessGroup, n: int, dtype: np.dtype, op: str
) -> tuple[Callable[[jax.Array], jax.Array], bool]:
    """The compiled program over the process mesh: the members' flat buffers of ``n``
    elements (one block each of a global array) reduced with ``op``, as a function of
    this process's flat buffer returning its flat result; and whether it calls JAX's
    runtime executable with the buffer directly (no global array in or out)."""
    size = group.size

    def reduce(g: Any) -> Any:
        return _reduce(op, g.reshape((size, n)))

    global_shape = (size * n,)
    prog = jit(reduce).trace(jax.ShapeDtypeStruct(global_shape, dtype))
    sharded, replicated = group._shardings
    fn = compile_cache.compiled(
        prog,
        name="bucket_all_reduce",
        in_shardings=(None,) * len(prog.consts) + (sharded,),
        out_shardings=replicated,
    )
    if not prog.consts:
        direct = local_executable(fn, [jax.ShapeDtypeStruct(global_shape, dtype, sharding=sharded)])
        if direct is not None:
            return (lambda flat: direct([flat])[0]), True
    consts = tuple(prog.consts)
    assemble = block_assembler(global_shape, dtype, sharded)
    return (lambda flat: fn(*consts, assemble(flat))[0].addressable_data(0)), False


class Bucket:
    """An all-reduce of arrays of fixed shapes and one dtype, prepared once, called often.

    Made in every member of ``group`` at the same point of the program (the members
    compare the signature then, as a first collective call does). Calling it with arrays
    of the bucket's shapes returns, on every member, each array reduced over the group:
    device arrays (on this process's device of the group) for device arrays, or for
    host values among device arrays; NumPy arrays (read-only views of one buffer) for
    host values.

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
        self._global_shape = (group.size * self._numel,)
        #: whether the collective runs through JAX's runtime executable (no global arrays)
        self._direct = False
        if group.size > 1:
            aval = jax.ShapeDtypeStruct
            join = _local(_join, "bucket_join", *(aval(s, self.dtype) for s in self.shapes))
            self._join = lambda xs: join(*xs)[0]
            flat = aval((self._numel,), self.dtype)
            self._cut = _local(_cutter(self.shapes), "bucket_cut", flat)
            #: host values are joined here: one buffer, written every call (no fresh
            #: pages to fault in), which the collective's input shares on a CPU device
            self._flat = _aligned_empty(self._numel, self.dtype)
            offsets = _offsets(self.shapes)
            self._pieces = [
                (slice(a, b), s) for a, b, s in zip(offsets[:-1], offsets[1:], self.shapes)
            ]
            self._reduce, self._direct = _reducer(group, self._numel, self.dtype, op)

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
            on_device = [isinstance(x, jax.Array) for x in xs]
            if not any(on_device):  # host values (compat's host tier): NumPy joins and cuts
                flat = np.concatenate([np.asarray(x).reshape(-1) for x in xs], out=self._flat)
                # (waits for the result: the next call may rewrite the buffer it shares)
                out = np.asarray(self._reduce(host_to_device(flat, dev, alias=True)))
                return [out[i].reshape(s) for i, s in self._pieces]
            # (a host value among device arrays: a zero gradient, say, moves over)
            flat = self._join(
                [x if d else host_to_device(np.asarray(x), dev) for x, d in zip(xs, on_device)]
            )
            if flat.devices() != {dev}:
                flat = jax.device_put(flat, dev)
            local = list(self._cut(self._reduce(flat)))
            jax.block_until_ready(local)
        except CollectiveError:
            raise
        except Exception as e:
            raise _failed(
                f"all_reduce: the collective failed on process {process_index()} (a peer "
                f"process may have exited): {e}"
            ) from None
        return local
