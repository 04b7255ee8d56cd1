"""Structured control flow: ``cond``, ``while`` and ``scan``, primitives whose
params hold closed sub-programs.

* ``cond(index, *operands, branches)`` runs ``branches[index]`` (an int32
  index; ``fg.cond`` turns a boolean predicate into 0/1, ``fg.switch`` clamps).
* ``while(*cond_consts, *body_consts, *init, cond_program, body_program,
  cond_nconsts, body_nconsts)`` iterates ``body_program`` while
  ``cond_program`` returns True.
* ``scan(*consts, *init, *xs, program, length, reverse, num_consts,
  num_carry)``: ``program(*consts, *carry, *x) -> (*carry, *y)`` over the
  leading axis of ``xs``; the ``y`` are stacked.

Like the call primitives (:mod:`funcgrad.primitives.calls`), every rule
transforms the sub-programs as a whole with :mod:`funcgrad.ad` and
:mod:`funcgrad.batching` and binds the same primitive again, so the loops
stay loops under ``jvp``, ``vjp`` and ``vmap``. Constants a rule's rewrite
creates are closed over into explicit leading operands (:func:`close`).

Carries and outputs of the control-flow primitives are strongly typed; the
user API (:mod:`funcgrad.control_flow`) makes carries strong before tracing.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import bind, eval_program, new_builder, to_aval
from funcgrad.core.ir import Aval, Literal, Program, Var, _hashable_param
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.lowering import lower_program
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives.calls import close
from funcgrad.primitives.rules import rand

FAMILY = "control_flow"

WHILE_VJP_ERROR = (
    "Reverse-mode differentiation does not work for while_loop with dynamic trip count. "
    "Try using fori_loop with static bounds or scan."
)


# --------------------------------------------------------------------------- helpers


def _desc(a: Aval) -> str:
    return f"shape {a.shape} and dtype {a.dtype.name}"


def _same(a: Aval, b: Aval) -> bool:
    """Equal shapes and dtypes (weak types may differ)."""
    return a.shape == b.shape and a.dtype == b.dtype


def _is_float(a: Aval) -> bool:
    return dtypes.is_inexact(a.dtype)


def _check_inputs(name: str, what: str, got: Sequence[Aval], want: Sequence[Aval]) -> None:
    if len(got) != len(want):
        raise TypeError(f"{name}: {what} takes {len(want)} operands, got {len(got)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if not _same(g, w):
            raise TypeError(
                f"{name}: operand {i} of the {what} has {_desc(g)}, but the {what} "
                f"expects {_desc(w)}"
            )


def _check_carry(name: str, carry_in: Sequence[Aval], carry_out: Sequence[Aval]) -> None:
    if len(carry_in) != len(carry_out):
        raise TypeError(
            f"{name}: the body returns {len(carry_out)} carry values for {len(carry_in)} inputs"
        )
    for i, (a, b) in enumerate(zip(carry_in, carry_out)):
        if not _same(a, b):
            raise TypeError(
                f"{name}: the body's carry output {i} has {_desc(b)}, but the carry input "
                f"has {_desc(a)}; the carry must keep its type across iterations"
            )


def _strong(v: Any, aval: Aval) -> Any:
    """A lowered value as a strongly typed array of ``aval``'s dtype."""
    if isinstance(v, (bool, int, float, complex, np.ndarray, np.generic)):
        return np.asarray(v, aval.dtype)
    if v.dtype != aval.dtype or getattr(v, "weak_type", False):
        return lax.convert_element_type(v, aval.dtype)
    return v


_EAGER_CACHE: collections.OrderedDict = collections.OrderedDict()
_EAGER_CACHE_SIZE = 256


def _run(name: str, params: dict, fn: Callable, vals: Sequence[Any]) -> Any:
    """Run a lowering: inline inside a JAX trace, else through a cached ``jax.jit``.

    Called eagerly the lowering would otherwise re-trace the sub-programs and
    recompile the loop on every call; the cache is keyed on the structure of
    the params (structurally equal programs lower identically).
    """
    if any(isinstance(v, jax.core.Tracer) for v in vals):
        return fn(*vals)
    key = (name, _hashable_param(params))
    f = _EAGER_CACHE.get(key)
    if f is None:
        f = jax.jit(fn)
        _EAGER_CACHE[key] = f
        if len(_EAGER_CACHE) > _EAGER_CACHE_SIZE:
            _EAGER_CACHE.popitem(last=False)
    else:
        _EAGER_CACHE.move_to_end(key)
    return f(*vals)


