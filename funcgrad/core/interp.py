"""Interpreters: ``bind``, the eager interpreter, the tracing builder and tracers.

``bind(prim, *args, **params)`` applies a primitive under the current
interpreter: the innermost active :class:`Builder` records an equation; with
no builder active the primitive's ``lower`` rule runs eagerly on jax arrays.
Values of an enclosing (outer) builder met by an inner one are lifted to
constants of the inner program, so evaluating a transformed program inside an
outer trace records into the outer IR and transforms nest.
"""

from __future__ import annotations

import functools
import operator
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from funcgrad.core import dtypes, explicit_sharding, sharding_types
from funcgrad.core.debug_hooks import hooks
from funcgrad.core.errors import (
    ConcretizationError,
    LeakedTracerError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    user_frame,
    where,
)
from funcgrad.core.ir import (
    SHARDING_TYPES,
    Atom,
    Aval,
    Eqn,
    Literal,
    Program,
    ShapedArray,
    Var,
    aval_of,
)
from funcgrad.core.primitive import Primitive, set_interpreter_bind

_SCALARS = (bool, int, float, complex)

#: marks an argument whose value is not known while tracing (under ``jit``, or
#: batched by ``vmap``)
UNKNOWN: Any = object()


class _Unknown(Exception):
    """Internal: a value was asked of a builder that does not know its inputs."""

    def __init__(self, transform: str) -> None:
        self.transform = transform


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: list[Builder] = []
        #: inside ``ensure_compile_time_eval``: operations on concrete values run now
        self.compile_time_eval = False
        #: the source of the equation being re-bound by an interpreter walking a program
        #: (recorded equations keep their user line through transforms), else None
        self.source: tuple[str, int] | None = None
        #: the frame of the interpreter that set ``source``: user code called below it
        #: (a rule running the user's function) records its own lines instead
        self.walker: Any = None


_state = _State()


def _cast_hint(fn: str) -> str:
    """What ``float()``/``int()``/``complex()`` of a tracer needs, with JAX's hint."""
    return (
        f"The problem arose with the `{fn}` function. If trying to convert the data type of "
        f"a value, try using `x.astype({fn})` or `jnp.array(x, {fn})` instead. {fn}()"
    )


