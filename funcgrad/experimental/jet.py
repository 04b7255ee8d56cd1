"""``funcgrad.experimental.jet``: Taylor-mode higher-order forward differentiation
(``jax.experimental.jet``'s contract).

``jet(f, (x0,), ([x1, ..., xK],))`` is the truncated Taylor polynomial of ``f`` along
``x(t) = x0 + x1 t + x2 t**2 / 2! + ... + xK t**K / K!``: ``(f(x0), [y1, ..., yK])`` with
``yk`` the ``k``-th derivative of ``f(x(t))`` at ``t = 0``. ``f`` is traced once and its
program is evaluated by :mod:`funcgrad.taylor` (per-primitive ``jet`` rules, and every
primitive with a JVP rule through that rule), so ``jet`` composes with ``jit``,
``vmap``, ``grad`` and ``jvp`` both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from math import factorial
from typing import Any

import numpy as np

from funcgrad import lax, taylor
from funcgrad.api._tracing import check_callable, trace_pytree
from funcgrad.core import dtypes, tiers
from funcgrad.core.ad_util import zeros_like_aval
from funcgrad.core.interp import is_tracing, to_aval
from funcgrad.core.ir import Aval
from funcgrad.numpy import multiply, true_divide
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["ZeroSeries", "fact", "jet", "jet2", "zero_series"]


class ZeroSeries:
    """The marker of a series that is zero to every order (``zero_series``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "zero_series"


#: the one :class:`ZeroSeries` (``jet`` itself always returns materialised zeros)
zero_series = ZeroSeries()


def fact(n: Any) -> Any:
    """``n!`` as ``exp(lgamma(n + 1))``, a float array (defined for non-integers too)."""
    return lax.exp(lax.lgamma(n + 1.0))


def _check(primals: Sequence[Any], series: Sequence[Any]) -> int:
    """The order of ``series``, or JAX's ``ValueError`` for terms of different lengths,
    primals or terms that are not arrays, and one series per primal."""
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError(
            "jet: primals and series must be tuples or lists, got "
            f"{type(primals).__name__} and {type(series).__name__}"
        )
    if len(primals) != len(series):
        raise ValueError(
            f"jet: {len(primals)} primals but {len(series)} series; give one series "
            "(a list of terms) per primal"
        )
    try:
        (order,) = {len(s) for s in series}
    except (ValueError, TypeError):
        raise ValueError("jet terms have inconsistent lengths for different arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if len(tree_flatten(x)[0]) != 1 or tree_flatten(x)[0][0] is not x:
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if len(tree_flatten(t)[0]) != 1 or tree_flatten(t)[0][0] is not t:
                raise ValueError(f"term {j} for argument {i} is not an array")
    return order


def _terms(x: Any, terms: Sequence[Any], i: int, scale: bool) -> list | None:
    """Primal ``x``'s series as coefficient arrays of its dtype (``None`` for an integer
    or bool primal, which no series perturbs); ``scale``: the terms are plain Taylor
    coefficients, multiplied by ``k!`` here."""
    a = to_aval(x)
    if not dtypes.is_inexact(a.dtype):
        return None
    out = []
    for k, t in enumerate(terms, start=1):
        ta = to_aval(t)
        if ta.shape != a.shape:
            raise ValueError(
                f"jet: term {k - 1} for argument {i} has shape {ta.shape}, its primal "
                f"{a.shape}; every term must have its primal's shape"
            )
        c = lax.convert_element_type(t, a.dtype)
        out.append(multiply(c, factorial(k)) if scale else c)
    return out


def jet(
    fun: Callable, primals: Sequence[Any], series: Sequence[Any], factorial_scaled: bool = True
) -> tuple[Any, Any]:
    """Taylor-mode higher-order differentiation of ``fun`` at ``primals``.

    Args:
        fun: a function of arrays returning an array or a pytree of arrays.
        primals: one array (or scalar) per positional argument of ``fun``.
        series: one list of ``K`` terms per primal, each shaped like its primal: the
            input's derivatives ``x1 .. xK`` along the path (``K`` is the order).
        factorial_scaled: ``True`` (JAX's default): terms in and out are derivatives
            (Taylor coefficients times ``k!``); ``False``: plain Taylor coefficients.

    Returns:
        ``(primal_out, series_out)``: ``fun(*primals)`` and, for each of its leaves, the
        list of its ``K`` terms (zeros where the output does not depend on the inputs;
        float zeros for an integer or bool output). Integer and bool primals carry no
        series (their terms are ignored), as in ``jvp``.

    Raises:
        ValueError: series of different lengths, a primal or term that is not an
            array, a term shaped unlike its primal, or not one series per primal.
    """
    check_callable(fun)
    order = _check(primals, series)
    primals = tuple(primals)
    prog, out_tree = trace_pytree(fun, primals, None, "jet", known=True)
    leaves = list(primals)
    ser = [
        _terms(x, terms, i, not factorial_scaled)
        for i, (x, terms) in enumerate(zip(leaves, series))
    ]
    if is_tracing() or order == 0:
        outs, souts = taylor.jet_eval(prog, leaves, ser, order)
    else:  # eagerly: one (cached, compiled once it recurs) Taylor-mode program
        nz = [s is not None for s in ser]
        jprog, out_nz = taylor.jet_program(prog, nz, order, known=leaves)
        flat = [c for s in ser if s is not None for c in s]
        res = tiers.run(jprog, *leaves, *flat)
        n = len(prog.outvars)
        outs, souts = list(res[:n]), taylor.split_series(res[n:], out_nz, order)
    terms_out = []
    for o, s in zip(outs, souts):
        if s is None:
            a = to_aval(o)
            if not dtypes.is_inexact(a.dtype):  # (JAX's: zeros of the default float dtype)
                a = Aval(a.shape, dtypes.canonicalize(np.float64))
            zero = zeros_like_aval(a)
            s = [zero] * order
        elif not factorial_scaled:
            s = [true_divide(c, factorial(k)) for k, c in enumerate(s, start=1)]
        terms_out.append(list(s))
    return tree_unflatten(out_tree, outs), tree_unflatten(out_tree, terms_out)


#: ``jet`` with plain Taylor coefficients in and out (``factorial_scaled=False``)
jet2 = partial(jet, factorial_scaled=False)


def _logistic_taylor(primals_in: Sequence[Any], series_in: Sequence[Any]) -> tuple[Any, list]:
    """The Taylor coefficients (unscaled) of ``logistic`` of a series: the name
    ``jax.experimental.jet``'s tests call for its rule."""
    return jet2(lax.logistic, tuple(primals_in), tuple(series_in))
