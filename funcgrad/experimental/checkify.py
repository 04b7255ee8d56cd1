"""``funcgrad.experimental.checkify``: functional error checks (``jax.experimental.checkify``).

``checkify(f, errors=...)`` returns a function giving ``(err, out)``: ``out`` is ``f``'s
value and ``err`` an :class:`Error` describing the first check that failed, if any.
Checks are the user's (:func:`check`, :func:`debug_check`, :func:`check_error`) and,
when enabled, automatic ones: a NaN produced by an operation from NaN-free operands,
a division by zero, an out-of-bounds index. ``checkify`` is an IR → IR transform
(:mod:`funcgrad.experimental._checkify_rules`): the function is traced, its program
rewritten to thread an error value through every equation (into ``jit``, ``cond``,
``while_loop``, ``scan``, ``checkpoint``), and the result evaluated — eagerly as one
cached program, or into the enclosing trace, so ``jit``, ``vmap`` (one error per
example) and ``grad`` compose with it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import jax
import numpy as np

from funcgrad.core import tiers
from funcgrad.core.interp import Tracer, new_builder, to_aval
from funcgrad.experimental import _checkify_rules as rules
from funcgrad.primitives.checks import (
    BatchedError,
    DivisionByZeroError,
    ErrorInfo,
    FailedCheckError,
    JaxException,
    JaxRuntimeError,
    NaNError,
    OOBError,
    Site,
    check_leaves,
    exception_of,
    raise_if_failed,
    recording_index_checks,
    sig_of,
)
from funcgrad.primitives.elementwise import bitwise_not
from funcgrad.tree_util import register_pytree_node_class, tree_flatten, tree_unflatten

__all__ = [
    "BatchedError",
    "DivisionByZeroError",
    "Error",
    "ErrorCategory",
    "FailedCheckError",
    "JaxException",
    "JaxRuntimeError",
    "NaNError",
    "OOBError",
    "all_checks",
    "automatic_checks",
    "check",
    "check_error",
    "checkify",
    "debug_check",
    "div_checks",
    "float_checks",
    "index_checks",
    "init_error",
    "nan_checks",
    "user_checks",
]

#: an error category: one of the exception types a check describes
ErrorCategory = type

user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


@register_pytree_node_class
class Error:
    """An error value: whether a check failed, which (the first), and its payload.

    Its leaves are arrays (batched under ``vmap``: one error per example), its checks'
    descriptions static, so it crosses ``jit`` and ``vmap`` like any pytree."""

    def __init__(self, pred: Any, code: Any, payload: tuple, info: ErrorInfo) -> None:
        self._pred = pred
        self._code = code
        self._payload = payload
        self._info = info

    @property
    def _metadata(self) -> dict[int, Site]:
        return dict(self._info.sites)

    def _leaves(self) -> list:
        return [self._pred, self._code, *(x for slot in self._payload for x in slot)]

    def get(self) -> str | None:
        """The error's message, or ``None`` when no check failed."""
        exc = self.get_exception()
        return None if exc is None else str(exc)

    def get_exception(self) -> JaxException | None:
        """The exception describing the failure, or ``None`` when no check failed."""
        leaves = self._leaves()
        if any(isinstance(x, Tracer) for x in leaves):
            raise TypeError(
                "Error.get/get_exception need concrete values: use checkify.check_error "
                "to raise an error inside a transformed function"
            )
        return exception_of(leaves, self._info)

    def throw(self) -> None:
        """Raise :class:`JaxRuntimeError` when a check failed."""
        raise_if_failed(self._leaves(), self._info)

    def __str__(self) -> str:
        return f"Error({self.get()})"

    __repr__ = __str__

    def tree_flatten(self) -> tuple:
        """Leaves ``(pred, code, payload slots)``; the static metadata as aux data."""
        return (self._pred, self._code, self._payload), self._info

    @classmethod
    def tree_unflatten(cls, info: ErrorInfo, children: Any) -> Error:
        """The error of :meth:`tree_flatten`'s leaves and metadata."""
        pred, code, payload = children
        return cls(pred, code, tuple(tuple(s) for s in payload), info)


#: the empty error (no check failed)
init_error = Error(np.bool_(False), np.int32(-1), (), ErrorInfo())


def _error_of(st: rules.State, ctx: rules.Context) -> Error:
    sigs = tuple(st.sigs())
    info = ErrorInfo(sigs, tuple(enumerate(ctx.sites)))
    return Error(st.pred, st.code, tuple(tuple(st.slots[s]) for s in sigs), info)


