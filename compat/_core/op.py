"""Ops: a torch op is a funcgrad ``Program`` traced once per (function, static
parameters, input avals), with its VJP split (``funcgrad.ad.vjp_program``) and the
compiled XLA executables of both halves cached beside it.

* :class:`Op` — the traced program and its compiled plain forward.
* :class:`VJPEntry` — the VJP of an op for one *mask* (which inputs need a
  gradient): a forward returning outputs and residuals, a backward taking
  residuals and output cotangents, where residuals come from, and which inputs
  and outputs PyTorch would consider "saved" (checked against version counters).

Nothing here calls a JAX transform: ``jax.jit`` only compiles the lowering of a
whole funcgrad program (:func:`funcgrad.lowering.lower_program`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from funcgrad import ad, passes
from funcgrad.batching import batch_program
from funcgrad.core.interp import eval_program, trace_flat
from funcgrad.core.ir import Aval, Program, Var
from funcgrad.lowering import lower_program

_ids = itertools.count(1)


def compile_program(prog: Program) -> Callable[..., list]:
    """``jax.jit`` of the program's lowering, with its consts baked in."""
    fn = lower_program(prog)
    consts = tuple(prog.consts)
    if consts:
        return jax.jit(lambda *args: fn(*consts, *args))
    return jax.jit(fn)


def _is_float(aval: Aval) -> bool:
    return aval.dtype.kind in "fc"


