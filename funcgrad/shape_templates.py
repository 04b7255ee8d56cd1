"""Shape templates: an eager op's host plan traced once with symbolic dimensions and
run at every shape its guards admit (see :mod:`funcgrad.core.symbolic`).

A :class:`Template` is made from a signature (per input ``(shape, dtype)`` or a Python
scalar type) and the dimensions that changed since the op was last traced: those
become :class:`~funcgrad.core.symbolic.SymDim` (equal values share one symbol), the
others stay concrete. The op is traced once with them; the program's equations keep
the symbolic params (a broadcast shape ``(1, t, 64)``, a slice limit ``t - 1``), and its
host plan is instantiated at a new signature by computing those params: a few
microseconds where a new trace costs ~150 us.

An op's static arguments take part too: the integers in them (a ``view``'s target
shape ``(1, t, 4, 16)``, a slice's bounds) are read as extra one-dimensional inputs of
the signature (:func:`split_static`), so an op whose static arguments differ only in
integers is one *family* (:class:`Family`), and an integer that changed with the
sequence becomes a symbol like a changed dimension (sharing it when their values are
equal), traced as a :class:`~funcgrad.core.symbolic.SymDim` passed in the static
argument.

A template is used only when it is sound to: every guard the trace recorded holds at
the new dimensions, every equation has a host rule (nothing compiles at symbolic
shapes), and it was **validated** once: the template instantiated at dimensions other
than the traced ones (every symbol at another value: a value that escaped into the trace
shows only where it changed) must equal a concrete trace there equation for equation and
param for param. That check is made when the template is made, against the concrete trace of
the signature it was made against (already traced: no new trace), where its guards
hold there and the two agree; else at its first use at other dimensions, where the op
is then also traced concretely. A template that fails at its first use is dropped and
its family is no longer traced symbolically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from funcgrad import _lazy, passes
from funcgrad.core import tiers
from funcgrad.core.host import HostPlan
from funcgrad.core.interp import is_tracing, trace_flat
from funcgrad.core.ir import Aval, Eqn, Program, Var
from funcgrad.core.meta_array import has_meta
from funcgrad.core.symbolic import Guards, SymDim, has_sym, holds, param_maker, substitute

__all__ = [
    "Family",
    "Template",
    "TemplateOp",
    "changed_dims",
    "clear",
    "family",
    "instantiate_program",
    "split_static",
    "validations",
]

#: the dtype of a static integer read as a one-dimensional input of a signature
STATIC = np.dtype(np.int64)
#: templates validated when made, against the concrete trace they were made against
#: (``early``), and at their first use elsewhere, by a new concrete trace (``at_use``)
validations = {"early": 0, "at_use": 0}


class _Hole:
    """Where an integer was in a static argument's skeleton (:func:`split_static`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


_HOLE = _Hole()


def split_static(static: Any) -> tuple[Any, tuple[int, ...]]:
    """``static`` (nested tuples) as its skeleton, every ``int`` (not ``bool``) replaced by
    a hole, and those integers in order."""
    ints: list[int] = []
    return _split_walk(static, ints), tuple(ints)


def _split_walk(x: Any, ints: list[int]) -> Any:
    # module-level, not a closure: a recursive closure is a reference cycle (garbage for
    # the cyclic collector at every call); a loop, no list comprehension, and no call for
    # a leaf (an op's static argument is a tuple of ``(name, value)`` pairs: walked at
    # every new signature, ~2.8 us a family with comprehensions, Python 3.11)
    t = type(x)
    if t is int:
        ints.append(x)
        return _HOLE
    if t is not tuple:
        return x
    out = []
    for y in x:
        ty = type(y)
        if ty is int:
            ints.append(y)
            out.append(_HOLE)
        elif ty is tuple:
            out.append(_split_walk(y, ints))
        else:
            out.append(y)
    return tuple(out)


def fill_static(skeleton: Any, values: Sequence[Any]) -> Any:
    """The static argument of ``skeleton`` with its holes filled by ``values`` in order."""
    return _fill_walk(skeleton, iter(values))


def _fill_walk(x: Any, it: Iterator[Any]) -> Any:
    if x is _HOLE:
        return next(it)
    if type(x) is tuple:
        return tuple([_fill_walk(y, it) for y in x])
    return x