def _fresh(avals: Sequence[Aval]) -> tuple[Var, ...]:
    return tuple(Var(a) for a in avals)


def _with_unused_inputs(prog: Program, avals: Sequence[Aval], at: int) -> Program:
    """``prog`` taking extra, unused inputs of ``avals`` inserted at position ``at``."""
    inv = prog.invars
    return prog.replace(invars=inv[:at] + _fresh(avals) + inv[at:])


def _permute(prog: Program, in_order: Sequence[int], out_order: Sequence[int]) -> Program:
    return prog.replace(
        invars=tuple(prog.invars[i] for i in in_order),
        outvars=tuple(prog.outvars[i] for i in out_order),
    )


def join_consts(items: Sequence[tuple[Program, Sequence[Any]]]) -> tuple[list[Program], list]:
    """Give every program (whose first inputs are its own consts) all the consts.

    Returns the programs, each taking ``(*all_consts, *rest)``, and the consts.
    """
    avals: list[Aval] = []
    consts: list[Any] = []
    for p, c in items:
        avals.extend(v.aval for v in p.invars[: len(c)])
        consts.extend(c)
    out, off = [], 0
    for p, c in items:
        k = len(c)
        inv = p.invars
        invars = _fresh(avals[:off]) + inv[:k] + _fresh(avals[off + k :]) + inv[k:]
        out.append(p.replace(invars=invars))
        off += k
    return out, consts


def trace_program(fn: Callable[..., Sequence[Any]], avals: Sequence[Aval], name: str) -> tuple:
    """Trace ``fn`` (flat in, flat out) into a closed program; returns (program, consts)."""
    with new_builder(name) as b:
        outs = fn(*[b.new_arg(a) for a in avals])
        prog = b.build(list(outs))
    return close(prog)


def _zeros(aval: Aval) -> Any:
    return rules.zeros_like_aval(aval.strip_weak())


def _jvp_instantiated(
    prog: Program, nonzero: Sequence[bool], inst: Sequence[bool]
) -> tuple[Program, tuple, list[bool]]:
    """JVP program of ``prog`` (inputs: primals, nonzero tangents), with the tangent
    outputs selected by ``inst`` materialised even when zero. Closed: returns
    (program taking ``(*consts, *primals, *tangents)``, consts, output tangent mask)."""
    from funcgrad import ad

    jprog, out_nz = ad.jvp_program(prog, list(nonzero))
    n = len(prog.outvars)
    if any(i and not z for i, z in zip(inst, out_nz)):
        computed = out_nz

        def fn(*args: Any) -> list:
            outs = eval_program(jprog, *args)
            primal, touts = outs[:n], iter(outs[n:])
            ts = []
            for a, z, i in zip(prog.out_avals, computed, inst):
                if z:
                    ts.append(next(touts))
                elif i:
                    ts.append(_zeros(a))
            return primal + ts

        with new_builder("jvp") as b:
            jprog = b.build(fn(*[b.new_arg(a) for a in jprog.in_avals]))
        out_nz = [z or i for z, i in zip(computed, inst)]
    jprog, consts = close(jprog)
    return jprog, consts, out_nz


def _tangents_out(outs: list, n: int, out_nz: Sequence[bool], avals: Sequence[Aval]) -> tuple:
    primal, rest = outs[:n], iter(outs[n:])
    touts = [next(rest) if z else Zero(a.strip_weak()) for z, a in zip(out_nz, avals)]
    return primal, touts


def _fixpoint(step: Callable[[list[bool]], list[bool]], start: list[bool]) -> list[bool]:
    """Smallest mask ⊇ ``start`` closed under ``step`` (a monotone map)."""
    cur = list(start)
    while True:
        new = [a or b for a, b in zip(cur, step(cur))]
        if new == cur:
            return cur
        cur = new


def _split(xs: Sequence[Any], *sizes: int) -> list[list]:
    out, i = [], 0
    for s in sizes:
        out.append(list(xs[i : i + s]))
        i += s
    out.append(list(xs[i:]))
    return out


# =========================================================================== cond

cond_p = Primitive("cond", family=FAMILY, multiple_results=True)


