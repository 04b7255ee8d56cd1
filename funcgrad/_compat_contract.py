"""What compat's autograd engine is built on: the one internal module compat imports.

compat records every PyTorch op as a funcgrad program and runs ``backward`` as
funcgrad's reverse pass over the recorded graph. This module holds the funcgrad
side of that contract:

* :func:`trace_op` traces an op's pure function into an :class:`OpProgram` once
  per (function, static values, input avals); ops of the same structure share
  one ``OpProgram`` (interned by :meth:`Program.key`), hence one executable and
  one VJP per mask;
* :class:`OpVJP` is :func:`funcgrad.ad.vjp_program` of an op for the inputs
  that need a gradient, with where each residual comes from (an input, an
  output or a new value: what PyTorch calls "saved" tensors);
* :meth:`OpVJP.backward` applies the backward program: eagerly through the
  compile cache, or inlined when called under a tracing builder, so the same
  reverse loop (:func:`funcgrad.ad.reverse_accumulate`) either runs node by
  node or records one backward :class:`Program`;
* :meth:`OpVJP.recompute` is the backward as a function of the op's *inputs*
  and cotangents, the program compat records when ``create_graph=True`` so
  higher derivatives come from funcgrad's VJP of it;
* :func:`x64` scopes JAX's 64-bit mode to compat's own calls: PyTorch programs
  need float64/int64 arrays, but importing compat must not change the dtypes of
  a funcgrad or JAX program in the same process, so compat switches
  ``jax_enable_x64`` on thread-locally around each of its entry points.
"""

from __future__ import annotations

import functools
import itertools
import sys
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from funcgrad import _lazy, ad, config, passes, shape_templates
from funcgrad import lax as flax
from funcgrad import numpy as fnp
from funcgrad.ad import reverse_accumulate
from funcgrad.batching import batch_program
from funcgrad.core import compile_cache, dtypes, tiers
from funcgrad.core.array_row import ARRAY_ROWS as _ARRAY_ROWS
from funcgrad.core.array_row import ArrayRow
from funcgrad.core.creation_row import COMPUTED, FILL_VALUE, REQUIRED, Creation
from funcgrad.core.creation_row import CREATION_ROWS as _CREATION_ROWS
from funcgrad.core.errors import ConcretizationError
from funcgrad.core.gc_freeze import freeze as freeze_gc
from funcgrad.core.interp import Tracer, _state, eval_program, is_tracing, new_builder, trace_flat
from funcgrad.core.ir import Aval, Program, Var
from funcgrad.core.meta_array import MetaArray, has_meta, meta_outputs
from funcgrad.core.primitive import COMPOSITES as _COMPOSITES
from funcgrad.core.primitive import REGISTRY as _PRIMITIVES
from funcgrad.core.primitive import Composite, Primitive
from funcgrad.core.reduction_row import REDUCTIONS as _REDUCTIONS
from funcgrad.core.reduction_row import Reduction
from funcgrad.tree_util import tree_unflatten

LazyArray = _lazy.LazyArray
#: the pending graph of lazy execution (compat.lazy is its public face)
lazy = _lazy

__all__ = [
    "COMPUTED",
    "FILL_VALUE",
    "REQUIRED",
    "Aval",
    "ConcretizationError",
    "LazyArray",
    "MetaArray",
    "OpProgram",
    "OpVJP",
    "Program",
    "Tracer",
    "batch_program",
    "call_jitted",
    "compile_cache",
    "donates",
    "executable",
    "freeze_gc",
    "host_callable",
    "host_scalars",
    "is_tracing",
    "lazy",
    "lazy_on",
    "lookup_op",
    "mark_step",
    "new_builder",
    "op_cache",
    "op_of_program",
    "reverse_accumulate",
    "run",
    "simplify",
    "torch_rows",
    "trace_flat",
    "trace_op",
    "tracing",
    "x64",
]

simplify = passes.simplify
#: the thread's tracing state: ``tracing.stack`` is non-empty under a tracing builder
#: (what :func:`is_tracing` tests, read without a call on the dispatch hot path)
tracing = _state
_ids = itertools.count(1)

