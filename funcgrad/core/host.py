"""The host tier: a program evaluated on NumPy arrays with each primitive's ``host`` rule.

Eager work that is cold or small (an op signature met for the first time, a sequence
that grows by one each step, arrays of a few elements) costs more in XLA than it
computes: 25-45 ms to compile each new program and 7-12 us per call. The host tier
evaluates the same :class:`~funcgrad.core.ir.Program` on NumPy arrays instead: no
compile, and a NumPy call (about 1 us) per equation.

A :class:`HostPlan` is a program prepared for the host tier once: each equation's
rule, its inputs and outputs as slots of a flat environment, the dtype each output
must have. Running it keeps the compiled tier's dtypes exactly (every output is cast
to its aval's dtype, so NumPy's promotions never leak: float32 stays float32), and
runs with NumPy's floating-point warnings off, as XLA computes ``0/0`` silently.
An equation whose primitive has no host rule runs through ``fallback(eqn)``, a
function its caller supplies (the compiled one-equation program: see
:mod:`funcgrad.core.tiers`), so coverage grows rule by rule.

Values: host values are ``numpy.ndarray`` and NumPy scalars (a ufunc's 0-d result),
and Python scalars for weakly typed inputs; :func:`host_value` takes a JAX array to a
NumPy one (no copy on a CPU), :func:`device_value` takes a host value back to a
JAX array of the aval's weak type.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any

import jax
import ml_dtypes
import numpy as np

from funcgrad.core.host_aliases import collapse, reshape_rule
from funcgrad.core.ir import Aval, Eqn, Literal, Program


def _prefetch_scipy() -> None:
    with contextlib.suppress(ImportError):
        import scipy.special  # noqa: F401


# SciPy (the host rules of erf, lgamma & co.) takes 0.3-0.6 s to import: it is imported in
# the background now, not by the first eager op that needs it (a GPT's first gelu)
_prefetch = threading.Thread(target=_prefetch_scipy, name="funcgrad-prefetch-scipy", daemon=True)
_prefetch.start()


@atexit.register
def _join_prefetch() -> None:
    """At exit, let the import end (seconds at most on a loaded machine): a daemon thread
    still inside an extension module's initialisation when the interpreter finalizes is
    ended by ``pthread_exit``, which unwinds through C++ frames and aborts the process
    ("FATAL: exception not rethrown", exit status -6) after a short program's own end."""
    _prefetch.join(timeout=60)


_ndarray = np.ndarray
_SCALARS = (bool, int, float, complex)
#: the types of host values: arrays, and NumPy scalars (what a ufunc returns for 0-d
#: operands: kept as they are, an ``np.asarray`` per 0-d result costs ~0.5 us)
_HOST_TYPES = frozenset(
    {_ndarray, *(t for t in np.sctypeDict.values() if issubclass(t, np.generic))}
    | {getattr(ml_dtypes, d) for d in ("bfloat16", "float8_e4m3fn", "float8_e5m2")}
)
_INPUT_TYPES = _HOST_TYPES | frozenset(_SCALARS)

try:  # NumPy >= 2: errstate is a context variable; setting it directly costs ~0.2 us
    from numpy._core._ufunc_config import _extobj_contextvar as _ERR_VAR

    with np.errstate(all="ignore"):
        _ERR_IGNORE = _ERR_VAR.get()
except ImportError:  # pragma: no cover - older NumPy: np.errstate per run (~2 us)
    _ERR_VAR = None
    _ERR_IGNORE = None


def ignore_fp_errors() -> Any:
    """Turn NumPy's floating-point warnings off in this context (XLA computes ``0/0``,
    overflow and ``log(-1)`` silently); returns the token :func:`restore_fp_errors` takes."""
    return _ERR_VAR.set(_ERR_IGNORE) if _ERR_VAR is not None else None


def restore_fp_errors(token: Any) -> None:
    """Undo :func:`ignore_fp_errors`."""
    if token is not None:
        _ERR_VAR.reset(token)