class Op:
    """A traced torch op: ``program(*inputs) -> outputs``."""

    __slots__ = (
        "_bwd_ops",
        "_deps",
        "_plain",
        "_vjps",
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
        self._plain: Callable | None = None
        self._vjps: dict[tuple[bool, ...], VJPEntry] = {}
        self._bwd_ops: dict[Any, Op] = {}
        self._deps: tuple | None = None

    def out_deps(self) -> tuple[frozenset, ...]:
        """For each output, the inputs it depends on (structurally)."""
        if self._deps is None:
            self._deps = tuple(
                frozenset(_depends(self.program, v)) if isinstance(v, Var) else frozenset()
                for v in self.program.outvars
            )
        return self._deps

    def __repr__(self) -> str:
        return f"Op({self.name}#{self.id})"

    def run(self, *args: Any) -> list:
        """Evaluate the op (no gradient bookkeeping) with its compiled program."""
        f = self._plain
        if f is None:
            f = self._plain = compile_program(self.program)
        return f(*args)

    def vjp(self, mask: tuple[bool, ...]) -> VJPEntry:
        e = self._vjps.get(mask)
        if e is None:
            e = self._vjps[mask] = VJPEntry(self, mask)
        return e


def _depends(prog: Program, var: Var) -> set[int]:
    """Indices of ``prog``'s invars that ``var`` depends on."""
    producers = {}
    for e in prog.eqns:
        for v in e.outvars:
            producers[v] = e
    inv = {v: i for i, v in enumerate(prog.invars)}
    out: set[int] = set()
    stack, seen = [var], set()
    while stack:
        v = stack.pop()
        if v in seen or not isinstance(v, Var):
            continue
        seen.add(v)
        if v in inv:
            out.add(inv[v])
        elif v in producers:
            stack.extend(a for a in producers[v].inputs if isinstance(a, Var))
    return out


class VJPEntry:
    """The VJP of an :class:`Op` for the inputs selected by ``mask``."""

    __slots__ = (
        "_bwd",
        "_bwd_batched",
        "_fwd",
        "bwd",
        "ct_outs",
        "fwd",
        "id",
        "in_idx",
        "n_new",
        "num_res",
        "op",
        "res_src",
        "saved_in",
        "saved_out",
        "tensor_res",
    )

    def __init__(self, op: Op, mask: tuple[bool, ...]) -> None:
        self.id = next(_ids)
        self.op = op
        prog = op.program
        n_out = op.n_out
        #: outputs that receive a cotangent (floating dtypes)
        self.ct_outs = tuple(i for i, a in enumerate(op.out_avals) if _is_float(a))
        ct_mask = [_is_float(a) for a in op.out_avals]
        #: the inputs whose cotangents the backward returns, in order
        self.in_idx = tuple(i for i, m in enumerate(mask) if m)
        v = ad.vjp_program(prog, ct_mask=ct_mask)
        bwd = passes.dce(v.bwd, used_outputs=list(mask))
        used = passes.used_invars(bwd)
        keep = [r for r in range(v.num_res) if used[r]]
        bwd = passes.prune_constvars(
            bwd.replace(invars=tuple(bwd.invars[r] for r in keep) + bwd.invars[v.num_res :])
        )
        fwd = v.fwd
        res_vars = [fwd.outvars[n_out + r] for r in keep]
        fwd = passes.dce(fwd.replace(outvars=tuple(fwd.outvars[:n_out]) + tuple(res_vars)))
        # where each residual comes from: an input, an output, or a new value
        inv = {v_: i for i, v_ in enumerate(fwd.invars)}
        outv = {v_: j for j, v_ in enumerate(fwd.outvars[:n_out]) if isinstance(v_, Var)}
        src: list[tuple[str, int]] = []
        new_vars: list[Any] = []
        saved_in: set[int] = set()
        saved_out: set[int] = set()
        for rv in res_vars:
            if rv in inv:
                src.append(("in", inv[rv]))
                saved_in.add(inv[rv])
            elif rv in outv:
                src.append(("out", outv[rv]))
                saved_out.add(outv[rv])
            else:
                src.append(("new", len(new_vars)))
                new_vars.append(rv)
                saved_in |= _depends(fwd, rv)
        if op.saves == "result":
            saved_in, saved_out = set(), set(range(n_out)) if src else set()
        elif op.saves == "none":
            saved_in, saved_out = set(), set()
        self.res_src = tuple(src)
        self.num_res = len(src)
        self.n_new = len(new_vars)
        # whether the node saved anything: freeing makes a second backward fail (PyTorch
        # saves Python-number operands as wrapped tensors too)
        self.tensor_res = bool(src)
        self.saved_in = tuple(sorted(i for i in saved_in if not op.in_avals[i].weak_type))
        self.saved_out = tuple(sorted(saved_out))
        #: forward returning outputs then the *new* residuals only
        self.fwd = fwd.replace(outvars=tuple(fwd.outvars[:n_out]) + tuple(new_vars))
        #: backward: (*residuals, *cotangents of ct_outs) -> cotangents of in_idx inputs
        self.bwd = bwd
        self._fwd: Callable | None = None
        self._bwd: Callable | None = None
        self._bwd_batched: dict[int, tuple[Program, Callable]] = {}

    def forward(self, args: Sequence[Any]) -> tuple[list, list]:
        """Run the forward; returns (outputs, residuals)."""
        f = self._fwd
        if f is None:
            f = self._fwd = compile_program(self.fwd)
        res = f(*args)
        n = self.op.n_out
        outs = res[:n]
        residuals = []
        for kind, i in self.res_src:
            if kind == "in":
                residuals.append(args[i])
            elif kind == "out":
                residuals.append(outs[i])
            else:
                residuals.append(res[n + i])
        return outs, residuals

    def backward(self, residuals: Sequence[Any], cts: Sequence[Any]) -> list:
        f = self._bwd
        if f is None:
            f = self._bwd = compile_program(self.bwd)
        return f(*residuals, *cts)

    def backward_batched(self, size: int, residuals: Sequence[Any], cts: Sequence[Any]) -> list:
        """The backward vectorised over a leading batch axis of every cotangent."""
        return self._batched_prog(size)[1](*residuals, *cts)

    def backward_op(self, size: int | None) -> Op:
        """The backward as a differentiable op of (inputs, cotangents) — used when
        ``create_graph=True`` so that gradients get a ``grad_fn`` of their own."""
        key = (self.in_idx, size)
        op = self.op._bwd_ops.get(key)
        if op is not None:
            return op
        fwd, bwd, n_out, num_res = self.fwd, self.bwd, self.op.n_out, self.num_res
        src = self.res_src
        in_avals = list(self.op.in_avals)
        ct_avals = [self.op.out_avals[i].strip_weak() for i in self.ct_outs]
        if size is not None:
            ct_avals = [a.update(shape=(size, *a.shape)) for a in ct_avals]

        def body(*args: Any) -> list:
            xs, cts = args[: len(in_avals)], args[len(in_avals) :]
            res = eval_program(fwd, *xs)
            outs, new = res[:n_out], res[n_out:]
            residuals = [xs[i] if k == "in" else outs[i] if k == "out" else new[i] for k, i in src]
            assert len(residuals) == num_res
            if size is None:
                return eval_program(bwd, *residuals, *cts)
            bprog, _ = self._batched_prog(size)
            return eval_program(bprog, *residuals, *cts)

        prog = trace_flat(body, in_avals + ct_avals, "compat")
        prog = passes.simplify(prog)
        op = Op(prog, self.op.name + "Backward", single=False, saves=None)
        self.op._bwd_ops[key] = op
        return op

    def _batched_prog(self, size: int) -> tuple[Program, Callable]:
        entry = self._bwd_batched.get(size)
        if entry is None:
            prog, _ = batch_program(
                self.bwd,
                [None] * self.num_res + [0] * len(self.ct_outs),
                size,
                out_dims=[0] * len(self.bwd.outvars),
            )
            entry = self._bwd_batched[size] = (prog, compile_program(prog))
        return entry


# --------------------------------------------------------------------------- op cache

_OPS: dict[Any, dict[tuple, Op]] = {}


def _aval_key(x: Any) -> Any:
    d = getattr(x, "dtype", None)
    if d is not None:
        return (x.shape, d)
    return type(x)


_SCALAR_AVAL = {
    bool: Aval((), np.dtype(np.bool_), False),
    int: Aval((), np.dtype(np.int64), True),
    float: Aval((), np.dtype(np.float64), True),
    complex: Aval((), np.dtype(np.complex128), True),
}


def get_op(
    fn: Callable, name: str, static: tuple, args: Sequence[Any], saves: str | None = None
) -> Op:
    """The cached :class:`Op` for ``fn(*args, **dict(static))`` at these input avals.

    ``args`` are jax arrays or Python scalars (traced as weakly typed scalars, so a
    changing Python number does not retrace).
    """
    table = _OPS.get((fn, static))
    if table is None:
        table = _OPS[(fn, static)] = {}
    sig = tuple(map(_aval_key, args))
    op = table.get(sig)
    if op is None:
        avals = [
            _SCALAR_AVAL[a] if isinstance(a, type) else Aval(a[0], np.dtype(a[1])) for a in sig
        ]
        kw = dict(static)
        single = [True]

        def flat(*xs: Any) -> list:
            out = fn(*xs, **kw)
            if isinstance(out, (tuple, list)):
                single[0] = False
                return list(out)
            return [out]

        prog = trace_flat(flat, avals, "compat")
        prog = passes.prune_constvars(passes.simplify(prog))
        op = Op(prog, name, single[0], saves)
        table[sig] = op
    return op
