"""Call-like primitives holding sub-programs: ``jit_call``, ``checkpoint``,
``custom_jvp_call``, ``custom_vjp_call``, plus ``stop_gradient`` and
``optimization_barrier``.

Their rules transform the sub-program as a whole (with :mod:`funcgrad.ad`
and :mod:`funcgrad.batching`) and bind the same primitive again, so a jitted
function stays one unit under ``grad`` and ``vmap``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import Tracer, bind, eval_program, is_tracing, new_builder, to_aval
from funcgrad.core.ir import Aval, Program, Var
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.lowering import lower_program
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand
from funcgrad.tree import tree_map

FAMILY = "calls"


def _check_call_avals(name: str, avals: tuple[Aval, ...], program: Program) -> list[Aval]:
    want = program.in_avals
    if len(avals) != len(want):
        raise TypeError(f"{name}: expected {len(want)} operands, got {len(avals)}")
    for i, (a, w) in enumerate(zip(avals, want)):
        if a.shape != w.shape or a.dtype != w.dtype:
            raise TypeError(f"{name}: operand {i} is {a}, the program expects {w}")
    return program.out_avals


def close(prog: Program) -> tuple[Program, tuple]:
    """(program with constvars turned into leading invars, the const values)."""
    if not prog.constvars:
        return prog, ()
    return Program(prog.constvars + prog.invars, (), prog.eqns, prog.outvars, ()), prog.consts


def _split_tangents(outs: list, n: int, out_nz: list[bool], avals: list[Aval]) -> tuple:
    primal, rest = outs[:n], iter(outs[n:])
    touts = [next(rest) if nz else Zero(a.strip_weak()) for nz, a in zip(out_nz, avals)]
    return primal, touts


# --------------------------------------------------------------------------- jit_call

jit_call_p = Primitive("jit_call", family=FAMILY, multiple_results=True)
#: ``jax.jit`` of each sub-program's lowering, by structure (transforms make fresh but
#: identical programs on every eager call); bounded, oldest dropped first
_compiled_subs: dict[Any, Any] = {}
_COMPILED_SUBS_MAX = 512


@jit_call_p.def_abstract_eval
def _jit_call_abstract_eval(*avals: Aval, program: Program, name: str) -> list[Aval]:
    return _check_call_avals("jit_call", avals, program)


@jit_call_p.def_lower
def _jit_call_lower(*vals: Any, program: Program, name: str) -> list:
    key = (program.key(), name)
    fn = _compiled_subs.get(key)
    if fn is None:
        lowered = lower_program(program)
        lowered.__name__ = name
        fn = _compiled_subs[key] = jax.jit(lowered)
        if len(_compiled_subs) > _COMPILED_SUBS_MAX:
            _compiled_subs.pop(next(iter(_compiled_subs)))
    return fn(*vals)


@jit_call_p.def_jvp
def _jit_call_jvp(primals: list, tangents: list, *, program: Program, name: str) -> tuple:
    from funcgrad import ad

    nz = [not is_zero(t) for t in tangents]
    jprog, out_nz = ad.jvp_program(program, nz)
    jprog, consts = close(jprog)
    outs = jit_call(
        jprog, *consts, *primals, *[t for t in tangents if not is_zero(t)], name=f"jvp_{name}"
    )
    return _split_tangents(outs, len(program.outvars), out_nz, program.out_avals)


def _jit_call_vjp_fwd(
    *primals: Any, program: Program, name: str, active: list | None = None
) -> tuple:
    from funcgrad import ad

    vp = ad.vjp_program(program, active=active)  # only what is differentiated outside
    fwd, fconsts = close(vp.fwd)
    res = jit_call(fwd, *fconsts, *primals, name=f"fwd_{name}")
    n = len(program.outvars)
    return res[:n], (vp, res[n:])


def _jit_call_vjp_bwd(res: tuple, cts: list, *, program: Program, name: str) -> list:
    vp, residuals = res
    bwd, bconsts = close(vp.bwd)
    cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, program.out_avals)]
    out = jit_call(bwd, *bconsts, *residuals, *cts, name=f"bwd_{name}")
    return [None if z else c for c, z in zip(out, vp.zero_cts)]


jit_call_p.vjp_fwd = _jit_call_vjp_fwd
jit_call_p.vjp_bwd = _jit_call_vjp_bwd
jit_call_p.vjp_fwd_active = True


@jit_call_p.def_batch
def _jit_call_batch(args: list, dims: list, *, program: Program, name: str) -> tuple:
    from funcgrad import batching

    size = rules.batch_size(args, dims)
    bprog, ods = batching.batch_program(program, dims, size)
    bprog, consts = close(bprog)
    return jit_call(bprog, *consts, *args, name=f"vmap_{name}"), ods


def _sub_program(fn: Callable, avals: list[Aval]) -> Program:
    with new_builder("jit") as b:
        prog = b.build(list(fn(*[b.new_arg(a) for a in avals])))
    return close(prog)[0] if not prog.consts else prog


@jit_call_p.def_examples
def _jit_call_examples(rng: np.random.Generator) -> list[Example]:
    from funcgrad.primitives import elementwise as ew

    avals = [Aval((3,), np.dtype("float64")), Aval((3,), np.dtype("float64"))]
    prog = _sub_program(lambda x, y: [ew.mul(ew.sin(x), y), ew.exp(x)], avals)
    return [Example([rand(rng, (3,)), rand(rng, (3,))], {"program": prog, "name": "f"})]


def jit_call(program: Program, *args: Any, name: str = "fun") -> list:
    """Call a closed sub-program as one unit."""
    return bind(jit_call_p, *args, program=program, name=name)


# --------------------------------------------------------------------------- stop_gradient

stop_gradient_p = Primitive("stop_gradient", family=FAMILY)
stop_gradient_p.abstract_eval = lambda x: x
stop_gradient_p.lower = lambda x: x
stop_gradient_p.batch = lambda args, dims: (stop_gradient(args[0]), dims[0])


@stop_gradient_p.def_jvp
def _stop_gradient_jvp(primals: list, tangents: list) -> tuple:
    out = stop_gradient(primals[0])
    return out, Zero(to_aval(out).strip_weak())


@stop_gradient_p.def_vjp
def _stop_gradient_vjp(ct: Any, x: Any, *, out: Any) -> tuple:
    return (None,)


# its derivative is zero by definition, so finite differences do not apply
stop_gradient_p.examples = lambda rng: [Example([rand(rng, (3,))], diff_argnums=())]


def stop_gradient(x: Any) -> Any:
    """``x`` (an array or a pytree of arrays) with no derivative flowing through it."""
    if isinstance(x, Tracer):
        return bind(stop_gradient_p, x)
    return tree_map(lambda leaf: bind(stop_gradient_p, leaf), x)


# --------------------------------------------------------------------------- optimization_barrier

optimization_barrier_p = Primitive("optimization_barrier", family=FAMILY, multiple_results=True)
optimization_barrier_p.abstract_eval = lambda *avals: list(avals)
optimization_barrier_p.lower = lambda *xs: list(lax.optimization_barrier(tuple(xs)))


@optimization_barrier_p.def_jvp
def _barrier_jvp(primals: list, tangents: list) -> tuple:
    return optimization_barrier(*primals), tangents


@optimization_barrier_p.def_vjp
def _barrier_vjp(cts: list, *xs: Any, out: Any) -> tuple:
    return tuple(cts)


@optimization_barrier_p.def_batch
def _barrier_batch(args: list, dims: list) -> tuple:
    return optimization_barrier(*args), dims


optimization_barrier_p.examples = lambda rng: [Example([rand(rng, (3,)), rand(rng, (2,))])]


def optimization_barrier(*xs: Any) -> list:
    """Identity that stops XLA (and funcgrad's CSE) from merging across it."""
    return bind(optimization_barrier_p, *xs)


# --------------------------------------------------------------------------- checkpoint

checkpoint_p = Primitive("checkpoint", family=FAMILY, multiple_results=True)


@checkpoint_p.def_abstract_eval
def _checkpoint_abstract_eval(*avals: Aval, program: Program, policy: Any = None) -> list[Aval]:
    return _check_call_avals("checkpoint", avals, program)


@checkpoint_p.def_lower
def _checkpoint_lower(*vals: Any, program: Program, policy: Any = None) -> list:
    return lower_program(program)(*vals)


@checkpoint_p.def_jvp
def _checkpoint_jvp(primals: list, tangents: list, *, program: Program, policy: Any = None):
    from funcgrad import ad

    nz = [not is_zero(t) for t in tangents]
    jprog, out_nz = ad.jvp_program(program, nz)
    jprog, consts = close(jprog)
    outs = bind(
        checkpoint_p,
        *consts,
        *primals,
        *[t for t in tangents if not is_zero(t)],
        program=jprog,
        policy=policy,
    )
    return _split_tangents(outs, len(program.outvars), out_nz, program.out_avals)


def _policy_saved_vars(fwd: Program, n_out: int, policy: Callable) -> list[Var]:
    """The values of ``fwd`` (a VJP forward program) to save for the backward pass:
    residuals and values on the way to them that ``policy(prim, *avals, **params)``
    calls saveable, where the recomputation of the other residuals would stop."""
    producer = {v: e for e in fwd.eqns for v in e.outvars}
    ok: dict[Any, bool] = {}

    def saveable(v: Var) -> bool:
        e = producer[v]
        if id(e) not in ok:
            ok[id(e)] = bool(policy(e.prim, *[a.aval for a in e.inputs], **e.params))
        return ok[id(e)]

    saved: dict[Var, None] = {}
    seen: set[Var] = set()
    todo = [r for r in fwd.outvars[n_out:] if type(r) is Var]
    while todo:
        v = todo.pop()
        if v in seen or v not in producer:  # inputs and constants are at hand
            continue
        seen.add(v)
        if saveable(v):
            saved[v] = None
            continue
        todo.extend(a for a in producer[v].inputs if type(a) is Var)
    return list(saved)


def _recompute(fwd: Program, n_out: int, primals: list, saved: list[Var], values: list) -> list:
    """``fwd``'s residuals from its inputs and the ``saved`` values, binding only the
    equations on the way from them (the recomputation)."""
    env: dict[Var, Any] = dict(zip(fwd.constvars, fwd.consts))
    env.update(zip(fwd.invars, primals))
    env.update(zip(saved, values))
    needed: set[Var] = {r for r in fwd.outvars[n_out:] if type(r) is Var and r not in env}
    marked = []
    for e in reversed(fwd.eqns):
        if any(v in needed for v in e.outvars):
            marked.append(e)
            needed.update(a for a in e.inputs if type(a) is Var and a not in env)
    for e in reversed(marked):
        out = bind(e.prim, *[env[a] if type(a) is Var else a.val for a in e.inputs], **e.params)
        outs = out if e.prim.multiple_results else [out]
        for v, o in zip(e.outvars, outs):
            env.setdefault(v, o)
    return [env[r] if type(r) is Var else r.val for r in fwd.outvars[n_out:]]


def _checkpoint_vjp_fwd(
    *primals: Any, program: Program, policy: Any = None, active: list | None = None
) -> tuple:
    if policy is None:  # save only the inputs
        outs = bind(checkpoint_p, *primals, program=program, policy=policy)
        return outs, (list(primals), active, None)
    from funcgrad import ad, passes

    vp = ad.vjp_program(program, active=active)
    n = len(program.outvars)
    saved = _policy_saved_vars(vp.fwd, n, policy)
    fwd = passes.dce(vp.fwd.replace(outvars=(*vp.fwd.outvars[:n], *saved)))
    res = eval_program(fwd, *primals)
    return res[:n], (list(primals), active, (vp, saved, res[n:]))


def _checkpoint_vjp_bwd(res: tuple, cts: list, *, program: Program, policy: Any = None) -> list:
    from funcgrad import ad

    primals, active, by_policy = res
    n = len(program.outvars)
    if by_policy is None:
        vp = ad.vjp_program(program, active=active)
        primals = optimization_barrier(*primals)  # keep the recomputation from being merged
        residuals = eval_program(vp.fwd, *primals)[n:]
    else:
        vp, saved, values = by_policy
        both = optimization_barrier(*primals, *values) if primals or values else []
        residuals = _recompute(vp.fwd, n, both[: len(primals)], saved, both[len(primals) :])
    cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, program.out_avals)]
    in_cts = eval_program(vp.bwd, *residuals, *cts)
    return [None if z else c for c, z in zip(in_cts, vp.zero_cts)]


