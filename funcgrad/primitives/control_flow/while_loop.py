"""``while``: iterate a closed body program on the carry while a closed condition
program returns True. Forward-mode and batching rules only: reverse mode needs a
static trip count (``scan``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad import ad, batching, passes
from funcgrad.core import tiers
from funcgrad.core.host import fix_dtype
from funcgrad.core.interp import bind, eval_program, to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import is_zero
from funcgrad.primitives import checks, rules
from funcgrad.primitives import elementwise as ew
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
    _tangents_out,
    _untyped_carries,
    _with_unused_inputs,
    trace_program,
)
from funcgrad.primitives.reductions import reduce_or
from funcgrad.primitives.rules import rand
from funcgrad.primitives.shape import broadcast_in_dim

WHILE_VJP_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values (a dynamic trip count). Try using lax.scan, or using "
    "fori_loop with static start/stop."
)


#: reverse mode needs a static trip count: use scan / fori_loop with static bounds
while_p = Primitive("while", family=FAMILY, multiple_results=True, reverse_differentiable=False)


@while_p.def_abstract_eval
def _while_abstract_eval(
    *avals: Aval,
    cond_program: Program,
    body_program: Program,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[Aval]:
    cc, bc, init = _split(avals, cond_nconsts, body_nconsts)
    _check_inputs("while", "cond program", [*cc, *init], cond_program.in_avals)
    _check_inputs("while", "body program", [*bc, *init], body_program.in_avals)
    outs = cond_program.out_avals
    if len(outs) != 1 or outs[0].shape != () or outs[0].dtype != np.dtype("bool"):
        got = ", ".join(str(a) for a in outs)
        raise TypeError(f"while: the condition must return one boolean scalar, got ({got})")
    _check_carry("while", body_program.in_avals[body_nconsts:], body_program.out_avals)
    return [a.strip_weak() for a in body_program.in_avals[body_nconsts:]]


@while_p.def_lower
def _while_lower(*vals: Any, **params: Any) -> list:
    cond_program: Program = params["cond_program"]
    body_program: Program = params["body_program"]
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]
    carry_avals = [a.strip_weak() for a in body_program.in_avals[nbc:]]
    pred_aval = Aval((), np.dtype("bool"))

    def run(*vals: Any) -> list:
        cc, bc, init = _split(vals, ncc, nbc)
        cfn, bfn = lower_program(cond_program), lower_program(body_program)

        def cond_fun(c: list) -> Any:
            return _strong(cfn(*cc, *c)[0], pred_aval)

        def body_fun(c: list) -> list:
            return [_strong(o, a) for o, a in zip(bfn(*bc, *c), carry_avals)]

        return list(
            lax.while_loop(cond_fun, body_fun, [_strong(v, a) for v, a in zip(init, carry_avals)])
        )

    return _run("while", params, run, vals)


@while_p.def_host
def _while_host(
    *vals: Any,
    cond_program: Program,
    body_program: Program,
    cond_nconsts: int,
    body_nconsts: int,
) -> list:
    ncc, nbc = cond_nconsts, body_nconsts
    cc = host_inputs(cond_program.invars[:ncc], vals[:ncc])
    bc = host_inputs(body_program.invars[:nbc], vals[ncc : ncc + nbc])
    dts = [v.aval.dtype for v in body_program.invars[nbc:]]
    carry = _host_strong(vals[ncc + nbc :], dts)
    retype = _untyped_carries(body_program, nbc, len(dts))
    run = tiers.host_eval
    while run(cond_program, *cc, *carry)[0]:
        carry = run(body_program, *bc, *carry)
        for k in retype:
            carry[k] = fix_dtype(carry[k], dts[k])
    return carry


@while_p.def_jvp
def _while_jvp(primals: list, tangents: list, **params: Any) -> tuple:
    cond_program: Program = params["cond_program"]
    body_program: Program = params["body_program"]
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]
    cc, bc, init = _split(primals, ncc, nbc)
    _, tbc, tinit = _split(tangents, ncc, nbc)
    bc_nz = [not is_zero(t) and _is_float(to_aval(x)) for x, t in zip(bc, tbc)]
    carry_avals = [a.strip_weak() for a in body_program.in_avals[nbc:]]
    floats = [_is_float(a) for a in carry_avals]
    start = [not is_zero(t) and f for t, f in zip(tinit, floats)]

    def step(carry_nz: list[bool]) -> list[bool]:
        _, out_nz = ad.jvp_program(body_program, bc_nz + carry_nz)
        return [a and f for a, f in zip(out_nz, floats)]

    carry_nz = _fixpoint(step, start)
    jbody, jconsts, _ = _jvp_instantiated(body_program, bc_nz + carry_nz, carry_nz)
    # jbody inputs: jconsts, bc, carry, t_bc, t_carry -> jconsts, bc, t_bc, carry, t_carry
    nj, ncar, ntb = len(jconsts), len(init), sum(bc_nz)
    order = (
        list(range(nj + nbc))
        + list(range(nj + nbc + ncar, nj + nbc + ncar + ntb))
        + list(range(nj + nbc, nj + nbc + ncar))
        + list(range(nj + nbc + ncar + ntb, len(jbody.invars)))
    )
    jbody = _permute(jbody, order, range(len(jbody.outvars)))
    t_avals = [a for a, z in zip(carry_avals, carry_nz) if z]
    jcond = _with_unused_inputs(cond_program, t_avals, len(cond_program.invars))
    t_init = [rules.instantiate(t, a) for t, a, z in zip(tinit, carry_avals, carry_nz) if z]
    outs = bind(
        while_p,
        *cc,
        *jconsts,
        *bc,
        *[t for t, z in zip(tbc, bc_nz) if z],
        *init,
        *t_init,
        cond_program=jcond,
        body_program=jbody,
        cond_nconsts=ncc,
        body_nconsts=nj + nbc + ntb,
    )
    return _tangents_out(outs, ncar, carry_nz, carry_avals)


@while_p.def_vjp
def _while_vjp(cts: Any, *args: Any, out: Any, **params: Any) -> tuple:
    raise ValueError(WHILE_VJP_ERROR)


@while_p.def_batch
def _while_batch(args: list, dims: list, **params: Any) -> tuple:
    cond_program: Program = params["cond_program"]
    body_program: Program = params["body_program"]
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]
    size = rules.batch_size(args, dims)
    cc, bc, init = _split(args, ncc, nbc)
    ccd, bcd, initd = _split(dims, ncc, nbc)
    ncar = len(init)

    def carry_dims(b: list[bool]) -> list:
        return [0 if x else None for x in b]

    def step(carry_b: list[bool]) -> list[bool]:
        _, ods = batching.batch_program(body_program, bcd + carry_dims(carry_b), size)
        return [d is not None for d in ods]

    carry_b = _fixpoint(step, [d is not None for d in initd])
    _, pd = batching.batch_program(cond_program, ccd + carry_dims(carry_b), size)
    pred_batched = pd[0] is not None
    if pred_batched and (
        passes.has_io_callback(body_program) or passes.has_io_callback(cond_program)
    ):
        # finished lanes run on: a callback would see their values
        raise NotImplementedError(
            "Unordered IO effects not supported in while_loop with batched predicate"
        )
    if pred_batched:
        carry_b = [True] * ncar
    cdims = carry_dims(carry_b)
    init = [rules.bdim_to_front(x, d, size) if b else x for x, d, b in zip(init, initd, carry_b)]
    with checks.masked_lanes(pred_batched):  # (a check here would see finished lanes)
        bbody, _ = batching.batch_program(body_program, bcd + cdims, size, out_dims=cdims)
    if not pred_batched:
        bcond, _ = batching.batch_program(cond_program, ccd + cdims, size, out_dims=[None])
        bcond, ccons = close(bcond)
        bbody, bcons = close(bbody)
        outs = bind(
            while_p,
            *ccons,
            *cc,
            *bcons,
            *bc,
            *init,
            cond_program=bcond,
            body_program=bbody,
            cond_nconsts=len(ccons) + ncc,
            body_nconsts=len(bcons) + nbc,
        )
        return outs, cdims
    # batched predicate: run while any lane is active; finished lanes keep their carry
    bcond, _ = batching.batch_program(cond_program, ccd + cdims, size, out_dims=[0])
    cc_avals = [to_aval(x) for x in cc]
    bc_avals = [to_aval(x) for x in bc]
    carry_avals = [to_aval(x) for x in init]

    def any_cond(*xs: Any) -> list:
        return [reduce_or(eval_program(bcond, *xs)[0], (0,))]

    def masked_body(*xs: Any) -> list:
        c, b, carry = _split(xs, ncc, nbc)
        active = eval_program(bcond, *c, *carry)[0]
        new = eval_program(bbody, *b, *carry)
        outs = []
        for old, nw in zip(carry, new):
            shape = to_aval(old).shape
            which = broadcast_in_dim(active, shape, (0,)) if len(shape) > 1 else active
            outs.append(ew.select_n(which, old, nw))
        return outs

    ncond, ccons = trace_program(any_cond, cc_avals + carry_avals, "vmap")
    nbody, bcons = trace_program(masked_body, cc_avals + bc_avals + carry_avals, "vmap")
    checks.mark_masked_loop(nbody)  # (checkify refuses it: finished lanes run too)
    outs = bind(
        while_p,
        *ccons,
        *cc,
        *bcons,
        *cc,
        *bc,
        *init,
        cond_program=ncond,
        body_program=nbody,
        cond_nconsts=len(ccons) + ncc,
        body_nconsts=len(bcons) + ncc + nbc,
    )
    return outs, [0] * ncar


@while_p.def_examples
def _while_examples(rng: np.random.Generator) -> list[Example]:
    # (the registry's finite differences compare every output, so the loop
    # counters here are floats; integer counters are tested in test_control_flow)
    f64 = np.dtype("float64")
    vec, scalar = Aval((3,), f64), Aval((), f64)
    # carry (s, x); body const c; loop while s < 2.5: s += 1, x <- sin(x) * c + x
    cond0, _ = trace_program(lambda s, x: [ew.lt(s, 2.5)], [scalar, vec], "while")
    body0, _ = trace_program(
        lambda c, s, x: [ew.add(s, 1.0), ew.add(ew.mul(ew.sin(x), c), x)],
        [vec, scalar, vec],
        "while",
    )
    # cond const n: loop while s < n; carry (s, x, y)
    cond1, _ = trace_program(lambda n, s, x, y: [ew.lt(s, n)], [scalar, scalar, vec, vec], "while")
    body1, _ = trace_program(
        lambda s, x, y: [ew.add(s, 1.0), ew.mul(ew.cos(y), x), ew.add(y, ew.mul(x, x))],
        [scalar, vec, vec],
        "while",
    )
    p0 = {
        "cond_program": cond0,
        "body_program": body0,
        "cond_nconsts": 0,
        "body_nconsts": 1,
    }
    p1 = {
        "cond_program": cond1,
        "body_program": body1,
        "cond_nconsts": 1,
        "body_nconsts": 0,
    }
    small = {"lo": 0.2, "hi": 0.6}
    return [
        Example([rand(rng, (3,), lo=0.2, hi=0.8), np.float64(0.0), rand(rng, (3,))], p0),
        Example(
            [
                np.float64(1.5),
                np.float64(0.0),
                rand(rng, (3,), **small),
                rand(rng, (3,), **small),
            ],
            p1,
        ),
    ]


def while_loop(
    cond_program: Program,
    body_program: Program,
    cond_consts: Sequence[Any],
    body_consts: Sequence[Any],
    init: Sequence[Any],
) -> list:
    """Iterate ``body_program`` on the carry while ``cond_program`` is True (lax-level)."""
    return bind(
        while_p,
        *cond_consts,
        *body_consts,
        *init,
        cond_program=cond_program,
        body_program=body_program,
        cond_nconsts=len(cond_consts),
        body_nconsts=len(body_consts),
    )