def changed_dims(old: tuple, new: tuple) -> tuple | None:
    """The symbol layout for signature ``new`` given a traced ``old``: per input, a tuple
    giving for each dimension its symbol index or ``None`` (concrete); ``None`` when the
    two signatures differ in anything but array dimensions, or in none. Dimensions of
    equal new values share a symbol; a new value of 0 or 1 stays concrete (a size-1
    dimension broadcasts: the trace would pin it)."""
    if len(old) != len(new):
        return None
    values: dict[int, int] = {}
    layout = []
    changed = False
    for a, b in zip(old, new):
        if type(b) is type:
            if a is not b:
                return None
            layout.append(None)
            continue
        if type(a) is type or len(a[0]) != len(b[0]) or a[1] != b[1]:
            return None
        dims = []
        for da, db in zip(a[0], b[0]):
            if da == db or db <= 1:  # (0 and 1 are special to broadcasting: concrete)
                dims.append(None)
            else:
                changed = True
                dims.append(values.setdefault(db, len(values)))
        layout.append(tuple(dims))
    return tuple(layout) if changed else None


class Template:
    """One op traced at symbolic dimensions (see the module docstring)."""

    __slots__ = (
        "_make_params",
        "_matching",
        "_runner",
        "guards",
        "instances",
        "layout",
        "n_syms",
        "pinned_static",
        "plan",
        "program",
        "sig",
        "single",
        "sym_steps",
        "traced_dims",
        "validated",
    )

    def __init__(
        self,
        fn_of: Callable[[tuple], Callable[..., Sequence[Any]]],
        sig: tuple,
        layout: tuple,
        scalar_avals: dict[type, Aval],
        n_static: int = 0,
    ) -> None:
        """Trace ``fn_of(static)`` (flat inputs to a flat list of outputs) at ``sig`` with
        the dimensions ``layout`` marks symbolic; ``sig``'s first ``n_static`` entries are
        the static integers (``((value,), STATIC)``), passed to ``fn_of`` as a tuple of
        ints and :class:`SymDim`. Raises on anything a symbolic trace cannot do (the
        caller traces concretely instead)."""
        guards = Guards()
        n_syms = 1 + max((k for dims in layout if dims for k in dims if k is not None), default=-1)
        traced = [0] * n_syms
        syms: list[SymDim | None] = [None] * n_syms

        def dims_of(s: tuple, dims: tuple) -> list:
            shape = []
            for d, k in zip(s[0], dims):
                if k is None:
                    shape.append(d)
                    continue
                if syms[k] is None:
                    traced[k] = d
                    syms[k] = SymDim(d, ("in", k), guards)
                shape.append(syms[k])
            return shape

        statics = [dims_of(s, dims)[0] for s, dims in zip(sig[:n_static], layout[:n_static])]
        avals = []
        for s, dims in zip(sig[n_static:], layout[n_static:]):
            if dims is None:
                avals.append(scalar_avals[s])
            else:
                avals.append(Aval(tuple(dims_of(s, dims)), np.dtype(s[1])))
        try:
            prog = trace_flat(fn_of(tuple(statics)), avals, "compat")
            prog = passes.prune_constvars(passes.simplify(prog))
        finally:
            guards.closed = True
        if prog.consts:
            raise ValueError("a shape template cannot hold constants")
        if guards.pinned >= n_syms and n_syms:  # every dimension read as a plain value
            raise AllPinnedError("every symbolic dimension was pinned")
        in_inputs = {k for dims in layout[n_static:] if dims for k in dims if k is not None}
        #: whether a static integer that is no input's dimension was read as a plain value
        #: (an axis, a count: not a length)
        self.pinned_static = any(
            ("in", k) in guards.pinned_exprs
            for dims in layout[:n_static]
            for k in dims
            if k is not None and k not in in_inputs
        )
        self.guards = guards
        self.sig = sig
        self.layout = layout
        #: ``layout`` with ``None`` for the entries that hold no symbol (:meth:`match`
        #: compares those whole)
        self._matching = tuple(
            dims if dims is not None and any(k is not None for k in dims) else None
            for dims in layout
        )
        self.n_syms = n_syms
        self.traced_dims = tuple(traced)
        self.program = prog
        # (interpreted: an instantiation serves one signature for at most HOT_CALLS calls,
        # too few to earn back generating its code, ~5 % of a generated token's time)
        # (its steps take params by equation: no equation specialised to uniform operands)
        self.plan = HostPlan(prog, None, generate_after=TemplateOp.HOT_CALLS + 1, specialise=False)
        if self.plan.missing:
            raise ValueError(f"no host rule for {self.plan.missing}")
        self.sym_steps = tuple((i, e.params) for i, e in enumerate(prog.eqns) if has_sym(e.params))
        self._make_params: Callable[[tuple], dict] | None = None
        self._runner: Callable[[dict], Callable] | None = None
        #: signatures instantiated (:meth:`runner`)
        self.instances = 0
        self.single = True
        self.validated = False
        tiers._stats.templates += 1

    def match(self, sig: tuple) -> tuple[int, ...] | None:
        """The symbols' values at signature ``sig`` if this template applies to it."""
        if len(sig) != len(self.layout):
            return None
        dims: list[int | None] = [None] * self.n_syms
        for s, t, lay in zip(sig, self.sig, self._matching):
            if lay is None:  # (a scalar's type, or an entry without a symbol: one comparison)
                if s is not t and s != t:
                    return None
                continue
            if type(s) is type or s[1] != t[1]:
                return None
            shape = s[0]
            if len(shape) != len(lay):
                return None
            for d, dt, k in zip(shape, t[0], lay):
                if k is None:
                    if d != dt:
                        return None
                    continue
                seen = dims[k]
                if seen is None:
                    dims[k] = d
                elif seen != d:
                    return None
        out = tuple(dims)  # type: ignore[arg-type]
        return out if holds(self.guards, out) else None

    def params_at(self, dims: tuple[int, ...]) -> dict[int, dict]:
        """The params of the template's symbolic steps computed at ``dims``: one generated
        expression (:func:`~funcgrad.core.symbolic.param_maker`), compiled at the first
        instantiation. (Walking them with :func:`~funcgrad.core.symbolic.substitute`
        costs ~37 us an instantiation in the small GPT's generation, compiling the
        expression ~94 us once and calling it ~1 us: it pays from the third.)"""
        make = self._make_params
        if make is None:
            make = self._make_params = param_maker(dict(self.sym_steps))
        return make(dims)

    def host_plan(self, dims: tuple[int, ...]) -> HostPlan:
        """The template's host plan with its symbolic params computed at ``dims``."""
        return self.plan.with_params(self.params_at(dims))

    #: instantiations interpreted before the template's plan is generated as code
    #: (:meth:`HostPlan.param_runner`). Measured in a fresh process (the small GPT's
    #: generation): compiling a template's code costs ~0.28 ms (~45 us an equation:
    #: Python's ``compile``, ~10 us a line), and each instantiation then saves ~18 us
    #: (~1.5 us an equation on each of its ~2 calls), so it pays after ~16; compiling
    #: once the interpreted instantiations have cost about as much (the rent-or-buy
    #: rule) keeps a short generation from paying for code it would not earn back
    #: and a long one within ~2x of the best choice in hindsight
    GENERATE_AT = 16

    def runner(self, dims: tuple[int, ...]) -> Callable[..., list]:
        """The run function of the template's plan at ``dims``: the plan interpreted for
        its first :data:`GENERATE_AT` instantiations, its generated code from then on."""
        self.instances += 1
        if self.instances <= self.GENERATE_AT:
            return self.host_plan(dims).run
        factory = self._runner
        if factory is None:
            factory = self._runner = self.plan.param_runner([i for i, _ in self.sym_steps])
        return factory(self.params_at(dims))


