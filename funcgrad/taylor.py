"""Taylor-mode forward differentiation as IR evaluation driven by each primitive's rules.

A value's *series* is its Taylor polynomial's coefficients past the primal, scaled as
derivatives (JAX's ``jet`` convention): ``x(t) = x0 + x1 t + x2 t**2 / 2! + ...`` has the
series ``[x1, x2, ...]``. :func:`jet_eval` walks a program and gives each equation's
outputs their series: a primitive's ``jet`` rule where it has one (linear primitives
apply themselves to every coefficient, bilinear ones take the Leibniz product, call
primitives recurse into their programs), otherwise :func:`generic_jet`, exact for any
order and built from the primitive's JVP rule alone.

The generic rule rests on ``y'(t) = jvp_f(x(t), x'(t))``: the series of ``x'`` is the
series of ``x`` shifted by one (primal ``x1``, series ``[x2, ...]``), so the coefficients
``y2, y3, ...`` of ``y`` are the series, one order lower, of the JVP rule's tangent
output, which this module evaluates again (the rule is a program of primitives). The
recursion ends at order 0, plain evaluation.

A series is ``None`` when it is zero to every order (inputs that are not differentiated,
integer values, outputs of non-differentiable primitives); otherwise a list of ``order``
arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import comb
from typing import Any

import numpy as np

from funcgrad import passes
from funcgrad.core import dtypes
from funcgrad.core.ad_util import add_tangents, close, zeros_like_aval
from funcgrad.core.interp import UNKNOWN, _state, bind, keeps_source, new_builder, to_aval
from funcgrad.core.ir import Aval, Program, Var
from funcgrad.core.primitive import REGISTRY, Primitive
from funcgrad.core.zeros import Zero, is_zero

Series = list | None


def series_aval(aval: Aval) -> Aval:
    """The abstract value of a coefficient of a series of a value of type ``aval``: its
    shape and dtype, never weakly typed."""
    return aval.strip_weak()


def carries_series(aval: Aval) -> bool:
    """Whether values of type ``aval`` have Taylor series (floating and complex dtypes)."""
    return dtypes.is_inexact(aval.dtype)


def series_order(series: Sequence[Series]) -> int:
    """The order of the non-zero series among ``series`` (a rule runs only with one)."""
    for s in series:
        if s is not None:
            return len(s)
    raise ValueError("series_order: every series is zero")


# --------------------------------------------------------------------------- the walk


@keeps_source
def jet_eval(
    prog: Program, primals: Sequence[Any], series: Sequence[Series], order: int
) -> tuple[list, list[Series]]:
    """Evaluate ``prog`` and the Taylor series of its outputs, to ``order``, under the
    current interpreter. ``series`` has one entry per input (``None``: zero).

    Returns (outputs, output series), the latter ``None`` where zero."""
    env: dict[Var, Any] = dict(zip(prog.constvars, prog.consts))
    senv: dict[Var, list] = {}
    for v, x, s in zip(prog.invars, primals, series):
        env[v] = x
        if order > 0 and s is not None and carries_series(v.aval):
            senv[v] = list(s)

    def read(a: Any) -> Any:
        return env[a] if type(a) is Var else a.val

    def sread(a: Any) -> Series:
        return senv.get(a) if type(a) is Var else None

    st = _state
    for e in prog.eqns:
        if e.source:
            st.source = e.source
        ins = [read(a) for a in e.inputs]
        sins = [sread(a) for a in e.inputs]
        prim = e.prim
        if not prim.differentiable or all(s is None for s in sins):
            out = bind(prim, *ins, **e.params)
            outs = out if prim.multiple_results else [out]
            souts: list[Series] = [None] * len(outs)
        else:
            rule = prim.jet or _generic_rule(prim)
            out, sout = rule(ins, sins, **e.params)
            outs = out if prim.multiple_results else [out]
            souts = list(sout) if prim.multiple_results else [sout]
        for v, o, s in zip(e.outvars, outs, souts):
            env[v] = o
            if s is not None and carries_series(v.aval):
                senv[v] = list(s)
    return [read(a) for a in prog.outvars], [sread(a) for a in prog.outvars]


def jet_program(
    prog: Program,
    nonzero: Sequence[bool],
    order: int,
    known: Sequence[Any] | None = None,
) -> tuple[Program, list[bool]]:
    """Taylor-mode program of ``prog``: inputs (primals, then ``order`` coefficients of
    each ``nonzero`` input's series), outputs (primal outputs, then ``order``
    coefficients of each output whose series is not zero: the returned flags).
    ``known`` are the primal inputs' values where known (rules that run user code read
    them)."""
    kp = list(known) if known is not None else [UNKNOWN] * len(prog.invars)
    with new_builder("jet") as b:
        primals = [b.new_arg(a, x) for a, x in zip(prog.in_avals, kp)]
        series: list[Series] = [
            [b.new_arg(series_aval(a)) for _ in range(order)] if nz else None
            for a, nz in zip(prog.in_avals, nonzero)
        ]
        outs, souts = jet_eval(prog, primals, series, order)
        out_nz = [s is not None for s in souts]
        new = b.build(outs + [c for s in souts if s is not None for c in s])
    return passes.dce(new), out_nz


def split_series(flat: Sequence[Any], nonzero: Sequence[bool], order: int) -> list[Series]:
    """``flat`` (the ``order`` coefficients of each ``nonzero`` entry, in turn) as one
    series per entry (``None`` where not ``nonzero``)."""
    it = iter(flat)
    return [[next(it) for _ in range(order)] if nz else None for nz in nonzero]


# --------------------------------------------------------------------------- rules


def generic_jet(
    prim: Primitive, primals: Sequence[Any], series: Sequence[Series], **params: Any
) -> tuple[Any, Any]:
    """The Taylor series of ``prim``'s outputs from its JVP rule (the module docstring):
    exact at every order, its cost growing with the order."""
    if prim.jvp is None:
        raise NotImplementedError(f"Jet rule for '{prim.name}' not implemented")
    order = series_order(series)
    out = bind(prim, *primals, **params)
    outs = out if prim.multiple_results else [out]
    in_avals = [to_aval(x) for x in primals]
    with new_builder("jet") as b:
        ps = [b.new_arg(a, x) for a, x in zip(in_avals, primals)]
        ts = [
            b.new_arg(series_aval(a), s[0]) if s is not None else Zero(series_aval(a))
            for a, s in zip(in_avals, series)
        ]
        _, tout = prim.jvp(ps, ts, **params)
        touts = list(tout) if prim.multiple_results else [tout]
        keep = [not is_zero(t) and carries_series(to_aval(o)) for t, o in zip(touts, outs)]
        tprog = b.build([t for t, k in zip(touts, keep) if k])
    tprog = passes.dce(tprog)
    lower = order - 1
    sub_primals = [*primals, *(s[0] for s in series if s is not None)]
    sub_series: list[Series] = [
        *(s[:lower] if s is not None and lower else None for s in series),
        *(s[1:] if lower else None for s in series if s is not None),
    ]
    firsts, rests = jet_eval(tprog, sub_primals, sub_series, lower)
    pairs = iter(zip(firsts, rests))
    souts: list[Series] = []
    for o, k in zip(outs, keep):
        if not k:
            souts.append(None)
            continue
        first, rest = next(pairs)
        if rest is None:
            rest = [zeros_like_aval(series_aval(to_aval(o))) for _ in range(lower)]
        souts.append([first, *rest])
    return out, (souts if prim.multiple_results else souts[0])


def _generic_rule(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    def rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple:
        return generic_jet(prim, primals, series, **params)

    return rule


def linear_jet(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    """The jet rule of ``prim``, linear in all its operands jointly: ``prim`` applied to
    each order's coefficients (zero ones materialised in the output's dtype)."""

    def rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple:
        out = bind(prim, *primals, **params)
        order = series_order(series)
        if len(primals) == 1:
            coeffs = [bind(prim, c, **params) for c in series[0]]
            if prim.multiple_results:  # (each order's outputs: one series per output)
                return out, [list(s) for s in zip(*coeffs)]
            return out, coeffs
        dtype = to_aval(out).dtype
        zeros = [
            zeros_like_aval(Aval(to_aval(x).shape, dtype)) if s is None else None
            for x, s in zip(primals, series)
        ]
        coeffs = [
            bind(prim, *(z if s is None else s[k] for s, z in zip(series, zeros)), **params)
            for k in range(order)
        ]
        return out, coeffs

    return rule


def _scaled(x: Any, c: int) -> Any:
    if c == 1:
        return x
    return REGISTRY["mul"].bind(x, np.asarray(c, to_aval(x).dtype))


def bilinear_jet(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    """The jet rule of ``prim``, bilinear in its two operands (``mul``, ``dot_general``):
    Leibniz's product, ``y_k = sum_j C(k, j) prim(a_j, b_(k-j))``."""

    def rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple:
        a, b = primals
        sa, sb = series
        out = bind(prim, a, b, **params)
        order = series_order(series)
        ca = [a, *sa] if sa is not None else [a]
        cb = [b, *sb] if sb is not None else [b]
        coeffs = []
        for k in range(1, order + 1):
            acc: Any = Zero(series_aval(to_aval(out)))
            for j in range(k + 1):
                if j < len(ca) and k - j < len(cb):
                    term = _scaled(bind(prim, ca[j], cb[k - j], **params), comb(k, j))
                    acc = add_tangents(acc, term)
            coeffs.append(acc)
        return out, coeffs

    return rule