def host_value(x: Any) -> Any:
    """``x`` as a host value: a NumPy array (a JAX array's buffer, not copied on a CPU)
    or scalar, or a Python scalar as it is."""
    if type(x) in _INPUT_TYPES:
        return x
    return np.asarray(x)


def fix_dtype(x: Any, dtype: np.dtype) -> Any:
    """``x`` as a host value of exactly ``dtype`` (NumPy may promote, and returns Python
    or NumPy scalars for some 0-d results)."""
    if type(x) in _HOST_TYPES:
        return x if x.dtype == dtype else x.astype(dtype)
    return np.asarray(x, dtype)


try:  # one C call instead of ``jax.device_put``'s ~90 us of Python for a small array
    from jax._src import core as _jax_core
    from jax._src.lib import _jax as _jaxlib

    _put = _jaxlib.batched_device_put
    _DEVICE: list[Any] = []
except (ImportError, AttributeError):  # pragma: no cover - a JAX without them
    _put = None


def device_value(x: Any, aval: Aval) -> Any:
    """A host value as a JAX array of ``aval`` (weakly typed when the aval is)."""
    if isinstance(x, jax.Array):
        return x
    x = fix_dtype(x, aval.dtype)
    if type(x) is not _ndarray:
        x = np.asarray(x)
    if _put is not None and x.dtype != jax.dtypes.float0:
        if not _DEVICE:
            d = jax.local_devices()[0]  # this process's (jax.devices() lists every process's)
            _DEVICE[:] = [d, jax.sharding.SingleDeviceSharding(d)]
        d, sharding = _DEVICE
        try:
            shaped = _jax_core.ShapedArray(x.shape, x.dtype, weak_type=aval.weak_type)
            return _put(shaped, sharding, [x], [d], False, True)
        except Exception:
            pass
    if x.dtype == jax.dtypes.float0:
        return x
    return jax.device_put(x)


_FLOAT_SCALAR_DTYPES = frozenset({np.dtype(ml_dtypes.bfloat16)})


def _scalar_convert(e: Eqn) -> tuple[type, type] | None:
    """For a ``convert_element_type`` of a weakly typed 0-d float or integer input to a
    floating dtype: the Python type such an input arrives as and the output's scalar
    type (``np.float32(1.5)`` rounds as XLA's conversion does, ~0.3 us instead of the
    rule's ~3 us); else ``None``."""
    if e.prim.name != "convert_element_type" or e.prim.host is None or len(e.inputs) != 1:
        return None
    a, out = e.inputs[0].aval, e.outvars[0].aval
    if not a.weak_type or a.shape or out.shape:
        return None
    d = np.dtype(out.dtype)
    if d.kind != "f" and d not in _FLOAT_SCALAR_DTYPES:
        return None
    kind = np.dtype(a.dtype).kind
    if kind == "f":
        return (float, d.type)
    if kind == "i" and d.itemsize >= 4:  # (a float16 would overflow where XLA gives inf)
        return (int, d.type)
    return None


class MissingHostRule(NotImplementedError):
    """Raised by a plan asked to run an equation without a host rule and no fallback."""


#: lax-style binary primitives whose NumPy rule takes a Python float operand as XLA takes
#: it converted to the other operand's float dtype (NumPy converts a Python number to
#: the strongly typed operand's dtype first, then computes in it: same rounding)
_WEAK_FLOAT_OPERAND = frozenset({"add", "sub", "mul", "div", "max", "min"})
_WEAK_FLOAT_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def _weak_ok(e: Eqn, casts: list[np.dtype | None]) -> frozenset[int]:
    """The operand positions of ``e`` that may be given a Python ``float`` instead of its
    conversion to the operation's dtype (see :data:`_WEAK_FLOAT_OPERAND`): the other
    operand is a strongly typed variable of that dtype, which the result has too."""
    if e.prim.name not in _WEAK_FLOAT_OPERAND or len(e.inputs) != 2 or e.prim.host is None:
        return frozenset()
    d = e.outvars[0].aval.dtype
    if d not in _WEAK_FLOAT_DTYPES:
        return frozenset()
    ok = set()
    for j in (0, 1):
        other = e.inputs[1 - j]
        a = other.aval
        if (
            type(other) is not Literal
            and not a.weak_type
            and a.dtype == d
            and e.inputs[j].aval.dtype == d
            and casts[j] is None
            and casts[1 - j] is None
        ):
            ok.add(j)
    return frozenset(ok)