_X64 = jax.enable_x64


def torch_rows() -> list[Primitive | Composite]:
    """The primitives and declared composites whose rows declare a PyTorch form (``torch=``,
    a ``funcgrad.core.primitive.TorchForm``), in declaration order, primitives first:
    compat builds those ops from them, at import (a composite says ``composite=True``)."""
    rows = (*_PRIMITIVES.values(), *_COMPOSITES.values())
    return [p for p in rows if p.torch is not None]


def reduction_rows() -> list[Reduction]:
    """The reduction rows that declare a PyTorch form (``torch=``, a
    ``funcgrad.core.reduction_row.TorchReduction``), in declaration order: compat builds
    ``torch.X``, ``Tensor.X`` and ``out=`` of each from them, at import."""
    return [r for r in _REDUCTIONS.values() if r.torch is not None]


def array_rows() -> list[ArrayRow]:
    """The array rows (``funcgrad.core.array_row``: ``tril``, ``flip``, ``roll``, ...), in
    declaration order: compat builds ``torch.X``, ``Tensor.X(_)`` and ``out=`` of each."""
    return list(_ARRAY_ROWS.values())


def creation_rows() -> list[Creation]:
    """The creation rows (``funcgrad.core.creation_row``: ``zeros``, ``full_like``, ...), in
    declaration order: compat builds ``torch.X``, ``out=`` and ``Tensor.new_X`` of each
    (a fill of :data:`FILL_VALUE` is an argument; one of :data:`COMPUTED` says the host
    computation of its values and its parameters, ``TorchCreation.args``)."""
    return list(_CREATION_ROWS.values())


def x64(fn: Callable) -> Callable:
    """``fn`` run with JAX's 64-bit mode on in this thread (restored after; nests)."""
    swap, restore = _X64.swap_local, _X64.set_local

    @functools.wraps(fn)
    def scoped(*args: Any, **kwargs: Any) -> Any:
        prev = swap(True)
        try:
            return fn(*args, **kwargs)
        finally:
            restore(prev)

    return scoped


#: programs with more outputs are compiled returning one flat buffer per dtype (the
#: option ``compat_pack_outputs``, documented with it below)
PACK_OUTPUTS = 128


def lazy_on() -> bool:
    """Whether executables defer their calls in this thread (compat's lazy execution)."""
    return _lazy._state.on


def host_scalars() -> bool:
    """Whether an op may take Python numbers as they are (on the host tier: design.md)."""
    return not (_state.stack or _lazy._state.on) and tiers.mode() != "compiled"


#: read inline by compat's per-op fast path instead of :func:`host_scalars`
lazy_state, tier_local, tier_policy = _lazy._state, tiers.mode_local, compile_cache.POLICY
HOST_MODES = tiers.HOST_MODES
#: the tier mode in force in this thread (compat's gradcheck keeps one tier for its checks)
tier_mode = tiers.mode


def host_callable(exe: Callable[..., list] | None) -> tiers.Tiered | None:
    """The ``Tiered`` executable an :func:`executable` calls after its lazy check, if so."""
    fn = getattr(exe, "raw", None)
    return fn if type(fn) is tiers.Tiered else None


def executable(prog: Program) -> Callable[..., list]:
    """The compiled executable of ``prog`` from the compile cache, called with its
    invars' values only (its constants are passed as leading arguments); under lazy
    execution a call appends itself to the pending graph (:mod:`funcgrad._lazy`)
    instead of running. (A closure: calling it costs less than a ``__call__`` method.)"""
    fn = _raw_executable(prog)
    state, defer, concrete = _lazy._state, _lazy.defer, _lazy.concrete

    def call(*args: Any) -> list:
        if state.on:
            return meta_outputs(prog) if has_meta(args) else defer(prog, fn, args)
        try:
            return fn(*args)
        except (TypeError, ValueError):
            if has_meta(args):  # (meta arrays: shapes and dtypes, nothing to evaluate)
                return meta_outputs(prog)
            if not any(type(a) is LazyArray for a in args):
                raise
        return fn(*concrete(args))

    call.raw = fn  # type: ignore[attr-defined]
    return call


