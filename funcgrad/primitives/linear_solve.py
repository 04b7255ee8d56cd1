"""``linear_solve``: the solution ``x`` of a linear system ``matvec(x) = b`` computed by a
user's ``solve``, differentiated implicitly (``jax.lax.custom_linear_solve``).

The primitive holds four closed sub-programs, each taking its constants first and then
the flattened vectors: ``matvec`` and ``vecmat`` (its transpose; both take ``matvec``'s
constants), ``solve`` and ``tsolve`` (the user's ``transpose_solve``, or ``None``).
Operands are ``[*matvec consts, *solve consts, *tsolve consts, *b]``.

* Value: ``solve`` applied to ``b`` (only ``solve`` runs; the rest serves the rules).
* JVP: ``x' = linear_solve(b' - matvec'(x))``, where ``matvec'`` is the derivative of
  ``matvec`` in its constants: the result depends on ``A`` and ``b`` alone, so the
  tangents of ``solve``'s own constants do not enter (as in JAX).
* VJP: ``b_bar = linear_solve^T(x_bar)`` (the same primitive with ``matvec``/``vecmat``
  and ``solve``/``tsolve`` swapped), and the constants of ``matvec`` get
  ``-d<b_bar, matvec(x)>``. Without ``tsolve`` reverse mode raises JAX's ``TypeError``.
* Batching: one bind per example along the batch axis, the results stacked (the
  user's ``solve`` need not be batchable).

Both derivative rules bind the primitive again, so every order of derivatives works.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import ad
from funcgrad.core.ad_util import close
from funcgrad.core.interp import bind, eval_program, to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.calls import FAMILY, _sub_program, host_call
from funcgrad.primitives.rules import rand

linear_solve_p = Primitive("linear_solve", family=FAMILY, multiple_results=True)

NO_TRANSPOSE = (
    "transpose_solve required for backwards mode automatic differentiation of custom_linear_solve"
)


def _split(args: list, counts: tuple[int, int, int]) -> tuple[list, list, list, list]:
    n_mv, n_s, n_t = counts
    return (
        args[:n_mv],
        args[n_mv : n_mv + n_s],
        args[n_mv + n_s : n_mv + n_s + n_t],
        args[n_mv + n_s + n_t :],
    )


@linear_solve_p.def_abstract_eval
def _abstract_eval(*avals: Aval, counts: tuple, solve: Program, **_: Any) -> list[Aval]:
    b = _split(list(avals), counts)[3]
    outs = [a.strip_weak() for a in solve.out_avals]
    if len(outs) != len(b) or any(
        o.shape != x.shape or o.dtype != x.dtype for o, x in zip(outs, b)
    ):
        raise TypeError(
            "custom_linear_solve: solve() output must match b's shapes and dtypes, got "
            f"{[str(o) for o in outs]} for b {[str(x) for x in b]}"
        )
    return outs


@linear_solve_p.def_lower
def _lower(*vals: Any, counts: tuple, solve: Program, **_: Any) -> list:
    _, s, _, b = _split(list(vals), counts)
    return lower_program(solve)(*s, *b)


@linear_solve_p.def_host
def _host(*vals: Any, counts: tuple, solve: Program, **_: Any) -> list:
    _, s, _, b = _split(list(vals), counts)
    return host_call(solve, [*s, *b])


def _sub(xs: list, ys: list) -> list:
    """``xs - ys`` entry by entry, symbolic zeros kept."""
    out = []
    for x, y in zip(xs, ys):
        if is_zero(y):
            out.append(x)
        elif is_zero(x):
            out.append(ew.neg(y))
        else:
            out.append(ew.sub(x, y))
    return out


@linear_solve_p.def_jvp
def _jvp(primals: list, tangents: list, **p: Any) -> tuple:
    mv = _split(primals, p["counts"])[0]
    mv_t, _, _, b_t = _split(tangents, p["counts"])
    x = bind(linear_solve_p, *primals, **p)
    rhs = list(b_t)
    if not all(is_zero(t) for t in mv_t):
        zeros = [Zero(to_aval(v).strip_weak()) for v in x]
        _, dmv = ad.jvp_eval(p["matvec"], [*mv, *x], [*mv_t, *zeros])
        rhs = _sub(rhs, dmv)
    if all(is_zero(r) for r in rhs):
        return x, [Zero(to_aval(v).strip_weak()) for v in x]
    rhs = [rules.instantiate(r, to_aval(v).strip_weak()) for r, v in zip(rhs, x)]
    n = sum(p["counts"])
    return x, bind(linear_solve_p, *primals[:n], *rhs, **p)


def _transposed(p: dict) -> dict:
    n_mv, n_s, n_t = p["counts"]
    return dict(
        matvec=p["vecmat"],
        vecmat=p["matvec"],
        solve=p["tsolve"],
        tsolve=p["solve"],
        counts=(n_mv, n_t, n_s),
    )


def _matvec_const_cts(matvec: Program, mv: list, x: list, ct: list) -> list:
    """The cotangents of ``matvec``'s constants for output cotangent ``ct`` at ``x``."""
    active = [True] * len(mv) + [False] * len(x)
    vp = ad.vjp_program(matvec, active=active)
    fwd, fconsts = close(vp.fwd)
    res = eval_program(fwd, *fconsts, *mv, *x)[len(matvec.outvars) :]
    bwd, bconsts = close(vp.bwd)
    cts = eval_program(bwd, *bconsts, *res, *ct)[: len(mv)]
    zero = vp.zero_cts[: len(mv)]
    return [Zero(to_aval(m).strip_weak()) if z else c for c, m, z in zip(cts, mv, zero)]