class _Step:
    """One equation of a :class:`HostPlan`: its rule, params, slots and output dtypes."""

    __slots__ = (
        "casts",
        "foldable",
        "ins",
        "multi",
        "out_dtypes",
        "outs",
        "params",
        "rule",
        "scalar",
        "weak_ok",
    )

    def __init__(
        self, e: Eqn, slot: Callable[[Any], int], fallback: Any, special: Any = None
    ) -> None:
        rule, params = e.prim.host, e.params
        if special is not None:  # (a rule specialised to uniform operands, params bound)
            rule, params = special, {}
        #: ``(python type, scalar type)``: a conversion of a weakly typed Python number to
        #: a float dtype, which the generated plan does as ``np.float32(x)`` (same rounding)
        self.scalar = _scalar_convert(e)
        if rule is None:
            rule = fallback(e) if fallback is not None else _missing(e)
            params = {}
        self.rule = rule
        self.params = params
        # (list comprehensions and loops, no generator expressions: a plan is built per
        # new op signature and per template instantiation's concrete trace, and each
        # generator cost ~0.5-1 us an equation here)
        prim, inputs = e.prim, e.inputs
        self.ins = tuple([slot(a) for a in inputs])
        casts: list[np.dtype | None] = [None] * len(inputs)
        cast_any = False
        if prim.host_join:
            want = _operand_dtype(e)
            weak_only = prim.host_join == "weak"
            for j, a in enumerate(inputs):
                skip = weak_only and not a.aval.weak_type
                if a.aval.dtype != want and type(a) is not Literal and not skip:
                    casts[j] = want
                    cast_any = True
        self.casts = tuple(casts) if cast_any else None
        #: operand positions that may take a Python float as it is (:func:`_weak_ok`)
        self.weak_ok = _weak_ok(e, casts)
        outvars = e.outvars
        self.outs = tuple([slot(v) for v in outvars])
        self.out_dtypes = tuple([v.aval.dtype for v in outvars])
        self.multi = prim.multiple_results
        #: whether the generated plan may compute it once, when every input is a literal
        #: (:func:`_fold`): a host rule, no effects, no sub-program, at least one input
        foldable = prim.host is not None and not prim.effectful and bool(inputs)
        if foldable:
            for p in e.params.values():
                if _holds_program(p):
                    foldable = False
                    break
        self.foldable = foldable

    def with_params(self, params: dict[str, Any]) -> _Step:
        """A copy of this step taking ``params`` (every slot assigned by name: a loop of
        ``setattr(getattr(...))`` over the slots cost ~3x as much)."""
        st = object.__new__(_Step)
        st.casts = self.casts
        st.foldable = self.foldable
        st.ins = self.ins
        st.multi = self.multi
        st.out_dtypes = self.out_dtypes
        st.outs = self.outs
        st.params = params
        st.rule = self.rule
        st.scalar = self.scalar
        st.weak_ok = self.weak_ok
        return st


#: the largest value a generated plan folds (:func:`_fold`): a plan keeps what it folds for
#: its lifetime, and a large constant's per-call cost (a zero cotangent broadcast to an
#: activation's shape) would also shift the tier policy's host-versus-compiled comparison
FOLD_MAX_ELEMENTS = 4096


