"""``funcgrad.experimental.ode``: ``odeint``, JAX's adaptive ODE solver.

An explicit Runge-Kutta method of orders 5(4) (Dormand and Prince's pair) with
adaptive steps, integrated in a ``while_loop`` per output time; steps are cut to land
on each output time. Reverse-mode derivatives come from the adjoint equations, solved
backwards in time by ``odeint`` itself (so they are differentiable again), as JAX
does: a ``custom_vjp`` whose forward-mode use raises ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.api._reverse import vjp
from funcgrad.api._vmap import vmap
from funcgrad.core.interp import Tracer
from funcgrad.custom import custom_vjp
from funcgrad.flatten_util import ravel_pytree
from funcgrad.toplevel import closure_convert
from funcgrad.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

# Dormand and Prince's 5(4) pair: nodes, stage weights, 5th-order and 4th-order weights
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_B5 = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_E = tuple(b5 - b4 for b5, b4 in zip(_B5, _B4))

_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0


def odeint(
    func: Callable,
    y0: Any,
    t: Any,
    *args: Any,
    rtol: float = 1.4e-8,
    atol: float = 1.4e-8,
    mxstep: float = float("inf"),
    hmax: float = float("inf"),
) -> Any:
    """The solution of ``dy/dt = func(y, t, *args)`` with ``y(t[0]) = y0`` at the times
    ``t`` (increasing): a pytree like ``y0`` with a leading axis of ``len(t)``.

    ``rtol``/``atol`` bound each step's local error; ``mxstep`` caps the steps per
    output interval, ``hmax`` the step size. ``args`` must be arrays or scalars (close
    over anything else); reverse-mode derivatives with respect to ``y0``, ``t``,
    ``args`` and the arrays ``func`` closes over solve the adjoint system backwards.
    """
    for arg in tree_leaves(args):
        if not _is_array_like(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}."
            )
    t = fnp.asarray(t)
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a one-dimensional array of times, got shape {t.shape}")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_pytree(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _is_array_like(x: Any) -> bool:
    """Arrays (concrete or traced), NumPy scalars and Python numbers."""
    return isinstance(x, (bool, int, float, complex, np.ndarray, np.generic, jax.Array, Tracer))


def _odeint_pytree(
    func: Callable,
    rtol: float,
    atol: float,
    mxstep: float,
    hmax: float,
    y0: Any,
    t: Any,
    *args: Any,
) -> Any:
    """``odeint`` on the flat vector of ``y0``'s leaves; the result unravelled per time."""
    flat, unravel = ravel_pytree(y0)

    def flat_func(y: Any, tt: Any, *a: Any) -> Any:
        return ravel_pytree(func(unravel(y), tt, *a))[0]

    ys = _odeint(flat_func, rtol, atol, mxstep, hmax, flat, t, *args)
    return vmap(unravel)(ys)


def _rms(x: Any) -> Any:
    return fnp.sqrt(fnp.mean(fnp.abs(x) ** 2))


def _initial_step(f: Callable, t0: Any, y0: Any, f0: Any, rtol: float, atol: float) -> Any:
    """Hairer, Norsett and Wanner's starting step for a method of order 4 (II.4)."""
    scale = atol + fnp.abs(y0) * rtol
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    h0 = fnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    h0 = h0.astype(fnp.real(t0).dtype)
    f1 = f(y0 + (h0 * f0).astype(y0.dtype), t0 + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    h1 = fnp.where(
        fnp.maximum(d1, d2) <= 1e-15,
        fnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / fnp.maximum(d1, d2)) ** (1.0 / 5.0),
    )
    return fnp.minimum(100.0 * h0, h1).astype(h0.dtype)


def _step(f: Callable, y: Any, fy: Any, t: Any, h: Any) -> tuple[Any, Any, Any]:
    """One Dormand-Prince step: the 5th-order value, its derivative and the error."""
    ks = [fy]
    for i in range(1, 7):
        incr = sum(a * k for a, k in zip(_A[i], ks) if a != 0.0)
        ks.append(f(y + (h * incr).astype(y.dtype), t + _C[i] * h))
    y_new = y + (h * sum(b * k for b, k in zip(_B5, ks) if b != 0.0)).astype(y.dtype)
    err = (h * sum(e * k for e, k in zip(_E, ks) if e != 0.0)).astype(y.dtype)
    return y_new, ks[-1], err