def _raw_executable(prog: Program) -> Callable[..., list]:
    if not prog.eqns and not prog.consts and all(type(v) is Var for v in prog.outvars):
        return _Forward(prog)
    if len(prog.outvars) > PACK_OUTPUTS and tiers.mode() == "compiled":
        return _packed(prog)  # (on the host tier outputs cost nothing: no packing)
    return tiers.executable(prog)


#: per argument type: whether it is an array (a forwarded one is the output as is)
_IS_ARRAY: dict[type, bool] = {np.ndarray: True}


class _Forward:
    """The executable of a program without equations whose outputs are among its inputs
    (the backward of ``y + c``, of a reshape to the same shape...): returns those
    arguments, as the compiled program would, without a call. Arguments that are not
    arrays (Python numbers, NumPy scalars) become arrays of their aval's dtype."""

    __slots__ = ("avals", "idx")

    def __init__(self, prog: Program) -> None:
        pos = {v: i for i, v in enumerate(prog.invars)}
        self.idx = tuple(pos[v] for v in prog.outvars)
        self.avals = tuple(v.aval for v in prog.outvars)

    def __call__(self, *args: Any) -> list:
        out = [args[i] for i in self.idx]
        for k, o in enumerate(out):
            ok = _IS_ARRAY.get(type(o))
            if ok is None:
                ok = _IS_ARRAY[type(o)] = isinstance(o, (jax.Array, np.ndarray))
            if not ok:
                out[k] = np.asarray(o, self.avals[k].dtype)
        return out


def call_jitted(f: Any, *args: Any) -> Any:
    """``f(*args)`` for a ``funcgrad.jit`` function of arrays that compat calls on the
    user's behalf (an optimizer's update of every parameter): its program runs through
    its tiered executable (on the host tier while cold, compiled in the background once
    hot: a compile the user did not ask for is not waited for), as ``jit`` in the
    compiled tier mode; under lazy execution the call is deferred like any op's."""
    if not _lazy._state.on and tiers.mode() == "compiled":
        return f(*args)
    entry, leaves = f._entry(args, {})
    return tree_unflatten(entry.out_tree, executable(entry.program)(*leaves))


def donates() -> bool:
    """Whether :func:`call_jitted` calls a ``jit``'s own executable, so that its
    ``donate_argnums`` apply (the compiled tier mode, or lazy execution); on the host tier
    nothing is donated, and choosing a program by what could be donated would only
    trace it again."""
    return _lazy._state.on or tiers.mode() == "compiled"


def mark_step() -> None:
    """Under lazy execution: evaluate everything pending now (a training step's end)."""
    if _lazy._state.on:
        _lazy.flush("step boundary (optimizer.step)")


_RESHAPES = frozenset({"reshape", "squeeze", "expand_dims", "convert_element_type"})


def _pack_order(prog: Program) -> list[int]:
    """Output positions ordered by the equation each comes from through reshapes: pieces
    of one array then concatenate in their original order, which XLA folds to a copy
    (a permuted order makes it compile one fusion per piece)."""
    producer = {v: i for i, e in enumerate(prog.eqns) for v in e.outvars}

    def source(a: Any) -> int:
        while type(a) is Var and a in producer:
            e = prog.eqns[producer[a]]
            if e.prim.name not in _RESHAPES:
                return producer[a]
            a = e.inputs[0]
        return -1

    return sorted(range(len(prog.outvars)), key=lambda j: source(prog.outvars[j]))