def _uniform(e: Eqn, fallback: Any) -> Any:
    """The one value every element of ``e``'s output holds, as a 0-d array, when ``e``
    computes it from literals alone (a scalar broadcast to a shape); else ``None``."""
    if e.prim.multiple_results or e.prim.host is None or e.prim.effectful:
        return None
    if not e.inputs or any(type(a) is not Literal for a in e.inputs):
        return None
    if any(_holds_program(p) for p in e.params.values()):
        return None
    st = _Step(e, lambda a: 0, fallback)
    got = _fold(st, [_literal(a) for a in e.inputs])
    if got is None:
        return None
    out = np.asarray(got[0])
    if out.size == 0:
        return None
    flat = out.reshape(-1)
    # (bit for bit: -0.0 is not 0.0, and a NaN is uniform only with its own payload; one
    # integer per element where the item size allows, else its bytes)
    u = _UINTS.get(flat.itemsize)
    b = flat.view(u) if u is not None else flat.view(np.uint8).reshape(flat.size, -1)
    if not (b == b[:1]).all():
        return None
    return flat[:1].reshape(())


#: unsigned integer types by item size (:func:`_uniform` compares elements' bits)
_UINTS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _specialise(
    eqns: Sequence[Eqn], outvars: Sequence[Any], fallback: Any
) -> list[tuple[Eqn, Any]]:
    """``eqns`` with the host rules their primitives specialise to their operands, as
    ``(equation, rule or None)``: :func:`_specialise_splats`, then :func:`_views`, then
    reshape chains collapsed (:func:`funcgrad.core.host_aliases.collapse`)."""
    return collapse(_views(_specialise_splats(eqns, outvars, fallback), outvars), outvars)


def _specialise_splats(
    eqns: Sequence[Eqn], outvars: Sequence[Any], fallback: Any
) -> list[tuple[Eqn, Any]]:
    """``eqns`` with the rules their primitives specialise to uniform operands
    (``Primitive.host_splat``): such an equation takes only its other operands, and an
    equation that made a uniform operand no step reads any more is dropped."""
    users: dict[Any, list[Eqn]] = {}
    for e in eqns:
        if e.prim.host_splat is not None:
            for a in e.inputs:
                if type(a) is not Literal:
                    users.setdefault(a, []).append(e)
    if not users:
        return [(e, None) for e in eqns]
    splats = {}
    for e in eqns:
        if len(e.outvars) == 1 and e.outvars[0] in users:
            u = _uniform(e, fallback)
            if u is not None:
                splats[e.outvars[0]] = u
    if not splats:
        return [(e, None) for e in eqns]
    out: list[tuple[Eqn, Any]] = []
    for e in eqns:
        given = [splats.get(a) if type(a) is not Literal else None for a in e.inputs]
        rule = None
        if e.prim.host_splat is not None and any(g is not None for g in given):
            rule = e.prim.host_splat(given, **e.params)
        if rule is None:
            out.append((e, None))
            continue
        ins = tuple(a for a, g in zip(e.inputs, given) if g is None)
        out.append((Eqn(e.prim, ins, e.outvars, e.params, e.source), rule))
    # drop the equations making uniform values nothing reads any more
    read = {a for e, _ in out for a in e.inputs if type(a) is not Literal}
    read.update(a for a in outvars if type(a) is not Literal)
    return [
        (e, r)
        for e, r in out
        if not e.outvars or e.outvars[0] not in splats or e.outvars[0] in read
    ]


def _views(eqns: list[tuple[Eqn, Any]], outvars: Sequence[Any]) -> list[tuple[Eqn, Any]]:
    """``eqns`` where an equation whose primitive has a broadcastable form
    (``Primitive.host_view``: a ``broadcast_in_dim`` as its operand with size-1
    dimensions, a view) takes it when every reader broadcasts by NumPy's rules
    (``Primitive.host_broadcasts``) to its own result's shape: the readers then
    broadcast the small operand, where the plan wrote the full array out first."""
    if not any(e.prim.host_view is not None for e, _ in eqns):
        return eqns  # (no candidate: no reader map built for the plan)
    readers: dict[Any, list[Eqn]] = {}
    for e, _ in eqns:
        for a in e.inputs:
            if type(a) is not Literal:
                readers.setdefault(a, []).append(e)
    outs = {a for a in outvars if type(a) is not Literal}
    shapes: dict[Any, tuple[int, ...]] = {}  # var -> the shape of its view
    out = []
    for e, rule in eqns:
        view = e.prim.host_view
        if view is not None and rule is None and len(e.outvars) == 1:
            v = e.outvars[0]
            rs = readers.get(v)
            if rs and v not in outs and all(r.prim.host_broadcasts for r in rs):
                shapes[v] = view(e.inputs[0].aval.shape, **e.params)
                if all(_broadcasts_to_result(r, shapes) for r in rs):
                    out.append((e, reshape_rule(shapes[v])))
                    continue
                del shapes[v]
        out.append((e, rule))
    return out