def quotient_jet(prim: Primitive) -> Callable[..., tuple[Any, Any]]:
    """The jet rule of ``prim``, the quotient ``a / b`` (``div``): from ``a = q b`` by
    Leibniz's rule, ``q_k = (a_k - sum_(j>=1) C(k, j) b_j q_(k-j)) / b``, one division
    per order (the JVP route divides twice per level, ``2**order`` in all)."""

    def rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple:
        a, b = primals
        sa, sb = series
        q = bind(prim, a, b, **params)
        order = series_order(series)
        mul, sub = REGISTRY["mul"].bind, REGISTRY["sub"].bind
        qs = [q]
        for k in range(1, order + 1):
            num: Any = sa[k - 1] if sa is not None else Zero(series_aval(to_aval(q)))
            if sb is not None:
                for j in range(1, k + 1):
                    term = _scaled(mul(sb[j - 1], qs[k - j]), comb(k, j))
                    num = REGISTRY["neg"].bind(term) if is_zero(num) else sub(num, term)
            qs.append(bind(prim, num, b, **params))
        return q, qs[1:]

    return rule


def inline_jet(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple:
    """The jet rule of a call primitive whose equation holds its function as
    ``program``: the series of that program, evaluated in place (a custom rule is not
    used: the Taylor series of the function itself, as JAX's ``jet`` does)."""
    return jet_eval(params["program"], primals, series, series_order(series))


def call_jet(rebind: Callable[..., list]) -> Callable[..., tuple[Any, Any]]:
    """The jet rule of a call primitive holding ``program``: the same call of that
    program's Taylor-mode program (:func:`jet_program`), made by
    ``rebind(new_program, args, **params)`` (the equation's other params)."""

    def rule(primals: Sequence[Any], series: Sequence[Series], **params: Any) -> tuple:
        program: Program = params["program"]
        order = series_order(series)
        nz = [s is not None and carries_series(a) for s, a in zip(series, program.in_avals)]
        jprog, out_nz = jet_program(program, nz, order)
        jprog, consts = close(jprog)
        flat = [c for s, z in zip(series, nz) if z for c in s]
        rest = {k: v for k, v in params.items() if k != "program"}
        res = rebind(jprog, [*consts, *primals, *flat], **rest)
        n = len(program.outvars)
        return list(res[:n]), split_series(res[n:], out_nz, order)

    return rule