def _concrete_aval(a: Aval, dims: tuple[int, ...]) -> Aval:
    if not has_sym(a.shape):
        return a
    return Aval(substitute(a.shape, dims), a.dtype, a.weak_type)


def instantiate_program(prog: Program, dims: tuple[int, ...]) -> Program:
    """``prog`` (traced at symbolic dimensions) at the input dimensions ``dims``: every
    var's aval and every equation's params computed there."""
    new: dict[Any, Any] = {}

    def var(v: Any) -> Any:
        if type(v) is not Var:
            return v
        w = new.get(v)
        if w is None:
            w = new[v] = Var(_concrete_aval(v.aval, dims))
        return w

    invars = tuple(var(v) for v in prog.invars)
    constvars = tuple(var(v) for v in prog.constvars)
    eqns = tuple(
        Eqn(
            e.prim,
            tuple(var(a) for a in e.inputs),
            tuple(var(v) for v in e.outvars),
            substitute(e.params, dims) if has_sym(e.params) else e.params,
            e.source,
        )
        for e in prog.eqns
    )
    return Program(invars, constvars, eqns, tuple(var(a) for a in prog.outvars), prog.consts)


class TemplateOp:
    """An op at one signature run through a validated :class:`Template`'s host plan.

    It stands in for the op's concrete program (compat's ``OpProgram``) where only
    values are wanted: ``run`` evaluates the plan. Everything else (a VJP, the program,
    a call under a trace or in lazy mode, and every call once the signature has run
    :data:`HOT_CALLS` times, when compiling it may pay) goes to the concrete op,
    traced on first need by ``make_real``."""

    __slots__ = ("_make", "_real", "_run", "calls", "single")

    #: calls of one signature after which it runs through its concrete op (which the
    #: tiers may compile in the background, as any eager op's)
    HOT_CALLS = 8
    #: (compat's ``OpProgram`` has ``generic = False``)
    generic = True

    def __init__(self, template: Template, dims: tuple[int, ...], make_real: Callable) -> None:
        self._run = template.runner(dims)
        self._make = make_real
        self._real: Any = None
        self.calls = 0
        self.single = template.single

    def real(self) -> Any:
        """The op's concrete program (traced at this signature on first need)."""
        if self._real is None:
            self._real = self._make()
        return self._real

    def run(self, *args: Any) -> list:
        """Evaluate the op on host values (or through the concrete op, see above)."""
        if (
            self._real is not None
            or is_tracing()
            or _lazy._state.on
            or (tiers.BY_PLACEMENT[0] and tiers.on_accelerator(args))
        ):  # (a template runs on the host tier: accelerator work goes to the real op)
            return self.real().run(*args)
        self.calls += 1
        if self.calls > self.HOT_CALLS:
            return self.real().run(*args)
        tiers._stats.template_calls += 1
        try:
            return self._run(*args)
        except (TypeError, ValueError):
            if not has_meta(args):
                raise
        return self.real().run(*args)  # (meta arrays: the concrete op gives their avals)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)

    def __repr__(self) -> str:
        return f"TemplateOp({self._make!r})"