def _broadcasts_to_result(e: Eqn, shapes: dict[Any, tuple[int, ...]]) -> bool:
    """Whether ``e``'s operands, those in ``shapes`` at their views' shapes, broadcast by
    NumPy's rules to the shape of ``e``'s (one) result, all of its rank or 0-d."""
    if len(e.outvars) != 1:
        return False
    want = e.outvars[0].aval.shape
    got = [shapes.get(a, a.aval.shape) if type(a) is not Literal else () for a in e.inputs]
    if any(len(s) not in (0, len(want)) for s in got):
        return False
    try:
        return np.broadcast_shapes(*got) == tuple(want)
    except ValueError:
        return False


def _holds_program(p: Any) -> bool:
    if isinstance(p, (tuple, list)):
        return any([isinstance(q, Program) for q in p])
    return isinstance(p, Program)


def _fold(st: _Step, args: list[Any]) -> list[Any] | None:
    """The outputs of step ``st`` on the constant operands ``args``, computed as the
    generated plan would compute them (operand casts, NumPy's FP warnings off, outputs
    cast to their dtypes, arrays read-only: they are shared by every call); ``None`` when
    the rule raises (the plan then runs it, and raises, at every call as before)."""
    if st.casts is not None:
        args = [a if t is None else _cast_operand(a, t) for a, t in zip(args, st.casts)]
    tok = _ERR_VAR.set(_ERR_IGNORE) if _ERR_VAR is not None else None
    try:
        r = st.rule(*args, **st.params)
    except Exception:
        return None
    finally:
        if tok is not None:
            _ERR_VAR.reset(tok)
    if not st.multi:
        r = (r,)
    outs = []
    for o, d in zip(r, st.out_dtypes):
        if type(o) not in _HOST_TYPES or o.dtype != d:
            o = fix_dtype(o, d)
        if type(o) is _ndarray:
            o.flags.writeable = False
        outs.append(o)
    return outs


