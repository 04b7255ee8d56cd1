"""The one compile cache: every executable funcgrad compiles lives here.

Entries and their keys:

* :func:`compiled` — ``jax.jit`` of :func:`~funcgrad.core.lowering.lower_program`
  for a program, keyed by the program's structure (:meth:`Program.key`:
  equations, params, avals, literal values; never its consts, never object
  identity) and the static keyword arguments handed to ``jax.jit`` (donation,
  shardings). The executable is called ``fn(*prog.consts, *args)``: constants
  are arguments, so programs that differ only in their constants share one
  executable. ``name`` labels the executable and is not part of the key.
* :func:`run` — eager evaluation with the compile-on-recurrence policy: a
  structure's first ``POLICY.compile_after - 1`` sightings run op by op (one-off
  programs never pay for XLA), the next compiles it (the entry :func:`compiled`
  makes) and later ones are one dispatch.

Executables of programs evaluated eagerly (:func:`run`, and compat's ops through
``compiled(..., eager=True)``) are compiled with ``POLICY.eager_compiler_options``:
they are small, many, and often run for one shape only, so XLA's compile time is
what a user waits for. ``jit``'s programs get XLA's defaults, as ``jax.jit``'s.
* :func:`cached` — any other compiled object with a structural key (control
  flow's eager ``jax.jit`` of a lowering, keyed by its params).
* :func:`run_lowering` — a primitive's lowering called on concrete arrays, for
  lowerings that hold a loop: a cached ``jax.jit`` of it (op by op, JAX would
  re-trace and recompile the loop on every call).

All entries share one LRU bound (``POLICY.max_entries``) and one set of counters
(:func:`info`). Caches kept elsewhere that hold traces per function (``jit``'s
trace and dispatch tables, ``checkpoint``'s traces) :func:`register` a size and
a clear function, so :func:`clear` drops them too and :func:`info` counts them.
``funcgrad.clear_caches()`` and ``funcgrad.cache_info()`` are the public calls.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jax
import numpy as np

from funcgrad import config
from funcgrad.core.debug_hooks import hooks
from funcgrad.core.interp import Tracer, eval_program, is_tracing, set_program_runner
from funcgrad.core.ir import Program, _hashable_param
from funcgrad.core.lowering import lower_program
from funcgrad.passes import has_effects

#: the default of ``Policy.eager_compiler_options``: XLA's classic CPU emitters, which
#: compile a small program in about half the time of its fusion emitters; a CPU option,
#: so it is not passed on another backend, and dropped without a word by an XLA that
#: retired it (the user did not ask for it)
CLASSIC_CPU_EMITTERS: dict[str, Any] = {"xla_cpu_use_fusion_emitters": False}


@dataclass
class Policy:
    """The settings of eager compilation and the execution tiers; each field is an
    option of :mod:`funcgrad.config` (the table below says which and what it does:
    ``fg.config.update("funcgrad_eager_compile_after", 2)`` sets ``compile_after``)."""

    compile_after: int = 4
    compile_cold: int = 3
    max_entries: int = 1024
    max_seen: int = 4096
    max_warm: int = 16384
    eager_compiler_options: dict[str, Any] | None = field(
        default_factory=lambda: dict(CLASSIC_CPU_EMITTERS)
    )
    tier: str = "auto"
    tier_compile_after: int = 8
    tier_compile_host_ms: float = 10.0
    tier_compile_min_us: float = 30.0
    tier_eager_binds: bool = False
    tier_generate_after: int = 4
    tier_max_compiled_outputs: int = 128
    tier_max_compiled_eqns: int = 4000
    tier_probe_calls: int = 8
    tier_probe_min_calls: int = 3
    tier_probe_budget_ms: float = 50.0
    tier_drop_ratio: float = 2.0
    tier_drop_min_ms: float = 1.0
    tier_follow_compiled: bool = True
    tier_place_by_operands: bool = False
    tier_judge_in_context: bool = True
    tier_trial_calls: int = 8
    tier_early_ms: float = 20.0
    tier_early_calls: int = 3
    tier_exit_wait_s: float = 120.0


#: the settings in force (module-level, read on every miss)
POLICY = Policy()

#: field of :data:`POLICY` -> (its option in :mod:`funcgrad.config`, what it does)
_OPTIONS = {
    "compile_after": (
        "funcgrad_eager_compile_after",
        "In the compiled tier mode, run() compiles a program structure the n-th time it "
        "sees it (1: always; 4: three evaluations op by op, then one executable). A "
        "structure evaluated two or three times never earns back XLA's 30-100 ms.",
    ),
    "compile_cold": (
        "funcgrad_eager_compile_cold",
        "In the compiled tier mode, run() compiles a structure at its first sighting "
        "when at least this many of its equations were never run op by op (each would "
        "be an XLA compilation of its own). 0: off.",
    ),
    "max_entries": (
        "funcgrad_cache_max_entries",
        "Most entries (executables, traces, plans) the one compile cache keeps; the "
        "least recently used is dropped first.",
    ),
    "max_seen": (
        "funcgrad_cache_max_seen",
        "Most structures run() remembers having seen but not compiled yet.",
    ),
    "max_warm": (
        "funcgrad_cache_max_warm",
        "Most equation signatures run() remembers as already run op by op.",
    ),
    "eager_compiler_options": (
        "funcgrad_eager_compiler_options",
        "XLA compiler options for executables of eagerly evaluated programs (compat's "
        "ops, run()): XLA's classic CPU emitters by default, which compile a small "
        "program in half the time (on a CPU backend only; an XLA that retired them drops "
        "them). None or {}: XLA's defaults. Other options this XLA does "
        "not know are dropped with a warning.",
    ),
    "tier": (
        "funcgrad_eager_tier",
        "Where eager work runs: 'auto' (tiered on a CPU, compiled on an accelerator), "
        "'tiered' (host tier, compiled in the background once hot), 'host' or "
        "'compiled'. jit is compiled whatever it is.",
    ),
    "tier_compile_after": (
        "funcgrad_tier_compile_after",
        "A program on the host tier is considered for background compilation from its "
        "n-th call on (a one-off program never is).",
    ),
    "tier_compile_host_ms": (
        "funcgrad_tier_compile_host_ms",
        "... once its calls have done this many milliseconds of host-tier work in all "
        "per 16 equations (calls times the fastest call; about the compile of 16 "
        "equations: it pays for itself from then on) ...",
    ),
    "tier_compile_min_us": (
        "funcgrad_tier_compile_min_us",
        "... and its fastest call took at least this many microseconds, times a quarter "
        "of its arguments and results when it has more than four (below it XLA's call "
        "floor, 7-12 us plus 3-6 us per NumPy argument, eats what compiling saves; the "
        "fastest, not the mean: preemptions on a loaded machine inflate a mean).",
    ),
    "tier_eager_binds": (
        "funcgrad_tier_eager_binds",
        "Primitives bound eagerly at top level (fnp.sin(x) outside any transform) run "
        "on the host tier too. Off: they are JAX's eager path, bit-identical to JAX's "
        "results (random initializers compose primitives eagerly).",
    ),
    "tier_generate_after": (
        "funcgrad_tier_generate_after",
        "A host-tier plan interprets its equations for its first calls and runs "
        "generated Python code from this call on (generating costs ~17 us an equation, "
        "once per structure).",
    ),
    "tier_max_compiled_eqns": (
        "funcgrad_tier_max_compiled_eqns",
        "A program with more equations is never compiled in the background: it stays on "
        "the host tier. XLA's CPU compile time grows faster than the program (a chain of "
        "500 / 2,000 / 4,000 elementwise equations: 0.4 / 3.1 / 5.1 s; one of 8,000 "
        "crashed the compiler).",
    ),
    "tier_max_compiled_outputs": (
        "funcgrad_tier_max_compiled_outputs",
        "A program with more outputs is never compiled in the background (XLA's "
        "compile time grows steeply with outputs: seconds at 1,000).",
    ),
    "tier_probe_calls": (
        "funcgrad_tier_probe_calls",
        "An executable compiled in the background has at most this many of its first "
        "calls timed alone, to completion, against the host tier's fastest call (see "
        "funcgrad_tier_probe_budget_ms, funcgrad_tier_probe_min_calls).",
    ),
    "tier_probe_min_calls": (
        "funcgrad_tier_probe_min_calls",
        "The fewest probes of a background-compiled executable, whatever its host-tier "
        "work (a wrong drop is for good).",
    ),
    "tier_probe_budget_ms": (
        "funcgrad_tier_probe_budget_ms",
        "A background-compiled executable is probed as many times as fit in this many "
        "milliseconds of the program's host-tier work, within "
        "funcgrad_tier_probe_min_calls and funcgrad_tier_probe_calls (every probe of a "
        "slow executable is paid in full).",
    ),
    "tier_drop_ratio": (
        "funcgrad_tier_drop_ratio",
        "A probed executable slower than the host tier by funcgrad_tier_drop_min_ms or "
        "more a call, whose fastest probe is more than this many times the host "
        "tier's fastest call is dropped (the host tier serves the program for good); "
        "one faster than the host tier is kept; one in between is judged in context "
        "(funcgrad_tier_judge_in_context), or kept when that is off.",
    ),
    "tier_drop_min_ms": (
        "funcgrad_tier_drop_min_ms",
        "A probed executable slower than the host tier by less than this many "
        "milliseconds a call is kept whatever the ratio: in a step its call returns once "
        "dispatched and runs beside the caller, and its neighbours stay compiled "
        "(no wait for its result, no copy in or out); 0: the ratio alone decides. Only "
        "with a spare core (the process's cores over LOCAL_WORLD_SIZE at least two).",
    ),
    "tier_follow_compiled": (
        "funcgrad_tier_follow_compiled",
        "A program that has run funcgrad_tier_compile_after times and is fed arrays "
        "that compiled programs computed is compiled in the background too, whatever "
        "its size: on the host tier each such call waits for its inputs and copies "
        "them, and a step mixing the tiers runs slower than one all compiled. Only with "
        "a spare core (the process's cores over LOCAL_WORLD_SIZE at least two).",
    ),
    "tier_place_by_operands": (
        "funcgrad_tier_place_by_operands",
        "With an accelerator as JAX's default backend, 'auto' places each eager call by "
        "its operands (compiled for arrays on the accelerator, tiered for host values and "
        "CPU arrays, such as compat's CPU tensors) instead of compiling every eager "
        "program. Off until it has been run on a GPU: read when 'auto' is first resolved.",
    ),
    "tier_judge_in_context": (
        "funcgrad_tier_judge_in_context",
        "An executable slower alone than the host tier, but within "
        "funcgrad_tier_drop_ratio, is judged in context: 2 * funcgrad_tier_trial_calls "
        "further calls alternate between the two tiers, each timed from its start to the "
        "program's next call (the caller's work between them included, which a compiled "
        "call overlaps), and the tier with the shorter fastest interval serves for good.",
    ),
    "tier_trial_calls": (
        "funcgrad_tier_trial_calls",
        "The calls of each tier in a trial in context (funcgrad_tier_judge_in_context): "
        "a trial costs at worst half its calls on the slower tier, and a program run "
        "once a step is timed over whole steps, which vary under load.",
    ),
    "tier_early_ms": (
        "funcgrad_tier_early_ms",
        "A program whose fastest host-tier call takes at least this many milliseconds "
        "is considered for background compilation from its "
        "funcgrad_tier_early_calls-th call, not the funcgrad_tier_compile_after-th.",
    ),
    "tier_early_calls": (
        "funcgrad_tier_early_calls",
        "The call from which a program of funcgrad_tier_early_ms or more a call is "
        "considered for background compilation (a training step's backward, met once a "
        "step, would otherwise run on the host tier for its first eight steps).",
    ),
    "tier_exit_wait_s": (
        "funcgrad_tier_exit_wait_s",
        "At interpreter exit, the background compile running then is waited for at most "
        "this many seconds (jobs not started are dropped; a thread still inside XLA at "
        "finalization aborts the process).",
    ),
}


def check_tier(m: Any) -> str:
    """``m`` if it is a tier mode (:data:`TIER_MODES`); else ValueError."""
    if m not in TIER_MODES:
        raise ValueError(f"eager tier mode must be one of {TIER_MODES}, got {m!r}")
    return m


#: the values of the ``funcgrad_eager_tier`` option
TIER_MODES = ("auto", "tiered", "host", "compiled")

for _field, (_name, _doc) in _OPTIONS.items():
    config.bind(_name, POLICY, _field, _doc, check_tier if _field == "tier" else None)


class CacheInfo(NamedTuple):
    """What the cache holds and how it has been used since the last :func:`clear`.

    Attributes:
        entries: executables and other values in the store.
        hits: lookups that found their entry.
        misses: lookups that did not (a first sighting in :func:`run` is a miss).
        compiles: entries created: one ``jax.jit`` per program structure and
            statics, one value per :func:`cached` key.
        evictions: entries dropped to keep within ``POLICY.max_entries``.
        seen: structures :func:`run` has seen but not compiled yet.
        traces: entries of the registered per-function caches (``jit``'s traces,
            ``checkpoint``'s traces, executables in ``jit``'s dispatch tables).
        kinds: entries per kind: ``"program"`` (:func:`compiled`/:func:`run`), the
            kinds given to :func:`cached`, and each registered cache's kind.
    """

    entries: int
    hits: int
    misses: int
    compiles: int
    evictions: int
    seen: int
    traces: int
    kinds: dict[str, int]


class _Registered(NamedTuple):
    size: Callable[[], int]
    clear: Callable[[], None]


class _Stats:
    __slots__ = ("compiles", "evictions", "hits", "misses")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.hits = self.misses = self.compiles = self.evictions = 0


_MISSING: Any = object()
#: key -> (value, kind), least recently used first
_store: OrderedDict[Hashable, tuple[Any, str]] = OrderedDict()
#: structures run() has seen (key -> sightings), oldest first
_seen: dict[Hashable, int] = {}
#: signatures of equations run op by op (see Policy.compile_cold), oldest first
_warm: dict[Hashable, None] = {}
_stats = _Stats()
_registered: dict[str, _Registered] = {}
_lock = threading.Lock()


# --------------------------------------------------------------------------- store


def _lookup(key: Hashable) -> Any:
    """The value stored under ``key`` (refreshed as most recently used), or ``_MISSING``."""
    item = _store.get(key, _MISSING)
    if item is _MISSING:
        _stats.misses += 1
        return _MISSING
    with contextlib.suppress(KeyError):  # dropped by another thread meanwhile: still valid
        _store.move_to_end(key)
    _stats.hits += 1
    return item[0]


def _insert(key: Hashable, value: Any, kind: str) -> Any:
    with _lock:
        _store[key] = (value, kind)
        _stats.compiles += 1
        while len(_store) > max(POLICY.max_entries, 1):
            _store.popitem(last=False)
            _stats.evictions += 1
    return value


def _freeze(v: Any) -> Hashable:
    """A hashable image of a static value (lists and dicts made tuples, kinds kept apart)."""
    if isinstance(v, tuple):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, list):
        return (list, tuple(_freeze(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple(sorted((k, _freeze(x)) for k, x in v.items())))
    try:
        hash(v)
    except TypeError:
        raise TypeError(
            f"compile cache: static value {v!r} of type {type(v).__name__} is not hashable"
        ) from None
    return v


def _program_key(prog: Program, static: dict[str, Any]) -> Hashable:
    frozen = tuple(sorted((k, _freeze(v)) for k, v in static.items())) if static else ()
    return ("program", prog.hashed_key(), frozen)


def _jit(prog: Program, name: str | None, static: dict[str, Any]) -> Callable[..., Any]:
    fn = lower_program(prog)
    if name:
        fn.__name__ = fn.__qualname__ = name
    return jax.jit(fn, **static)


# --------------------------------------------------------------------------- entry points


def compiled(
    prog: Program, *, name: str | None = None, eager: bool = False, **static: Any
) -> Callable[..., list]:
    """The compiled executable of ``prog``, called as ``fn(*prog.consts, *args)``.

    Cached by ``prog``'s structure and ``static`` (keyword arguments of ``jax.jit``:
    ``donate_argnums``, ``in_shardings``, ... counted over ``(*consts, *args)``), so
    structurally identical programs share one executable whatever their consts;
    a repeated call is a dictionary lookup. ``name`` labels a new executable (the
    XLA module name) and is not part of the key.

    Args:
        prog: the program; its consts are not looked at.
        name: the executable's name, if this call creates it.
        eager: a program evaluated eagerly (an op of compat's eager mode): compiled
            with ``POLICY.eager_compiler_options``.
        **static: passed to ``jax.jit``; must be hashable (lists and dicts of
            hashable values are accepted).

    Returns:
        A function of ``(*consts, *args)`` returning the list of outputs.
    """
    if eager:
        static = {**static, **_eager_static()}
    key = _program_key(prog, static)
    fn = _lookup(key)
    if fn is _MISSING:
        fn = _insert(key, _jit(prog, name, static), "program")
    return fn


def run(prog: Program, *args: Any) -> list[Any]:
    """Evaluate ``prog`` on ``args`` with the compile-on-recurrence policy.

    Under a trace its equations are bound (so they record into the trace); with
    no trace active, a structure seen fewer than ``POLICY.compile_after`` times
    runs op by op, and from then on through the executable :func:`compiled` holds.

    Args:
        prog: the program to evaluate (its consts are passed to the executable).
        *args: the values of its invars.

    Returns:
        The list of output values.
    """
    if is_tracing():
        return eval_program(prog, *args)
    return run_checked(prog, args, _run)


def run_checked(prog: Program, args: tuple, runner: Callable[[Program, tuple], list]) -> list:
    """``runner(prog, args)``; under ``funcgrad.debug.nans`` its outputs are checked (not
    each operation: the program's equations run with the per-operation check off)."""
    if not hooks.nans:
        return runner(prog, args)
    hooks.in_program += 1
    try:
        outs = runner(prog, args)
    finally:
        hooks.in_program -= 1
    if hooks.check_program is not None:
        hooks.check_program(prog, args, outs)
    return outs


def _run(prog: Program, args: tuple) -> list[Any]:
    if not prog.eqns:  # outputs forwarded from inputs or literals: arrays, as JAX returns
        return [_as_jax(o) for o in eval_program(prog, *args)]
    if any(isinstance(c, Tracer) for c in prog.consts):
        return eval_program(prog, *args)
    static = _eager_static()
    key = _program_key(prog, static)
    fn = _lookup(key)
    if fn is _MISSING:
        sigs = _signatures(prog)
        if not _mostly_cold(prog, sigs) and not _sighted(key):
            outs = eval_program(prog, *args)
            _warm_up(sigs)
            return outs
        fn = _insert(key, _jit(prog, None, static), "program")
    return list(fn(*prog.consts, *args))


#: options -> whether this XLA accepts them all (probed once per set of options)
_accepted: dict[Hashable, bool] = {}
#: the options object last resolved and its keyword (a read per eager call, no hashing)
_last_eager: list[Any] = [None, {}]


def _eager_static() -> dict[str, Any]:
    """``jax.jit``'s keyword for ``POLICY.eager_compiler_options`` (empty when unset or
    not accepted by this XLA: a flag XLA retired must not break every op)."""
    opts = POLICY.eager_compiler_options
    if opts is _last_eager[0]:
        return _last_eager[1]
    if not opts:
        return {}
    default = opts == CLASSIC_CPU_EMITTERS
    frozen = _freeze(opts)
    ok = _accepted.get(frozen)
    if ok is None:
        if default and jax.default_backend() != "cpu":
            ok = False
        else:
            try:
                jax.jit(lambda x: x, compiler_options=opts).lower(np.float32(0)).compile()
                ok = True
            except Exception as e:  # XLA: "No such compile option"
                if not default:
                    warnings.warn(
                        f"funcgrad: XLA rejected POLICY.eager_compiler_options {opts!r} "
                        f"({e}); eager executables are compiled with XLA's defaults",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                ok = False
        _accepted[frozen] = ok
    static = {"compiler_options": opts} if ok else {}
    _last_eager[:] = [opts, static]
    return static


def cached(key: Hashable, make: Callable[[], Any], *, kind: str = "other") -> Any:
    """The value stored under ``(kind, key)``, made with ``make()`` on a miss.

    For compiled objects that are not one program's executable (e.g. control
    flow's ``jax.jit`` of a lowering, keyed by its structural params); they share
    the store's bound and counters. ``key`` must be structural (equal for equal
    inputs, never an object's identity); put a program in it as
    ``prog.hashed_key()``, whose hash is computed once.

    Args:
        key: a hashable structural key.
        make: builds the value on a miss.
        kind: the entry's kind, a namespace for ``key`` and a label in :func:`info`.

    Returns:
        The cached (or newly made) value.
    """
    k = ("cached", kind, key)
    value = _lookup(k)
    if value is _MISSING:
        value = _insert(k, make(), kind)
    return value


def run_lowering(kind: str, key: Hashable, fn: Callable[..., Any], vals: Sequence[Any]) -> Any:
    """Call the lowering ``fn`` on ``vals``: inline inside a JAX trace, else compiled.

    For lowerings that hold a ``lax.while_loop``/``scan`` (control flow, gamma
    sampling): called on concrete arrays JAX would trace and compile the loop anew
    on each call, because each call builds new closures; here the ``jax.jit`` of
    ``fn`` is cached under ``(kind, key)`` and compiles once per shape.

    Args:
        kind: the entry's kind (a label in :func:`info`).
        key: the structural key of everything ``fn`` closes over (the params).
        fn: the lowering, a function of the arrays ``vals``.
        vals: its arguments.

    Returns:
        ``fn(*vals)``.
    """
    if any(isinstance(v, jax.core.Tracer) for v in vals):
        return fn(*vals)
    return cached(key, lambda: jax.jit(fn), kind=kind)(*vals)


def _sighted(key: Hashable) -> bool:
    """Count a sighting of ``key``; true when it is time to compile it."""
    with _lock:
        n = _seen.pop(key, 0) + 1
        if n >= POLICY.compile_after:
            return True
        _seen[key] = n  # re-inserted: the most recently seen is last
        while len(_seen) > max(POLICY.max_seen, 0):
            del _seen[next(iter(_seen))]
    return False


def _signatures(prog: Program) -> list[Hashable]:
    """What JAX keys its per-primitive executables by, for each equation of ``prog``."""
    return [
        (e.prim.name, tuple(a.aval for a in e.inputs), _hashable_param(e.params)) for e in prog.eqns
    ]


def _mostly_cold(prog: Program, sigs: list[Hashable]) -> bool:
    """True when op by op would compile at least ``POLICY.compile_cold`` equations.

    Never for a program with effects (``debug.print``): op by op runs them in program
    order, as JAX's eager transforms do; a compiled program need not."""
    need = POLICY.compile_cold
    if need <= 0 or any(has_effects(e) for e in prog.eqns):
        return False
    cold = 0
    for s in sigs:
        if s not in _warm:
            cold += 1
            if cold >= need:
                return True
    return False


def _warm_up(sigs: list[Hashable]) -> None:
    """Remember ``sigs`` as run op by op (their per-primitive executables exist)."""
    with _lock:
        for s in sigs:
            _warm[s] = None
        while len(_warm) > max(POLICY.max_warm, 0):
            del _warm[next(iter(_warm))]


def _as_jax(x: Any) -> Any:
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype == jax.dtypes.float0:
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        return jax.device_put(x)
    return x


# --------------------------------------------------------------------------- inspect, clear


def register(kind: str, *, size: Callable[[], int], clear: Callable[[], None]) -> None:
    """Put a cache kept elsewhere (per-function traces) under :func:`clear` and :func:`info`.

    Args:
        kind: its label in :attr:`CacheInfo.kinds` (registering a kind again replaces it).
        size: returns how many entries it holds.
        clear: empties it.
    """
    _registered[kind] = _Registered(size, clear)


def register_lru_kind(kind: str) -> Callable[[Any], Any]:
    """A decorator putting a ``functools.lru_cache``-wrapped function's cache under
    :func:`clear` and :func:`info` as ``kind`` (:func:`register`)."""

    def reg(fn: Any) -> Any:
        register(kind, size=lambda: fn.cache_info().currsize, clear=fn.cache_clear)
        return fn

    return reg


def info() -> CacheInfo:
    """A snapshot of the cache's contents and counters."""
    with _lock:
        kinds: dict[str, int] = {}
        for _, kind in list(_store.values()):  # a copy: lookups reorder without the lock
            kinds[kind] = kinds.get(kind, 0) + 1
        entries, seen = len(_store), len(_seen)
    traces = 0
    for kind, reg in _registered.items():
        n = reg.size()
        kinds[kind] = kinds.get(kind, 0) + n
        traces += n
    s = _stats
    return CacheInfo(entries, s.hits, s.misses, s.compiles, s.evictions, seen, traces, kinds)


def clear() -> None:
    """Drop every entry, every registered cache's entries, and reset the counters."""
    with _lock:
        _store.clear()
        _seen.clear()
        _warm.clear()
        _stats.reset()
    for reg in list(_registered.values()):
        reg.clear()


# known-value slices of eager traces (core.interp) run through this cache
set_program_runner(run)
