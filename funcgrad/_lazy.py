"""Deferred evaluation of programs: the pending graph behind compat's lazy execution.

While lazy mode is on, calling an executable made by :func:`funcgrad._compat_contract.executable`
does not run it: :func:`defer` appends a :class:`PendingNode` (the program, its
executable and its inputs) to the pending graph and returns one :class:`LazyArray`
per output, which carries the output's shape and dtype (so the caller's checks and
its next op's tracing go on as usual) but no value.

A value is computed when someone asks for it (:meth:`LazyArray.value`, or NumPy
conversion), at :func:`mark_step`, or when the pending graph grows past
:data:`POLICY.max_pending` nodes. :func:`flush` then evaluates *every* pending node
at once, as one program:

* the outputs of that program are the lazy arrays still alive at that moment
  (held by a tensor, a saved residual, a user's list; an intermediate value whose
  tensor was dropped is fused away), found through weak references;
* the program's structure (which programs, how they are wired, which outputs are
  alive) is a hashable key. The first ``POLICY.compile_after - 1`` sightings of a
  structure run node by node through each node's own executable (exactly eager
  execution, only later); from the next sighting on the nodes are traced into one
  funcgrad ``Program``, compiled once through the compile cache and dispatched once.
  A structure that never recurs (a loop whose shapes grow every iteration) therefore
  never compiles a program of its own.

The pending graph holds its nodes' inputs, as eager execution holds an op's
inputs until it ran; computed lazy arrays drop their node, so nothing of a graph
outlives its flush.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import sys
import threading
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from funcgrad import config
from funcgrad.core import compile_cache
from funcgrad.core.errors import user_frame
from funcgrad.core.interp import eval_program, trace_flat
from funcgrad.core.ir import Aval, Program

__all__ = [
    "POLICY",
    "LazyArray",
    "PendingNode",
    "concrete",
    "defer",
    "enabled",
    "flush",
    "is_on",
    "mark_step",
    "set_default",
    "set_enabled",
    "stats",
]


@dataclass
class Policy:
    """When the pending graph is evaluated and when a structure gets one program; each
    field is an option of :mod:`funcgrad.config` (``compat_lazy_<field>``, the table
    below says what it does)."""

    compile_after: int = 2
    compile_cold: int = 3
    max_pending: int = 4096
    max_fused_nodes: int = 2048
    max_fused_eqns: int = 60000
    max_structures: int = 64


POLICY = Policy()

_OPTIONS = {
    "compile_after": "The sighting of a step's structure from which it runs as one "
    "compiled program (earlier sightings run node by node).",
    "compile_cold": "A structure seen for the first time runs as one compiled program at "
    "once when node by node would compile at least this many executables that never ran "
    "(one compilation then costs less than many; 0: off).",
    "max_pending": "Evaluate the pending graph once it holds this many nodes.",
    "max_fused_nodes": "A structure with more calls than this always runs node by node "
    "(XLA's compile time grows faster than the dispatches it saves).",
    "max_fused_eqns": "... likewise for a structure with more equations than this.",
    "max_structures": "How many step structures lazy mode remembers (least recently used "
    "dropped first).",
}
for _field, _doc in _OPTIONS.items():
    config.bind(f"compat_lazy_{_field}", POLICY, _field, _doc)

#: counters: flushes, fused (one compiled program), eager (node by node), compiled
#: (new programs), nodes, reasons (why each flush happened, by user line)
_STATS: Counter = Counter()
_REASONS: Counter = Counter()


class _State(threading.local):
    on = False  # the class attribute is the process-wide default (set_default)


_state = _State()
#: the pending calls in recording order (a topological order), by id
_pending: dict[int, PendingNode] = {}
#: the last call recorded before the latest soft boundary (the end of a ``backward()``)
_soft: list = [None]
_lock = threading.RLock()
_seq = itertools.count()


class PendingNode:
    """One deferred call: ``fn(*inputs)`` of ``prog``; an input is an array or
    ``(node, j)``, output ``j`` of another pending node."""

    __slots__ = ("fn", "ins", "outs", "pos", "prog", "seq", "users")

    def __init__(self, prog: Program, fn: Callable, ins: list) -> None:
        self.prog = prog
        self.fn = fn
        self.ins = ins
        self.outs: list = []
        self.pos = -1
        self.seq = next(_seq)
        self.users: list[PendingNode] | None = None  # pending calls reading an output


class LazyArray:
    """An output of a pending node: its shape and dtype now, its value on demand."""

    __slots__ = ("__weakref__", "_value", "aval", "idx", "node")

    def __init__(self, aval: Aval, node: PendingNode | None, idx: int) -> None:
        self.aval = aval
        self.node = node
        self.idx = idx
        self._value: Any = None

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    weak_type = property(lambda self: self.aval.weak_type)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: int(np.prod(self.aval.shape, dtype=np.int64)))

    @property
    def device(self) -> Any:
        """The device of the computation: that of the first concrete input upstream."""
        src = self._source()
        return src.device if src is not None else None

    def devices(self) -> Any:
        src = self._source()
        return src.devices() if src is not None else set()

    def _source(self) -> Any:
        if self._value is not None:
            return self._value
        stack, seen = [self.node], set()
        while stack:
            n = stack.pop()
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            for a in n.ins:
                if type(a) is tuple:
                    stack.append(a[0])
                elif hasattr(a, "devices"):
                    return a
        return None

    @property
    def done(self) -> bool:
        return self._value is not None

    def value(self) -> Any:
        """The concrete array (evaluates the pending graph the first time)."""
        if self._value is None:
            flush(_caller_reason(), self)
        return self._value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.value(), dtype)

    def __getattr__(self, name: str) -> Any:
        # anything an array has beyond shape and dtype needs the value
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.value(), name)

    def __repr__(self) -> str:
        state = "computed" if self._value is not None else "pending"
        return f"LazyArray({self.aval}, {state})"


def is_on() -> bool:
    """Whether calls are deferred in this thread."""
    return _state.on


def set_enabled(flag: bool) -> None:
    """Turn deferral on or off in this thread (turning it off evaluates what is pending)."""
    if not flag and _state.on:
        flush("lazy mode switched off")
    _state.on = bool(flag)


def set_default(flag: bool) -> None:
    """The setting of every thread that did not choose its own with :func:`set_enabled`."""
    if not flag:
        flush("lazy mode switched off")
    _State.on = bool(flag)


@contextlib.contextmanager
def enabled(flag: bool = True) -> Iterator[None]:
    """Within the block, deferral is ``flag``; the previous setting is restored after."""
    prev = _state.on
    set_enabled(flag)
    try:
        yield
    finally:
        set_enabled(prev)


def defer(prog: Program, fn: Callable, args: Sequence[Any]) -> list[LazyArray]:
    """Append the call ``fn(*args)`` of ``prog`` to the pending graph; its outputs."""
    ins: list = []
    node = PendingNode(prog, fn, ins)
    for a in args:
        if type(a) is LazyArray:
            v = a._value
            if v is None:
                src = a.node
                ins.append((src, a.idx))
                if src.users is None:
                    src.users = [node]
                else:
                    src.users.append(node)
            else:
                ins.append(v)
        else:
            ins.append(a)
    outs = [LazyArray(v.aval, node, j) for j, v in enumerate(prog.outvars)]
    node.outs = [weakref.ref(o) for o in outs]
    with _lock:
        _pending[id(node)] = node
        if len(_pending) >= POLICY.max_pending:
            flush("the pending graph reached POLICY.max_pending nodes", _SOFT)
    return outs


def soft_boundary() -> None:
    """Mark the end of a unit of work (a ``backward()``): when the pending graph grows
    past its bound, it is cut here, so gradient-accumulation micro-steps are evaluated
    in whole, recurring groups."""
    if _pending:
        _soft[0] = next(reversed(_pending.values()))


def concrete(args: Sequence[Any]) -> list:
    """``args`` with every lazy array replaced by its value."""
    return [a.value() if type(a) is LazyArray else a for a in args]


def mark_step() -> None:
    """Evaluate everything pending now (a step boundary)."""
    flush("mark_step")


# --------------------------------------------------------------------------- evaluation


class _Structure:
    __slots__ = ("exes", "n_eqns", "progs", "seen")

    def __init__(self, progs: list) -> None:
        self.seen = 0
        #: the compiled programs by donated inputs (host-tier inputs, NumPy arrays, cannot
        #: be donated: a step after one on the host tier is the same structure)
        self.exes: dict[tuple[int, ...], Callable] = {}
        self.progs = progs  # keeps the programs (hence their ids in the key) alive
        self.n_eqns = sum(len(p.eqns) for p in progs)


_STRUCTURES: OrderedDict[tuple, _Structure] = OrderedDict()


def clear_structures() -> None:
    """Forget every structure seen (sightings start again from zero)."""
    _STRUCTURES.clear()


compile_cache.register("lazy_structures", size=lambda: len(_STRUCTURES), clear=clear_structures)


#: ``flush``'s target meaning "up to the latest soft boundary"
_SOFT: Any = object()


def flush(reason: str = "value read", target: Any = None) -> None:
    """Evaluate the pending graph; the lazy arrays still alive receive their values.

    With ``target`` (a value Python reads) only the calls it depends on are evaluated,
    the rest stays pending (reading a random index mid-step does not evaluate the
    step); with ``_SOFT`` the calls up to the latest soft boundary; otherwise all.
    """
    with _lock:
        if target is _SOFT:
            nodes = _prefix()
        elif target is not None and target.node is not None:
            nodes = _ancestors(target.node)
        else:
            nodes = list(_pending.values())
        if not nodes:
            return
        if len(nodes) == len(_pending):
            _pending.clear()
        else:
            for n in nodes:
                del _pending[id(n)]
        _soft[0] = None if not _pending else _soft[0]
        _STATS["flushes"] += 1
        _REASONS[reason] += 1
        extra = _read_later(nodes) if _pending else None
        # the programs were traced in 64-bit mode (compat's scope); evaluate them in it,
        # with deferral off (the executables run now)
        prev_on = _state.__dict__.get("on")
        _state.on = False
        prev_x64 = jax.enable_x64.swap_local(True)
        try:
            values = _evaluate(nodes, extra, reason)
        finally:
            jax.enable_x64.set_local(prev_x64)
            if prev_on is None:
                del _state.on
            else:
                _state.on = prev_on
        if extra:  # what stays pending now reads the computed values
            for u in {id(u): u for n, _ in extra.values() for u in n.users or ()}.values():
                u.ins = [values.get((id(a[0]), a[1]), a) if type(a) is tuple else a for a in u.ins]
        for n in nodes:
            n.users = None


def _prefix() -> list[PendingNode]:
    """The pending calls up to the latest soft boundary (all when there is none)."""
    last = _soft[0]
    if last is None or id(last) not in _pending:
        return list(_pending.values())
    out = []
    for n in _pending.values():
        out.append(n)
        if n is last:
            break
    _soft[0] = None
    return out


def _ancestors(node: PendingNode) -> list[PendingNode]:
    """The pending calls ``node`` depends on (itself included), in recording order."""
    anc = {id(node): node}
    stack = [node]
    while stack:
        for a in stack.pop().ins:
            if type(a) is tuple and id(a[0]) not in anc:
                anc[id(a[0])] = a[0]
                stack.append(a[0])
    return sorted(anc.values(), key=lambda n: n.seq)


def _read_later(nodes: list[PendingNode]) -> dict:
    """``(id(node), output) -> (node, output)`` of the evaluated calls' outputs that calls
    left pending read."""
    done = {id(n) for n in nodes}
    out: dict = {}
    for n in nodes:
        for u in n.users or ():
            if id(u) not in done:
                for a in u.ins:
                    if type(a) is tuple and a[0] is n:
                        out[(id(n), a[1])] = (n, a[1])
    return out


def _evaluate(nodes: list[PendingNode], extra: dict | None, reason: str = "") -> dict:
    """Run ``nodes``; outputs alive go to their lazy arrays, those in ``extra`` (``(id of
    node, output)`` that calls left pending read) are returned by that key."""
    for i, n in enumerate(nodes):
        n.pos = i
    live: list[tuple[LazyArray | None, int, int]] = []  # (array, node position, output)
    key_parts: list = []  # per node: (program id, refs, live outputs); a ref is an index
    ext: list = []  # into the distinct concrete inputs ``ext``, or (node position, output)
    where: dict[int, int] = {}  # id of a concrete input -> its position in ext
    uses: list[int] = []  # how many node inputs refer to each
    for i, n in enumerate(nodes):
        refs: list = []
        for a in n.ins:
            if type(a) is tuple:
                refs.append((a[0].pos, a[1]))
            else:
                k = where.get(id(a))
                if k is None:
                    k = where[id(a)] = len(ext)
                    ext.append(a)
                    uses.append(0)
                uses[k] += 1
                refs.append(k)
        alive = []
        for j, w in enumerate(n.outs):
            o = w()
            if o is not None or (extra is not None and (id(n), j) in extra):
                live.append((o, i, j))
                alive.append(j)
        key_parts.append((id(n.prog), tuple(refs), tuple(alive)))
    del where
    _STATS["nodes"] += len(nodes)
    wanted = [(i, j) for _, i, j in live]
    if len(nodes) == 1:  # one call: its own executable is already the whole program
        values = _interpret([(nodes[0].fn, key_parts[0][1], True)], ext, wanted)
        _STATS["eager"] += 1
        _STATS["dispatches"] += 1
        return _deliver(nodes, live, values, extra)
    donate = _donatable(ext, uses, [nodes[i].prog.outvars[j].aval for _, i, j in live])
    key = tuple(key_parts)
    st = _STRUCTURES.get(key)
    _note_structure(reason, key, nodes, st is None)
    if st is None:
        st = _STRUCTURES[key] = _Structure([n.prog for n in nodes])
        if len(_STRUCTURES) > POLICY.max_structures:
            _STRUCTURES.popitem(last=False)
    else:
        _STRUCTURES.move_to_end(key)
    st.seen += 1
    need = _needed(key_parts, wanted)
    if (
        (st.seen >= POLICY.compile_after or (st.seen == 1 and _mostly_cold(nodes, need)))
        and len(nodes) <= POLICY.max_fused_nodes
        and st.n_eqns <= POLICY.max_fused_eqns
    ):
        exe = st.exes.get(donate)
        if exe is None:
            exe = st.exes[donate] = _compile(nodes, key_parts, need, ext, wanted, donate)
            _STATS["compiled"] += 1
        for n in nodes:  # the program holds the only references to donated inputs now
            n.ins = []
        values = exe(ext)
        _STATS["fused"] += 1
        _STATS["dispatches"] += 1
    else:  # each needed node through its own executable, in order (what eager mode does)
        steps = [(n.fn, part[1], nd) for n, part, nd in zip(nodes, key_parts, need)]
        values = _interpret(steps, ext, wanted)
        _STATS["eager"] += 1
        _STATS["dispatches"] += sum(need)
    return _deliver(nodes, live, values, extra)


def _deliver(nodes: list[PendingNode], live: list, values: list, extra: dict | None) -> dict:
    """Store the computed values in their lazy arrays; return those ``extra`` asks for;
    break the evaluated graph (its inputs are no longer needed)."""
    computed = {}
    for (o, i, j), v in zip(live, values):
        if o is not None:
            o._value = v
            o.node = None
        if extra is not None:
            computed[(id(nodes[i]), j)] = v
    for n in nodes:
        n.ins = []
        n.outs = []
    return computed


def _mostly_cold(nodes: list[PendingNode], need: list[bool]) -> bool:
    """Whether running the needed ``nodes`` one by one would compile at least
    ``POLICY.compile_cold`` executables that never ran (an op's tiered executable says
    so: on the host tier nothing compiles; in the compiled tier mode an executable
    compiles at its first call)."""
    want = POLICY.compile_cold
    if want <= 0:
        return False
    seen: set[int] = set()
    cold = 0
    for n, nd in zip(nodes, need):
        fn = n.fn
        if not nd or id(fn) in seen:
            continue
        seen.add(id(fn))
        would_compile = getattr(fn, "would_compile", None)
        if would_compile is not None and would_compile():
            cold += 1
            if cold >= want:
                return True
    return False


def _interpret(steps: list[tuple[Callable, tuple, bool]], xs: Sequence[Any], wanted: list) -> list:
    """Call each needed step ``(call, refs, needed)`` on its inputs (``refs``: an index
    into ``xs`` or an earlier step's output); the ``wanted`` outputs. Runs the eager
    evaluation and, under a builder, traces the fused program."""
    results: list = [None] * len(steps)
    for i, (call, refs, needed) in enumerate(steps):
        if needed:
            results[i] = call(*[xs[r] if type(r) is int else results[r[0]][r[1]] for r in refs])
    return [results[i][j] for i, j in wanted]


def _donatable(ext: list, uses: list[int], out_avals: list[Aval]) -> tuple[int, ...]:
    """The concrete inputs referenced by nothing but the pending graph (CPython's
    reference count proves it) whose buffers an output of the same shape and dtype can
    take over: XLA updates them in place (a parameter, an optimizer state)."""
    if sys.implementation.name != "cpython":
        return ()
    free: Counter = Counter((a.shape, a.dtype) for a in out_avals)
    out = []
    for k in range(len(ext)):
        a = ext[k]
        # references: one per node input, the ext list's, ``a``'s, getrefcount's argument
        # (a NumPy array, a host-tier value, is copied in by the executable and that copy
        # donated: the same structure whether the last step ran on the host or compiled)
        if not (type(a) is np.ndarray or hasattr(a, "delete")):
            continue
        if sys.getrefcount(a) > uses[k] + 3:
            continue
        sig = (tuple(a.shape), a.dtype)
        if free[sig] > 0:
            free[sig] -= 1
            out.append(k)
    return tuple(out)


def _needed(key_parts: list, wanted: list[tuple[int, int]]) -> list[bool]:
    """Which nodes a wanted output depends on (the rest is fused away or skipped)."""
    need = [False] * len(key_parts)
    for i, _ in wanted:
        need[i] = True
    for i in range(len(key_parts) - 1, -1, -1):
        if need[i]:
            for r in key_parts[i][1]:
                if type(r) is tuple:
                    need[r[0]] = True
    return need


def _compile(
    nodes: list[PendingNode],
    key_parts: list,
    need: list[bool],
    ext: list,
    wanted: list[tuple[int, int]],
    donate: tuple,
) -> Callable:
    """The nodes traced into one program of the distinct concrete inputs ``ext``
    returning the ``wanted`` outputs, compiled (``donate``: inputs XLA may reuse)."""
    avals: list = [None] * len(ext)
    for n, (_, refs, _) in zip(nodes, key_parts):
        for k, r in enumerate(refs):
            if type(r) is int and avals[r] is None:
                avals[r] = n.prog.in_avals[k]
    steps = [
        (functools.partial(eval_program, n.prog), part[1], nd)
        for n, part, nd in zip(nodes, key_parts, need)
    ]
    prog = trace_flat(lambda *xs: _interpret(steps, xs, wanted), avals, "lazy")
    consts = prog.consts
    static = {"donate_argnums": tuple(len(consts) + k for k in donate)} if donate else {}
    fn = compile_cache.compiled(prog, name="compat_lazy_step", **static)

    def run(ext: list) -> list:
        return fn(*consts, *ext)

    return run


def _caller_reason() -> str:
    """``"value read at file:line"``: the user's line that asked for a value."""
    at = user_frame()
    return f"value read at {at[0]}:{at[1]}" if at is not None else "value read"


#: the latest structure evaluated for each reason: (key, programs), to explain a change
_LAST: OrderedDict[str, tuple] = OrderedDict()
#: why structures changed ("new structure at <reason>: call 12: ... was ..."), newest last
_CHANGES: list[str] = []


def _note_structure(reason: str, key: tuple, nodes: list[PendingNode], new: bool) -> None:
    """Remember the structure evaluated for ``reason``; a new one is explained against the
    previous structure evaluated for the same reason (the same user line or boundary)."""
    prev = _LAST.get(reason)
    progs = [n.prog for n in nodes]
    if new and prev is not None and prev[0] != key:
        _CHANGES.append(f"new structure at {reason}: {_difference(prev, key, progs)}")
        del _CHANGES[:-50]
    _LAST[reason] = (key, progs)
    _LAST.move_to_end(reason)
    if len(_LAST) > 64:
        _LAST.popitem(last=False)


def _difference(prev: tuple, key: tuple, progs: list) -> str:
    pparts, pprogs = prev
    parts = key
    for i, (a, b) in enumerate(zip(pparts, parts)):
        if a != b:
            now, was = _describe(progs[i]), _describe(pprogs[i])
            if a[0] == b[0]:
                what = "reads other inputs" if a[1] != b[1] else "other results are still used"
                return f"call {i} ({now}) {what}"
            return f"call {i} is {now}, was {was}"
    if len(parts) != len(pparts):
        return f"{len(parts)} calls instead of {len(pparts)}"
    return "same calls"


def _describe(prog: Program) -> str:
    names = [e.prim.name for e in prog.eqns[:3]] or ["identity"]
    more = "..." if len(prog.eqns) > 3 else ""
    shapes = ", ".join(str(list(a.shape)) for a in prog.in_avals)
    return f"{'/'.join(names)}{more} of ({shapes})"


def stats() -> dict[str, Any]:
    """The counters (flushes, fused, eager, compiled, nodes), why each flush happened and
    why structures changed (``"changes"``, the latest 50)."""
    return {**_STATS, "reasons": dict(_REASONS), "changes": list(_CHANGES)}


def reset_stats() -> None:
    """Set the counters, reasons and changes that :func:`stats` reports back to empty."""
    _STATS.clear()
    _REASONS.clear()
    _CHANGES.clear()
