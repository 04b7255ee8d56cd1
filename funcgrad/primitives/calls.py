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

from funcgrad.core.interp import Tracer, bind, eval_program, new_builder, to_aval
from funcgrad.core.ir import Aval, Program
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


def _jit_call_vjp_fwd(*primals: Any, program: Program, name: str) -> tuple:
    from funcgrad import ad

    vp = ad.vjp_program(program)
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
def _checkpoint_abstract_eval(*avals: Aval, program: Program) -> list[Aval]:
    return _check_call_avals("checkpoint", avals, program)


@checkpoint_p.def_lower
def _checkpoint_lower(*vals: Any, program: Program) -> list:
    return lower_program(program)(*vals)


@checkpoint_p.def_jvp
def _checkpoint_jvp(primals: list, tangents: list, *, program: Program) -> tuple:
    from funcgrad import ad

    nz = [not is_zero(t) for t in tangents]
    jprog, out_nz = ad.jvp_program(program, nz)
    jprog, consts = close(jprog)
    outs = bind(
        checkpoint_p, *consts, *primals, *[t for t in tangents if not is_zero(t)], program=jprog
    )
    return _split_tangents(outs, len(program.outvars), out_nz, program.out_avals)


def _checkpoint_vjp_fwd(*primals: Any, program: Program) -> tuple:
    outs = bind(checkpoint_p, *primals, program=program)
    return outs, list(primals)  # save only the inputs


def _checkpoint_vjp_bwd(res: list, cts: list, *, program: Program) -> list:
    from funcgrad import ad

    vp = ad.vjp_program(program)
    primals = optimization_barrier(*res)  # keep the recomputation from being merged away
    out_res = eval_program(vp.fwd, *primals)
    residuals = out_res[len(program.outvars) :]
    cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, program.out_avals)]
    in_cts = eval_program(vp.bwd, *residuals, *cts)
    return [None if z else c for c, z in zip(in_cts, vp.zero_cts)]


checkpoint_p.vjp_fwd = _checkpoint_vjp_fwd
checkpoint_p.vjp_bwd = _checkpoint_vjp_bwd


@checkpoint_p.def_batch
def _checkpoint_batch(args: list, dims: list, *, program: Program) -> tuple:
    from funcgrad import batching

    size = rules.batch_size(args, dims)
    bprog, ods = batching.batch_program(program, dims, size)
    bprog, consts = close(bprog)
    return bind(checkpoint_p, *consts, *args, program=bprog), ods


@checkpoint_p.def_examples
def _checkpoint_examples(rng: np.random.Generator) -> list[Example]:
    from funcgrad.primitives import elementwise as ew

    avals = [Aval((3,), np.dtype("float64")), Aval((3,), np.dtype("float64"))]
    prog = _sub_program(lambda x, y: [ew.sin(ew.mul(ew.sin(x), y))], avals)
    return [Example([rand(rng, (3,)), rand(rng, (3,))], {"program": prog})]


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

    def tangent_map(*t: Any) -> list:
        it = iter(t)
        tans = [next(it) if on else Zero(a) for a, on in zip(avals, act)]
        return list(jvp(primals, tans)[1])

    _inline.depth += 1
    try:
        touts, pullback = api.vjp(tangent_map, *zeros)
    finally:
        _inline.depth -= 1
    from funcgrad.primitives.elementwise import convert_element_type

    cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, program.out_avals)]
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
    from funcgrad import api

    args, bprog, n_out = _batch_all_to_front(args, dims, program)
    if bprog is None:  # the batched body closed over values: evaluate it inline
        from funcgrad import batching

        return batching.batch_eval(program, args, [0] * len(args))

    def bjvp(primals: list, tangents: list) -> tuple:
        outs, touts = api.vmap(lambda p, t: tuple(map(list, jvp(p, t))))(primals, tangents)
        return outs, touts

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
    raise TypeError(
        "can't apply forward-mode autodiff (jvp) to a custom_vjp function; "
        "use custom_jvp or reverse mode (grad/vjp)"
    )


def _custom_vjp_vjp_fwd(
    *primals: Any, program: Program, fwd: Callable, bwd: Callable, active: list | None = None
) -> tuple:
    outs, res = fwd(list(primals), active)
    return list(outs), res


def _custom_vjp_vjp_bwd(res: Any, cts: list, *, program: Program, fwd: Callable, bwd: Callable):
    cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, program.out_avals)]
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