checkpoint_p.vjp_fwd = _checkpoint_vjp_fwd
checkpoint_p.vjp_bwd = _checkpoint_vjp_bwd
checkpoint_p.vjp_fwd_active = True


@checkpoint_p.def_batch
def _checkpoint_batch(args: list, dims: list, *, program: Program, policy: Any = None) -> tuple:
    from funcgrad import batching

    size = rules.batch_size(args, dims)
    bprog, ods = batching.batch_program(program, dims, size)
    bprog, consts = close(bprog)
    return bind(checkpoint_p, *consts, *args, program=bprog, policy=policy), ods


@checkpoint_p.def_examples
def _checkpoint_examples(rng: np.random.Generator) -> list[Example]:
    from funcgrad.primitives import elementwise as ew

    avals = [Aval((3,), np.dtype("float64")), Aval((3,), np.dtype("float64"))]
    prog = _sub_program(lambda x, y: [ew.sin(ew.mul(ew.sin(x), y))], avals)
    return [Example([rand(rng, (3,)), rand(rng, (3,))], {"program": prog})]


# --------------------------------------------------------------------------- checkpoint_name

#: an identity that tags a value with a name, for ``checkpoint`` policies
#: (``save_only_these_names`` ...); JAX's ``name_p``
checkpoint_name_p = Primitive("checkpoint_name", family=FAMILY)
checkpoint_name_p.abstract_eval = lambda x, *, name: x
checkpoint_name_p.lower = lambda x, *, name: x


