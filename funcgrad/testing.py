"""Derivative checks used by the test suite and available to users.

* :func:`check_jvp` — forward-mode derivative against central finite differences.
* :func:`check_vjp` — the adjoint identity ⟨v, J u⟩ = ⟨Jᵀ v, u⟩ between VJP and JVP.
* :func:`check_grads` — both, to a given order (like ``jax.test_util.check_grads``).

Run them in float64 (``jax.config.update("jax_enable_x64", True)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import dtypes as jnp_dtypes

from funcgrad import api, tree_util


def _rand_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind == "c":
        re, im = rng.standard_normal((2, *x.shape))
        return (re + 1j * im).astype(x.dtype)
    return rng.standard_normal(x.shape).astype(x.dtype)


def _wide(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _inner(a: Sequence[Any], b: Sequence[Any]) -> float:
    """``Re(sum(a * b))``: the pairing under which JAX's (and funcgrad's) VJP of a complex
    function is the transpose of its JVP (no conjugation)."""
    pairs = [(x, y) for x, y in zip(a, b) if not (_is_float0(x) or _is_float0(y))]
    return float(sum(np.sum(_wide(x) * _wide(y)).real for x, y in pairs))


def _is_float0(x: Any) -> bool:
    """Tangents of integer outputs (JAX's ``float0``) carry no value to compare."""
    return np.asarray(x).dtype.kind == "V"


def _flat(out: Any) -> list[np.ndarray]:
    if isinstance(out, (list, tuple)):
        return [np.asarray(o) for o in out]
    return [np.asarray(out)]


def numerical_jvp(f: Callable, args: Sequence[Any], tangents: Sequence[Any], eps: float) -> list:
    """Central finite difference of ``f`` at ``args`` along ``tangents``."""
    plus = _flat(f(*[np.asarray(a) + eps * np.asarray(t) for a, t in zip(args, tangents)]))
    minus = _flat(f(*[np.asarray(a) - eps * np.asarray(t) for a, t in zip(args, tangents)]))
    return [(_wide(p) - _wide(m)) / (2 * eps) for p, m in zip(plus, minus)]


def check_jvp(
    f: Callable,
    args: Sequence[Any],
    *,
    rng: np.random.Generator | None = None,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-5,
) -> None:
    """Assert ``jvp(f)`` matches central finite differences along a random direction."""
    rng = rng or np.random.default_rng(0)
    tangents = [_rand_like(rng, a) for a in args]
    out, tout = api.jvp(f, tuple(args), tuple(tangents))
    single = (np.float32, np.complex64)
    if any(o.dtype in single for o in _flat(out)) or any(
        np.asarray(a).dtype in single for a in args
    ):
        eps, rtol, atol = max(eps, 1e-3), max(rtol, 1e-2), max(atol, 1e-2)
    expected = numerical_jvp(f, args, tangents, eps)
    for got, want in zip(_flat(tout), expected):
        if _is_float0(got):
            continue
        np.testing.assert_allclose(
            got, want, rtol=rtol, atol=atol, err_msg="JVP vs finite differences"
        )


def check_vjp(
    f: Callable,
    args: Sequence[Any],
    *,
    rng: np.random.Generator | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-6,
    numerical: bool = False,
    eps: float = 1e-6,
) -> None:
    """Assert the adjoint identity ⟨v, J u⟩ = ⟨Jᵀ v, u⟩ between ``vjp`` and ``jvp``
    (or finite differences with ``numerical=True``, for functions with no forward mode)."""
    rng = rng or np.random.default_rng(1)
    u = [_rand_like(rng, a) for a in args]
    if numerical:
        out = f(*args)
        if any(np.asarray(x).dtype in (np.float32, np.complex64) for x in [*args, *_flat(out)]):
            eps, rtol, atol = max(eps, 1e-3), max(rtol, 1e-2), max(atol, 1e-2)
        tout = numerical_jvp(f, args, u, eps)
        rtol, atol = max(rtol, 1e-5), max(atol, 1e-5)
    else:
        out, tout = api.jvp(f, tuple(args), tuple(u))
    v = [_rand_like(rng, o) for o in _flat(out)]
    _, pullback = api.vjp(f, *args)
    ct = v if isinstance(out, (list, tuple)) else v[0]
    if isinstance(out, tuple):
        ct = tuple(v)
    cts = pullback(ct)
    lhs = _inner(v, _flat(tout))
    rhs = _inner(_flat(list(cts)), u)
    np.testing.assert_allclose(lhs, rhs, rtol=rtol, atol=atol, err_msg="⟨v, J u⟩ != ⟨Jᵀ v, u⟩")


#: JAX's default gradient-check tolerance per dtype (``jax.test_util``), used for the
#: dtypes a tolerance table passed to :func:`check_grads` does not name
_GRAD_TOL = {
    np.dtype(jnp_dtypes.bfloat16): 1e-1,
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


def _tolerance(tol: Any, values: Sequence[Any], default: float) -> float:
    """A tolerance: ``tol`` itself, or from a ``{dtype: tol}`` table the largest entry
    for the dtypes of ``values``; ``None`` is the table of JAX's default gradient
    tolerances per dtype (``default`` for dtypes it does not list)."""
    if tol is None:  # JAX's check_grads: its per-dtype gradient tolerances
        tol = {}
    if not isinstance(tol, dict):
        return float(tol)
    table = {np.dtype(k): v for k, v in tol.items()}
    found = [
        table.get(dt, _GRAD_TOL.get(dt, default))
        for dt in {np.asarray(v).dtype for v in values}
        if dt.kind in "fcV"
    ]
    return float(max(found, default=default))


def _flattened(f: Callable, args: Sequence[Any]) -> tuple[Callable, list[Any]]:
    """``f`` on the leaves of its pytree arguments, giving the leaves of its result (one
    array for a single-leaf result), with those leaves: what the checks work on."""
    leaves, treedef = tree_util.tree_flatten(tuple(args))

    def flat_f(*xs: Any) -> Any:
        out = tree_util.tree_leaves(f(*tree_util.tree_unflatten(treedef, xs)))
        return out[0] if len(out) == 1 else tuple(out)

    return flat_f, leaves


def check_grads(
    f: Callable,
    args: Sequence[Any],
    order: int = 1,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: Any = None,
    rtol: Any = None,
    eps: float | None = None,
) -> None:
    """Check derivatives of ``f`` up to ``order`` in forward and reverse mode, with
    ``jax.test_util.check_grads``'s signature: ``atol``/``rtol`` may be numbers or
    ``{dtype: tolerance}`` tables. Reverse mode alone (``modes=["rev"]``) checks the
    VJP against finite differences, so it needs no forward mode (``custom_vjp``)."""
    rng = np.random.default_rng(0)
    if isinstance(modes, str):
        modes = (modes,)
    f, args = _flattened(f, args)
    values = [*args, *_flat(f(*args))]
    atol_ = _tolerance(atol, values, 1e-5)
    rtol_ = _tolerance(rtol, values, 1e-5)
    eps_ = 1e-6 if eps is None else eps
    if "fwd" in modes:
        check_jvp(f, args, rng=rng, eps=eps_, rtol=rtol_, atol=atol_)
    if "rev" in modes:
        fwd = "fwd" in modes
        check_vjp(f, args, rng=rng, rtol=rtol_, atol=atol_, numerical=not fwd, eps=eps_)
    if order > 1 and "rev" not in modes:
        # forward mode alone (as JAX's): differentiate the JVP itself, in the primals and
        # the tangents, never reverse mode (a while_loop has none)
        def jvp_of(primals: Any, tangents: Any) -> Any:
            return api.jvp(f, tuple(primals), tuple(tangents))

        pair = (tuple(args), tuple(args))
        check_grads(jvp_of, pair, order - 1, modes, atol_ * 10, rtol_ * 10, eps_)
    elif order > 1:
        v = [_rand_like(rng, o) for o in _flat(f(*args))]

        def pullback_of(*xs: Any) -> Any:
            out, pb = api.vjp(f, *xs)
            ct = tuple(v) if isinstance(out, tuple) else (v if isinstance(out, list) else v[0])
            return list(pb(ct))

        check_grads(pullback_of, args, order - 1, modes, atol_ * 10, rtol_ * 10, eps_)