class Tracer:
    """An abstract value inside a trace; operators and array methods come from funcgrad.numpy."""

    __slots__ = ("_builder", "_var")
    __array_priority__ = 1000

    def __init__(self, builder: Builder, var: Var) -> None:
        self._builder = builder
        self._var = var

    @property
    def aval(self) -> ShapedArray:
        """The traced value's type as JAX's tracers hold it (``jax.typeof``'s): its
        ``sharding`` a ``NamedSharding`` over the current abstract mesh, nothing split,
        where funcgrad's own aval (``to_aval``, untyped) holds ``None``."""
        a = self._var.aval
        t = ShapedArray.__new__(ShapedArray)  # (its sharding is already JAX's type's)
        Aval.__init__(t, a.shape, a.dtype, a.weak_type, sharding_types.full_sharding(a))
        return t

    @property
    def shape(self) -> tuple[int, ...]:
        return self._var.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self._var.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self._var.aval.weak_type

    @property
    def ndim(self) -> int:
        return len(self._var.aval.shape)

    @property
    def sharding(self) -> Any:
        """Not on a traced value, as in JAX: its type (``typeof``) holds the sharding."""
        a = self._var.aval
        raise AttributeError(
            "The 'sharding' attribute is not available on traced array with shape "
            f"{a.dtype.name}[{','.join(map(str, a.shape))}]. To query sharding information "
            "on tracers, use `funcgrad.typeof(x)` (JAX's `jax.typeof(x)`)."
        )

    @property
    def size(self) -> int:
        return self._var.aval.size

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d traced array)")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    def _concrete_error(
        self, what: str, transform: str | None = None, kind: type = ConcretizationError
    ) -> ConcretizationError:
        if kind is TracerBoolConversionError:
            head = f"Attempted boolean conversion of traced array with shape {self.aval}."
        elif kind is TracerIntegerConversionError:
            head = f"The __index__() method was called on traced array with shape {self.aval}."
        elif kind is TracerArrayConversionError:
            head = (
                "The numpy.ndarray conversion method __array__() was called on traced array "
                f"with shape {self.aval}."
            )
        else:
            head = (
                "Abstract tracer value encountered where concrete value is expected: "
                f"traced array with shape {self.aval}."
            )
        return kind(
            f"{head} {what} needs its value, but it was traced by "
            f"`{transform or self._builder.transform}`, so its value is not known while "
            "tracing. Use fg.cond / fg.while_loop / fg.fori_loop for control flow that depends "
            "on traced values, or mark the argument static (static_argnums) under jit."
            f"{where(user_frame())}"
        )

    def _value(self, what: str, kind: type = ConcretizationError) -> Any:
        """The concrete value, when the tracing builder knows its inputs (eager
        ``grad``/``jvp``/``vjp``...); computed on demand from the program slice
        that produces it. Raises :class:`ConcretizationError` otherwise."""
        if not self._builder.alive:
            raise leaked(self)
        try:
            return self._builder.value_of(self._var)
        except _Unknown as u:
            raise self._concrete_error(what, u.transform, kind) from None

    def __bool__(self) -> bool:
        return bool(
            self._value("bool() (a Python `if`, `while`, `and`/`or`)", TracerBoolConversionError)
        )

    def __float__(self) -> float:
        return float(self._value(_cast_hint("float")))

    def __int__(self) -> int:
        return int(self._value(_cast_hint("int")))

    def __complex__(self) -> complex:
        return complex(self._value(_cast_hint("complex")))

    def __index__(self) -> int:
        v = self._value("Using it as a Python index", TracerIntegerConversionError)
        return operator.index(np.asarray(v).item() if np.ndim(v) == 0 else v)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        v = np.asarray(self._value("Conversion to a NumPy array", TracerArrayConversionError))
        return v if dtype is None else v.astype(dtype)

    def item(self, *args: Any) -> Any:
        return np.asarray(self._value(".item()")).item(*args)

    def tolist(self) -> Any:
        return np.asarray(self._value(".tolist()")).tolist()

    def __format__(self, spec: str) -> str:
        if not spec:
            return repr(self)
        return format(np.asarray(self._value("format()")).item(), spec)

    def __repr__(self) -> str:
        a = self.aval
        if self._builder.transform == "jit":
            # JAX's spelling, so code that prints inside jit shows what it shows on JAX
            # (a leaked one too: JAX's repr does not say it leaked)
            dims = ",".join(str(d) for d in a.shape)
            return f"JitTracer({'~' if a.weak_type else ''}{a.dtype.name}[{dims}])"
        state = "" if self._builder.alive else ", leaked"
        return f"Traced<{a}>(by {self._builder.transform}{state})"

    __hash__ = object.__hash__

    def __reduce__(self) -> Any:
        raise self._concrete_error(
            "Pickling (__reduce__, which may indicate an attempt to serialize/pickle a "
            "traced value)"
        )