@linear_solve_p.def_vjp
def _vjp(cts: list, *args: Any, out: Any, **p: Any) -> tuple:
    mv, s, t, _ = _split(list(args), p["counts"])
    avals = [to_aval(v).strip_weak() for v in out]
    if all(is_zero(c) for c in cts):
        return tuple(Zero(to_aval(a).strip_weak()) for a in args)
    if p["tsolve"] is None or p["vecmat"] is None:
        raise TypeError(NO_TRANSPOSE)
    cts = [rules.instantiate(c, a) for c, a in zip(cts, avals)]
    b_bar = bind(linear_solve_p, *mv, *t, *s, *cts, **_transposed(p))
    mv_bar = [
        ew.neg(c) if not is_zero(c) else c for c in _matvec_const_cts(p["matvec"], mv, out, b_bar)
    ]
    zeros = [Zero(to_aval(v).strip_weak()) for v in (*s, *t)]
    return (*mv_bar, *zeros, *b_bar)


def _example(x: Any, i: int) -> Any:
    """Slice ``i`` of ``x`` along its leading axis."""
    shape = to_aval(x).shape
    row = sh.slice(x, (i, *[0] * (len(shape) - 1)), (i + 1, *shape[1:]))
    return sh.squeeze(row, (0,))


@linear_solve_p.def_batch
def _batch(args: list, dims: list, **p: Any) -> tuple:
    size = rules.batch_size(args, dims)
    front = [None if d is None else rules.moveaxis(a, d, 0) for a, d in zip(args, dims)]
    rows = [
        bind(
            linear_solve_p, *[a if f is None else _example(f, i) for a, f in zip(args, front)], **p
        )
        for i in range(size)
    ]
    outs = [
        sh.concatenate(*[sh.expand_dims(r[k], (0,)) for r in rows], dimension=0)
        for k in range(len(rows[0]))
    ]
    return outs, [0] * len(outs)


def _diagonal_system() -> dict:
    """Programs of ``diag(d) x = b``: ``matvec``/``vecmat`` ``d * x``, both solves
    ``b / d`` (each taking ``d`` as its constant)."""
    aval = Aval((3,), np.dtype("float64"))
    mul = _sub_program(lambda d, x: [ew.mul(d, x)], [aval, aval])
    div = _sub_program(lambda d, b: [ew.div(b, d)], [aval, aval])
    return dict(matvec=mul, vecmat=mul, solve=div, tsolve=div, counts=(1, 1, 1))


@linear_solve_p.def_examples
def _examples(rng: np.random.Generator) -> list[Example]:
    # (the rules assume solve inverts matvec: the derivative in the solves' own constants
    # is zero by design, so only b is perturbed against finite differences)
    d = rand(rng, (3,), lo=1.0, hi=2.0)
    return [Example([d, d, d, rand(rng, (3,))], _diagonal_system(), diff_argnums=(3,))]


def linear_solve(
    matvec: Program,
    vecmat: Program | None,
    solve: Program,
    tsolve: Program | None,
    mv_consts: list,
    s_consts: list,
    t_consts: list,
    b: list,
) -> list:
    """Bind ``linear_solve`` (see the module docstring) on closed sub-programs."""
    return bind(
        linear_solve_p,
        *mv_consts,
        *s_consts,
        *t_consts,
        *b,
        matvec=matvec,
        vecmat=vecmat,
        solve=solve,
        tsolve=tsolve,
        counts=(len(mv_consts), len(s_consts), len(t_consts)),
    )
