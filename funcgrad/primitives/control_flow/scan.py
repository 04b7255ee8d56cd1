"""``scan``: a closed ``program(*consts, *carry, *x) -> (*carry, *y)`` over the
leading axis of ``xs``, the ``y`` stacked; its reverse pass is a scan in the other
direction, with loop-invariant residuals computed once outside the loop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad import ad, batching, passes
from funcgrad.core import sharding_types, tiers
from funcgrad.core.host import fix_dtype
from funcgrad.core.interp import bind, eval_program, to_aval
from funcgrad.core.ir import Aval, Literal, Program, Var
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives.calls import close, host_inputs
from funcgrad.primitives.control_flow.common import (
    FAMILY,
    _check_carry,
    _check_inputs,
    _fixpoint,
    _host_strong,
    _is_float,
    _jvp_instantiated,
    _permute,
    _run,
    _split,
    _strong,
    _untyped_carries,
    _zeros,
    trace_program,
)
from funcgrad.primitives.rules import rand
from funcgrad.primitives.sharding import typed_as

scan_p = Primitive("scan", family=FAMILY, multiple_results=True)


def _scan_split(xs: Sequence[Any], num_consts: int, num_carry: int) -> list[list]:
    return _split(xs, num_consts, num_carry)


@scan_p.def_abstract_eval
def _scan_abstract_eval(
    *avals: Aval,
    program: Program,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
) -> list[Aval]:
    consts, init, xs = _scan_split(avals, num_consts, num_carry)
    if program.constvars:
        raise TypeError("scan: the body is not a closed program")
    if length < 0:
        raise ValueError(f"scan: length must be non-negative, got {length}")
    want = program.in_avals
    if len(want) != len(avals):
        raise TypeError(f"scan: the body takes {len(want)} operands, got {len(avals)}")
    for i, x in enumerate(xs):
        if not x.shape or x.shape[0] != length:
            raise TypeError(
                f"scan: xs {i} has shape {x.shape}, but scanned operands need a leading "
                f"axis of length {length}"
            )
    slices = [Aval(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    _check_inputs("scan", "body", [*consts, *init, *slices], want)
    carry_in = want[num_consts : num_consts + num_carry]
    outs = program.out_avals
    if len(outs) < num_carry:
        raise TypeError(f"scan: the body returns {len(outs)} values for {num_carry} carries")
    _check_carry("scan", carry_in, outs[:num_carry])
    ys = [Aval((length, *a.shape), a.dtype) for a in outs[num_carry:]]
    return [a.strip_weak() for a in carry_in] + ys


@scan_p.def_lower
def _scan_lower(*vals: Any, **params: Any) -> list:
    program: Program = params["program"]
    length, reverse = params["length"], params["reverse"]
    nc, ncar = params["num_consts"], params["num_carry"]
    carry_avals = [a.strip_weak() for a in program.in_avals[nc : nc + ncar]]
    y_avals = [a.strip_weak() for a in program.out_avals[ncar:]]

    def run(*vals: Any) -> list:
        consts, init, xs = _scan_split(vals, nc, ncar)
        fn = lower_program(program)

        def body(carry: list, x: list) -> tuple:
            outs = fn(*consts, *carry, *x)
            c = [_strong(o, a) for o, a in zip(outs[:ncar], carry_avals)]
            return c, [_strong(o, a) for o, a in zip(outs[ncar:], y_avals)]

        init = [_strong(v, a) for v, a in zip(init, carry_avals)]
        carry, ys = lax.scan(body, init, list(xs), length=length, reverse=reverse)
        return list(carry) + list(ys)

    return _run("scan", params, run, vals)


@scan_p.def_host
def _scan_host(
    *vals: Any,
    program: Program,
    length: int,
    reverse: bool,
    num_consts: int,
    num_carry: int,
) -> list:
    nc, ncar = num_consts, num_carry
    n_in = nc + ncar
    consts = host_inputs(program.invars[:nc], vals[:nc])
    dts = [v.aval.dtype for v in program.invars[nc:n_in]]
    carry = _host_strong(vals[nc:n_in], dts)
    retype = _untyped_carries(program, nc, ncar)
    xs = vals[n_in:]
    # the stacked outputs, written in place slice by slice
    ys = [np.empty((length, *a.shape), a.dtype) for a in program.out_avals[ncar:]]
    run = tiers.host_eval
    for i in range(length - 1, -1, -1) if reverse else range(length):
        outs = run(program, *consts, *carry, *[x[i] for x in xs])
        carry = outs[:ncar]
        for k in retype:
            carry[k] = fix_dtype(carry[k], dts[k])
        for y, o in zip(ys, outs[ncar:]):
            y[i] = o
    return carry + ys


@scan_p.def_jvp
def _scan_jvp(primals: list, tangents: list, **params: Any) -> tuple:
    program: Program = params["program"]
    nc, ncar = params["num_consts"], params["num_carry"]
    consts, init, xs = _scan_split(primals, nc, ncar)
    tc, tinit, txs = _scan_split(tangents, nc, ncar)
    c_nz = [not is_zero(t) and _is_float(to_aval(x)) for x, t in zip(consts, tc)]
    x_nz = [not is_zero(t) and _is_float(to_aval(x)) for x, t in zip(xs, txs)]
    carry_avals = [a.strip_weak() for a in program.in_avals[nc : nc + ncar]]
    floats = [_is_float(a) for a in carry_avals]
    start = [not is_zero(t) and f for t, f in zip(tinit, floats)]

    def step(carry_nz: list[bool]) -> list[bool]:
        _, out_nz = ad.jvp_program(program, c_nz + carry_nz + x_nz)
        return [a and f for a, f in zip(out_nz[:ncar], floats)]

    carry_nz = _fixpoint(step, start)
    nys = len(program.outvars) - ncar
    jprog, jconsts, out_nz = _jvp_instantiated(
        program, c_nz + carry_nz + x_nz, carry_nz + [False] * nys
    )
    nj, nx = len(jconsts), len(xs)
    ntc, ntcar, ntx = sum(c_nz), sum(carry_nz), sum(x_nz)
    # inputs: jconsts, consts, carry, xs, t_consts, t_carry, t_xs
    base = nj + nc + ncar + nx
    ins = (
        list(range(nj + nc))
        + list(range(base, base + ntc))
        + list(range(nj + nc, nj + nc + ncar))
        + list(range(base + ntc, base + ntc + ntcar))
        + list(range(nj + nc + ncar, base))
        + list(range(base + ntc + ntcar, base + ntc + ntcar + ntx))
    )
    # outputs: carry, ys, t_carry, t_ys  ->  carry, t_carry, ys, t_ys
    nty = sum(out_nz[ncar:])
    n_out = ncar + nys
    outs_order = (
        list(range(ncar))
        + list(range(n_out, n_out + ntcar))
        + list(range(ncar, n_out))
        + list(range(n_out + ntcar, n_out + ntcar + nty))
    )
    jprog = _permute(jprog, ins, outs_order)
    t_init = [rules.instantiate(t, a) for t, a, z in zip(tinit, carry_avals, carry_nz) if z]
    outs = bind(
        scan_p,
        *jconsts,
        *consts,
        *[t for t, z in zip(tc, c_nz) if z],
        *init,
        *t_init,
        *xs,
        *[t for t, z in zip(txs, x_nz) if z],
        program=jprog,
        length=params["length"],
        reverse=params["reverse"],
        num_consts=nj + nc + ntc,
        num_carry=ncar + ntcar,
    )
    carry, tcarry, ys, tys = _split(outs, ncar, ntcar, nys)
    out_avals = [to_aval(o) for o in carry + ys]
    primal = carry + ys
    tans = iter(tcarry + tys)
    touts = [next(tans) if z else Zero(a.strip_weak()) for z, a in zip(out_nz, out_avals)]
    return primal, touts


def _invariant_vars(prog: Program, n_invariant_inputs: int) -> set[Var]:
    """Variables of ``prog`` that depend only on its first ``n`` inputs (loop invariants)."""
    inv: set[Var] = set(prog.invars[:n_invariant_inputs])
    for e in prog.eqns:
        if all(isinstance(a, Literal) or a in inv for a in e.inputs):
            inv.update(e.outvars)
    return inv


def _scan_vjp_fwd(*args: Any, **params: Any) -> tuple:
    program: Program = params["program"]
    nc, ncar = params["num_consts"], params["num_carry"]
    n_out = len(program.outvars)
    if not any(_is_float(to_aval(x)) for x in args):
        return bind(scan_p, *args, **params), None
    consts, init, xs = _scan_split(args, nc, ncar)
    mask = [_is_float(a) for a in program.out_avals]
    vp = ad.vjp_program(program, mask)
    fwd, fconsts = close(vp.fwd)  # (*fconsts, *consts, *carry, *x) -> (*carry, *y, *res)
    nfc = len(fconsts)
    invariant = _invariant_vars(fwd, nfc + nc)
    res_vars = fwd.outvars[n_out:]
    hoisted = [isinstance(r, Literal) or r in invariant for r in res_vars]
    # loop-invariant residuals are computed once, outside the loop
    inv_prog = passes.dce(
        Program(
            fwd.invars[: nfc + nc],
            (),
            tuple(e for e in fwd.eqns if all(v in invariant for v in e.outvars)),
            tuple(r for r, h in zip(res_vars, hoisted) if h),
        )
    )
    body = fwd.replace(
        outvars=fwd.outvars[:n_out] + tuple(r for r, h in zip(res_vars, hoisted) if not h)
    )
    body = passes.dce(body)
    outs = bind(
        scan_p,
        *fconsts,
        *consts,
        *init,
        *xs,
        program=body,
        length=params["length"],
        reverse=params["reverse"],
        num_consts=nfc + nc,
        num_carry=ncar,
    )
    inv_res = eval_program(inv_prog, *fconsts, *consts) if any(hoisted) else []
    return outs[:n_out], (vp, hoisted, inv_res, outs[n_out:])


def _ct_typed(x: Any, primal: Aval) -> Any:
    """``x`` typed as a cotangent of a value of type ``primal`` (the carries of the
    backward scan: their types must not change through the body)."""
    return typed_as(x, sharding_types.cotangent_sharding(primal.sharding))


def _scan_vjp_bwd(res: Any, cts: list, **params: Any) -> list:
    program: Program = params["program"]
    nc, ncar = params["num_consts"], params["num_carry"]
    length, reverse = params["length"], params["reverse"]
    in_avals = program.in_avals
    n_in = len(in_avals)
    if res is None:
        return [None] * n_in
    vp, hoisted, inv_res, stacked = res
    out_avals = program.out_avals
    nx = n_in - nc - ncar
    c_avals, car_avals, x_avals = _scan_split(in_avals, nc, ncar)
    # which inputs get a cotangent (float and not identically zero); every float carry does
    ct_c = [_is_float(a) and not z for a, z in zip(c_avals, vp.zero_cts[:nc])]
    ct_car = [_is_float(a) for a in car_avals]
    ct_x = [_is_float(a) and not z for a, z in zip(x_avals, vp.zero_cts[nc + ncar :])]
    ct_carry = [
        _ct_typed(rules.instantiate(c, a.strip_weak()), a)
        for c, a, f in zip(cts[:ncar], out_avals[:ncar], ct_car)
        if f
    ]
    ct_ys = [
        rules.instantiate(c, Aval((length, *a.shape), a.dtype))
        for c, a in zip(cts[ncar:], out_avals[ncar:])
        if _is_float(a)
    ]
    bwd, bconsts = close(vp.bwd)  # (*bconsts, *res, *cts) -> cts of (consts, carry, x)
    nbc = len(bconsts)
    acc0 = [_ct_typed(_zeros(a), a) for a, m in zip(c_avals, ct_c) if m]
    acc_s = [to_aval(a).sharding for a in acc0]
    ctc_s = [to_aval(c).sharding for c in ct_carry]

    def body(*xs: Any) -> list:
        bc, inv, acc, ctc, rs, cy = _split(
            xs, nbc, len(inv_res), len(acc0), len(ct_carry), len(stacked)
        )
        inv_it, rs_it = iter(inv), iter(rs)
        residuals = [next(inv_it) if h else next(rs_it) for h in hoisted]
        in_cts = eval_program(bwd, *bc, *residuals, *ctc, *cy)
        c_in, car_in, x_in = _scan_split(in_cts, nc, ncar)
        new_acc = [ew.add(a, c) for a, c in zip(acc, [c for c, m in zip(c_in, ct_c) if m])]
        new_ctc = [c for c, m in zip(car_in, ct_car) if m]
        # (the carries keep their types: the cotangents typed as their primals', as the
        # zeros they start from)
        new_acc = [typed_as(a, s) for a, s in zip(new_acc, acc_s)]
        new_ctc = [typed_as(c, s) for c, s in zip(new_ctc, ctc_s)]
        return new_acc + new_ctc + [c for c, m in zip(x_in, ct_x) if m]

    def slice_aval(x: Any) -> Aval:
        a = to_aval(x)
        return Aval(a.shape[1:], a.dtype, a.weak_type)

    avals = (
        [v.aval for v in bwd.invars[:nbc]]
        + [to_aval(r) for r in inv_res]
        + [to_aval(a) for a in acc0]
        + [to_aval(c) for c in ct_carry]
        + [slice_aval(r) for r in stacked]
        + [slice_aval(c) for c in ct_ys]
    )
    bprog, extra = trace_program(body, avals, "vjp")
    outs = bind(
        scan_p,
        *extra,
        *bconsts,
        *inv_res,
        *acc0,
        *ct_carry,
        *stacked,
        *ct_ys,
        program=bprog,
        length=length,
        reverse=not reverse,
        num_consts=len(extra) + nbc + len(inv_res),
        num_carry=len(acc0) + len(ct_carry),
    )
    acc, ctc, ctx = _split(outs, len(acc0), len(ct_carry))
    acc_it, ctc_it, ctx_it = iter(acc), iter(ctc), iter(ctx)
    return (
        [next(acc_it) if m else None for m in ct_c]
        + [next(ctc_it) if m else None for m in ct_car]
        + [next(ctx_it) if m else None for m in ct_x]
    )[: nc + ncar + nx]


scan_p.vjp_fwd = _scan_vjp_fwd
scan_p.vjp_bwd = _scan_vjp_bwd


@scan_p.def_batch
def _scan_batch(args: list, dims: list, **params: Any) -> tuple:
    program: Program = params["program"]
    nc, ncar = params["num_consts"], params["num_carry"]
    size = rules.batch_size(args, dims)
    consts, init, xs = _scan_split(args, nc, ncar)
    cd, initd, xd = _scan_split(dims, nc, ncar)
    # the scanned axis stays 0: batched xs carry their batch axis at 1 (0 in a slice)
    xs = [x if d is None else rules.moveaxis(x, d, 1) for x, d in zip(xs, xd)]
    slice_dims = [None if d is None else 0 for d in xd]

    def in_dims(carry_b: list[bool]) -> list:
        return cd + [0 if b else None for b in carry_b] + slice_dims

    def step(carry_b: list[bool]) -> list[bool]:
        _, ods = batching.batch_program(program, in_dims(carry_b), size)
        return [d is not None for d in ods[:ncar]]

    carry_b = _fixpoint(step, [d is not None for d in initd])
    _, ods = batching.batch_program(program, in_dims(carry_b), size)
    out_dims = [0 if b else None for b in carry_b] + [None if d is None else 0 for d in ods[ncar:]]
    bprog, _ = batching.batch_program(program, in_dims(carry_b), size, out_dims=out_dims)
    bprog, bconsts = close(bprog)
    init = [rules.bdim_to_front(x, d, size) if b else x for x, d, b in zip(init, initd, carry_b)]
    outs = bind(
        scan_p,
        *bconsts,
        *consts,
        *init,
        *xs,
        program=bprog,
        length=params["length"],
        reverse=params["reverse"],
        num_consts=len(bconsts) + nc,
        num_carry=ncar,
    )
    return outs, out_dims[:ncar] + [None if d is None else 1 for d in out_dims[ncar:]]


@scan_p.def_examples
def _scan_examples(rng: np.random.Generator) -> list[Example]:
    f64 = np.dtype("float64")
    v3 = Aval((3,), f64)
    # consts w; carry h; xs x: h <- sin(h * w + x); y = h * h
    rnn, _ = trace_program(
        lambda w, h, x: [ew.sin(ew.add(ew.mul(h, w), x)), ew.mul(h, h)],
        [v3, v3, v3],
        "scan",
    )
    # three carries, one output, no xs
    two, _ = trace_program(
        lambda s, a, b: [
            ew.add(s, 1.0),
            ew.mul(ew.cos(b), a),
            ew.add(b, ew.mul(a, s)),
            ew.sin(a),
        ],
        [Aval((), f64), v3, v3],
        "scan",
    )
    # const, carry and xs where the output doesn't depend on the carry
    mixed, _ = trace_program(
        lambda w, c, x: [ew.add(c, ew.mul(x, w)), ew.exp(ew.mul(x, w))],
        [Aval((), f64), v3, v3],
        "scan",
    )
    p = {"length": 4, "reverse": False, "num_consts": 1, "num_carry": 1}
    return [
        Example([rand(rng, (3,)), rand(rng, (3,)), rand(rng, (4, 3))], {"program": rnn, **p}),
        Example(
            [rand(rng, (3,)), rand(rng, (3,)), rand(rng, (4, 3))],
            {"program": rnn, **p, "reverse": True},
        ),
        Example(
            [
                np.float64(0.5),
                rand(rng, (3,), lo=0.2, hi=0.8),
                rand(rng, (3,), lo=0.2, hi=0.8),
            ],
            {
                "program": two,
                "length": 3,
                "reverse": False,
                "num_consts": 0,
                "num_carry": 3,
            },
        ),
        Example(
            [rand(rng, (), lo=0.2, hi=0.5), rand(rng, (3,)), rand(rng, (5, 3))],
            {
                "program": mixed,
                "length": 5,
                "reverse": True,
                "num_consts": 1,
                "num_carry": 1,
            },
        ),
    ]


def scan(
    program: Program,
    consts: Sequence[Any],
    init: Sequence[Any],
    xs: Sequence[Any],
    *,
    length: int,
    reverse: bool = False,
) -> list:
    """Scan a closed ``program(*consts, *carry, *x) -> (*carry, *y)`` (lax-level)."""
    return bind(
        scan_p,
        *consts,
        *init,
        *xs,
        program=program,
        length=int(length),
        reverse=bool(reverse),
        num_consts=len(consts),
        num_carry=len(init),
    )