class HostPlan:
    """A program prepared for the host tier (see the module docstring).

    ``plan.run(*consts, *args)`` (or ``plan(...)``) returns the list of outputs as host
    values. Its first calls interpret the equations (a loop over slots of a flat
    environment); from the ``generate_after``-th call on it runs generated Python code,
    one line per equation with its rule, its params and its output dtypes bound as
    names (no interpreter loop, no environment list: ~1 us less per equation). The
    generated code costs Python's ``compile`` ~17 us per equation, once per structure
    (cached by source), which a program run once or twice (a 2,000-equation optimizer
    update: 37 ms) never earns back. ``missing`` names the primitives that run through
    the fallback. With ``specialise`` (the default) an equation whose primitive has a
    rule for operands that are one constant broadcast (``Primitive.host_splat``: a
    select of a value and zeros) takes it and the broadcast is dropped, a broadcast read
    only by NumPy-broadcasting steps is a view, and reshape chains collapse
    (:mod:`funcgrad.core.host_aliases`); a plan whose
    steps are addressed by equation (a shape template's) is built without.
    """

    __slots__ = ("_calls", "_generate_after", "_template", "aligned", "missing", "run", "steps")

    def __init__(
        self,
        prog: Program,
        fallback: Callable[[Eqn], Callable[..., Any]] | None = None,
        generate_after: int = 4,
        specialise: bool = True,
    ) -> None:
        slots: dict[Any, int] = {}
        template: list[Any] = []

        def slot(a: Any) -> int:
            key = id(a) if type(a) is Literal else a
            i = slots.get(key)
            if i is None:
                i = slots[key] = len(template)
                template.append(_literal(a) if type(a) is Literal else None)
            return i

        for v in (*prog.constvars, *prog.invars):
            slot(v)
        n_in = len(template)
        eqns = (
            _specialise(prog.eqns, prog.outvars, fallback)
            if specialise
            else [(e, None) for e in prog.eqns]
        )
        #: whether step ``i`` is equation ``i`` (no equation specialised or dropped): what
        #: :meth:`with_params` and :meth:`param_runner` address steps by
        self.aligned = all(r is None for _, r in eqns) and len(eqns) == len(prog.eqns)
        self.steps = tuple(_Step(e, slot, fallback, rule) for e, rule in eqns)
        outs = tuple(slot(a) for a in prog.outvars)
        self._template = (tuple(template), n_in, outs)
        self.missing = tuple(dict.fromkeys(e.prim.name for e in prog.eqns if e.prim.host is None))
        self._calls = 0
        self._generate_after = generate_after
        self.run = self._interpret

    def __call__(self, *vals: Any) -> list[Any]:
        return self.run(*vals)

    def with_params(self, params: dict[int, dict[str, Any]]) -> HostPlan:
        """A copy of this plan whose steps ``i`` take ``params[i]`` (a shape template's
        plan at concrete dimensions: :mod:`funcgrad.core.shape_templates`)."""
        if not self.aligned:
            raise ValueError("with_params: the plan was built with specialise=True")
        plan = object.__new__(HostPlan)
        steps = list(self.steps)
        for i, p in params.items():
            steps[i] = steps[i].with_params(p)
        plan.steps = tuple(steps)
        plan.aligned = True
        plan._template = self._template
        plan.missing = self.missing
        plan._calls = 0
        plan._generate_after = self._generate_after
        plan.run = plan._interpret
        return plan

    def param_runner(self, varying: Sequence[int]) -> Callable[[dict[int, Any]], Callable]:
        """A factory of this plan's generated code with steps ``varying`` taking their
        params from its argument: ``factory(params)`` is the run function of
        ``with_params(params)`` (``params`` keyed by those steps). A shape template's plan
        is generated once this way and each instantiation only binds its params (a
        closure, ~1 us), where generating an instantiation's own code would cost more
        than the one or two calls it serves save. Varying steps are never folded."""
        if not self.aligned:
            raise ValueError("param_runner: the plan was built with specialise=True")
        return _generate(self.steps, self._template, tuple(varying))

    def _interpret(self, *vals: Any) -> list[Any]:
        self._calls += 1
        if self._calls >= self._generate_after:
            self.run = _generate(self.steps, self._template)
        template, n_in, outs = self._template
        env = list(template)
        ok = _INPUT_TYPES
        for i, v in enumerate(vals):
            env[i] = v if type(v) in ok else np.asarray(v)
        host = _HOST_TYPES
        tok = _ERR_VAR.set(_ERR_IGNORE) if _ERR_VAR is not None else None
        try:
            # (no list comprehension per step: in Python 3.11 each is a function call,
            # ~0.3 us; a step of one or two operands indexes them directly)
            for st in self.steps:
                ins = st.ins
                if st.casts is not None:
                    args = [env[i] for i in ins]
                    args = [a if t is None else _cast_operand(a, t) for a, t in zip(args, st.casts)]
                    r = st.rule(*args, **st.params)
                else:
                    n = len(ins)
                    p = st.params  # (``**{}`` costs a call ~0.2 us: most steps have none)
                    if n == 1:
                        r = st.rule(env[ins[0]], **p) if p else st.rule(env[ins[0]])
                    elif n == 2:
                        a, b = ins
                        r = st.rule(env[a], env[b], **p) if p else st.rule(env[a], env[b])
                    else:
                        r = st.rule(*[env[i] for i in ins], **p)
                if st.multi:
                    for k, o, d in zip(st.outs, r, st.out_dtypes):
                        env[k] = o if type(o) in host and o.dtype == d else fix_dtype(o, d)
                else:  # (one output: no tuple, no zip)
                    d = st.out_dtypes[0]
                    env[st.outs[0]] = r if type(r) in host and r.dtype == d else fix_dtype(r, d)
        finally:
            if tok is not None:
                _ERR_VAR.reset(tok)
        result = [env[k] for k in outs]
        for k, o in zip(outs, result):  # values are immutable: np.asarray(value) is read-only
            if k >= n_in and type(o) is _ndarray and template[k] is None:
                o.flags.writeable = False
        return result


