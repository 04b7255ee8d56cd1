"""``funcgrad.scipy.sparse.linalg``: the Krylov solvers of ``jax.scipy.sparse.linalg``
(``cg``, ``bicgstab``, ``gmres``).

Each takes the operator as a function (of a pytree), a square matrix or an object with
``@`` and ``shape``, and runs as a ``lax.while_loop``, so it compiles under ``jit`` and
batches under ``vmap``. The iteration is wrapped in ``lax.custom_linear_solve``: the
derivative is that of the exact solution of ``A x = b`` (another solve with the same
method), not of the iterations. The solvers work on the flattened pytree (one vector
of the leaves' common dtype) and give back the input's structure and dtypes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.flatten_util import ravel_pytree
from funcgrad.interop._jax_array import Array
from funcgrad.numpy._core import aval, convert
from funcgrad.scipy.linalg import solve_triangular
from funcgrad.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["bicgstab", "cg", "gmres"]

_HIGHEST = lax.Precision.HIGHEST


def _identity(x: Any) -> Any:
    return x


def _square(shape: tuple) -> None:
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")


def _as_operator(op: Any) -> Callable[[Any], Any]:
    """A function applying ``op``: a function, a square matrix, or an object with ``@``."""
    if op is None:
        return _identity
    if callable(op):
        return op
    if isinstance(op, (np.ndarray, Array)):
        _square(tuple(op.shape))
        return lambda x: fnp.dot(op, x, precision=_HIGHEST)
    if hasattr(op, "__matmul__"):
        if hasattr(op, "shape"):
            _square(tuple(op.shape))
        return lambda x: op @ x
    raise TypeError(f"linear operator must be either a function or ndarray: {op}")


def _vec_operator(op: Callable[[Any], Any], unravel: Callable) -> Callable:
    """``op`` on flat vectors: unravel, apply, ravel (the result in the vector's dtype)."""

    def apply(v: Any) -> Any:
        out, _ = ravel_pytree(op(unravel(v)))
        return out.astype(v.dtype)

    return apply


def _dot(a: Any, b: Any) -> Any:
    """``sum(conj(a) * b)`` of two vectors."""
    return fnp.vdot(a, b, precision=_HIGHEST)


def _norm(v: Any) -> Any:
    return fnp.sqrt(fnp.real(_dot(v, v)))


def _check_x0(x0: Any, b: Any) -> None:
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            "x0 and b must have matching tree structure: "
            f"{tree_structure(x0)} vs {tree_structure(b)}"
        )
    shapes_x0 = [fnp.shape(x) for x in tree_leaves(x0)]
    shapes_b = [fnp.shape(x) for x in tree_leaves(b)]
    if shapes_x0 != shapes_b:
        raise ValueError(f"arrays in x0 and b must have matching shapes: {shapes_x0} vs {shapes_b}")


def _prepare(A: Any, b: Any, x0: Any, M: Any) -> tuple[Callable, Any, Any, Callable, int]:
    b = tree_map(fnp.asarray, b)
    x0 = tree_map(fnp.zeros_like, b) if x0 is None else tree_map(fnp.asarray, x0)
    size = sum(int(np.prod(fnp.shape(x))) for x in tree_leaves(b))
    A = _as_operator(A)
    M = _as_operator(M)
    _check_x0(x0, b)
    return A, b, x0, M, size


def _weak_as(x: Any, b: Any) -> Any:
    """``x`` with ``b``'s weak types, leaf for leaf (a Python scalar's solution stays
    weakly typed, as JAX's solvers leave it)."""
    return tree_map(lambda u, v: convert(u, u.dtype, weak=aval(v).weak_type), x, b)