@checkpoint_name_p.def_jvp
def _checkpoint_name_jvp(primals: list, tangents: list, *, name: Any) -> tuple:
    return checkpoint_name(primals[0], name), tangents[0]


@checkpoint_name_p.def_vjp
def _checkpoint_name_vjp(ct: Any, x: Any, *, out: Any, name: Any) -> tuple:
    return (ct,)


@checkpoint_name_p.def_batch
def _checkpoint_name_batch(args: list, dims: list, *, name: Any) -> tuple:
    return checkpoint_name(args[0], name), dims[0]


checkpoint_name_p.examples = lambda rng: [Example([rand(rng, (3,))], {"name": "a"})]


def checkpoint_name(x: Any, name: Any) -> Any:
    """``x`` (a pytree of arrays) unchanged, tagged ``name`` for checkpoint policies."""
    if isinstance(x, Tracer):
        return bind(checkpoint_name_p, x, name=name)
    return tree_map(lambda leaf: bind(checkpoint_name_p, leaf, name=name), x)


# --------------------------------------------------------------------------- custom_jvp_call

custom_jvp_call_p = Primitive("custom_jvp_call", family=FAMILY, multiple_results=True)


@custom_jvp_call_p.def_abstract_eval
def _custom_jvp_abstract_eval(*avals: Aval, program: Program, jvp: Callable) -> list[Aval]:
    return _check_call_avals("custom_jvp_call", avals, program)