#: generated plan source -> its compiled code
_CODE: dict[str, Any] = {}


def _generate(
    steps: tuple[_Step, ...], template_info: tuple, varying: tuple[int, ...] | None = None
) -> Callable[..., Any]:
    """The generated-code form of a :class:`HostPlan` (see its docstring); with
    ``varying``, the factory :meth:`HostPlan.param_runner` describes."""
    template, n_in, outs = template_info
    ns: dict[str, Any] = {
        "HOST": _HOST_TYPES,
        "OK": _INPUT_TYPES,
        "asarray": np.asarray,
        "fix": fix_dtype,
        "cast": _cast_operand,
        "nd": _ndarray,
        "errset": _ERR_VAR.set if _ERR_VAR is not None else (lambda t: None),
        "errreset": _ERR_VAR.reset if _ERR_VAR is not None else (lambda t: None),
        "IGN": _ERR_IGNORE,
    }

    #: slot -> its value, for the literals and the steps computed from literals alone
    known = {i: template[i] for i in range(n_in, len(template)) if template[i] is not None}
    out_slots = set(outs)

    def name(i: int) -> str:
        if i not in known:
            return f"v{i}"
        ns[f"c{i}"] = known[i]
        return f"c{i}"

    vary = frozenset(varying or ())
    params_in = [f"v{i}" for i in range(n_in)]
    passed = _passed_floats(steps, outs)
    body: list[str] = [f"    if type({n}) not in OK: {n} = asarray({n})" for n in params_in]
    body.append("    tok = errset(IGN)")
    body.append("    try:")
    for k, st in enumerate(steps):
        if (
            st.foldable
            and k not in vary
            and all(i in known for i in st.ins)
            and not any(o in out_slots for o in st.outs)
        ):
            vals = _fold(st, [known[i] for i in st.ins])
            if vals is not None and all(getattr(v, "size", 1) <= FOLD_MAX_ELEMENTS for v in vals):
                known.update(zip(st.outs, vals))
                continue
        ns[f"r{k}"] = st.rule
        args = [name(i) for i in st.ins]
        if st.casts is not None:
            for j, t in enumerate(st.casts):
                if t is not None:
                    ns[f"t{k}_{j}"] = t
                    args[j] = f"cast({args[j]}, t{k}_{j})"
        if k in vary:  # (bound by the factory: see ``param_runner``)
            args.append(f"**p{k}")
        elif st.params:
            ns[f"p{k}"] = st.params
            args.append(f"**p{k}")
        call = f"r{k}({', '.join(args)})"
        out_names = [f"v{i}" for i in st.outs]
        if k in passed:  # a Python float its consumers take as it is
            o, dn = out_names[0], f"d{k}_{out_names[0]}"
            ns[dn] = st.out_dtypes[0]
            body.append(f"        if type({args[0]}) is float: {o} = {args[0]}")
            body.append("        else:")
            body.append(f"            {o} = {call}")
            body.append(
                f"            if type({o}) not in HOST or {o}.dtype != {dn}: {o} = fix({o}, {dn})"
            )
            continue
        if st.scalar is not None and st.casts is None and not st.multi:
            ns[f"py{k}"], ns[f"s{k}"] = st.scalar
            call = f"s{k}({args[0]}) if type({args[0]}) is py{k} else {call}"
        if st.multi and not out_names:
            body.append(f"        {call}")
        elif st.multi:
            body.append(f"        {', '.join(out_names)}, = {call}")
        else:
            body.append(f"        {out_names[0]} = {call}")
        for o, d in zip(out_names, st.out_dtypes):
            dn = f"d{k}_{o}"
            ns[dn] = d
            body.append(
                f"        if type({o}) not in HOST or {o}.dtype != {dn}: {o} = fix({o}, {dn})"
            )
    if body[-1] == "    try:":
        body.append("        pass")
    body.append("    finally:")
    body.append("        errreset(tok)")
    out_names = [name(i) for i in outs]
    for i in dict.fromkeys(outs):  # values are immutable: np.asarray(value) is read-only
        if i >= n_in and i not in known:
            body.append(f"    if type(v{i}) is nd: v{i}.flags.writeable = False")
    body.append(f"    return [{', '.join(out_names)}]")
    source = f"def run({', '.join(params_in)}):\n" + "\n".join(body)
    if varying is not None:  # the run function as a closure over the varying params
        head = "def make(P):\n" + "".join(f"    p{k} = P[{k}]\n" for k in varying)
        source = head + "".join(f"    {line}\n" for line in source.split("\n")) + "    return run"
    code = _CODE.get(source)
    if code is None:  # (a structure met again at other shapes, a growing sequence, has
        # the same source)
        if len(_CODE) >= 4096:
            _CODE.clear()
        code = _CODE[source] = compile(source, "<host plan>", "exec")
    exec(code, ns)
    return ns["run"] if varying is None else ns["make"]