def _packed(prog: Program) -> Callable[..., list]:
    """``prog`` compiled to return its outputs raveled and concatenated (one buffer per
    dtype), with a function that slices them back out (one small executable per size)."""
    order = _pack_order(prog)
    all_avals = [v.aval.strip_weak() for v in prog.outvars]
    avals = [all_avals[j] for j in order]
    dtypes = list(dict.fromkeys(a.dtype for a in avals))
    where, offsets = [], dict.fromkeys(dtypes, 0)
    for a in avals:
        size = int(np.prod(a.shape, dtype=np.int64))
        where.append((dtypes.index(a.dtype), offsets[a.dtype], size, a.shape))
        offsets[a.dtype] += size

    def pack(*xs: Any) -> list:
        res = eval_program(prog, *xs)
        outs = [res[j] for j in order]
        return [
            fnp.concatenate(
                [fnp.ravel(fnp.asarray(o, d)) for o, a in zip(outs, avals) if a.dtype == d]
            )
            for d in dtypes
        ]

    packed = trace_flat(pack, prog.in_avals, "pack")
    fn = _raw_executable(packed)
    slicers = {
        (g, size, shape): _raw_executable(
            trace_flat(
                lambda buf, off, size=size, shape=shape: [
                    flax.dynamic_slice(buf, (off,), (size,)).reshape(shape)
                ],
                [Aval((offsets[dtypes[g]],), dtypes[g]), Aval((), np.dtype(np.int32))],
                "unpack",
            )
        )
        for g, _, size, shape in where
    }
    plan = [(g, np.int32(off), slicers[(g, size, shape)]) for g, off, size, shape in where]
    position = [0] * len(order)
    for k, j in enumerate(order):
        position[j] = k

    def run_packed(*args: Any) -> list:
        bufs = fn(*args)
        pieces = [sl(bufs[g], off)[0] for g, off, sl in plan]
        return [pieces[k] for k in position]

    return run_packed


def run(prog: Program, *args: Any) -> list:
    """Evaluate ``prog``: inlined under a tracing builder, else its compiled executable."""
    if is_tracing():
        return eval_program(prog, *_lazy.concrete(args))
    return executable(prog)(*args)


_NO_RES: tuple = ()  # shared


def _is_float(aval: Aval) -> bool:
    return dtypes.is_inexact(aval.dtype)  # bfloat16 included


class OpProgram:
    """A traced op: ``program(*inputs) -> outputs``, its executable and its VJPs."""

    __slots__ = (
        "_deps",
        "_exe",
        "_vjps",
        "float_out",
        "id",
        "in_avals",
        "n_out",
        "name",
        "out_avals",
        "program",
        "saves",
        "single",
    )

    def __init__(self, program: Program, name: str, single: bool, saves: str | None) -> None:
        self.id = next(_ids)
        self.program = program
        self.name = name
        self.single = single
        self.saves = saves
        self.n_out = len(program.outvars)
        self.in_avals = tuple(program.in_avals)
        self.out_avals = tuple(v.aval for v in program.outvars)
        #: which outputs are inexact (they get a gradient)
        self.float_out = tuple(_is_float(a) for a in self.out_avals)
        self._exe: Callable | None = None
        self._vjps: dict[tuple[bool, ...], OpVJP] = {}
        self._deps: tuple | None = None

    #: (a :class:`~funcgrad.shape_templates.TemplateOp` has ``generic = True``)
    generic = False

    def real(self) -> OpProgram:
        """This op (a :class:`~funcgrad.shape_templates.TemplateOp` gives its concrete one)."""
        return self

    def __repr__(self) -> str:
        return f"OpProgram({self.name}#{self.id})"

    def run(self, *args: Any) -> list:
        """Evaluate the op (no gradient bookkeeping); inlined under a tracing builder
        (a funcgrad transform tracing a function of compat tensors)."""
        if _state.stack:
            return eval_program(self.program, *_lazy.concrete(args))
        f = self._exe
        if f is None:
            f = self._exe = executable(self.program)
        return f(*args)

    def apply(self, *args: Any) -> list:
        """:meth:`run`, or inlined when called under a tracing builder."""
        if is_tracing():
            return eval_program(self.program, *_lazy.concrete(args))
        return self.run(*args)

    def vjp(self, mask: tuple[bool, ...]) -> OpVJP:
        """The VJP for the inputs ``mask`` selects (cached per mask)."""
        e = self._vjps.get(mask)
        if e is None:
            e = self._vjps[mask] = OpVJP(self, mask)
        return e

    def out_deps(self) -> tuple[frozenset, ...]:
        """For each output, the inputs it depends on (structurally)."""
        if self._deps is None:
            self._deps = tuple(
                map(frozenset, passes.input_deps(self.program, self.program.outvars))
            )
        return self._deps