def _solve(
    func: Callable,
    rtol: float,
    atol: float,
    mxstep: float,
    hmax: float,
    y0: Any,
    ts: Any,
    *args: Any,
) -> Any:
    """The forward integration: the states at ``ts`` (first row ``y0``)."""
    f = lambda y, t: func(y, t, *args)
    f0 = f(y0, ts[0])
    dt0 = _initial_step(f, ts[0], y0, f0, rtol, atol)

    def to_target(carry: tuple, t_target: Any) -> tuple:
        def cond(s: tuple) -> Any:
            _, _, t, dt, n = s
            return (t < t_target) & (n < mxstep) & (dt > 0)

        def body(s: tuple) -> tuple:
            y, fy, t, dt, n = s
            h_max = fnp.minimum(dt, hmax)
            lands = h_max >= t_target - t
            h = fnp.where(lands, t_target - t, h_max)
            y_new, f_new, err = _step(f, y, fy, t, h)
            tol = atol + rtol * fnp.maximum(fnp.abs(y), fnp.abs(y_new))
            ratio = _rms(err / tol).astype(h.dtype)
            factor = fnp.where(
                ratio == 0,
                _MAX_FACTOR,
                fnp.clip(_SAFETY * ratio ** (-1.0 / 5.0), _MIN_FACTOR, _MAX_FACTOR),
            )
            accept = ratio <= 1.0
            # a step cut short to land on the target keeps the step size it had
            dt_next = fnp.where(
                accept & lands & (factor >= 1), fnp.maximum(dt, h * factor), h * factor
            )
            t_new = fnp.where(lands, t_target, t + h)
            y = fnp.where(accept, y_new, y)
            fy = fnp.where(accept, f_new, fy)
            t = fnp.where(accept, t_new, t)
            return y, fy, t, dt_next.astype(dt.dtype), n + 1

        y, fy, t, dt = carry
        y, fy, t, dt, _ = lax.while_loop(cond, body, (y, fy, t, dt, fnp.zeros((), fnp.float32)))
        return (y, fy, t, dt), y

    _, ys = lax.scan(to_target, (y0, f0, ts[0], dt0), ts[1:])
    return fnp.concatenate([y0[None], ys], axis=0)


@partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(
    func: Callable,
    rtol: float,
    atol: float,
    mxstep: float,
    hmax: float,
    y0: Any,
    ts: Any,
    *args: Any,
) -> Any:
    return _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)


def _odeint_fwd(
    func: Callable,
    rtol: float,
    atol: float,
    mxstep: float,
    hmax: float,
    y0: Any,
    ts: Any,
    *args: Any,
) -> tuple:
    # through ``_odeint`` (not ``_solve``): a derivative of the residuals (the
    # derivative of a derivative) then uses these rules again, never the while_loop's
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(
    func: Callable, rtol: float, atol: float, mxstep: float, hmax: float, res: tuple, g: Any
) -> tuple:
    """The adjoint system, integrated backwards from ``ts[-1]`` segment by segment (in
    reversed time ``s = -t``): the state, its adjoint and the arguments' cotangents."""
    ys, ts, args = res
    g = fnp.asarray(g)
    args_bar0 = tree_map(fnp.zeros_like, args)

    def aug_dynamics(state: tuple, s: Any, *a: Any) -> tuple:
        y, y_bar, _ = state
        fy, pullback = vjp(lambda yy, tt, *aa: func(yy, tt, *aa), y, -s, *a)
        cot = pullback(fnp.asarray(y_bar).astype(fy.dtype))
        return (-fy, cot[0], cot[2:])

    def segment(carry: tuple, i: Any) -> tuple:
        y_bar, args_bar = carry
        y_bar = y_bar + g[i]
        t_bar_i = fnp.real(fnp.sum(func(ys[i], ts[i], *args) * g[i])).astype(ts.dtype)
        state = (ys[i], y_bar, args_bar)
        times = fnp.stack([-ts[i], -ts[i - 1]])
        out = odeint(
            aug_dynamics, state, times, *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax
        )
        _, y_bar, args_bar = tree_map(lambda x: x[1], out)
        return (y_bar, args_bar), t_bar_i

    n = ts.shape[0]
    init = (fnp.zeros_like(ys[-1]), args_bar0)
    (y_bar, args_bar), t_bars = lax.scan(segment, init, fnp.arange(n - 1, 0, -1))
    # y(ts[0]) = y0 exactly; later states move with ts[0] along -(adjoint . f(y0, t0))
    t0_bar = -fnp.real(fnp.sum(func(ys[0], ts[0], *args) * y_bar)).astype(ts.dtype)
    y_bar = y_bar + g[0]
    ts_bar = fnp.concatenate([t0_bar[None], t_bars[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