def _cg_vectors(
    A: Callable, M: Callable, b: Any, x0: Any, tol: float, atol: float, maxiter: int
) -> Any:
    """Preconditioned conjugate gradients on vectors (Hermitian positive definite ``A``)."""
    threshold = fnp.maximum(tol**2 * fnp.real(_dot(b, b)), atol**2)
    r0 = b - A(x0)
    z0 = M(r0)
    gamma0 = fnp.real(_dot(r0, z0)).astype(b.dtype)

    def keep_going(state: tuple) -> Any:
        _, r, gamma, _, k = state
        rr = fnp.real(gamma) if M is _identity else fnp.real(_dot(r, r))
        return (rr > threshold) & (k < maxiter)

    def step(state: tuple) -> tuple:
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = gamma / fnp.real(_dot(p, ap)).astype(b.dtype)
        x = x + alpha * p
        r = r - alpha * ap
        z = M(r)
        gamma_next = fnp.real(_dot(r, z)).astype(b.dtype)
        p = z + (gamma_next / gamma) * p
        return x, r, gamma_next, p, k + 1

    return lax.while_loop(keep_going, step, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab_vectors(
    A: Callable, M: Callable, b: Any, x0: Any, tol: float, atol: float, maxiter: int
) -> Any:
    """Preconditioned BiCGSTAB (van der Vorst) on vectors; stops on a breakdown."""
    threshold = fnp.maximum(tol**2 * fnp.real(_dot(b, b)), atol**2)
    r0 = b - A(x0)
    one = fnp.ones((), b.dtype)

    def keep_going(state: tuple) -> Any:
        _, r, *_, k = state
        return (fnp.real(_dot(r, r)) > threshold) & (k < maxiter) & (k >= 0)

    def step(state: tuple) -> tuple:
        x, r, r_shadow, alpha, omega, rho, p, v, k = state
        rho_next = _dot(r_shadow, r)
        beta = (rho_next / rho) * (alpha / omega)
        p = r + beta * (p - omega * v)
        p_hat = M(p)
        v = A(p_hat)
        alpha = rho_next / _dot(r_shadow, v)
        s = r - alpha * v
        done = fnp.real(_dot(s, s)) < threshold
        s_hat = M(s)
        t = A(s_hat)
        omega = _dot(t, s) / _dot(t, t)
        x = fnp.where(done, x + alpha * p_hat, x + alpha * p_hat + omega * s_hat)
        r = fnp.where(done, s, s - omega * t)
        # a zero rho, alpha or omega is a breakdown: stop (k < 0)
        k = fnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = fnp.where(rho_next == 0, -10, k)
        return x, r, r_shadow, alpha, omega, rho_next, p, v, k

    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(keep_going, step, state)[0]


def _isolve(
    method: Callable,
    A: Any,
    b: Any,
    x0: Any,
    tol: float,
    atol: float,
    maxiter: Any,
    M: Any,
    hermitian: bool,
) -> tuple[Any, None]:
    A, b, x0, M, size = _prepare(A, b, x0, M)
    if maxiter is None:
        maxiter = 10 * size

    def solve(matvec: Callable, rhs: Any) -> Any:
        b_vec, unravel = ravel_pytree(rhs)
        x0_vec = ravel_pytree(x0)[0].astype(b_vec.dtype)
        x = method(
            _vec_operator(matvec, unravel),
            _vec_operator(M, unravel),
            b_vec,
            x0_vec,
            tol,
            atol,
            maxiter,
        )
        return unravel(x)

    # a real positive-definite operator is symmetric: its transpose solve is the solve
    symmetric = hermitian and not any(fnp.iscomplexobj(x) for x in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return _weak_as(x, b), None


def cg(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
) -> tuple[Any, None]:
    """Solve ``A x = b`` by (preconditioned) conjugate gradients, for a Hermitian
    positive-definite ``A``: ``(x, None)``, as ``jax.scipy.sparse.linalg.cg``.

    Stops when ``|r| <= max(tol * |b|, atol)`` or after ``maxiter`` steps (default ten
    times the size of ``b``). ``A`` and the preconditioner ``M`` (an approximation of
    ``A``'s inverse) are functions of pytrees shaped as ``b``, or matrices."""
    return _isolve(_cg_vectors, A, b, x0, tol, atol, maxiter, M, hermitian=True)


def bicgstab(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
) -> tuple[Any, None]:
    """Solve ``A x = b`` by the biconjugate gradient stabilized method, for any square
    ``A``: ``(x, None)``, as ``jax.scipy.sparse.linalg.bicgstab`` (arguments as
    :func:`cg`)."""
    return _isolve(_bicgstab_vectors, A, b, x0, tol, atol, maxiter, M, hermitian=False)


def _arnoldi(op: Callable, basis: Any, k: Any) -> tuple[Any, Any]:
    """Extend the orthonormal rows ``basis[:k + 1]`` by ``op(basis[k])``: the new basis
    and the column of the Hessenberg matrix (classical Gram-Schmidt applied twice;
    rows past ``k`` are zero and take no part)."""
    w = op(basis[k])
    start = _norm(w)
    h = fnp.matmul(fnp.conj(basis), w, precision=_HIGHEST)
    w = w - fnp.matmul(h, basis, precision=_HIGHEST)
    again = fnp.matmul(fnp.conj(basis), w, precision=_HIGHEST)
    w = w - fnp.matmul(again, basis, precision=_HIGHEST)
    h = h + again
    size = _norm(w)
    # what is left at rounding level is a breakdown (the space is invariant): no new row
    alive = size > fnp.finfo(size.dtype).eps * start
    row = fnp.where(alive, w / fnp.where(alive, size, 1).astype(w.dtype), 0)
    h = h.at[k + 1].set(fnp.where(alive, size, 0).astype(h.dtype))
    return basis.at[k + 1].set(row), h


def _givens(a: Any, b: Any) -> tuple[Any, Any, Any]:
    """``(c, s, r)``: the rotation ``[[c, s], [-conj(s), c]]`` (``c`` real) taking
    ``(a, b)`` to ``(r, 0)``."""
    t = fnp.sqrt(fnp.abs(a) ** 2 + fnp.abs(b) ** 2)
    abs_a = fnp.abs(a)
    phase = fnp.where(abs_a == 0, 1, a / fnp.where(abs_a == 0, 1, abs_a).astype(a.dtype))
    safe_t = fnp.where(t == 0, 1, t)
    c = fnp.where(t == 0, 1, abs_a / safe_t)
    s = fnp.where(t == 0, 0, phase * fnp.conj(b) / safe_t.astype(a.dtype))
    return c.astype(a.dtype), s, phase * t.astype(a.dtype)


def _cycle_batched(op: Callable, x: Any, unit: Any, beta: Any, ptol: Any, restart: int) -> Any:
    """One GMRES cycle: the full ``restart``-dimensional Krylov space, then the least
    squares problem ``min |beta e1 - H y|``."""
    n = unit.shape[0]
    basis = fnp.zeros((restart + 1, n), unit.dtype).at[0].set(unit)
    hess = fnp.zeros((restart, restart + 1), unit.dtype)

    def body(k: Any, carry: tuple) -> tuple:
        basis, hess = carry
        basis, h = _arnoldi(op, basis, k)
        return basis, hess.at[k].set(h)

    basis, hess = lax.fori_loop(0, restart, body, (basis, hess))
    rhs = fnp.zeros((restart + 1,), unit.dtype).at[0].set(beta.astype(unit.dtype))
    y = fnp.linalg.lstsq(hess.T, rhs)[0]
    return x + fnp.matmul(y, basis[:restart], precision=_HIGHEST)


def _cycle_incremental(op: Callable, x: Any, unit: Any, beta: Any, ptol: Any, restart: int) -> Any:
    """One GMRES cycle with Givens rotations applied as the space grows: stops as soon
    as the (preconditioned) residual is below ``ptol``."""
    n = unit.shape[0]
    dt = unit.dtype
    basis = fnp.zeros((restart + 1, n), dt).at[0].set(unit)
    r_mat = fnp.eye(restart, dtype=dt)  # unused columns stay the identity
    g = fnp.zeros((restart + 1,), dt).at[0].set(beta.astype(dt))
    cs = fnp.ones((restart,), dt)
    sn = fnp.zeros((restart,), dt)

    def keep_going(state: tuple) -> Any:
        k, *_, g, _, _ = state
        return (k < restart) & (fnp.abs(g[k]) > ptol)

    def step(state: tuple) -> tuple:
        k, basis, r_mat, g, cs, sn = state
        basis, h = _arnoldi(op, basis, k)

        def rotate(j: Any, h: Any) -> Any:
            a, b = h[j], h[j + 1]
            h = h.at[j].set(cs[j] * a + sn[j] * b)
            return h.at[j + 1].set(-fnp.conj(sn[j]) * a + cs[j] * b)

        h = lax.fori_loop(0, restart, rotate, h)  # rotations past k are the identity
        c, s, r = _givens(h[k], h[k + 1])
        h = h.at[k].set(r).at[k + 1].set(0)
        gk = g[k]
        g = g.at[k].set(c * gk).at[k + 1].set(-fnp.conj(s) * gk)
        return k + 1, basis, r_mat.at[:, k].set(h[:restart]), g, cs.at[k].set(c), sn.at[k].set(s)

    k, basis, r_mat, g, _, _ = lax.while_loop(keep_going, step, (0, basis, r_mat, g, cs, sn))
    used = fnp.where(fnp.arange(restart) < k, g[:restart], 0)
    y = solve_triangular(r_mat, used, lower=False)
    return x + fnp.matmul(y, basis[:restart], precision=_HIGHEST)


def _unit(v: Any) -> tuple[Any, Any]:
    size = _norm(v)
    safe = fnp.where(size == 0, 1, size)
    return v / safe.astype(v.dtype), size


def gmres(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    restart: int = 20,
    maxiter: int | None = None,
    M: Any = None,
    solve_method: str = "batched",
) -> tuple[Any, Any]:
    """Solve ``A x = b`` by restarted GMRES with left preconditioning ``M``: ``(x, info)``
    (``info`` is -1 when ``x`` has NaNs, else 0), as ``jax.scipy.sparse.linalg.gmres``.

    Each cycle minimises ``|M (b - A x)|`` over a Krylov space of dimension ``restart``
    (at most the size of ``b``); at most ``maxiter`` cycles (default ten times the size
    of ``b``) while ``|M (b - A x)| > max(tol * |b|, atol)``. ``solve_method``:
    ``"batched"`` builds each space whole, then solves the least-squares problem;
    ``"incremental"`` rotates as it goes and may end a cycle early."""
    if solve_method == "incremental":
        cycle = _cycle_incremental
    elif solve_method == "batched":
        cycle = _cycle_batched
    else:
        raise ValueError(
            f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'"
        )
    A, b, x0, M, size = _prepare(A, b, x0, M)
    if maxiter is None:
        maxiter = 10 * size
    restart = min(restart, size)

    def solve(matvec: Callable, rhs: Any) -> Any:
        b_vec, unravel = ravel_pytree(rhs)
        x0_vec = ravel_pytree(x0)[0].astype(b_vec.dtype)
        op = _vec_operator(matvec, unravel)
        pre = _vec_operator(M, unravel)
        b_norm = _norm(b_vec)
        tol_abs = fnp.maximum(tol * b_norm, atol)
        ratio = fnp.where(b_norm == 0, 1.0, tol_abs / fnp.where(b_norm == 0, 1, b_norm))
        ptol = _norm(pre(b_vec)) * fnp.minimum(1.0, ratio)
        precond_op = lambda v: pre(op(v))

        def keep_going(state: tuple) -> Any:
            _, k, _, res = state
            return (k < maxiter) & (res > tol_abs)

        def step(state: tuple) -> tuple:
            x, k, unit, res = state
            x = cycle(precond_op, x, unit, res, ptol, restart)
            unit, res = _unit(pre(b_vec - op(x)))
            return x, k + 1, unit, res

        unit, res = _unit(pre(b_vec - op(x0_vec)))
        return unravel(lax.while_loop(keep_going, step, (x0_vec, 0, unit, res))[0])

    x = _weak_as(lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve), b)
    failed = fnp.isnan(_norm(ravel_pytree(x)[0]))
    return x, fnp.where(failed, -1, 0)