def _rematerialized(bwd: Program, remat: dict, in_avals: Sequence[Aval]) -> Program:
    """``bwd`` taking, for each residual ``j`` in ``remat``, the op's input it is computed
    from instead (``remat[j] = (input, program of the residual from that input)``)."""
    avals = [v.aval for v in bwd.invars]
    for j, (i, _) in remat.items():
        avals[j] = in_avals[i]

    def body(*args: Any) -> list:
        vals = list(args)
        for j, (_, part) in remat.items():
            vals[j] = eval_program(part, vals[j])[0]
        return eval_program(bwd, *vals)

    return passes.prune_constvars(passes.simplify(trace_flat(body, avals, "compat")))


class OpVJP:
    """:func:`funcgrad.ad.vjp_program` of an :class:`OpProgram` for the inputs ``mask`` selects.

    ``fwd(*inputs) -> (*outputs, *new residuals)``; residuals that are inputs or
    outputs are not returned again (``res_src`` says where each comes from).
    ``bwd(*residuals, *cotangents of ct_outs) -> cotangents of in_idx inputs``.
    """

    __slots__ = (
        "_batched",
        "_bwd_exe",
        "_bwd_raw",
        "_fwd_exe",
        "_recompute",
        "_res_in",
        "_res_tail",
        "bwd",
        "ct_outs",
        "fwd",
        "id",
        "in_idx",
        "num_res",
        "op",
        "res_src",
        "saved_in",
        "saved_out",
        "tensor_res",
    )

    def __init__(self, op: OpProgram, mask: tuple[bool, ...]) -> None:
        self.id = next(_ids)
        self.op = op
        n_out = op.n_out
        #: outputs that receive a cotangent (inexact dtypes)
        self.ct_outs = tuple(i for i, a in enumerate(op.out_avals) if _is_float(a))
        #: the inputs whose cotangents the backward returns, in order
        self.in_idx = tuple(i for i, m in enumerate(mask) if m)
        v = ad.vjp_program(op.program, ct_mask=[_is_float(a) for a in op.out_avals])
        bwd = passes.dce(v.bwd, used_outputs=list(mask))
        used = passes.used_invars(bwd)
        keep = [r for r in range(v.num_res) if used[r]]
        self.bwd = passes.prune_constvars(
            bwd.replace(invars=tuple(bwd.invars[r] for r in keep) + bwd.invars[v.num_res :])
        )
        res_vars = [v.fwd.outvars[n_out + r] for r in keep]
        fwd = passes.dce(v.fwd.replace(outvars=tuple(v.fwd.outvars[:n_out]) + tuple(res_vars)))
        inv = {x: i for i, x in enumerate(fwd.invars)}
        outv = {x: j for j, x in enumerate(fwd.outvars[:n_out]) if isinstance(x, Var)}
        src: list[tuple[int, int]] = []  # (0: input, 1: output, 2: new value), index
        new_vars: list[Any] = []
        saved_in: set[int] = set()
        saved_out: set[int] = set()
        remat: dict[int, tuple[int, Program]] = {}  # residual -> (input, program from it)
        fresh = [rv for rv in res_vars if rv not in inv and rv not in outv]  # (new values)
        deps_of = dict(zip(fresh, passes.input_deps(fwd, fresh)))
        for j, rv in enumerate(res_vars):
            if rv in inv:
                src.append((0, inv[rv]))
                saved_in.add(inv[rv])
            elif rv in outv:
                src.append((1, outv[rv]))
                saved_out.add(outv[rv])
            else:
                deps = deps_of[rv]
                i = next(iter(deps)) if len(deps) == 1 else -1
                if i >= 0 and op.in_avals[i].weak_type and not op.in_avals[i].shape:
                    # a value of one Python-number input (``c`` cast to ``x``'s dtype in
                    # ``x * c``): the backward recomputes it from that input, so the forward
                    # executable returns one output less (each output costs dispatch time)
                    part = passes.dce(fwd.replace(outvars=(rv,)))
                    remat[j] = (i, part.replace(invars=(fwd.invars[i],)))
                    src.append((0, i))
                else:
                    src.append((2, len(new_vars)))
                    new_vars.append(rv)
                saved_in |= deps
        if remat:
            self.bwd = _rematerialized(self.bwd, remat, op.in_avals)
        if op.saves == "result":
            saved_in, saved_out = set(), set(range(n_out)) if src else set()
        elif op.saves == "none":
            saved_in, saved_out = set(), set()
        self.res_src = tuple(src)
        #: the residuals are exactly the forward's extra outputs, in order (the common case)
        self._res_tail = all(k == 2 and i == j for j, (k, i) in enumerate(src))
        #: the inputs that are the residuals, when all of them are (else ``None``)
        self._res_in = tuple(i for _, i in src) if all(k == 0 for k, _ in src) else None
        self.num_res = len(src)
        #: whether the node saved anything (freeing it makes a second backward fail)
        self.tensor_res = bool(src)
        self.saved_in = tuple(sorted(i for i in saved_in if not op.in_avals[i].weak_type))
        self.saved_out = tuple(sorted(saved_out))
        self.fwd = fwd.replace(outvars=tuple(fwd.outvars[:n_out]) + tuple(new_vars))
        self._fwd_exe: Callable | None = None
        self._bwd_exe: Callable | None = None
        self._bwd_raw: Callable | None = None  # what it calls after its lazy check
        self._batched: dict[int, Program] = {}
        self._recompute: dict[int | None, OpProgram] = {}

    def forward(self, args: Sequence[Any]) -> tuple[list, list]:
        """Run the forward; returns (outputs, residuals)."""
        f = self._fwd_exe
        if f is None:
            f = self._fwd_exe = executable(self.fwd)
        res = f(*args)
        if not self.res_src:
            return res, _NO_RES
        idx = self._res_in
        if idx is not None:  # the forward returned the outputs only
            return res, (args[idx[0]],) if len(idx) == 1 else tuple([args[i] for i in idx])
        n = self.op.n_out
        if self._res_tail:
            return res[:n], res[n:]
        return res[:n], [
            args[i] if k == 0 else res[i] if k == 1 else res[n + i] for k, i in self.res_src
        ]

    def backward(self, residuals: Sequence[Any], cts: Sequence[Any], batch: int | None = None):
        """Input cotangents from residuals and output cotangents (``batch``: every
        cotangent has a leading batch axis of that size)."""
        if batch is not None:
            return run(self.batched(batch), *residuals, *cts)
        if is_tracing():
            return eval_program(self.bwd, *_lazy.concrete([*residuals, *cts]))
        f = self._bwd_exe
        if f is None:
            f = self._bwd_exe = executable(self.bwd)
            self._bwd_raw = f.raw  # type: ignore[attr-defined]
        return f(*residuals, *cts)

    def batched(self, size: int) -> Program:
        """The backward vectorised over a leading axis of every cotangent."""
        prog = self._batched.get(size)
        if prog is None:
            prog, _ = batch_program(
                self.bwd,
                [None] * self.num_res + [0] * len(self.ct_outs),
                size,
                out_dims=[0] * len(self.bwd.outvars),
            )
            self._batched[size] = prog
        return prog

    def recompute(self, batch: int | None = None) -> OpProgram:
        """The backward as an op of (inputs, cotangents): the forward recomputes the
        residuals, so differentiating it gives higher derivatives."""
        op = self._recompute.get(batch)
        if op is not None:
            return op
        n_in, n_out = len(self.op.in_avals), self.op.n_out
        ct_avals = [self.op.out_avals[i].strip_weak() for i in self.ct_outs]
        if batch is not None:
            ct_avals = [a.update(shape=(batch, *a.shape)) for a in ct_avals]
        src, fwd = self.res_src, self.fwd
        bwd = self.bwd if batch is None else self.batched(batch)

        def body(*args: Any) -> list:
            xs, cts = args[:n_in], args[n_in:]
            res = eval_program(fwd, *xs)
            residuals = [xs[i] if k == 0 else res[i] if k == 1 else res[n_out + i] for k, i in src]
            return eval_program(bwd, *residuals, *cts)

        prog = passes.simplify(trace_flat(body, [*self.op.in_avals, *ct_avals], "compat"))
        op = self._recompute[batch] = _intern(prog, self.op.name + "Backward", False, None)
        return op