def _is_array(x: Any) -> bool:
    if isinstance(x, (Tracer, jax.Array, np.ndarray, np.generic, bool, int, float, complex)):
        try:
            to_aval(x)
            return True
        except TypeError:
            return False
    return False


def checkify(
    f: Callable[..., Any], errors: frozenset = user_checks
) -> Callable[..., tuple[Error, Any]]:
    """``f`` returning ``(err, out)``: ``err`` the first failed check of the enabled
    ``errors`` (:data:`user_checks` by default; :data:`nan_checks`, :data:`div_checks`,
    :data:`index_checks`, :data:`float_checks`, :data:`automatic_checks`,
    :data:`all_checks`, or any union of them).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> from funcgrad.experimental import checkify
        >>> def f(x):
        ...     checkify.check(x > 0, "{x} needs to be positive", x=x)
        ...     return fnp.log(x)
        >>> err, y = checkify.checkify(f)(-3.0)
        >>> err.get()
        '-3.0 needs to be positive (`check` failed)'
    """
    enabled = frozenset(errors)

    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        leaves, in_tree = tree_flatten((args, kwargs))
        dyn = [i for i, x in enumerate(leaves) if _is_array(x)]
        avals = [to_aval(leaves[i]) for i in dyn]
        record = recording_index_checks() if OOBError in enabled else nullcontext()
        with record, new_builder("checkify") as b:
            tracers = [b.new_arg(a, leaves[i]) for a, i in zip(avals, dyn)]
            full = list(leaves)
            for i, t in zip(dyn, tracers):
                full[i] = t
            a, k = tree_unflatten(in_tree, full)
            out = f(*a, **k)
            out_leaves, out_tree = tree_flatten(out)
            prog = b.build(out_leaves)
        ctx = rules.Context(enabled)
        with new_builder("checkify") as b:
            ins = [b.new_arg(a) for a in avals]
            st, outs = rules.run(ctx, prog, rules.State.empty(), ins)
            err = _error_of(st, ctx)
            new = b.build([*err._leaves(), *outs])
        n = len(err._leaves())
        # eagerly one cached program; under a trace its equations record there
        vals = tiers.run(new, *[leaves[i] for i in dyn])
        err_out = Error.tree_unflatten(err._info, _regroup(err, vals[:n]))
        return err_out, tree_unflatten(out_tree, list(vals[n:]))

    checked.__name__ = getattr(f, "__name__", "checked")
    checked.__doc__ = getattr(f, "__doc__", None)
    return checked


def _regroup(err: Error, leaves: list) -> tuple:
    pred, code, slots = err._info.split(leaves)
    return pred, code, tuple(tuple(s) for s in slots)


def _scalar_pred(pred: Any) -> bool:
    if isinstance(pred, (bool, np.bool_)):
        return True
    if isinstance(pred, (Tracer, jax.Array, np.ndarray)):
        a = to_aval(pred)
        return a.shape == () and a.dtype == np.dtype(bool)
    return False


def _check(pred: Any, msg: str, debug: bool, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    if not _scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    payload, tree = tree_flatten((fmt_args, fmt_kwargs))
    for x in payload:
        if not isinstance(x, (Tracer, jax.Array, np.ndarray)):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, but "
                f"got {x!r} of type {type(x)}."
            )
    sig = sig_of(payload)
    info = ErrorInfo((sig,), ((0, Site(FailedCheckError, msg, tree=tree, sig=sig)),))
    fail = bitwise_not(np.bool_(pred) if isinstance(pred, bool) else pred)
    check_leaves([fail, np.int32(0), *payload], info, debug=debug)


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any) -> None:
    """Fail with ``msg`` (a format string of ``fmt_args``/``fmt_kwargs``, arrays whose
    run-time values the message shows) when the scalar boolean ``pred`` is False.

    Outside :func:`checkify` a failed check raises :class:`JaxRuntimeError` at once; a
    check reached by ``jit`` (or another staging transform) must be checkified first.
    With ``debug=True`` it is :func:`debug_check`."""
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """A :func:`check` that only :func:`checkify` runs: elsewhere it does nothing."""
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise the failure ``error`` describes (:class:`JaxRuntimeError`); under
    :func:`checkify` it becomes part of the error value instead (the inverse of
    ``checkify``)."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    leaves = error._leaves()
    pred = leaves[0]
    if to_aval(pred).shape:  # a batched error: the first failing example's
        leaves = _first_failing(error)
    check_leaves(leaves, error._info)


def _first_failing(error: Error) -> list:
    """The leaves of the first failing example of a batched ``error``."""
    leaves = error._leaves()
    return rules.first_failing(leaves, len(to_aval(leaves[0]).shape))