@custom_jvp_call_p.def_lower
def _custom_jvp_lower(*vals: Any, program: Program, jvp: Callable) -> list:
    return lower_program(program)(*vals)


@custom_jvp_call_p.def_jvp
def _custom_jvp_jvp(primals: list, tangents: list, *, program: Program, jvp: Callable) -> tuple:
    # zero tangents stay symbolic: the rule wrapper instantiates them or, for rules
    # defined with symbolic_zeros=True, passes them as SymbolicZero
    outs, touts = jvp(list(primals), list(tangents))
    return list(outs), list(touts)


class _InlineFlag(threading.local):
    depth = 0


_inline = _InlineFlag()


def inline_custom_jvp() -> bool:
    """Whether ``custom_jvp`` functions are being called inside the transpose of a
    custom rule's tangent map (they then run their own body; see ``custom_jvp``)."""
    return _inline.depth > 0


def _custom_jvp_vjp_fwd(
    *primals: Any, program: Program, jvp: Callable, active: list | None = None
) -> tuple:
    outs = bind(custom_jvp_call_p, *primals, program=program, jvp=jvp)
    act = [True] * len(primals) if active is None else list(active)
    return outs, (list(primals), act)


def _custom_jvp_vjp_bwd(res: tuple, cts: list, *, program: Program, jvp: Callable) -> list:
    # the custom JVP is linear in the tangents: its VJP in the tangents is the transpose;
    # inputs that are not differentiated get symbolic zero tangents (as in JAX)
    from funcgrad import api

    primals, act = res
    avals = [to_aval(p).strip_weak() for p in primals]
    zeros = [rules.zeros_like_aval(a) for a, on in zip(avals, act) if on]
    # outputs with a zero cotangent are left out of the transposed map (as JAX's
    # symbolic zeros: they contribute nothing, not a product with zero)
    live = [not is_zero(c) for c in cts]
    if not any(live):
        return [Zero(a) for a in avals]

    def tangent_map(*t: Any) -> list:
        it = iter(t)
        tans = [next(it) if on else Zero(a) for a, on in zip(avals, act)]
        return [t for t, on in zip(jvp(primals, tans)[1], live) if on]

    _inline.depth += 1
    try:
        touts, pullback = api.vjp(tangent_map, *zeros)
    finally:
        _inline.depth -= 1
    from funcgrad.primitives.elementwise import convert_element_type

    cts = [c for c, on in zip(cts, live) if on]
    # the rule's tangents may be wider than the outputs (weakly typed primals)
    cts = [
        c if to_aval(c).dtype == to_aval(t).dtype else convert_element_type(c, to_aval(t).dtype)
        for c, t in zip(cts, touts)
    ]
    got = iter(pullback(cts))
    return [next(got) if on else Zero(a) for a, on in zip(avals, act)]