# --------------------------------------------------------------------------- op tracing

#: ops by structure: ops whose programs are identical share one OpProgram
_BY_KEY: dict[Any, OpProgram] = {}
#: the trace cache: (function, static values) -> input signature -> OpProgram (LRU)
_TRACES: OrderedDict[Any, dict[tuple, OpProgram]] = OrderedDict()
#: how many (function, static values) pairs the trace cache keeps
MAX_TRACED_FUNCTIONS = 4096
#: the trace cache in one level, for the dispatch hot path (one lookup, one hash):
#: ``(function, name, static values, signature, saves) -> OpProgram``; emptied with
#: the trace cache and whenever it grows past :data:`MAX_CACHED_SIGNATURES`
op_cache: dict[tuple, OpProgram] = {}
MAX_CACHED_SIGNATURES = 16384
#: whether eager ops at new shapes run through shape templates (config below)
SHAPE_TEMPLATES = True

_THIS = sys.modules[__name__]
config.bind(
    "compat_pack_outputs",
    _THIS,
    "PACK_OUTPUTS",
    "In the compiled tier mode, compat's programs with more outputs than this return one "
    "flat buffer per dtype, split afterwards: XLA's compile time grows steeply with "
    "outputs (the backward of stack of 1,000 tensors: 8 s unpacked, 0.3 s packed), but "
    "each call then pays ~10 us an output.",
)
config.bind(
    "compat_max_traced_functions",
    _THIS,
    "MAX_TRACED_FUNCTIONS",
    "How many (op function, static arguments) pairs compat's trace cache keeps (least "
    "recently used dropped first).",
)
config.bind(
    "compat_max_cached_signatures",
    _THIS,
    "MAX_CACHED_SIGNATURES",
    "Size of compat's one-level dispatch cache of (op, input signature) pairs; emptied "
    "when it grows past it.",
)