def _passed_floats(steps: tuple[_Step, ...], outs: tuple[int, ...]) -> set[int]:
    """The steps converting a weakly typed Python ``float`` to a float dtype whose result
    only feeds operands that take the Python float as it is (:func:`_weak_ok`): the
    generated plan skips the conversion (``np.float32(x)`` costs ~0.7 us) when the value
    is a Python float, and converts anything else as before."""
    uses: dict[int, list[tuple[int, int]]] = {}
    for k, st in enumerate(steps):
        for j, i in enumerate(st.ins):
            uses.setdefault(i, []).append((k, j))
    candidates = [
        k
        for k, st in enumerate(steps)
        if st.scalar is not None
        and st.scalar[0] is float
        and st.casts is None
        and not st.multi
        and st.out_dtypes[0] in _WEAK_FLOAT_DTYPES
    ]
    # (the other operand must stay an array: never another conversion that may be skipped)
    maybe_float = {steps[k].outs[0] for k in candidates}
    passed = set()
    for k in candidates:
        o = steps[k].outs[0]
        use = uses.get(o)
        if o in outs or not use:
            continue
        if all(j in steps[c].weak_ok and steps[c].ins[1 - j] not in maybe_float for c, j in use):
            passed.add(k)
    return passed


def _cast_operand(x: Any, dtype: np.dtype) -> Any:
    """An operand of a lax-style n-ary operation in the operation's dtype (Python
    scalars stay: NumPy treats them as weakly typed, as XLA does)."""
    if type(x) in _SCALARS:
        return x
    return x if x.dtype == dtype else x.astype(dtype)


def _literal(a: Literal) -> Any:
    v = a.val
    if type(v) in _SCALARS:
        return v
    return np.asarray(v, a.aval.dtype)


def _operand_dtype(e: Eqn) -> np.dtype:
    """The one dtype of a lax-style n-ary operation's operands: the dtype of its strongly
    typed operands (weak scalars take it), else of its first."""
    avals = [a.aval for a in e.inputs]
    for a in avals:
        if not a.weak_type:
            return a.dtype
    return avals[0].dtype


def _missing(e: Eqn) -> Callable[..., Any]:
    def run(*args: Any) -> Any:
        raise MissingHostRule(f"{e.prim.name}: no host rule")

    return run


def plan_of(prog: Program, fallback: Callable[[Eqn], Callable[..., Any]] | None = None) -> HostPlan:
    """The :class:`HostPlan` of ``prog`` (not cached: callers keep it)."""
    return HostPlan(prog, fallback)


def run_host(
    prog: Program,
    args: Sequence[Any],
    fallback: Callable[[Eqn], Callable[..., Any]] | None = None,
) -> list[Any]:
    """Evaluate ``prog`` once on the host tier (a plan built and dropped: for the inner
    programs of control flow evaluated on host values)."""
    return HostPlan(prog, fallback)(*prog.consts, *args)