custom_jvp_call_p.vjp_fwd = _custom_jvp_vjp_fwd
custom_jvp_call_p.vjp_bwd = _custom_jvp_vjp_bwd
custom_jvp_call_p.vjp_fwd_active = True


def _batch_all_to_front(args: list, dims: list, program: Program) -> tuple:
    """Custom-rule calls batch every operand and output at axis 0: returns the moved
    operands, the batched closed program (``None`` if batching introduced constants)
    and the number of outputs."""
    from funcgrad import batching

    size = rules.batch_size(args, dims)
    args = [rules.bdim_to_front(a, d, size) for a, d in zip(args, dims)]
    n_out = len(program.outvars)
    bprog, _ = batching.batch_program(program, [0] * len(args), size, out_dims=[0] * n_out)
    bprog, consts = close(bprog)
    return args, (None if consts else bprog), n_out


@custom_jvp_call_p.def_batch
def _custom_jvp_batch(args: list, dims: list, *, program: Program, jvp: Callable) -> tuple:
    from funcgrad import api, batching

    args, bprog, n_out = _batch_all_to_front(args, dims, program)
    if bprog is None:  # the batched body closed over values: evaluate it inline
        return batching.batch_eval(program, args, [0] * len(args))

    def bjvp(primals: list, tangents: list) -> tuple:
        # symbolic zero tangents stay symbolic (per example) inside the vmapped rule
        nz = [not is_zero(t) for t in tangents]
        zeros = [
            None if z else Zero(batching.unbatched_aval(t.aval, 0)) for t, z in zip(tangents, nz)
        ]

        def one(p: list, t_nz: list) -> tuple:
            it = iter(t_nz)
            ts = [next(it) if z else zero for z, zero in zip(nz, zeros)]
            return tuple(map(list, jvp(p, ts)))

        return api.vmap(one)(primals, [t for t, z in zip(tangents, nz) if z])

    return bind(custom_jvp_call_p, *args, program=bprog, jvp=bjvp), [0] * n_out