config.bind(
    "compat_shape_templates",
    _THIS,
    "SHAPE_TEMPLATES",
    "Whether compat's eager ops met at a new shape may run through a shape template (the "
    "op traced once at symbolic dimensions, reused wherever its guards hold) instead of "
    "being traced again: see docs/design.md, 'What a new shape costs an eager op'.",
)

_SCALAR_AVAL = {
    bool: Aval((), np.dtype(np.bool_), False),
    int: Aval((), np.dtype(np.int64), True),
    float: Aval((), np.dtype(np.float64), True),
    complex: Aval((), np.dtype(np.complex128), True),
}


def _intern(prog: Program, name: str, single: bool, saves: str | None) -> OpProgram:
    if prog.consts:  # the structure key leaves constants out: such ops are not shared
        return OpProgram(prog, name, single, saves)
    key = (prog.hashed_key(), name, single, saves)  # (its hash computed once, shared)
    op = _BY_KEY.get(key)
    if op is None:
        op = _BY_KEY[key] = OpProgram(prog, name, single, saves)
    return op


def op_of_program(prog: Program, name: str) -> OpProgram:
    """An :class:`OpProgram` of an already traced program (several outputs), not cached
    by function: ``torch.func`` records a whole transformed function as one op."""
    return _intern(passes.prune_constvars(passes.simplify(prog)), name, False, None)