# --------------------------------------------------------------------------- families

#: shape templates kept per family
MAX_TEMPLATES = 16
#: concrete signatures kept per family, to find which dimensions changed
RECENT = 12


def _n_sym(layout: tuple) -> int:
    return sum(k is not None for dims in layout if dims for k in dims)


class AllPinnedError(ValueError):
    """A symbolic trace that read every symbolic dimension as a plain value (the op is
    sound at those dimensions but nothing in it is symbolic: a weight's row count that
    ``take`` reads, where only it changed)."""


def symbolic_positions(layout: tuple) -> frozenset[tuple[int, int]]:
    """The ``(entry, dimension)`` positions ``layout`` makes symbolic."""
    return frozenset(
        (i, j) for i, dims in enumerate(layout) if dims for j, k in enumerate(dims) if k is not None
    )


def without_positions(layout: tuple, pinned: frozenset[tuple[int, int]]) -> tuple | None:
    """``layout`` with the positions ``pinned`` made concrete (symbols renumbered in order
    of first use); ``None`` when no symbol is left. A concrete dimension only narrows
    where a template applies (:meth:`Template.match` compares it exactly)."""
    renumber: dict[int, int] = {}
    out = []
    for i, dims in enumerate(layout):
        if dims is None:
            out.append(None)
            continue
        new = []
        for j, k in enumerate(dims):
            if k is None or (i, j) in pinned:
                new.append(None)
            else:
                new.append(renumber.setdefault(k, len(renumber)))
        out.append(tuple(new))
    return tuple(out) if renumber else None


