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

Values: host values are ``numpy.ndarray`` (0-d arrays, never NumPy scalars) and
Python scalars for weakly typed inputs; :func:`host_value` takes a JAX array to a
NumPy one (no copy on a CPU), :func:`device_value` takes a host value back to a
JAX array of the aval's weak type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from funcgrad.core.ir import Aval, Eqn, Literal, Program, Var

_ndarray = np.ndarray
_SCALARS = (bool, int, float, complex)

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
    """``x`` as a host value: a NumPy array (a JAX array's buffer, not copied on a CPU),
    or a Python scalar as it is."""
    t = type(x)
    if t is _ndarray or t in _SCALARS:
        return x
    return np.asarray(x)


def fix_dtype(x: Any, dtype: np.dtype) -> np.ndarray:
    """``x`` as an array of exactly ``dtype`` (NumPy may promote, or return a scalar)."""
    if type(x) is _ndarray:
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
    if _put is not None and x.dtype != jax.dtypes.float0:
        if not _DEVICE:
            d = jax.devices()[0]
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


class MissingHostRule(NotImplementedError):
    """Raised by a plan asked to run an equation without a host rule and no fallback."""


class HostPlan:
    """A program prepared for the host tier (see the module docstring).

    Called as ``plan(*consts, *args)``; returns the list of outputs as host values.
    ``missing`` names the primitives that run through the fallback.
    """

    __slots__ = ("in_slots", "made", "missing", "out_slots", "steps", "template")

    def __init__(
        self, prog: Program, fallback: Callable[[Eqn], Callable[..., Any]] | None = None
    ) -> None:
        slots: dict[Var, int] = {}
        template: list[Any] = []

        def slot(v: Var) -> int:
            s = slots.get(v)
            if s is None:
                s = slots[v] = len(template)
                template.append(None)
            return s

        def atom(a: Any) -> int:
            if type(a) is Literal:
                template.append(_literal(a))
                return len(template) - 1
            return slot(a)

        self.in_slots = tuple(slot(v) for v in (*prog.constvars, *prog.invars))
        steps = []
        missing: list[str] = []
        for e in prog.eqns:
            rule = e.prim.host
            if rule is None:
                missing.append(e.prim.name)
                rule = fallback(e) if fallback is not None else _missing(e)
                params: dict[str, Any] = {}
            else:
                params = e.params
            ins = tuple(atom(a) for a in e.inputs)
            cast = _operand_dtype(e) if getattr(e.prim, "host_join", False) else None
            outs = tuple(slot(v) for v in e.outvars)
            dts = tuple(v.aval.dtype for v in e.outvars)
            if e.prim.multiple_results:
                steps.append((rule, params, ins, outs, dts, True, cast))
            else:
                steps.append((rule, params, ins, outs[0], dts[0], False, cast))
        self.steps = tuple(steps)
        self.out_slots = tuple(atom(a) for a in prog.outvars)
        #: the outputs the plan makes (not its inputs, which belong to the caller)
        self.made = tuple(k for k, s in enumerate(self.out_slots) if s not in self.in_slots)
        self.template = template
        self.missing = tuple(dict.fromkeys(missing))

    def __call__(self, *vals: Any) -> list[Any]:
        env = self.template.copy()
        for s, v in zip(self.in_slots, vals):
            t = type(v)
            env[s] = v if t is _ndarray or t in _SCALARS else np.asarray(v)
        token = _ERR_VAR.set(_ERR_IGNORE) if _ERR_VAR is not None else None
        try:
            for rule, params, ins, outs, dts, multi, cast in self.steps:
                args = [env[i] for i in ins]
                if cast is not None:
                    args = [
                        a.astype(cast) if type(a) is _ndarray and a.dtype != cast else a
                        for a in args
                    ]
                out = rule(*args, **params)
                if multi:
                    for s, o, d in zip(outs, out, dts):
                        env[s] = o if type(o) is _ndarray and o.dtype == d else fix_dtype(o, d)
                else:
                    env[outs] = (
                        out if type(out) is _ndarray and out.dtype == dts else fix_dtype(out, dts)
                    )
        finally:
            if token is not None:
                _ERR_VAR.reset(token)
        outs = [env[s] for s in self.out_slots]
        for k in self.made:  # values are immutable: np.asarray(value) is read-only
            o = outs[k]
            if type(o) is _ndarray:
                o.flags.writeable = False
        return outs


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