@cond_p.def_abstract_eval
def _cond_abstract_eval(index: Aval, *ops: Aval, branches: tuple[Program, ...]) -> list[Aval]:
    if not branches:
        raise TypeError("cond: needs at least one branch")
    if index.shape != () or not dtypes.is_integer(index.dtype):
        raise TypeError(f"cond: the branch index must be an integer scalar, got {index}")
    out0 = branches[0].out_avals
    for i, b in enumerate(branches):
        if b.constvars:
            raise TypeError(f"cond: branch {i} is not a closed program")
        _check_inputs("cond", f"branch {i}", ops, b.in_avals)
        outs = b.out_avals
        if len(outs) != len(out0):
            raise TypeError(
                f"cond: branch 0 returns {len(out0)} outputs but branch {i} returns {len(outs)}"
            )
        for k, (a, o) in enumerate(zip(out0, outs)):
            if not _same(a, o):
                raise TypeError(
                    f"cond: branches must return identical types, but output {k} has "
                    f"{_desc(a)} in branch 0 and {_desc(o)} in branch {i}"
                )
    return [a.strip_weak() for a in out0]


@cond_p.def_lower
def _cond_lower(index: Any, *ops: Any, branches: tuple[Program, ...]) -> list:
    out_avals = [a.strip_weak() for a in branches[0].out_avals]

    def branch_fn(prog: Program) -> Callable:
        fn = lower_program(prog)
        return lambda *xs: [_strong(o, a) for o, a in zip(fn(*xs), out_avals)]

    def run(index: Any, *ops: Any) -> list:
        fns = [branch_fn(b) for b in branches]
        if len(fns) == 1:
            return fns[0](*ops)
        return list(lax.switch(index, fns, *ops))

    return _run("cond", {"branches": branches}, run, [index, *ops])


@cond_p.def_jvp
def _cond_jvp(primals: list, tangents: list, *, branches: tuple[Program, ...]) -> tuple:
    from funcgrad import ad

    index, *ops = primals
    tops = tangents[1:]
    nz = [not is_zero(t) and _is_float(to_aval(x)) for x, t in zip(ops, tops)]
    out_avals = branches[0].out_avals
    out_nz = [False] * len(out_avals)
    for b in branches:
        _, onz = ad.jvp_program(b, nz)
        out_nz = [a or c for a, c in zip(out_nz, onz)]
    items = []
    for b in branches:
        jb, consts, _ = _jvp_instantiated(b, nz, out_nz)
        items.append((jb, consts))
    progs, consts = join_consts(items)
    ts = [t for t, z in zip(tops, nz) if z]
    outs = bind(cond_p, index, *consts, *ops, *ts, branches=tuple(progs))
    return _tangents_out(outs, len(out_avals), out_nz, out_avals)


def _cond_vjp_fwd(index: Any, *ops: Any, branches: tuple[Program, ...]) -> tuple:
    from funcgrad import ad

    out_avals = branches[0].out_avals
    n_out = len(out_avals)
    if not any(_is_float(to_aval(x)) for x in ops):
        return bind(cond_p, index, *ops, branches=branches), None
    mask = [_is_float(a) for a in out_avals]
    vps = [ad.vjp_program(b, mask) for b in branches]
    res_avals = [[v.aval for v in vp.fwd.outvars[n_out:]] for vp in vps]
    items = []
    for i, vp in enumerate(vps):
        fwd, fconsts = close(vp.fwd)

        def padded(*args: Any, fwd: Program = fwd, i: int = i) -> list:
            outs = eval_program(fwd, *args)
            res: list = []
            for j, avals in enumerate(res_avals):
                res.extend(outs[n_out:] if j == i else [_zeros(a) for a in avals])
            return outs[:n_out] + res

        prog, extra = trace_program(padded, fwd.in_avals, "vjp")
        items.append((prog, (*extra, *fconsts)))
    progs, consts = join_consts(items)
    outs = bind(cond_p, index, *consts, *ops, branches=tuple(progs))
    return outs[:n_out], (index, outs[n_out:], vps)


