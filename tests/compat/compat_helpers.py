"""Helpers shared by the compat tests (imported as a plain module)."""

from __future__ import annotations

import numpy as np


def npv(t) -> np.ndarray:
    """A tensor's values as a NumPy array (compat or real torch)."""
    return np.asarray(t.detach().numpy())


def is_compat(lib) -> bool:
    return lib.__name__.startswith("compat")


def fd_jacobian(f, xs, eps=1e-6):
    """Central-difference Jacobians of ``f(*xs) -> ndarray`` w.r.t. each float64 array."""
    out = np.asarray(f(*xs), np.float64)
    jacs = []
    for i, x in enumerate(xs):
        x = np.asarray(x, np.float64)
        jac = np.zeros(out.shape + x.shape)
        for idx in np.ndindex(x.shape):
            xp, xm = x.copy(), x.copy()
            xp[idx] += eps
            xm[idx] -= eps
            args_p = list(xs)
            args_m = list(xs)
            args_p[i], args_m[i] = xp, xm
            d = (np.asarray(f(*args_p), np.float64) - np.asarray(f(*args_m), np.float64)) / (
                2 * eps
            )
            jac[(...,) + idx] = d
        jacs.append(jac)
    return out, jacs


def norm_value(v):
    """A comparable form of a recorded value (tensors of either library, containers)."""
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [norm_value(x) for x in v]
    if hasattr(v, "detach") and hasattr(v, "requires_grad"):
        return ("tensor", str(v.dtype).replace("torch.", ""), np.array(v.detach().numpy()))
    return v


def assert_same(x, y) -> None:
    """Two normalized records agree (tensors: dtype and values to 1e-6)."""
    if isinstance(x, tuple) and x and x[0] == "tensor":
        assert isinstance(y, tuple) and y[0] == "tensor", (x, y)
        assert x[1] == y[1], (x, y)
        np.testing.assert_allclose(x[2], y[2], rtol=1e-6, atol=1e-6)
    elif isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], list):
        assert isinstance(y, tuple) and x[0] == y[0] and len(x[1]) == len(y[1]), (x, y)
        for p, q in zip(x[1], y[1]):
            assert_same(p, q)
    else:
        assert x == y, (x, y)


def check_scenario(scenario, compat_lib, real_lib):
    """Run ``scenario(torch, rec)`` on both libraries; their records must agree.

    ``real_lib`` may be a callable returning the library: it is called after the compat
    half ran (so compat runs even where the oracle is skipped)."""
    logs = {}
    for name, lib in (("compat", compat_lib), ("torch", real_lib)):
        if callable(lib):
            lib = lib()
        log = []

        def rec(*vals, log=log):
            log.extend(norm_value(v) for v in vals)

        scenario(lib, rec)
        logs[name] = log
    a, b = logs["compat"], logs["torch"]
    assert len(a) == len(b), (a, b)
    for x, y in zip(a, b):
        assert_same(x, y)
    return a


def error_of(fn):
    """``(exception type name, message)`` of ``fn()``, or ``"no error"``."""
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return "no error"