class Family:
    """The ops of one function whose static arguments differ only in integers: the
    signatures (static integers first) it was last traced at concretely, its shape
    templates, and whether symbolic tracing failed for it (then it is always traced
    concretely)."""

    __slots__ = ("off", "pinned", "recent", "skeleton", "static_off", "templates")

    def __init__(self, skeleton: Any) -> None:
        self.skeleton = skeleton
        self.recent: list[tuple] = []
        self.off = False
        #: ``(entry, dimension)`` positions a symbolic trace read as plain values, all of
        #: its symbols (:class:`AllPinnedError`): later layouts keep them concrete
        self.pinned: frozenset[tuple[int, int]] = frozenset()
        #: set when a trace with symbolic static integers failed: inputs' dimensions only
        self.static_off = False
        self.templates: list[Template] = []

    def note_traced(self, ext: tuple, program: Program | None = None) -> None:
        """Remember a signature the op was traced at concretely (and the program traced
        there, which validates a template made against that signature)."""
        self.recent.append((ext, program))
        if len(self.recent) > RECENT:
            del self.recent[0]

    def template_op(
        self,
        ext: tuple,
        n_static: int,
        make_real: Callable[[], Any],
        fn_of: Callable[[tuple], tuple[Callable, list]],
        scalar_avals: dict[type, Aval],
    ) -> TemplateOp | Any | None:
        """The op at extended signature ``ext`` (static integers first) through a
        template: a :class:`TemplateOp` (whose concrete op is traced already where this
        call validated the template), the concrete op where the validation failed, or
        ``None`` where none applies (the caller traces)."""
        if self.off:
            return None
        templates = self.templates
        for j, tm in enumerate(templates):
            dims = tm.match(ext)
            if dims is None:
                continue
            if j:  # (the last template that matched is tried first: a sequence's next step)
                templates.insert(0, templates.pop(j))
            if not tm.validated:  # once: the instantiated template against a real trace
                real = make_real()
                if any(d == t for d, t in zip(dims, tm.traced_dims)):
                    # (a symbol at its traced value would not show that value escaped
                    # into the trace: validated where every symbol differs, this call
                    # runs the concrete op)
                    return real
                if instantiate_program(tm.program, dims).key() != real.program.key():
                    self.off = True
                    self.templates.clear()
                    return real
                tm.validated = True  # (then the template's plan serves: no plan of ``real``)
                validations["at_use"] += 1
                return TemplateOp(tm, dims, lambda: real)
            return TemplateOp(tm, dims, make_real)
        if len(self.templates) >= MAX_TEMPLATES:
            return None
        # the fewest dimensions made symbolic (against the closest signature), first among
        # the layouts whose template would hold at a signature the family has a trace of
        # (every dimension that differs there a symbol: it can be validated against that
        # trace at once, not by a new trace at its first use; and it serves more shapes)
        layout, rank = None, (2, 0)
        for seen in self.recent:
            lay = changed_dims(seen[0], ext)
            if lay is not None and self.pinned:
                lay = without_positions(lay, self.pinned)
            if lay is None or (self.static_off and _n_sym(lay[:n_static])):
                continue
            r = (0 if seen[1] is not None and _covers(lay, seen[0], ext) else 1, _n_sym(lay))
            if r < rank:
                layout, rank = lay, r
        if layout is None:
            return None
        single: list = [[True]]

        def fn(statics: tuple) -> Callable:
            f, single[0] = fn_of(fill_static(self.skeleton, statics))
            return f

        try:
            tm = Template(fn, ext, layout, scalar_avals, n_static)
        except AllPinnedError:  # those dimensions are values to this op: concrete from now on
            self.pinned |= symbolic_positions(layout)
            return None
        except Exception:  # what a symbolic trace cannot do: trace concretely from now on
            if _n_sym(layout[:n_static]):
                self.static_off = True  # (an axis or a count, not a length: inputs only)
            else:
                self.off = True
            return None
        tm.single = single[0][0]
        _validate_early(tm, self.recent)
        if tm.pinned_static:  # (sound at that value; but the family's integers are no lengths)
            self.static_off = True
        self.templates.append(tm)
        return TemplateOp(tm, tm.traced_dims, make_real)


def _covers(layout: tuple, old: tuple, new: tuple) -> bool:
    """Whether every dimension in which signatures ``old`` and ``new`` differ is symbolic
    in ``layout`` (a template of that layout can then match ``old``)."""
    for a, b, dims in zip(old, new, layout):
        if dims is None:
            continue
        for da, db, k in zip(a[0], b[0], dims):
            if k is None and da != db:
                return False
    return True


def _validate_early(tm: Template, recent: list[tuple]) -> None:
    """Validate ``tm`` with a concrete trace the family already holds: the newest signature
    in ``recent`` whose program is known, where ``tm``'s guards hold and every symbol
    differs from its traced value (a value that escaped into the trace shows only where
    it changed), and the template instantiated there equals that program. It is the
    check the template's first use at other dimensions would make, without tracing the
    op again. Not only the signature the template was made against: from a one-token
    prompt that is one of the training step's (a batch of 8, where the template's batch
    is 1), while the previous length's trace is the one that fits. Where none fits (a
    guard fails at a length of 1, which broadcasts, or a size-1 dimension simplified
    away there), ``tm`` stays unvalidated: its first use validates it as before."""
    traced = tm.traced_dims
    for old, program in reversed(recent):
        if program is None:
            continue
        dims = tm.match(old)
        if dims is None or any(d == t for d, t in zip(dims, traced)):
            continue
        if instantiate_program(tm.program, dims).key() == program.key():
            tm.validated = True
            validations["early"] += 1
            return


#: (function, name, static skeleton, saves) -> its :class:`Family`
_FAMILIES: dict[tuple, Family] = {}


def family(fn: Any, name: str, static: tuple, saves: Any) -> tuple[Family, tuple, int]:
    """The family of an op, its static integers as signature entries, and their count."""
    skeleton, ints = split_static(static)
    key = (fn, name, skeleton, saves)
    fam = _FAMILIES.get(key)
    if fam is None:
        fam = _FAMILIES[key] = Family(skeleton)
    return fam, tuple([((v,), STATIC) for v in ints]), len(ints)


def clear() -> None:
    """Forget every family (``funcgrad.clear_caches``)."""
    _FAMILIES.clear()