def _cond_vjp_bwd(res: Any, cts: list, *, branches: tuple[Program, ...]) -> list:
    n_ops = len(branches[0].invars)
    if res is None:
        return [None] * (1 + n_ops)
    index, residuals, vps = res
    out_avals = branches[0].out_avals
    cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, out_avals) if _is_float(a)]
    counts = [vp.num_res for vp in vps]
    res_avals = [to_aval(r) for r in residuals]
    ct_avals = [to_aval(c) for c in cts]
    items = []
    for i, vp in enumerate(vps):
        bwd, bconsts = close(vp.bwd)
        start = sum(counts[:i])

        def fn(*args: Any, bwd: Program = bwd, start: int = start, k: int = counts[i]) -> list:
            nb = len(bwd.invars) - k - len(ct_avals)
            bc, rs, cs = args[:nb], args[nb : nb + len(res_avals)], args[nb + len(res_avals) :]
            return eval_program(bwd, *bc, *rs[start : start + k], *cs)

        avals = [v.aval for v in bwd.invars[: len(bconsts)]] + res_avals + ct_avals
        prog, extra = trace_program(fn, avals, "vjp")
        items.append((prog, (*extra, *bconsts)))
    progs, consts = join_consts(items)
    in_cts = bind(cond_p, index, *consts, *residuals, *cts, branches=tuple(progs))
    zero = [all(vp.zero_cts[j] for vp in vps) for j in range(n_ops)]
    return [None] + [
        None if z or not _is_float(v.aval) else c
        for c, z, v in zip(in_cts, zero, branches[0].invars)
    ]


cond_p.vjp_fwd = _cond_vjp_fwd
cond_p.vjp_bwd = _cond_vjp_bwd


@functools.cache
def _taken_only_fn() -> Callable:
    from funcgrad.custom import custom_jvp
    from funcgrad.primitives.shape import broadcast_in_dim

    def taken_only(x: Any, keep: Any) -> Any:
        return x

    def rule(primals: tuple, tangents: tuple) -> tuple:
        (x, keep), (t, _) = primals, tangents
        shape = to_aval(x).shape
        mask = broadcast_in_dim(keep, shape, (0,)) if len(shape) > 1 else keep
        return x, ew.select_n(mask, rules.zeros_like_aval(to_aval(t)), t)

    f = custom_jvp(taken_only)
    f.defjvp(rule, symbolic_zeros=True)
    return f


def _taken_only(x: Any, keep: Any) -> Any:
    """``x``, with (co)tangents zeroed (by selection, not multiplication) where
    ``keep`` is false along the leading batch axis."""
    return _taken_only_fn()(x, keep)


@cond_p.def_batch
def _cond_batch(args: list, dims: list, *, branches: tuple[Program, ...]) -> tuple:
    from funcgrad import batching
    from funcgrad.primitives.shape import broadcast_in_dim

    index, *ops = args
    idim, *odims = dims
    size = rules.batch_size(args, dims)
    n_out = len(branches[0].outvars)
    if idim is not None:
        # a per-example branch: evaluate every branch, then select per example. Each
        # branch sees its operands through an identity whose derivative is masked to
        # the examples that take it, so a branch's backward pass at the examples that
        # do not (log at 0, sqrt of a negative) cannot leak NaN into the gradient
        idx = rules.moveaxis(index, idim, 0)
        idx = ew.min(ew.max(idx, 0), len(branches) - 1)
        per_branch = []
        if len(branches) > 1:
            ops = [rules.bdim_to_front(o, d, size) for o, d in zip(ops, odims)]
            odims = [0] * len(ops)
        for k, b in enumerate(branches):
            ins = ops
            if len(branches) > 1:
                keep = ew.eq(idx, ew.convert_element_type(k, to_aval(idx).dtype))
                ins = [
                    _taken_only(o, keep) if dtypes.is_inexact(to_aval(o).dtype) else o for o in ops
                ]
            outs, ods = batching.batch_eval(b, ins, odims)
            per_branch.append([batching.move_dim(o, d, 0, size) for o, d in zip(outs, ods)])
        results = []
        for k in range(n_out):
            cases = [outs[k] for outs in per_branch]
            if len(cases) == 1:
                results.append(cases[0])
                continue
            shape = to_aval(cases[0]).shape
            which = broadcast_in_dim(idx, shape, (0,)) if len(shape) > 1 else idx
            results.append(ew.select_n(which, *cases))
        return results, [0] * n_out
    out_b = [False] * n_out
    for b in branches:
        _, ods = batching.batch_program(b, odims, size)
        out_b = [x or d is not None for x, d in zip(out_b, ods)]
    out_dims = [0 if x else None for x in out_b]
    items = []
    for b in branches:
        bp, _ = batching.batch_program(b, odims, size, out_dims=out_dims)
        items.append(close(bp))
    progs, consts = join_consts(items)
    outs = bind(cond_p, index, *consts, *ops, branches=tuple(progs))
    return outs, out_dims