def _eqn_params_of(fun: Callable, *args: Any, prim: Primitive) -> dict:
    from funcgrad.api import make_ir

    prog = make_ir(fun)(*args)
    return next(e.params for e in prog.eqns if e.prim is prim)


@custom_jvp_call_p.def_examples
def _custom_jvp_examples(rng: np.random.Generator) -> list[Example]:
    from funcgrad.custom import custom_jvp
    from funcgrad.primitives import elementwise as ew

    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return ew.mul(ew.sin(x), y)

    @f.defjvp
    def _f_jvp(primals: tuple, tangents: tuple) -> tuple:
        (x, y), (tx, ty) = primals, tangents
        out = f(x, y)
        return out, ew.add(ew.mul(ew.mul(ew.cos(x), y), tx), ew.mul(ew.sin(x), ty))

    x, y = rand(rng, (3,)), rand(rng, (3,))
    return [Example([x, y], _eqn_params_of(f, x, y, prim=custom_jvp_call_p))]


# --------------------------------------------------------------------------- custom_vjp_call

custom_vjp_call_p = Primitive("custom_vjp_call", family=FAMILY, multiple_results=True)
custom_vjp_call_p.forward_differentiable = False  # JAX semantics: no jvp of a custom_vjp


@custom_vjp_call_p.def_abstract_eval
def _custom_vjp_abstract_eval(*avals: Aval, program: Program, fwd: Callable, bwd: Callable):
    return _check_call_avals("custom_vjp_call", avals, program)


@custom_vjp_call_p.def_lower
def _custom_vjp_lower(*vals: Any, program: Program, fwd: Callable, bwd: Callable) -> list:
    return lower_program(program)(*vals)


@custom_vjp_call_p.def_jvp
def _custom_vjp_jvp(primals: list, tangents: list, **params: Any) -> tuple:
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_vjp_vjp_fwd(
    *primals: Any, program: Program, fwd: Callable, bwd: Callable, active: list | None = None
) -> tuple:
    outs, res = fwd(list(primals), active)
    return list(outs), res


def _custom_vjp_vjp_bwd(res: Any, cts: list, *, program: Program, fwd: Callable, bwd: Callable):
    # zero cotangents stay symbolic: the rule wrapper instantiates them or, for rules
    # defined with symbolic_zeros=True, passes them as SymbolicZero
    from funcgrad import ad

    if ad.deferring_custom_bwd():  # api.vjp: the user's bwd runs when vjp_fn is applied
        return _defer_custom_bwd(res, cts, program, bwd)
    return list(bwd(res, cts))


custom_vjp_call_p.vjp_fwd = _custom_vjp_vjp_fwd
custom_vjp_call_p.vjp_bwd = _custom_vjp_vjp_bwd
custom_vjp_call_p.vjp_fwd_active = True


@custom_vjp_call_p.def_batch
def _custom_vjp_batch(args: list, dims: list, *, program: Program, fwd: Callable, bwd: Callable):
    from funcgrad import api

    args, bprog, n_out = _batch_all_to_front(args, dims, program)
    if bprog is None:  # the batched body closed over values: evaluate it inline
        from funcgrad import batching

        return batching.batch_eval(program, args, [0] * len(args))

    def bfwd(primals: list, active: list | None = None) -> tuple:
        return api.vmap(lambda p: tuple(fwd(p, active)))(primals)

    def bbwd(res: Any, cts: list) -> list:
        return api.vmap(lambda r, c: list(bwd(r, c)))(res, cts)

    return bind(custom_vjp_call_p, *args, program=bprog, fwd=bfwd, bwd=bbwd), [0] * n_out


@custom_vjp_call_p.def_examples
def _custom_vjp_examples(rng: np.random.Generator) -> list[Example]:
    from funcgrad.custom import custom_vjp
    from funcgrad.primitives import elementwise as ew

    @custom_vjp
    def f(x: Any, y: Any) -> Any:
        return ew.mul(ew.sin(x), y)

    def fwd(x: Any, y: Any) -> tuple:
        return f(x, y), (x, y)

    def bwd(res: tuple, g: Any) -> tuple:
        x, y = res
        return ew.mul(g, ew.mul(ew.cos(x), y)), ew.mul(g, ew.sin(x))

    f.defvjp(fwd, bwd)
    x, y = rand(rng, (3,)), rand(rng, (3,))
    # forward mode is not defined for custom_vjp (as in JAX): only reverse-mode checks apply
    return [Example([x, y], _eqn_params_of(f, x, y, prim=custom_vjp_call_p))]


