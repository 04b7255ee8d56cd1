"""JAX's ``jax.test_util``, name for name and signature for signature.

:func:`check_grads` is :func:`funcgrad.testing.check_grads`. :func:`check_jvp` and
:func:`check_vjp` take JAX's arguments, a function *and its derivative function*
(``partial(jvp, f)``, ``partial(vjp, f)``), and check that derivative against central
finite differences of ``f`` (``funcgrad.testing``'s checks of the same names take only
``f`` and differentiate it themselves).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import tree_util
from funcgrad.testing import _tolerance, _wide, check_grads
from funcgrad.toplevel import float0

__all__ = ["check_grads", "check_jvp", "check_vjp"]

#: JAX's step for the finite differences of ``check_jvp``/``check_vjp``
EPS = 1e-4


def _rand_like(rng: np.random.RandomState, x: Any) -> np.ndarray:
    """A random direction shaped as ``x``: normal draws in an inexact dtype, ``float0``
    zeros (no tangent) for integer and boolean leaves."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return (rng.randn(*x.shape) + 1j * rng.randn(*x.shape)).astype(x.dtype)
    if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        return np.asarray(rng.randn(*x.shape)).astype(x.dtype)
    return np.zeros(x.shape, float0)


def _step(args: Any, tangents: Any, sign: float, eps: float) -> Any:
    """``args + sign * eps * tangents``, leaf by leaf (``float0`` leaves unchanged)."""

    def one(a: Any, t: Any) -> Any:
        a = np.asarray(a)
        if np.asarray(t).dtype == float0:
            return a
        return (a + (sign * eps) * np.asarray(t)).astype(a.dtype)

    return tree_util.tree_map(one, args, tangents)


def _numerical_jvp(f: Callable, args: Sequence[Any], tangents: Any, eps: float) -> Any:
    """Central difference of ``f`` at ``args`` along ``tangents`` (a pytree like ``f``'s
    output, in the output's dtypes)."""
    plus = f(*_step(tuple(args), tangents, 1.0, eps))
    minus = f(*_step(tuple(args), tangents, -1.0, eps))

    def diff(p: Any, m: Any) -> np.ndarray:
        p = np.asarray(p)
        return ((_wide(p) - _wide(m)) * (0.5 / eps)).astype(p.dtype)

    return tree_util.tree_map(diff, plus, minus)


def _check_close(got: Any, want: Any, atol: Any, rtol: Any, err_msg: str) -> None:
    got_leaves = tree_util.tree_leaves(got)
    want_leaves = tree_util.tree_leaves(want)
    if len(got_leaves) != len(want_leaves):
        raise AssertionError(f"{err_msg}: {len(got_leaves)} leaves against {len(want_leaves)}")
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype == float0 or w.dtype == float0:
            continue
        np.testing.assert_allclose(
            _wide(g),
            _wide(w),
            atol=_tolerance(atol, [g, w], 1e-5),
            rtol=_tolerance(rtol, [g, w], 1e-5),
            err_msg=err_msg,
        )


def _inner(xs: Any, ys: Any) -> float:
    """``Re(sum(conj(x) * y))`` over the leaves, ``float0`` leaves skipped."""
    total = 0.0
    for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == float0 or y.dtype == float0:
            continue
        total += float(np.real(np.sum(np.conj(_wide(x)) * _wide(y))))
    return total


def check_jvp(
    f: Callable,
    f_jvp: Callable,
    args: Sequence[Any],
    atol: Any = None,
    rtol: Any = None,
    eps: float = EPS,
    err_msg: str = "",
) -> None:
    """Check ``f_jvp(args, tangents) -> (out, tangent_out)`` (``partial(jvp, f)``)
    against ``f`` and its central differences along a random direction, as
    ``jax.test_util.check_jvp``: tolerances are numbers or ``{dtype: tol}`` tables."""
    rng = np.random.RandomState(0)
    tangents = tree_util.tree_map(lambda x: _rand_like(rng, x), tuple(args))
    out, t_out = f_jvp(tuple(args), tangents)
    _check_close(out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    want = _numerical_jvp(f, args, tangents, eps)
    _check_close(t_out, want, atol, rtol, f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(
    f: Callable,
    f_vjp: Callable,
    args: Sequence[Any],
    atol: Any = None,
    rtol: Any = None,
    eps: float = EPS,
    err_msg: str = "",
) -> None:
    """Check ``f_vjp(*args) -> (out, pullback)`` (``partial(vjp, f)``) against ``f``:
    the pullback of a random cotangent, paired with a random direction, equals the
    cotangent paired with ``f``'s central difference along that direction, as
    ``jax.test_util.check_vjp``."""
    rng = np.random.RandomState(0)
    out, pullback = f_vjp(*args)
    _check_close(out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangents = tree_util.tree_map(lambda x: _rand_like(rng, x), tuple(args))
    t_out = _numerical_jvp(f, args, tangents, eps)
    cotangent = tree_util.tree_map(lambda x: _rand_like(rng, x), out)
    ct_in = pullback(tree_util.tree_map(np.conj, cotangent))
    ct_in = tree_util.tree_map(np.conj, tuple(ct_in))
    got = _inner(tangents, ct_in)
    want = _inner(t_out, cotangent)
    leaves = [*tree_util.tree_leaves(out), *tree_util.tree_leaves(tuple(args))]
    np.testing.assert_allclose(
        got,
        want,
        atol=_tolerance(atol, leaves, 1e-5),
        rtol=_tolerance(rtol, leaves, 1e-5),
        err_msg=f"{err_msg} VJP" if err_msg else "VJP",
    )