@cond_p.def_examples
def _cond_examples(rng: np.random.Generator) -> list[Example]:
    f64 = np.dtype("float64")
    avals = [Aval((3,), f64), Aval((3,), f64)]
    b0, _ = trace_program(lambda x, y: [ew.mul(ew.sin(x), y), x], avals, "cond")
    b1, _ = trace_program(lambda x, y: [ew.sub(ew.exp(x), y), ew.cos(y)], avals, "cond")
    b2, _ = trace_program(lambda x, y: [ew.mul(x, y), ew.mul(y, y)], avals, "cond")
    x, y = rand(rng, (3,)), rand(rng, (3,))
    return [
        Example([np.int32(0), x, y], {"branches": (b0, b1)}),
        Example([np.int32(1), x, y], {"branches": (b0, b1)}),
        Example([np.int32(2), x, y], {"branches": (b0, b1, b2)}),
    ]


# =========================================================================== while

while_p = Primitive("while", family=FAMILY, multiple_results=True)
#: reverse mode needs a static trip count: use scan / fori_loop with static bounds
while_p.reverse_differentiable = False


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
        from funcgrad import ad

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
    from funcgrad import batching
    from funcgrad.primitives.reductions import reduce_or
    from funcgrad.primitives.shape import broadcast_in_dim

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
    if pred_batched:
        carry_b = [True] * ncar
    cdims = carry_dims(carry_b)
    init = [rules.bdim_to_front(x, d, size) if b else x for x, d, b in zip(init, initd, carry_b)]
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
    p0 = {"cond_program": cond0, "body_program": body0, "cond_nconsts": 0, "body_nconsts": 1}
    p1 = {"cond_program": cond1, "body_program": body1, "cond_nconsts": 1, "body_nconsts": 0}
    small = {"lo": 0.2, "hi": 0.6}
    return [
        Example([rand(rng, (3,), lo=0.2, hi=0.8), np.float64(0.0), rand(rng, (3,))], p0),
        Example(
            [np.float64(1.5), np.float64(0.0), rand(rng, (3,), **small), rand(rng, (3,), **small)],
            p1,
        ),
    ]


# =========================================================================== scan

scan_p = Primitive("scan", family=FAMILY, multiple_results=True)


def _scan_split(xs: Sequence[Any], num_consts: int, num_carry: int) -> list[list]:
    return _split(xs, num_consts, num_carry)


@scan_p.def_abstract_eval
def _scan_abstract_eval(
    *avals: Aval, program: Program, length: int, reverse: bool, num_consts: int, num_carry: int
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
        from funcgrad import ad

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
    from funcgrad import ad, passes

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
        rules.instantiate(c, a.strip_weak())
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
    acc0 = [_zeros(a) for a, m in zip(c_avals, ct_c) if m]

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
    from funcgrad import batching

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
        lambda w, h, x: [ew.sin(ew.add(ew.mul(h, w), x)), ew.mul(h, h)], [v3, v3, v3], "scan"
    )
    # three carries, one output, no xs
    two, _ = trace_program(
        lambda s, a, b: [ew.add(s, 1.0), ew.mul(ew.cos(b), a), ew.add(b, ew.mul(a, s)), ew.sin(a)],
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
            [np.float64(0.5), rand(rng, (3,), lo=0.2, hi=0.8), rand(rng, (3,), lo=0.2, hi=0.8)],
            {"program": two, "length": 3, "reverse": False, "num_consts": 0, "num_carry": 3},
        ),
        Example(
            [rand(rng, (), lo=0.2, hi=0.5), rand(rng, (3,)), rand(rng, (5, 3))],
            {"program": mixed, "length": 5, "reverse": True, "num_consts": 1, "num_carry": 1},
        ),
    ]


# =========================================================================== wrappers


def cond(index: Any, *operands: Any, branches: Sequence[Program]) -> list:
    """``branches[index](*operands)`` for closed branch programs (lax-level)."""
    return bind(cond_p, index, *operands, branches=tuple(branches))


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