# --------------------------------------------------------------------------- custom_vjp_bwd


class DeferredBwd:
    """A ``custom_vjp`` cotangent rule whose call is put off until the backward
    program runs: ``self(*operands)`` calls the user's ``bwd`` under the current
    interpreter. The operands are the residual leaves that are traced values and
    the nonzero output cotangents; the outputs are the cotangents of the call's
    inexact operands (zeros where ``bwd`` returns none). Compared by identity, so a
    program holding one is never confused with another's compiled executable."""

    def __init__(self, bwd: Callable, res: Any, cts: list, program: Program) -> None:
        from funcgrad.tree import tree_flatten

        leaves, self.res_tree = tree_flatten(res)
        self.res_is_op = [isinstance(x, Tracer) for x in leaves]
        self.res_static = [None if op else x for x, op in zip(leaves, self.res_is_op)]
        self.ct_avals = [a.strip_weak() for a in program.out_avals]
        self.ct_nonzero = [not is_zero(c) for c in cts]
        self.out_pos = [i for i, a in enumerate(program.in_avals) if dtypes.is_inexact(a.dtype)]
        self.out_avals = [program.in_avals[i].strip_weak() for i in self.out_pos]
        self.n_in = len(program.in_avals)
        self.operands = [x for x, op in zip(leaves, self.res_is_op) if op] + [
            c for c, nz in zip(cts, self.ct_nonzero) if nz
        ]
        self.in_avals = [to_aval(x) for x in self.operands]
        self.bwd = bwd

    def __call__(self, *operands: Any) -> list:
        from funcgrad.primitives.elementwise import convert_element_type
        from funcgrad.tree import tree_unflatten

        it = iter(operands)
        leaves = [next(it) if op else x for x, op in zip(self.res_static, self.res_is_op)]
        cts = [next(it) if nz else Zero(a) for a, nz in zip(self.ct_avals, self.ct_nonzero)]
        in_cts = list(self.bwd(tree_unflatten(self.res_tree, leaves), cts))
        outs = []
        for i, a in zip(self.out_pos, self.out_avals):
            c = rules.instantiate(in_cts[i], a)
            if to_aval(c).dtype != a.dtype:
                c = convert_element_type(c, a.dtype)
            outs.append(c)
        return outs

    def program(self) -> Program:
        """The user's ``bwd`` traced (abstractly) at the operands' avals."""
        with new_builder("custom_vjp_bwd") as b:
            return b.build(self(*[b.new_arg(a) for a in self.in_avals]))

    def __repr__(self) -> str:
        return f"DeferredBwd({getattr(self.bwd, '__qualname__', self.bwd)})"


custom_vjp_bwd_p = Primitive("custom_vjp_bwd", family=FAMILY, multiple_results=True)


def _defer_custom_bwd(res: Any, cts: list, program: Program, bwd: Callable) -> list:
    d = DeferredBwd(bwd, res, cts, program)
    outs = iter(bind(custom_vjp_bwd_p, *d.operands, bwd=d))
    got = [None] * d.n_in
    for i in d.out_pos:
        got[i] = next(outs)
    return got


@custom_vjp_bwd_p.def_abstract_eval
def _custom_vjp_bwd_abstract_eval(*avals: Aval, bwd: DeferredBwd) -> list[Aval]:
    if [(a.shape, a.dtype) for a in avals] != [(a.shape, a.dtype) for a in bwd.in_avals]:
        raise TypeError(f"custom_vjp_bwd: operands {list(avals)}, expected {bwd.in_avals}")
    return bwd.out_avals