def _sig(x: Any) -> Any:
    d = getattr(x, "dtype", None)
    return (x.shape, d) if d is not None else type(x)


def trace_op(
    fn: Callable, name: str, static: tuple, args: Sequence[Any], saves: str | None = None
) -> OpProgram:
    """The :class:`OpProgram` of ``fn(*args, **dict(static))`` at these input avals.

    ``args`` are arrays or Python scalars (traced as weakly typed scalars, so a
    changing Python number does not retrace).
    """
    return lookup_op(fn, name, static, tuple(map(_sig, args)), saves)


def lookup_op(
    fn: Callable,
    name: str,
    static: tuple,
    sig: tuple,
    saves: str | None = None,
    generic: bool = False,
) -> Any:
    """:func:`trace_op` given the inputs' signature: ``(shape, dtype)`` per array, the
    type per Python scalar (the dispatch hot path computes it with the arrays).

    ``generic``: the caller takes a :class:`~funcgrad.shape_templates.TemplateOp` (an op
    run through a shape template, see :func:`_template_op`) where one applies."""
    fkey = (fn, name, static, saves)
    table = _TRACES.get(fkey)
    if table is None:
        table = _TRACES[fkey] = {}
        if len(_TRACES) > MAX_TRACED_FUNCTIONS:
            _TRACES.popitem(last=False)
    op = table.get(sig)
    if op is None:
        if generic:
            op = _template_op(fkey, sig, table)
        if op is None:
            op = _trace_concrete(fkey, sig)
            fam, ints, _ = shape_templates.family(*fkey)
            fam.note_traced((*ints, *sig), op.program)
        table[sig] = op
    if len(op_cache) >= MAX_CACHED_SIGNATURES:
        op_cache.clear()
    op_cache[(fn, name, static, sig, saves)] = op
    return op


def _flat(fn: Callable, static: tuple, single: list) -> Callable:
    """``fn`` with keyword arguments ``static``, returning a flat list of outputs
    (``single[0]`` records whether it returned one array)."""
    kw = dict(static)

    def flat(*xs: Any) -> list:
        out = fn(*xs, **kw)
        if isinstance(out, (tuple, list)):
            single[0] = False
            return list(out)
        return [out]

    return flat


def _trace_concrete(fkey: tuple, sig: tuple) -> OpProgram:
    """The op ``fkey`` traced at signature ``sig``, simplified and interned."""
    fn, name, static, saves = fkey
    avals = [_SCALAR_AVAL[a] if isinstance(a, type) else Aval(a[0], np.dtype(a[1])) for a in sig]
    single = [True]
    traced = trace_flat(_flat(fn, static, single), avals, "compat")
    return _intern(passes.prune_constvars(passes.simplify(traced)), name, single[0], saves)


def _template_op(fkey: tuple, sig: tuple, table: dict) -> Any:
    """An op for signature ``sig`` run through a shape template of ``fkey``'s family
    (:mod:`funcgrad.shape_templates`), or ``None`` where none applies: eager host-tier
    work only, never under a trace or in lazy mode or the compiled tier mode."""
    if not SHAPE_TEMPLATES or _state.stack or _lazy._state.on or tiers.mode() == "compiled":
        return None

    def make_real() -> OpProgram:
        op = _trace_concrete(fkey, sig)
        table[sig] = op
        op_cache[(*fkey[:3], sig, fkey[3])] = op
        # (a concrete trace like any other: a later template of the family may be
        # validated against it without tracing again)
        fam.note_traced((*ints, *sig), op.program)
        return op

    def fn_of(static: tuple) -> tuple[Callable, list]:
        single = [True]
        return _flat(fkey[0], static, single), single

    fam, ints, n = shape_templates.family(*fkey)
    return fam.template_op((*ints, *sig), n, make_real, fn_of, _SCALAR_AVAL)


def _clear() -> None:
    _BY_KEY.clear()
    shape_templates.clear()
    _TRACES.clear()
    op_cache.clear()


compile_cache.register("compat_ops", size=lambda: len(_BY_KEY), clear=_clear)
