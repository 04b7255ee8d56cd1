"""Point-to-point messages: ``send``/``recv``, ``isend``/``irecv``, ``batch_isend_irecv``.

A message between two processes travels through the two-member group of that pair
(``funcgrad.distributed.ProcessGroup.pair``). One *exchange* is an all-gather of a small
header (does this side send, and how many bytes) and, when either side sends, of a byte
buffer padded to a power of two. The two members of a pair meet in the same sequence of
exchanges: a send always exchanges; a receive first looks in its mailbox of what the
peer already sent and exchanges only when it is empty. So a send that meets the peer's
send (both processes sending first, as in a ring) keeps each message for the later
receive instead of deadlocking.

``isend``/``irecv`` queue their message; the queue is flushed when one of its
:class:`Work` handles is waited on, by ``batch_isend_irecv``, and by a blocking
``send``/``recv``. A flush runs each pair's messages in the order they were queued, and
the pairs in increasing order of (group, lower rank, higher rank). Every process takes
its pairs in that one order, so the lowest pair with messages left always has both
members at it: a ring of messages cannot deadlock. A receive that meets only receives
until the collective timeout is an error naming both processes.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.distributed as fd
from compat._core.tensor import Tensor
from compat.torch.distributed._group import (
    DistBackendError,
    ProcessGroup,
    Work,
    _array,
    _bucket,
    _call,
    _group,
    _not_member,
    _padded,
    _rank_in,
    _write,
)

__all__ = ["P2POp", "batch_isend_irecv", "irecv", "isend", "recv", "send"]

#: what each peer sent and this process has not received yet, per (group id, peer)
_mailbox: defaultdict[tuple[str, int], deque[bytes]] = defaultdict(deque)
#: queued messages of isend/irecv, flushed together
_queue: list[_Message] = []


class _Message:
    """One queued send or receive and its handle."""

    __slots__ = ("array", "done", "group", "kind", "peer", "tensor")

    def __init__(self, kind: str, tensor: Tensor, group: ProcessGroup, peer: int) -> None:
        self.kind = kind
        self.tensor = tensor
        self.array = _array(tensor, kind)  # a send's value when it was queued
        self.group = group
        self.peer = peer  # group rank
        self.done = False

    def order(self) -> tuple:
        g = self.group._g
        a, b = sorted((g.ranks[g.rank], g.ranks[self.peer]))
        return (g.gid, a, b)


class _QueuedWork(Work):
    """The handle of a queued message: waiting flushes the queue."""

    def __init__(self, message: _Message) -> None:
        self._message = message

    def wait(self, timeout: Any = None) -> bool:
        """Run every queued message (this one included), then return ``True``."""
        if not self._message.done:
            _flush()
        return True

    def is_completed(self) -> bool:
        """Whether the message has run."""
        return self._message.done


def _exchange(pair: fd.ProcessGroup, payload: bytes | None) -> bytes | None:
    """One exchange with the other member of ``pair``: what it sent, or ``None``."""
    me = pair.rank
    head = np.array([-1 if payload is None else len(payload)], np.int32)
    heads = np.asarray(_call(pair.all_gather, head)).reshape(2)
    if heads.max() < 0:
        return None
    buf = _padded(payload or b"", _bucket(int(heads.max())))
    got = np.asarray(_call(pair.all_gather, buf))
    theirs = int(heads[1 - me])
    return None if theirs < 0 else got[1 - me, :theirs].tobytes()


def _run(m: _Message) -> None:
    g = m.group._g
    pair = g.pair(g.rank, m.peer)
    box = _mailbox[(g.gid, g.ranks[m.peer])]
    if m.kind == "send":
        got = _exchange(pair, np.ascontiguousarray(np.asarray(m.array)).tobytes())
        if got is not None:
            box.append(got)
    else:
        deadline = time.monotonic() + fd.collective_timeout()
        while not box:
            got = _exchange(pair, None)
            if got is not None:
                box.append(got)
            elif time.monotonic() > deadline:
                raise DistBackendError(
                    f"recv: process {g.ranks[g.rank]} and process {g.ranks[m.peer]} both "
                    f"waited to receive from each other for {fd.collective_timeout():g} s"
                )
        data = box.popleft()
        want = np.dtype(m.array.dtype)
        shape = tuple(m.array.shape)
        if len(data) != want.itemsize * int(np.prod(shape)):
            raise RuntimeError(
                f"recv: process {g.ranks[m.peer]} sent {len(data)} bytes; the receiving "
                f"tensor ({want}, shape {shape}) holds {want.itemsize * int(np.prod(shape))}"
            )
        _write(m.tensor, np.frombuffer(data, want).reshape(shape).copy())
    m.done = True


def _flush() -> None:
    """Run the queued messages: pairs in one global order, each pair's in FIFO order."""
    pending = sorted(_queue, key=_Message.order)  # a stable sort keeps each pair's FIFO
    _queue.clear()
    for m in pending:
        _run(m)


def _peer(g: ProcessGroup, rank: int | None, group_rank: int | None, what: str, role: str) -> int:
    if group_rank is not None:
        peer = group_rank
    elif rank is None:
        raise ValueError(f"{what}: compat needs the {role} rank (any-source is not supported)")
    else:
        peer = _rank_in(g, rank, what, role)
    if peer == g._g.rank:
        raise ValueError(
            f"Invalid {role} rank: {role} rank should not be the same as the rank of the "
            "current process."
        )
    return peer


def _queue_message(kind: str, tensor: Tensor, group: Any, rank: Any, group_rank: Any) -> Any:
    g = _group(group)
    if _not_member(g, kind):
        return None
    role = "destination" if kind == "send" else "source"
    m = _Message(kind, tensor, g, _peer(g, rank, group_rank, kind, role))
    _queue.append(m)
    return m


def isend(
    tensor: Tensor,
    dst: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> Work | None:
    """Queue ``tensor`` (its value now) for rank ``dst``; the handle's ``wait`` sends it."""
    m = _queue_message("send", tensor, group, dst, group_dst)
    return None if m is None else _QueuedWork(m)


def irecv(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
) -> Work | None:
    """Queue a receive into ``tensor`` from rank ``src``; the handle's ``wait`` fills it."""
    m = _queue_message("recv", tensor, group, src, group_src)
    return None if m is None else _QueuedWork(m)


def send(
    tensor: Tensor,
    dst: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_dst: int | None = None,
) -> None:
    """Send ``tensor`` to rank ``dst``, which calls :func:`recv` (or :func:`irecv`) for it."""
    if _queue_message("send", tensor, group, dst, group_dst) is not None:
        _flush()


def recv(
    tensor: Tensor,
    src: int | None = None,
    group: Any = None,
    tag: int = 0,
    group_src: int | None = None,
) -> int:
    """Receive into ``tensor`` what rank ``src`` sends; returns ``src``'s global rank."""
    m = _queue_message("recv", tensor, group, src, group_src)
    if m is None:
        return -1
    _flush()
    g = m.group._g
    return g.ranks[m.peer]


class P2POp:
    """One message of :func:`batch_isend_irecv`: ``op`` is :func:`isend` or :func:`irecv`."""

    def __init__(
        self,
        op: Any,
        tensor: Tensor,
        peer: int | None = None,
        group: Any = None,
        tag: int = 0,
        group_peer: int | None = None,
    ) -> None:
        if op not in (isend, irecv):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                "``torch.distributed.irecv``."
            )
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list: Sequence[P2POp]) -> list[Work]:
    """Run every message of ``p2p_op_list`` (with any queued before); their handles."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type P2POp.")
    works = [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]
    _flush()
    return [w for w in works if w is not None]