@custom_vjp_bwd_p.def_lower
def _custom_vjp_bwd_lower(*vals: Any, bwd: DeferredBwd) -> list:
    prog = bwd.program()
    outs = lower_program(prog)(*prog.consts, *vals)
    return [jax.numpy.asarray(o, a.dtype) for o, a in zip(outs, bwd.out_avals)]


@custom_vjp_bwd_p.def_jvp
def _custom_vjp_bwd_jvp(primals: list, tangents: list, *, bwd: DeferredBwd) -> tuple:
    from funcgrad import ad

    return ad.jvp_eval(bwd.program(), primals, tangents)


def _custom_vjp_bwd_vjp_fwd(*primals: Any, bwd: DeferredBwd) -> tuple:
    from funcgrad import ad

    vp = ad.vjp_program(bwd.program())
    out_res = eval_program(vp.fwd, *primals)
    n = len(bwd.out_avals)
    return out_res[:n], (vp, out_res[n:])


def _custom_vjp_bwd_vjp_bwd(res: tuple, cts: list, *, bwd: DeferredBwd) -> list:
    vp, residuals = res
    cts = [rules.instantiate(c, a) for c, a in zip(cts, bwd.out_avals)]
    in_cts = eval_program(vp.bwd, *residuals, *cts)
    return [None if z else c for c, z in zip(in_cts, vp.zero_cts)]


custom_vjp_bwd_p.vjp_fwd = _custom_vjp_bwd_vjp_fwd
custom_vjp_bwd_p.vjp_bwd = _custom_vjp_bwd_vjp_bwd


@custom_vjp_bwd_p.def_batch
def _custom_vjp_bwd_batch(args: list, dims: list, *, bwd: DeferredBwd) -> tuple:
    from funcgrad import batching

    return batching.batch_eval(bwd.program(), args, dims)


@custom_vjp_bwd_p.def_examples
def _custom_vjp_bwd_examples(rng: np.random.Generator) -> list[Example]:
    from funcgrad import ad
    from funcgrad.api import make_ir
    from funcgrad.custom import custom_vjp
    from funcgrad.primitives import elementwise as ew

    @custom_vjp
    def f(x: Any, y: Any) -> Any:
        return ew.mul(ew.sin(x), y)

    def bwd(res: tuple, g: Any) -> tuple:
        x, y = res
        return ew.mul(g, ew.mul(ew.cos(x), y)), ew.mul(g, ew.sin(x))

    f.defvjp(lambda x, y: (f(x, y), (x, y)), bwd)
    x, y = rand(rng, (3,)), rand(rng, (3,))
    vp = ad.vjp_program(make_ir(f)(x, y), defer_custom_bwd=True)
    eqn = next(e for e in vp.bwd.eqns if e.prim is custom_vjp_bwd_p)
    return [Example([rand(rng, a.shape) for a in eqn.params["bwd"].in_avals], eqn.params)]


def run_backward(prog: Program, *args: Any) -> list:
    """Run a backward program built with ``defer_custom_bwd``: the deferred
    ``custom_vjp`` ``bwd`` rules are called now, inline (eagerly on a trace whose
    inputs are known, so they may read values), and the result runs as one program."""
    from funcgrad.lowering import run_program

    if not any(e.prim is custom_vjp_bwd_p for e in prog.eqns):
        return run_program(prog, *args)
    if is_tracing():
        return _eval_calling_bwd(prog, args)
    with new_builder("vjp") as b:
        ins = [b.new_arg(to_aval(x), x) for x in args]
        resolved = b.build(_eval_calling_bwd(prog, ins))
    return run_program(resolved, *args)


def _eval_calling_bwd(prog: Program, args: Any) -> list:
    env: dict[Any, Any] = dict(zip(prog.constvars, prog.consts))
    env.update(zip(prog.invars, args))
    for e in prog.eqns:
        ins = [env[a] if type(a) is Var else a.val for a in e.inputs]
        if e.prim is custom_vjp_bwd_p:
            out = e.params["bwd"](*ins)
        else:
            out = bind(e.prim, *ins, **e.params)
        env.update(zip(e.outvars, out if e.prim.multiple_results else [out]))
    return [env[a] if type(a) is Var else a.val for a in prog.outvars]
