"""``funcgrad.scipy.integrate``: ``jax.scipy.integrate``'s ``trapezoid``."""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integrate ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x``
    (1-D, or shaped like ``y``) or spaced ``dx`` apart."""
    y = fnp.moveaxis(fnp.asarray(y), axis, -1)
    if x is None:
        d = dx
    else:
        x = fnp.asarray(x)
        if x.ndim != 1:
            x = fnp.moveaxis(x, axis, -1)
        d = x[..., 1:] - x[..., :-1]
    return 0.5 * fnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)
