"""``funcgrad.scipy.optimize``: ``minimize(method="BFGS")`` as ``jax.scipy.optimize`` has it,
and its experimental L-BFGS (``method="l-bfgs-experimental-do-not-rely-on-this"``, real or
complex ``x``).

BFGS (Nocedal & Wright, *Numerical Optimization*, Algorithm 6.1) with an inexact line
search satisfying the strong Wolfe conditions (Algorithms 3.5 and 3.6: bracketing, then
zooming by cubic, quadratic or bisection steps). Everything runs inside
:func:`funcgrad.while_loop`, so ``minimize`` works eagerly, under ``jit`` and under
``vmap``; gradients of ``fun`` come from :func:`funcgrad.value_and_grad`.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.optimize import minimize
    >>> res = minimize(lambda x: fnp.sum((x - 3.0) ** 2), fnp.zeros(2), method="BFGS")
    >>> [round(float(v), 4) for v in res.x]
    [3.0, 3.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from funcgrad import numpy as fnp
from funcgrad.api import value_and_grad
from funcgrad.control_flow import while_loop
from funcgrad.numpy._core import here

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """Result of :func:`minimize`.

    Attributes:
        x: the solution found.
        success: whether the gradient norm fell below ``gtol`` without a failed line search.
        status: 0 converged, 1 ``maxiter`` reached, 3 zoom failed, 5 line search
            ``maxiter`` reached (2 + the line search's status), -1 undefined.
        fun: ``fun(x)``.
        jac: the gradient at ``x``.
        hess_inv: the final inverse Hessian estimate.
        nfev: number of function evaluations.
        njev: number of gradient evaluations.
        nit: number of BFGS iterations.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def _i(v: int) -> Any:
    return fnp.asarray(v, dtype=fnp.int32)


def _pick(cond: Any, new: dict, old: dict, keys: Any = None) -> dict:
    """``old`` with ``keys`` (default: ``new``'s) replaced by ``new``'s where ``cond``."""
    keys = new.keys() if keys is None else keys
    return {**old, **{k: fnp.where(cond, new[k], old[k]) for k in keys}}


# --------------------------------------------------------------------------- line search


def _cubic_min(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """Minimiser of the cubic through ``(a, fa)`` with slope ``fpa`` there, ``(b, fb)`` and
    ``(c, fc)``."""
    db, dc = b - a, c - a
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    denom = (db * dc) ** 2 * (db - dc)
    ca = (dc**2 * rb - db**2 * rc) / denom
    cb = (-(dc**3) * rb + db**3 * rc) / denom
    return a + (-cb + fnp.sqrt(cb * cb - 3.0 * ca * fpa)) / (3.0 * ca)


def _quad_min(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """Minimiser of the parabola through ``(a, fa)`` with slope ``fpa`` and ``(b, fb)``."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2.0 * curv)


def _zoom(
    phi_dphi: Callable, wolfe1: Callable, wolfe2: Callable, lo: tuple, hi: tuple, g0: Any, skip: Any
) -> dict:
    """Shrink the bracket ``[lo, hi]`` (each ``(alpha, phi, dphi)``) until a step meets the
    strong Wolfe conditions (Algorithm 3.6); nothing runs where ``skip``."""
    a_lo, phi_lo, dphi_lo = lo
    a_hi, phi_hi, dphi_hi = hi
    dt = phi_lo.dtype
    threshold = 1e-10 if np.finfo(dt).bits >= 64 else 1e-5
    state = dict(
        done=fnp.asarray(False),
        failed=fnp.asarray(False),
        j=_i(0),
        a_lo=a_lo,
        phi_lo=phi_lo,
        dphi_lo=dphi_lo,
        a_hi=a_hi,
        phi_hi=phi_hi,
        dphi_hi=dphi_hi,
        # the previous a_hi (or a_lo), the third point of the cubic fit
        a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=fnp.asarray(1.0, dtype=dt),
        phi_star=phi_lo,
        dphi_star=dphi_lo,
        g_star=g0,
        nfev=_i(0),
    )

    def body(s: dict) -> dict:
        width = s["a_hi"] - s["a_lo"]
        left = fnp.minimum(s["a_hi"], s["a_lo"])
        right = fnp.maximum(s["a_hi"], s["a_lo"])
        s = {**s, "failed": s["failed"] | (width <= threshold)}
        a_cub = _cubic_min(
            s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"], s["a_rec"], s["phi_rec"]
        )
        use_cub = (s["j"] > 0) & (a_cub > left + 0.2 * width) & (a_cub < right - 0.2 * width)
        a_quad = _quad_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
        use_quad = ~use_cub & (a_quad > left + 0.1 * width) & (a_quad < right - 0.1 * width)
        a_j = fnp.where(use_cub, a_cub, fnp.where(use_quad, a_quad, (s["a_lo"] + s["a_hi"]) / 2.0))
        phi_j, dphi_j, g_j = phi_dphi(a_j)
        s = {**s, "nfev": s["nfev"] + 1}
        # sufficient decrease fails: a_j becomes the new upper end
        to_hi = wolfe1(a_j, phi_j) | (phi_j >= s["phi_lo"])
        # curvature condition met too: a_j is the answer
        found = wolfe2(dphi_j) & ~to_hi
        # slope points back past a_lo: the old lower end becomes the upper end
        flip = (dphi_j * (s["a_hi"] - s["a_lo"]) >= 0.0) & ~to_hi & ~found
        to_lo = ~to_hi & ~found
        s = _pick(
            to_hi,
            dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s["a_hi"], phi_rec=s["phi_hi"]),
            s,
        )
        s = _pick(found, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), s)
        s = {**s, "done": s["done"] | found}
        s = _pick(
            flip,
            dict(
                a_hi=s["a_lo"],
                phi_hi=s["phi_lo"],
                dphi_hi=s["dphi_lo"],
                a_rec=s["a_hi"],
                phi_rec=s["phi_hi"],
            ),
            s,
        )
        s = _pick(to_lo & ~flip, dict(a_rec=s["a_lo"], phi_rec=s["phi_lo"]), s)
        s = _pick(to_lo, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), s)
        j = s["j"] + 1
        return {**s, "j": j, "failed": s["failed"] | (j >= 30)}

    return while_loop(lambda s: ~s["done"] & ~skip & ~s["failed"], body, state)


def _line_search(
    fun: Callable,
    xk: Any,
    pk: Any,
    f0: Any,
    old_old_f: Any,
    g0: Any,
    c1: float = 1e-4,
    c2: float = 0.9,
    maxiter: int = 10,
) -> dict:
    """A step along ``pk`` from ``xk`` meeting the strong Wolfe conditions (Algorithm 3.5):
    try growing steps until one is acceptable or a bracket is found, then zoom."""
    dt = fnp.real(pk).dtype  # (steps and values are real for a complex x too)
    vg = value_and_grad(fun)

    def phi_dphi(t: Any) -> tuple:
        v, g = vg(xk + fnp.asarray(t, pk.dtype) * pk)
        return fnp.asarray(v, dt), fnp.real(fnp.dot(g, pk)), g

    dphi0 = fnp.real(fnp.dot(g0, pk))
    if old_old_f is None:  # (L-BFGS: a unit first step)
        start = fnp.asarray(1.0, dt)
    else:
        guess = 1.01 * 2 * (f0 - old_old_f) / dphi0
        start = fnp.where(guess > 1, fnp.asarray(1.0, dt), guess)

    def wolfe1(a: Any, phi: Any) -> Any:
        return phi > f0 + c1 * a * dphi0

    def wolfe2(dphi: Any) -> Any:
        return fnp.abs(dphi) <= -c2 * dphi0

    state = dict(
        done=fnp.asarray(False),
        failed=fnp.asarray(False),
        i=_i(1),
        a_prev=fnp.asarray(0.0, dt),
        phi_prev=f0,
        dphi_prev=dphi0,
        nfev=_i(0),
        a_star=fnp.asarray(0.0, dt),
        phi_star=f0,
        dphi_star=dphi0,
        g_star=g0,
    )
    star_keys = ("a_star", "phi_star", "dphi_star", "g_star")

    def body(s: dict) -> dict:
        a_i = fnp.where(s["i"] == 1, start, s["a_prev"] * 2.0)
        phi_i, dphi_i, g_i = phi_dphi(a_i)
        prev = (s["a_prev"], s["phi_prev"], s["dphi_prev"])
        cur = (a_i, phi_i, dphi_i)
        # too long a step (or no decrease): the minimiser is bracketed by [prev, cur]
        bracket1 = wolfe1(a_i, phi_i) | ((phi_i >= s["phi_prev"]) & (s["i"] > 1))
        accept = wolfe2(dphi_i) & ~bracket1
        # the slope turned positive: bracketed by [cur, prev]
        bracket2 = (dphi_i >= 0.0) & ~bracket1 & ~accept
        z1 = _zoom(phi_dphi, wolfe1, wolfe2, prev, cur, g0, ~bracket1)
        z2 = _zoom(phi_dphi, wolfe1, wolfe2, cur, prev, g0, ~bracket2)
        s = {**s, "nfev": s["nfev"] + 1 + z1["nfev"] + z2["nfev"]}
        s = _pick(bracket1, z1, s, star_keys)
        s = _pick(accept, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i), s)
        s = _pick(bracket2, z2, s, star_keys)
        s["done"] = s["done"] | bracket1 | accept | bracket2
        s["failed"] = s["failed"] | (bracket1 & z1["failed"]) | (bracket2 & z2["failed"])
        return {**s, "i": s["i"] + 1, "a_prev": a_i, "phi_prev": phi_i, "dphi_prev": dphi_i}

    s = while_loop(lambda s: ~s["done"] & (s["i"] <= maxiter) & ~s["failed"], body, state)
    status = fnp.where(s["failed"], _i(1), fnp.where(s["i"] > maxiter, _i(3), _i(0)))
    a_k = s["a_star"]
    if np.finfo(dt).bits != 64:  # keep a minimal step in single precision
        a_k = fnp.where(fnp.abs(a_k) < 1e-8, fnp.sign(a_k) * 1e-8, a_k)
    return dict(
        failed=s["failed"] | ~s["done"],
        nfev=s["nfev"],
        a_k=a_k,
        f_k=s["phi_star"],
        g_k=s["g_star"],
        status=status,
    )


# --------------------------------------------------------------------------- BFGS


def _bfgs(
    fun: Callable,
    x0: Any,
    maxiter: int | None = None,
    norm: float = np.inf,
    gtol: float = 1e-5,
    line_search_maxiter: int = 10,
) -> dict:
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    d = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)
    f0 = fnp.asarray(f0, x0.dtype)
    state = dict(
        converged=fnp.linalg.norm(g0, ord=norm) < gtol,
        failed=fnp.asarray(False),
        k=_i(0),
        nfev=_i(1),
        x=x0,
        f=f0,
        g=g0,
        H=fnp.eye(d, dtype=x0.dtype),
        old_f=f0 + fnp.linalg.norm(g0) / 2,
        ls_status=_i(0),
    )

    def body(s: dict) -> dict:
        p = -fnp.dot(s["H"], s["g"])
        ls = _line_search(fun, s["x"], p, s["f"], s["old_f"], s["g"], maxiter=line_search_maxiter)
        step = ls["a_k"] * p
        y = ls["g_k"] - s["g"]
        rho = 1.0 / fnp.dot(y, step)
        # H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T
        w = fnp.eye(d, dtype=rho.dtype) - rho * step[:, None] * y[None, :]
        h_new = w @ s["H"] @ w.T + rho * step[:, None] * step[None, :]
        return dict(
            converged=fnp.linalg.norm(ls["g_k"], ord=norm) < gtol,
            failed=ls["failed"],
            k=s["k"] + 1,
            nfev=s["nfev"] + ls["nfev"],
            x=s["x"] + step,
            f=ls["f_k"],
            g=ls["g_k"],
            H=fnp.where(fnp.isfinite(rho), h_new, s["H"]),
            old_f=s["f"],
            ls_status=ls["status"],
        )

    s = while_loop(lambda s: ~s["converged"] & ~s["failed"] & (s["k"] < maxiter), body, state)
    s["status"] = fnp.where(
        s["converged"],
        _i(0),
        fnp.where(s["k"] == maxiter, _i(1), fnp.where(s["failed"], 2 + s["ls_status"], _i(-1))),
    )
    return s


# --------------------------------------------------------------------------- L-BFGS


def _two_loop(g: Any, s_hist: Any, y_hist: Any, rho: Any, gamma: Any, used: Any) -> Any:
    """The search direction ``-H g`` of the limited-memory inverse Hessian (Algorithm 7.4),
    the newest pair last in the histories, only the last ``used`` pairs counted; for a
    complex ``x`` the real inner products of Sorber et al. (2012)."""
    m = s_hist.shape[0]
    q = -fnp.conj(g)
    alphas = [None] * m
    for i in reversed(range(m)):
        live = m - 1 - i < used
        a_i = fnp.where(live, rho[i] * fnp.real(fnp.dot(fnp.conj(s_hist[i]), q)), 0.0)
        alphas[i] = a_i.astype(rho.dtype)
        q = q - alphas[i] * fnp.conj(y_hist[i])
    q = gamma * q
    for i in range(m):
        live = m - 1 - i < used
        b_i = (rho[i] * fnp.real(fnp.dot(y_hist[i], q))).astype(rho.dtype)
        q = q + fnp.where(live, alphas[i] - b_i, 0.0) * s_hist[i]
    return q


def _push(history: Any, new: Any) -> Any:
    """The history with its oldest entry dropped and ``new`` appended."""
    return fnp.concatenate([history[1:], new[None]], axis=0)


def _lbfgs(
    fun: Callable,
    x0: Any,
    maxiter: float | None = None,
    norm: float = np.inf,
    maxcor: int = 10,
    ftol: float = 2.220446049250313e-09,
    gtol: float = 1e-5,
    maxfun: float | None = None,
    maxgrad: float | None = None,
    maxls: int = 20,
) -> dict:
    """L-BFGS (Nocedal & Wright, Algorithm 7.5) for real or complex ``x`` (Sorber, Van
    Barel and De Lathauwer 2012), the strong Wolfe line search of BFGS."""
    d = x0.shape[0]
    dt = x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter, maxfun, maxgrad = (np.inf if v is None else v for v in (maxiter, maxfun, maxgrad))
    f0, g0 = value_and_grad(fun)(x0)
    state = dict(
        converged=fnp.asarray(False),
        failed=fnp.asarray(False),
        k=_i(0),
        nfev=_i(1),
        ngev=_i(1),
        x=x0,
        f=f0,
        g=g0,
        s_hist=fnp.zeros((maxcor, d), dt),
        y_hist=fnp.zeros((maxcor, d), dt),
        rho=fnp.zeros((maxcor,), dt),
        gamma=fnp.asarray(1.0, dt),
        status=_i(0),
        ls_status=_i(0),
    )

    def body(s: dict) -> dict:
        used = fnp.minimum(s["k"], maxcor)
        p = _two_loop(s["g"], s["s_hist"], s["y_hist"], s["rho"], s["gamma"], used)
        ls = _line_search(fun, s["x"], p, s["f"], None, s["g"], maxiter=maxls)
        step = ls["a_k"].astype(dt) * p
        y = ls["g_k"] - s["g"]
        curv = fnp.real(fnp.dot(y, step))
        status = fnp.where(s["f"] - ls["f_k"] < ftol, 4, 0)
        status = fnp.where(s["ngev"] >= maxgrad, 3, status)
        status = fnp.where(s["nfev"] >= maxfun, 2, status)
        status = fnp.where(s["k"] >= maxiter, 1, status)
        status = fnp.where(ls["failed"], 5, status)
        converged = fnp.linalg.norm(ls["g_k"], ord=norm) < gtol
        return dict(
            converged=converged,
            failed=(status > 0) & ~converged,
            k=s["k"] + 1,
            nfev=s["nfev"] + ls["nfev"],
            ngev=s["ngev"] + ls["nfev"],
            x=(s["x"] + step).astype(dt),
            f=ls["f_k"].astype(s["f"].dtype),
            g=ls["g_k"].astype(dt),
            s_hist=_push(s["s_hist"], step),
            y_hist=_push(s["y_hist"], y),
            rho=_push(s["rho"], (1.0 / curv).astype(dt)),
            gamma=(curv / fnp.real(fnp.dot(fnp.conj(y), y))).astype(dt),
            status=fnp.where(converged, 0, status).astype(np.int32),
            ls_status=ls["status"],
        )

    return while_loop(lambda s: ~s["converged"] & ~s["failed"], body, state)


#: the name JAX gives its experimental L-BFGS (in ``minimize``'s ``method``)
_LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
_LBFGS_OPTIONS = {"maxiter", "norm", "maxcor", "ftol", "gtol", "maxfun", "maxgrad", "maxls"}


def minimize(
    fun: Callable,
    x0: Any,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimise ``fun(x, *args)`` over a 1-d ``x`` starting at ``x0``.

    Args:
        fun: scalar objective, differentiable with funcgrad.
        x0: 1-d initial guess.
        args: extra positional arguments of ``fun`` (a tuple).
        method: ``"BFGS"`` (case-insensitive), or JAX's experimental L-BFGS
            ``"l-bfgs-experimental-do-not-rely-on-this"`` (options ``maxiter``, ``norm``,
            ``maxcor``, ``ftol``, ``gtol``, ``maxfun``, ``maxgrad``, ``maxls``).
        tol: accepted and ignored, as ``jax.scipy.optimize.minimize`` does; set
            ``options={"gtol": ...}`` instead.
        options: ``maxiter`` (default ``200 * x0.size``), ``norm`` (order of the gradient
            norm tested, default ``inf``), ``gtol`` (default ``1e-5``),
            ``line_search_maxiter`` (default 10).

    Returns:
        An :class:`OptimizeResults`.
    """
    del tol  # as in JAX: only the solver-specific options control termination
    if not isinstance(args, tuple):
        raise TypeError(
            f"args argument to funcgrad.scipy.optimize.minimize must be a tuple, got {args}"
        )
    if not isinstance(method, str) or method.lower() not in ("bfgs", _LBFGS):
        raise ValueError(f"Method {method} not recognized")
    lbfgs = method.lower() == _LBFGS
    options = dict(options or {})
    known = _LBFGS_OPTIONS if lbfgs else {"maxiter", "norm", "gtol", "line_search_maxiter"}
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"minimize: unexpected options {sorted(unknown)}{here()}")
    x0 = fnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be 1-dimensional, got shape {x0.shape}{here()}")
    if not np.issubdtype(x0.dtype, np.inexact):
        x0 = fnp.asarray(x0, dtype=fnp.result_type(float))
    s = (_lbfgs if lbfgs else _bfgs)(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(
        x=s["x"],
        success=s["converged"] & ~s["failed"],
        status=s["status"],
        fun=s["f"],
        jac=s["g"],
        hess_inv=None if lbfgs else s["H"],  # (L-BFGS keeps no inverse Hessian)
        nfev=s["nfev"],
        njev=s["ngev"] if lbfgs else s["nfev"],
        nit=s["k"],
    )
