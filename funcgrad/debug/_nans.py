"""``funcgrad.debug.nans``: raise ``FloatingPointError`` where a NaN or Inf is made.

Eagerly, each operation is checked as it runs: one whose result has a NaN/Inf while
none of its inputs had one raises, naming the primitive, its inputs and the line.

A program (``jit``, and the programs eager ``grad``/``vmap``/``jvp`` run) runs as
normal; only when one of its *outputs* is non-finite is it re-run equation by
equation (eagerly, one operation at a time) to find the origin. The rule:

* start at the first non-finite output, with the mask of its non-finite lanes;
* at the equation that produced it, the *culprit* inputs are those whose non-finite
  lanes reach the non-finite lanes of the output: for ``select_n`` (``where``) only
  the case chosen at those lanes; for elementwise operations (input shaped as the
  output, or broadcast to it) the input lanes at those positions; for any other
  operation, an input with any non-finite lane;
* follow the first culprit (with its lanes) and repeat; an equation with no culprit
  made the NaN/Inf from finite values: it is the origin. Calls (``jit_call``,
  ``checkpoint``) and the branch a ``cond`` took are entered, so the origin is an
  equation of the user's function; loops (``scan``, ``while``) are reported whole.

So a NaN that never reaches an output (the untaken side of ``where``, masked lanes)
raises nothing, and one that does is traced back along the lanes that carry it.
Equations keep their user line through transforms; those a derivative rule made
also name the forward equation (``log`` at ``model.py:42``), so a NaN in a gradient
names the operation whose derivative is infinite there. A NaN/Inf that comes from
the inputs of the program (or an eager operation) is not reported: it was not made
under the check.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import jax
import numpy as np

from funcgrad import config
from funcgrad.core import dtypes
from funcgrad.core.debug_hooks import hooks, set_hook
from funcgrad.core.errors import DerivedSource, user_frame
from funcgrad.core.interp import bind, eager_mode
from funcgrad.core.ir import Eqn, Program, Var, aval_of

__all__ = ["nans"]


class _Switches:
    """What the check looks for: ``nans`` (``debug_nans``: NaN and Inf) or, with it off,
    ``infs`` (JAX's ``jax_debug_infs``: Inf alone). The core reads one attribute,
    ``hooks.nans``: on while either is."""

    def __init__(self) -> None:
        self._nans = False
        self._infs = False

    @property
    def nans(self) -> bool:
        return self._nans

    @nans.setter
    def nans(self, on: bool) -> None:
        self._nans = bool(on)
        hooks.nans = self._nans or self._infs

    @property
    def infs(self) -> bool:
        return self._infs

    @infs.setter
    def infs(self, on: bool) -> None:
        self._infs = bool(on)
        hooks.nans = self._nans or self._infs


_switches = _Switches()

config.bind(
    "debug_nans",
    _switches,
    "nans",
    "raise FloatingPointError, locating the operation and line, when a NaN or Inf is made",
)


def _set_jax_flag(on: Any) -> None:
    # JAX's option: funcgrad's check, and JAX's own for what runs outside funcgrad (the
    # operators of jax.Array values, such as ``x / y`` of two arrays)
    _switches.nans = bool(on)
    jax.config.update("jax_debug_nans", bool(on))


def _set_jax_infs(on: Any) -> None:
    # JAX's ``jax_debug_infs``: funcgrad's check for Inf alone (NaN too while debug_nans
    # is on), and JAX's own for jax.Array's operators
    _switches.infs = bool(on)
    jax.config.update("jax_debug_infs", bool(on))


config.define(
    "jax_debug_nans",
    False,
    "JAX's option: sets debug_nans and JAX's own check (jax.Array operators)",
    on_change=_set_jax_flag,
)
config.define(
    "jax_debug_infs",
    False,
    "JAX's option: raise FloatingPointError where an Inf is made (funcgrad's check, for "
    "Inf alone unless debug_nans is on, and JAX's own for jax.Array operators)",
    on_change=_set_jax_infs,
)


@contextmanager
def nans(enabled: bool = True) -> Iterator[None]:
    """Within the block, a NaN or Inf made eagerly or inside ``jit`` (and reaching an
    output) raises ``FloatingPointError`` naming the primitive, its inputs, the user's
    line and, in a gradient, the forward equation whose derivative made it (also
    ``funcgrad.config.update("debug_nans", True)``)."""
    saved = config.read("debug_nans")
    config.update("debug_nans", enabled)
    try:
        yield
    finally:
        config.update("debug_nans", saved)


def _bad(x: Any) -> np.ndarray | None:
    """The mask of non-finite lanes of an inexact array, or None (none, or not inexact)."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        if not isinstance(x, (float, complex)):
            return None
        dt = np.dtype(type(x))
    if not dtypes.is_inexact(np.dtype(dt)):
        return None
    v = np.asarray(x)
    m = ~np.isfinite(v) if _switches.nans or not _switches.infs else np.isinf(v)
    return m if m.any() else None


def _describe(x: Any, at: tuple | None) -> str:
    """An input: its aval, and its value (a scalar's, or at the first bad output lane)."""
    try:
        a = str(aval_of(x))
    except TypeError:
        a = type(x).__name__
    v = np.asarray(x)
    if v.ndim == 0:
        return f"{a} {v.item()!r}"
    if at is not None and len(at) == v.ndim and all(i < n for i, n in zip(at, v.shape)):
        return f"{a} (at index {tuple(int(i) for i in at)}: {v[at].item()!r})"
    return a


def _values_word(mask: np.ndarray, x: Any) -> str:
    v = np.asarray(x)[mask]
    kinds = []
    if np.isnan(v).any():
        kinds.append("nan")
    if np.isposinf(v.real).any() or np.isposinf(v.imag).any():
        kinds.append("inf")
    if np.isneginf(v.real).any() or np.isneginf(v.imag).any():
        kinds.append("-inf")
    return "/".join(kinds) or "non-finite values"


def _where(src: Any) -> str:
    if not src:
        return "at an unknown line"
    return f"at {src[0]}:{src[1]}"


def _message(e: Eqn, ins: Sequence[Any], out: Any, mask: np.ndarray) -> str:
    at = tuple(np.argwhere(mask)[0]) if np.ndim(mask) else None
    inputs = ", ".join(_describe(x, at) for x in ins) or "no inputs"
    count = f"{int(np.sum(mask))} of {np.size(mask)} values"
    word = _values_word(mask, out)
    # JAX's words first ("invalid value (nan) encountered in log"), then funcgrad's
    what = (
        f"invalid value ({word}) encountered in {e.prim.name}: `{e.prim.name}` produced "
        f"{word} ({count}) from finite inputs"
    )
    if e.prim.name in _LOOPS:
        what += f" (in the body of this `{e.prim.name}`, which is not entered)"
    elif e.prim.name == "cond":
        what += " (the branch it took returns it as a literal or constant)"
    src = e.source
    if isinstance(src, DerivedSource):
        return (
            f"funcgrad.debug.nans: a NaN/Inf in the gradient: the derivative of `{src.prim}` "
            f"(the forward equation {_where(src)}) made it: {what}: {inputs}"
        )
    return f"funcgrad.debug.nans: {what} {_where(src)}: {inputs}"


def check_eager(prim: Any, args: Sequence[Any], params: dict, out: Any) -> None:
    """Raise for an eager operation that made a NaN/Inf from finite inputs."""
    outs = out if prim.multiple_results else [out]
    for k, o in enumerate(outs):
        mask = _bad(o)
        if mask is None:
            continue
        if any(_bad(a) is not None for a in args):
            return  # propagated, not made here
        e = Eqn(prim, (), (), params, user_frame())
        sub = _sub_call(e, list(args))
        msg = locate(sub[0], sub[1], k) if sub is not None else None
        raise FloatingPointError(msg or _message(e, args, o, mask))


# --------------------------------------------------------------------------- programs

_CALLS = ("jit_call", "checkpoint")
_LOOPS = ("scan", "while")


def _sub_call(e: Eqn, ins: list) -> tuple[Program, list] | None:
    """The program ``e`` runs and its arguments, for calls and a ``cond`` with a known
    branch (loops are not entered: the loop equation is reported)."""
    p = e.params.get("program")
    if e.prim.name in _CALLS and isinstance(p, Program) and len(p.invars) == len(ins):
        return p, ins
    if e.prim.name == "cond" and np.ndim(ins[0]) == 0:
        branches = e.params["branches"]
        return branches[int(np.clip(np.asarray(ins[0]), 0, len(branches) - 1))], ins[1:]
    return None


def _evaluate(prog: Program, args: Sequence[Any]) -> tuple[dict, dict]:
    """Every variable's value (one eager operation at a time) and its producing equation."""
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    env.update(zip(prog.invars, args))
    producer: dict[Var, tuple[Eqn, int]] = {}
    hooks.in_program += 1
    try:
        with eager_mode():
            for e in prog.eqns:
                ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
                out = bind(e.prim, *ins, **e.params)
                outs = list(out) if e.prim.multiple_results else [out]
                for i, (v, o) in enumerate(zip(e.outvars, outs)):
                    env[v] = o
                    producer[v] = (e, i)
    finally:
        hooks.in_program -= 1
    return env, producer


def _lanes(mask: np.ndarray, shape: tuple) -> np.ndarray | None:
    """``mask`` (of an output) when an input of ``shape`` broadcasts to the output's
    shape (its lanes line up with the output's), else None."""
    try:
        ok = np.broadcast_shapes(shape, mask.shape) == mask.shape
    except ValueError:
        ok = False
    return mask if ok else None


def _culprits(e: Eqn, ins: list, mask: np.ndarray) -> list[tuple[Var, np.ndarray]]:
    """The inputs of ``e`` whose non-finite lanes reach the output lanes ``mask``."""
    found = []
    if e.prim.name == "select_n":
        pred = np.asarray(ins[0])
        for k, (a, x) in enumerate(zip(e.inputs[1:], ins[1:])):
            bad = _bad(x)
            if type(a) is not Var or bad is None:
                continue
            chosen = np.broadcast_to(
                pred == k if pred.dtype != bool else pred == bool(k), mask.shape
            )
            reach = np.broadcast_to(bad, mask.shape) & chosen & mask
            if reach.any():
                found.append((a, reach if bad.shape == mask.shape else bad))
        return found
    for a, x in zip(e.inputs, ins):
        bad = _bad(x)
        if type(a) is not Var or bad is None:
            continue
        lanes = _lanes(mask, bad.shape)
        if lanes is None:
            found.append((a, bad))
            continue
        reach = np.broadcast_to(bad, mask.shape) & lanes
        if reach.any():
            found.append((a, reach if bad.shape == mask.shape else bad))
    return found


def locate(prog: Program, args: Sequence[Any], target: int | None = None) -> str | None:
    """The message naming the equation that made the NaN/Inf at output ``target`` (the
    first non-finite output if None), or None when it came from the inputs."""
    env, producer = _evaluate(prog, args)
    outs = [env[a] if type(a) is Var else a.val for a in prog.outvars]
    idx = [target] if target is not None else range(len(outs))
    start = next((i for i in idx if _bad(outs[i]) is not None), None)
    if start is None or type(prog.outvars[start]) is not Var:
        return None
    v: Var = prog.outvars[start]
    mask = _bad(env[v])
    while v in producer:
        e, k = producer[v]
        ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
        sub = _sub_call(e, ins)
        if sub is not None:
            msg = locate(sub[0], sub[1], k)
            if msg is not None:
                return msg
        found = _culprits(e, ins, mask)
        if not found:
            if sub is not None and e.prim.name != "cond":
                return None  # a constant of a called function: the literal message
            return _message(e, ins, env[v], mask)
        v, mask = found[0]
    return None  # an input or constant of the program


def check_program(prog: Program, args: Sequence[Any], outs: Sequence[Any]) -> None:
    """Raise, locating the origin, when an output of ``prog`` is non-finite."""
    bad = [i for i, o in enumerate(outs) if _bad(o) is not None]
    if not bad:
        return
    try:
        msg = locate(prog, list(args))
    except Exception as e:  # the re-run failed (donated buffers, ...): say what is known
        raise FloatingPointError(
            f"funcgrad.debug.nans: output {bad[0]} of the program is non-finite; locating "
            f"its origin by re-running the program failed: {type(e).__name__}: {e}"
        ) from e
    if msg is not None:
        raise FloatingPointError(msg)
    if not any(_bad(a) is not None for a in args):
        # finite inputs, a non-finite output, and no operation made it: a NaN/Inf
        # literal or constant of the function (JAX's words: its ``jit`` says the same)
        raise FloatingPointError(
            f"funcgrad.debug.nans: output {bad[0]} of the program is non-finite while its "
            "inputs are finite, and re-run one operation at a time the de-optimized function "
            "did not make it from finite values: it is a nan/inf literal or constant of the "
            "function, as in `jit(lambda x: numpy.nan)(x)`"
        )


set_hook("check_eager", check_eager)
set_hook("check_program", check_program)