class Builder:
    """The tracing interpreter: records equations into a program under construction."""

    def __init__(self, transform: str) -> None:
        self.transform = transform
        self.eqns: list[Eqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._const_ids: dict[int, Var] = {}
        self.alive = True
        # known values (see ``value_of``): where each input's value comes from, the
        # values computed so far, and which equation produces each var
        self._sources: dict[Var, Any] = {}
        self._values: dict[Var, Any] = {}
        self._producer: dict[Var, int] = {}
        self._indexed = 0

    def new_arg(self, aval: Aval, known: Any = UNKNOWN) -> Tracer:
        """A new input; ``known`` is its value when the transform knows it (a
        concrete array, or a tracer of an enclosing builder that may know it)."""
        v = Var(aval)
        self.invars.append(v)
        if known is not UNKNOWN:
            self._sources[v] = known
        return Tracer(self, v)

    def value_of(self, var: Var) -> Any:
        """The concrete value of ``var``, computed now from the known inputs.

        Only the slice of the program that produces ``var`` runs (op by op,
        eagerly), each equation at most once per trace; a trace that never
        asks pays nothing. Raises :class:`_Unknown` naming the transform whose
        inputs are abstract (``jit``, batched ``vmap`` arguments, loop bodies).
        """
        vals = self._values
        if var in vals:
            return vals[var]
        prod = self._producer
        for i in range(self._indexed, len(self.eqns)):
            for v in self.eqns[i].outvars:
                prod[v] = i
        self._indexed = len(self.eqns)
        needed: set[int] = set()
        stack = [var]
        while stack:
            v = stack.pop()
            if v in vals:
                continue
            i = prod.get(v)
            if i is None:
                vals[v] = self._input_value(v)
                continue
            if i in needed:
                continue
            needed.add(i)
            stack.extend(a for a in self.eqns[i].inputs if type(a) is Var and a not in vals)
        global _slice_evals
        _slice_evals += 1
        if needed:
            eqns = tuple(self.eqns[i] for i in sorted(needed))
            made = {v for e in eqns for v in e.outvars}
            ins = tuple(
                dict.fromkeys(a for e in eqns for a in e.inputs if type(a) is Var and a not in made)
            )
            outs = tuple(v for e in eqns for v in e.outvars)
            with eager_mode():  # a recurring slice is compiled once and dispatched
                res = _program_runner(Program(ins, (), eqns, outs), *[vals[a] for a in ins])
            vals.update(zip(outs, res))
        return vals[var]

    def _input_value(self, v: Var) -> Any:
        src = self._sources.get(v, UNKNOWN)
        if src is UNKNOWN:
            for cv, c in zip(self.constvars, self.consts):
                if cv is v:
                    src = c
                    break
            else:
                raise _Unknown(self.transform)
        if isinstance(src, Tracer):
            if not src._builder.alive:
                raise leaked(src)
            return src._builder.value_of(src._var)
        return src

    def _const(self, x: Any, aval: Aval) -> Var:
        v = self._const_ids.get(id(x))
        if v is None:
            v = Var(aval)
            self._const_ids[id(x)] = v
            self.constvars.append(v)
            self.consts.append(x)
        return v

    def to_atom(self, x: Any) -> Atom:
        if isinstance(x, Tracer):
            if x._builder is self:
                return x._var
            if not x._builder.alive:
                raise leaked(x)
            return self._const(x, x._var.aval)
        if isinstance(x, _SCALARS) and not isinstance(x, np.generic):
            return literal(x)
        aval = aval_of(x)
        if not aval.shape and isinstance(x, (np.ndarray, np.generic)):
            return Literal(np.asarray(x, aval.dtype), aval)
        return self._const(x, aval)

    def process(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        # (one loop for the atoms and their avals, this builder's tracers inlined: every
        # traced equation passes here, and a comprehension is a call in Python 3.11)
        atoms = []
        avals = []
        for x in args:
            a = x._var if type(x) is Tracer and x._builder is self else self.to_atom(x)
            atoms.append(a)
            avals.append(a.aval)
        st = _state
        src = user_frame() if st.source is None else user_frame(st.walker) or st.source
        if params:
            out_avals = abstract_eval_checked(prim, avals, params, src)
        else:
            out_avals = _abstract_eval_memo(prim, avals, src)
        if SHARDING_TYPES[0]:
            out_avals = sharding_types.propagate(prim, avals, out_avals, params)
        if len(out_avals) == 1:
            outvars: tuple[Var, ...] = (Var(out_avals[0]),)
        else:
            outvars = tuple([Var(a) for a in out_avals])
        self.eqns.append(Eqn(prim, tuple(atoms), outvars, params, src))
        if prim.multiple_results:
            return [Tracer(self, v) for v in outvars]
        return Tracer(self, outvars[0])

    def build(self, outs: Sequence[Any]) -> Program:
        outvars = tuple(self.to_atom(o) for o in outs)
        return Program(
            tuple(self.invars),
            tuple(self.constvars),
            tuple(self.eqns),
            outvars,
            tuple(self.consts),
        )


#: how many program slices were evaluated for known values (tests check that a
#: function that never asks for a value triggers none)
_slice_evals = 0


def slice_evaluations() -> int:
    """Number of known-value evaluations so far (for tests and diagnostics)."""
    return _slice_evals


def _eval_program_now(prog: Program, *args: Any) -> list[Any]:
    return eval_program(prog, *args)


#: how known-value slices are evaluated eagerly: ``eval_program`` until the compiling
#: evaluator (``core.compile_cache.run``, above this module) installs itself at import
_program_runner: Callable[..., list[Any]] = _eval_program_now


def set_program_runner(fn: Callable[..., list[Any]]) -> None:
    """Install the eager evaluator of known-value slices (``compile_cache.run``)."""
    global _program_runner
    _program_runner = fn


def literal(x: Any) -> Literal:
    """A weakly typed literal for a Python scalar."""
    return Literal(x, aval_of(x))


def leaked(x: Tracer) -> LeakedTracerError:
    """The error for a tracer used after its builder finished, in JAX's words (what
    escaped, from which transform, and the line that created it)."""
    a = x.aval
    jax_type = f"{a.dtype.name}[{','.join(map(str, a.shape))}]"
    b = x._builder
    made = next((e.source for e in b.eqns if x._var in e.outvars and e.source), None)
    line = (
        f"\nThe leaked intermediate value was created on line {made[0]}:{made[1]}."
        if made
        else "\nThe leaked value was an input of that transform."
    )
    return LeakedTracerError(
        "Encountered an unexpected tracer. A function transformed by funcgrad had a side "
        f"effect, allowing for a reference to an intermediate value with type {jax_type} "
        f"({a}) created by `{b.transform}` to escape the scope of the transformation.\n"
        "Transformations require that functions explicitly return their outputs, and "
        "disallow saving intermediate values to global state (a global, a closure or an "
        f"object attribute).{line}{where(user_frame())}"
    )


def abstract_eval_checked(
    prim: Primitive, avals: list[Aval], params: dict[str, Any], src: tuple[str, int] | None
) -> list[Aval]:
    """Run abstract evaluation; re-raise bad-input errors naming the primitive and user line."""
    try:
        return prim.abstract_eval_avals(avals, params)
    except ConcretizationError:
        raise
    except (TypeError, ValueError) as e:
        msg = str(e)
        if not msg.startswith(prim.name):
            msg = f"{prim.name}: {msg}"
        err = type(e)(msg + where(src or user_frame()))
        raise err from None


#: output avals of parameterless primitives by (primitive, x64 mode, input avals): a
#: trace applies the same few elementwise primitives to the same avals over and over,
#: and their abstract evaluation (dtype join, shape check, a new Aval) costs several
#: microseconds an equation; only successes are kept, so errors are raised each time
_AEVAL: dict[tuple, list[Aval]] = {}
_MAX_AEVAL = 4096


def _abstract_eval_memo(
    prim: Primitive, avals: list[Aval], src: tuple[str, int] | None
) -> list[Aval]:
    """:func:`abstract_eval_checked` of a primitive without params, memoised. Avals with
    a symbolic dimension are not keyed (comparing one records a guard)."""
    for a in avals:
        for d in a.shape:
            if type(d) is not int:
                return abstract_eval_checked(prim, avals, {}, src)
    key = (prim, dtypes.x64_enabled(), *avals)
    out = _AEVAL.get(key)
    if out is None:
        out = abstract_eval_checked(prim, avals, {}, src)
        if len(_AEVAL) >= _MAX_AEVAL:
            _AEVAL.clear()
        _AEVAL[key] = out
    return out


def eager_process(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Run a primitive now on concrete values through its ``lower`` rule."""
    avals = []
    for a in args:
        if isinstance(a, Tracer):
            raise leaked(a)
        avals.append(aval_of(a))
    out_avals = abstract_eval_checked(prim, avals, params, None)
    out = None
    if prim.host is not None and _eager_host is not None:
        out = _eager_host(prim, args, params, out_avals)
    if out is None:
        if SHARDING_TYPES[0] and len(args) > 1 and prim.family == "elementwise":
            args = explicit_sharding.unify(list(args))  # (as the program lowering does)
        out = prim.lower(*args, **params)
    if hooks.nans and not hooks.in_program and hooks.check_eager is not None:
        hooks.check_eager(prim, args, params, out)
    return out


#: the host tier's evaluation of one primitive outside any trace (installed by
#: ``core.tiers``, above this module): ``(prim, args, params, out_avals) -> outputs``, or
#: ``None`` when the tier policy sends the primitive to its lowering
_eager_host: Callable[..., Any] | None = None


def set_eager_host(fn: Callable[..., Any] | None) -> None:
    """Install the host tier's evaluator of eagerly bound primitives (``core.tiers``)."""
    global _eager_host
    _eager_host = fn


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply ``prim`` under the current interpreter."""
    st = _state.stack
    if st:
        if _state.compile_time_eval and not any(isinstance(a, Tracer) for a in args):
            with eager_mode():
                return eager_process(prim, args, params)
        return st[-1].process(prim, args, params)
    return eager_process(prim, args, params)


set_interpreter_bind(bind)


def current_builder() -> Builder | None:
    st = _state.stack
    return st[-1] if st else None


def is_tracing() -> bool:
    return bool(_state.stack)


@contextmanager
def new_builder(transform: str) -> Iterator[Builder]:
    """Push a fresh tracing builder for the duration of the block.

    The user's line of each equation traced in the block is found once: the frames
    above the block are the same for every equation, so each equation's walk stops at
    the frame running the block, and falls back to the line found above it (user code
    the block calls still records its own lines, as before). A full walk per equation
    through a deep caller stack (a compat op inside a module's ``forward``, an
    optimizer's update under ``step``) cost ~0.15 us a frame."""
    b = Builder(transform)
    st = _state
    saved = st.source, st.walker
    outer = user_frame() if st.source is None else user_frame(st.walker) or st.source
    # frame 0 is this generator, 1 contextlib's __enter__, 2 the block's frame (when
    # entered by a ``with`` statement; else the walk never meets it and goes on, as before)
    st.source, st.walker = outer, sys._getframe(2)
    st.stack.append(b)
    try:
        yield b
    finally:
        st.stack.pop()
        b.alive = False
        st.source, st.walker = saved


@contextmanager
def compile_time_eval() -> Iterator[None]:
    """Within the block, operations whose operands are all concrete run immediately, even
    inside ``jit`` (``jax.ensure_compile_time_eval``): their results are concrete values,
    so Python can branch on them; operations on traced values are still recorded."""
    saved = _state.compile_time_eval
    _state.compile_time_eval = True
    try:
        yield
    finally:
        _state.compile_time_eval = saved


@contextmanager
def eager_mode() -> Iterator[None]:
    """Temporarily run with no builder active (used to evaluate host-side constants)."""
    saved = _state.stack
    _state.stack = []
    try:
        yield
    finally:
        _state.stack = saved


def trace_flat(
    fun: Callable[..., Sequence[Any]], in_avals: Sequence[Aval], transform: str
) -> Program:
    """Trace ``fun`` (flat list of arrays in, flat list out) into a closed Program."""
    with new_builder(transform) as b:
        args = [b.new_arg(a) for a in in_avals]
        outs = fun(*args)
        return b.build(list(outs))


def keeps_source(fn: Callable) -> Callable:
    """Decorate an interpreter that walks a program setting ``_state.source`` to each
    equation's source (so re-bound equations keep their user line): the caller's
    value is restored when it returns."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        st = _state
        saved = st.source, st.walker
        st.walker = sys._getframe()
        try:
            return fn(*args, **kwargs)
        finally:
            st.source, st.walker = saved

    return wrapper


def read_literal(a: Literal) -> Any:
    return a.val


def eval_program(prog: Program, *args: Any) -> list[Any]:
    """Evaluate ``prog`` by binding each equation under the current interpreter."""
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    env.update(zip(prog.invars, args))
    st = _state
    saved, saved_walker = st.source, st.walker
    st.walker = sys._getframe()
    try:
        for e in prog.eqns:
            st.source = e.source or saved
            ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
            out = bind(e.prim, *ins, **e.params)
            if e.prim.multiple_results:
                env.update(zip(e.outvars, out))
            else:
                env[e.outvars[0]] = out
    finally:
        st.source, st.walker = saved, saved_walker
    return [env[a] if type(a) is Var else a.val for a in prog.outvars]


def known_value(x: Any) -> Any:
    """``x``'s concrete value: ``x`` itself unless it is a tracer; a tracer's value when
    its builder knows its inputs (computed now, as :meth:`Builder.value_of`); else
    :data:`UNKNOWN`."""
    if type(x) is not Tracer:
        return x
    if not x._builder.alive:
        raise leaked(x)
    try:
        return x._builder.value_of(x._var)
    except _Unknown:
        return UNKNOWN


def is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer)


def to_aval(x: Any) -> Aval:
    if type(x) is Tracer:
        return x._var.aval
    return aval_of(x)


def canonical_literal(x: Any, dtype: np.dtype) -> Any:
    return np.asarray(x, dtypes.canonicalize(dtype))
