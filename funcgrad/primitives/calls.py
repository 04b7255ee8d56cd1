"""Call-like primitives holding sub-programs: ``jit_call``, ``checkpoint`` and
``composite`` (a named region lowered to a StableHLO composite op), plus ``stop_gradient``, ``optimization_barrier`` and ``checkpoint_name``
(the custom-derivative calls are in :mod:`funcgrad.primitives.custom_calls`).

Their rules transform the sub-program as a whole (with :mod:`funcgrad.ad`
and :mod:`funcgrad.batching`, which sit below the primitives) and bind the same
primitive again, so a jitted function stays one unit under ``grad`` and ``vmap``.
:func:`fuse_calls` is ``jit_call``'s program pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import lax
from jax.sharding import AxisType, Mesh, NamedSharding, use_abstract_mesh

from funcgrad import ad, batching, passes, taylor
from funcgrad.core import tiers
from funcgrad.core.ad_util import close
from funcgrad.core.compile_cache import compiled
from funcgrad.core.host import fix_dtype
from funcgrad.core.interp import Tracer, bind, eval_program, new_builder, to_aval
from funcgrad.core.ir import Aval, Eqn, Literal, Program, Var
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand
from funcgrad.primitives.sharding import (
    batched_sharding,
    current_spmd_axis,
    sharding_constraint_p,
)
from funcgrad.tree_util import tree_map

FAMILY = "calls"


def _check_call_avals(name: str, avals: tuple[Aval, ...], program: Program) -> list[Aval]:
    want = program.in_avals
    if len(avals) != len(want):
        raise TypeError(f"{name}: expected {len(want)} operands, got {len(avals)}")
    for i, (a, w) in enumerate(zip(avals, want)):
        if a.shape != w.shape or a.dtype != w.dtype:
            raise TypeError(f"{name}: operand {i} is {a}, the program expects {w}")
    return program.out_avals


_SCALARS = (bool, int, float, complex)


def host_inputs(invars: Sequence[Var], vals: Sequence[Any]) -> list:
    """Host values (:mod:`funcgrad.core.host`) for a sub-program's inputs ``invars``: a
    weakly typed Python scalar of the enclosing program reaching a strongly typed input
    becomes an array of exactly its dtype, so the sub-program computes in that dtype, as
    its lowering does; NumPy values pass as they are."""
    return [
        v if type(v) in _SCALARS and x.aval.weak_type else fix_dtype(v, x.aval.dtype)
        for v, x in zip(vals, invars)
    ]


def host_call(program: Program, vals: Sequence[Any]) -> list:
    """``program`` evaluated on host values (the host rule of a call): its inputs as
    :func:`host_inputs` makes them, its plan from :func:`funcgrad.core.tiers.host_eval`."""
    return tiers.host_eval(program, *host_inputs(program.invars, vals))


def _split_tangents(outs: list, n: int, out_nz: list[bool], avals: list[Aval]) -> tuple:
    primal, rest = outs[:n], iter(outs[n:])
    touts = [next(rest) if nz else Zero(a.strip_weak()) for nz, a in zip(out_nz, avals)]
    return primal, touts


# --------------------------------------------------------------------------- jit_call

jit_call_p = Primitive("jit_call", family=FAMILY, multiple_results=True, vjp_fwd_active=True)


@jit_call_p.def_abstract_eval
def _jit_call_abstract_eval(
    *avals: Aval, program: Program, name: str, in_shardings: Any = None, out_shardings: Any = None
) -> list[Aval]:
    return _check_call_avals("jit_call", avals, program)


@jit_call_p.def_lower
def _jit_call_lower(
    *vals: Any, program: Program, name: str, in_shardings: Any = None, out_shardings: Any = None
) -> list:
    # the executable of the sub-program's structure (transforms make fresh but identical
    # programs on every eager call); inside an outer lowering it is a nested jax.jit,
    # whose shardings JAX reads as constraints; evaluated alone on arrays, JAX checks
    # committed operands against ``in_shardings`` (its error for a mismatch)
    placed = {}
    if in_shardings is not None:
        placed["in_shardings"] = in_shardings
    if out_shardings is not None:
        placed["out_shardings"] = list(out_shardings)  # (the lowering returns a list)
    return compiled(program, name=name, **placed)(*vals)


# jit_call has no host rule: a ``jit`` the user asked for (or a jit unit, like the random
# samplers whose fused arithmetic matches JAX's bit for bit) runs its executable even
# inside eager work on the host tier (the plan's compiled fallback for the equation)


def _as_partial_sum(ct: Any, primal: Aval) -> Any:
    """``ct`` resharded to the cotangent type of an output ``primal`` unreduced or reduced
    over mesh axes (the backward program's argument is typed so: ``ad.cotangent_aval``)."""
    want = ad.cotangent_aval(primal).sharding
    if want is None or not (want.spec.unreduced or want.spec.reduced):
        return ct
    if to_aval(ct).sharding == want:
        return ct
    return bind(sharding_constraint_p, ct, sharding=want, kind="reshard")


def _lead(n: int, shardings: Sequence[Any]) -> tuple:
    """``shardings`` after ``n`` unspecified entries (a call's leading constants)."""
    return (None,) * n + tuple(shardings)


def _placed(extra: dict, ins: Callable, outs: Callable) -> dict:
    """``extra`` with a ``jit_call``'s ``in_shardings``/``out_shardings`` (if any) mapped
    through ``ins``/``outs`` for the operands and results of a transformed call."""
    i, o = extra.get("in_shardings"), extra.get("out_shardings")
    if i is None and o is None:
        return extra
    return {
        **extra,
        "in_shardings": None if i is None else ins(i),
        "out_shardings": None if o is None else outs(o),
    }


def _batched_shardings(shardings: Sequence[Any], avals: Sequence[Aval], dims: Sequence) -> tuple:
    """Shardings of batched values: the batch axis inserted where ``dims`` says (split over
    the ``vmap``'s ``spmd_axis_name``, as JAX's batching of a jit's shardings)."""
    return tuple(
        s if s is None or d is None else batched_sharding(s, a.ndim, d, current_spmd_axis())
        for s, a, d in zip(shardings, avals, dims)
    )


def _call_rules(prim: Primitive, cts_in: Callable | None = None) -> None:
    """JVP, VJP and batching rules for a call primitive ``prim`` whose params are its
    ``program``, a ``name`` and fixed others (``mesh_call``'s mesh; a ``jit_call``'s
    shardings, mapped to the transformed call's operands and results as JAX maps a
    jit's): each transforms the program as a whole and binds ``prim`` again.
    ``cts_in(cts, **extra)`` prepares the cotangents entering the backward call."""

    def call(program: Program, args: Sequence[Any], name: str, extra: dict) -> list:
        return bind(prim, *args, program=program, name=name, **extra)

    def jvp(primals: list, tangents: list, *, program: Program, name: str, **extra: Any):
        nz = [not is_zero(t) for t in tangents]
        jprog, out_nz = ad.jvp_program(program, nz)
        jprog, consts = close(jprog)
        args = [*consts, *primals, *[t for t in tangents if not is_zero(t)]]
        extra = _placed(
            extra,
            lambda s: _lead(len(consts), (*s, *(x for x, z in zip(s, nz) if z))),
            lambda s: (*s, *(x for x, z in zip(s, out_nz) if z)),
        )
        outs = call(jprog, args, f"jvp_{name}", extra)
        return _split_tangents(outs, len(program.outvars), out_nz, program.out_avals)

    def vjp_fwd(
        *primals: Any, program: Program, name: str, active: list | None = None, **extra: Any
    ) -> tuple:
        vp = ad.vjp_program(program, active=active)  # only what is differentiated outside
        fwd, fconsts = close(vp.fwd)
        n = len(program.outvars)
        fextra = _placed(
            extra,
            lambda s: _lead(len(fconsts), s),
            lambda s: (*s, *(None,) * (len(fwd.outvars) - n)),
        )
        res = call(fwd, [*fconsts, *primals], f"fwd_{name}", fextra)
        return res[:n], (vp, res[n:])

    def vjp_bwd(res: tuple, cts: list, *, program: Program, name: str, **extra: Any) -> list:
        vp, residuals = res
        bwd, bconsts = close(vp.bwd)
        cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, program.out_avals)]
        cts = [_as_partial_sum(c, a) for c, a in zip(cts, program.out_avals)]
        if cts_in is not None:
            cts = cts_in(cts, **extra)
        # (JAX's transpose of a jit: the cotangents enter with the outputs' shardings
        # and leave with the operands')
        i, o = extra.get("in_shardings"), extra.get("out_shardings")
        if i is not None or o is not None:
            ct_in = (None,) * len(cts) if o is None else o
            extra = {
                **extra,
                "in_shardings": _lead(len(bconsts) + len(residuals), ct_in),
                "out_shardings": i,
            }
        out = call(bwd, [*bconsts, *residuals, *cts], f"bwd_{name}", extra)
        return [None if z else c for c, z in zip(out, vp.zero_cts)]

    def batch(args: list, dims: list, *, program: Program, name: str, **extra: Any) -> tuple:
        size = rules.batch_size(args, dims)
        bprog, ods = batching.batch_program(program, dims, size)
        bprog, consts = close(bprog)
        extra = _placed(
            extra,
            lambda s: _lead(len(consts), _batched_shardings(s, program.in_avals, dims)),
            lambda s: _batched_shardings(s, program.out_avals, ods),
        )
        return call(bprog, [*consts, *args], f"vmap_{name}", extra), ods

    prim.jvp, prim.vjp_fwd, prim.vjp_bwd, prim.batch = jvp, vjp_fwd, vjp_bwd, batch


_call_rules(jit_call_p)
jit_call_p.jet = taylor.call_jet(lambda p, args, name: jit_call(p, *args, name=f"jet_{name}"))


def _sub_program(fn: Callable, avals: list[Aval]) -> Program:
    with new_builder("jit") as b:
        prog = b.build(list(fn(*[b.new_arg(a) for a in avals])))
    return close(prog)[0] if not prog.consts else prog


@jit_call_p.def_examples
def _jit_call_examples(rng: np.random.Generator) -> list[Example]:
    avals = [Aval((3,), np.dtype("float64")), Aval((3,), np.dtype("float64"))]
    prog = _sub_program(lambda x, y: [ew.mul(ew.sin(x), y), ew.exp(x)], avals)
    return [Example([rand(rng, (3,)), rand(rng, (3,))], {"program": prog, "name": "f"})]


def jit_call(
    program: Program,
    *args: Any,
    name: str = "fun",
    in_shardings: Sequence[Any] | None = None,
    out_shardings: Sequence[Any] | None = None,
) -> list:
    """Call a closed sub-program as one unit. ``in_shardings``/``out_shardings`` (one
    entry per operand/result, ``None`` where unspecified) are a ``jit``'s: inside an
    outer program they constrain the operands and results; evaluated on arrays, a
    committed operand placed otherwise is JAX's error."""
    placed = {}
    if in_shardings is not None and any(x is not None for x in in_shardings):
        placed["in_shardings"] = tuple(in_shardings)
    if out_shardings is not None and any(x is not None for x in out_shardings):
        placed["out_shardings"] = tuple(out_shardings)
    if placed:
        tiers.PLACED_CALLS[0] = True
    return bind(jit_call_p, *args, program=program, name=name, **placed)


def widen_placement(params: dict, n_in: int, n_out: int) -> dict:
    """A ``jit_call``'s ``params`` for a rewritten call taking ``n_in`` more leading
    operands and giving ``n_out`` more leading results, all unplaced."""
    return _placed(params, lambda s: _lead(n_in, s), lambda s: _lead(n_out, s))


# --------------------------------------------------------------------------- mesh_call

#: a region traced under another abstract mesh (``sharding.auto_axes``/``explicit_axes``:
#: the same devices, other axis types); JAX checks that every operation's operands are
#: typed over the mesh of its context, so the region lowers inside that mesh
mesh_call_p = Primitive("mesh_call", family=FAMILY, multiple_results=True, vjp_fwd_active=True)


@mesh_call_p.def_abstract_eval
def _mesh_call_abstract_eval(*avals: Aval, program: Program, name: str, mesh: Any) -> list:
    return _check_call_avals("mesh_call", avals, program)


@mesh_call_p.def_lower
def _mesh_call_lower(*vals: Any, program: Program, name: str, mesh: Any) -> list:
    with use_abstract_mesh(mesh):
        return compiled(program, name=name)(*vals)


def _into_mesh(cts: list, *, mesh: Any) -> list:
    """Cotangents from outside the region resharded into its mesh (their splits over the
    axes still explicit there), as the values entering it are."""
    out = []
    for c in cts:
        s = to_aval(c).sharding
        if s is None or s.mesh == mesh:
            out.append(c)
            continue
        explicit = set(mesh.explicit_axes)
        spec = [
            e
            if e is not None and all(a in explicit for a in (e if isinstance(e, tuple) else (e,)))
            else None
            for e in s.spec.partitions
        ]
        target = NamedSharding(mesh, s.spec.update(partitions=tuple(spec)))
        out.append(bind(sharding_constraint_p, c, sharding=target, kind="reshard"))
    return out


_call_rules(mesh_call_p, cts_in=_into_mesh)


@mesh_call_p.def_examples
def _mesh_call_examples(rng: np.random.Generator) -> list[Example]:
    avals = [Aval((3,), np.dtype("float64"))]
    prog = _sub_program(lambda x: [ew.mul(ew.sin(x), x)], avals)
    mesh = Mesh(jax.devices()[:1], ("i",), axis_types=(AxisType.Auto,)).abstract_mesh
    return [Example([rand(rng, (3,))], {"program": prog, "name": "f", "mesh": mesh})]


def mesh_call(program: Program, *args: Any, name: str, mesh: Any) -> list:
    """Call a closed sub-program traced under the abstract ``mesh`` as one unit."""
    return bind(mesh_call_p, *args, program=program, name=name, mesh=mesh)


# --------------------------------------------------------------------------- stop_gradient

stop_gradient_p = Primitive("stop_gradient", family=FAMILY, differentiable=False)
stop_gradient_p.abstract_eval = lambda x: x
stop_gradient_p.lower = lambda x: x
stop_gradient_p.host = lambda x: x
stop_gradient_p.host_reshape = lambda x_shape: tuple(x_shape)  # (its operand's values)
rules.def_vectorized_unary(stop_gradient_p)


# non-differentiable: its derivative is zero by definition (no tangent, no cotangent, and
# its output is no longer active in a reverse pass), so finite differences do not apply
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
# on the host tier nothing is fused or reordered across an equation: the identity
optimization_barrier_p.host = lambda *xs: list(xs)


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

checkpoint_p = Primitive("checkpoint", family=FAMILY, multiple_results=True, vjp_fwd_active=True)


@checkpoint_p.def_abstract_eval
def _checkpoint_abstract_eval(*avals: Aval, program: Program, policy: Any = None) -> list[Aval]:
    return _check_call_avals("checkpoint", avals, program)


def _checkpoint_prune(used: list[bool], *, program: Program, policy: Any = None) -> dict:
    return {"program": passes.dce(program, used), "policy": policy}


checkpoint_p.prune_outputs = _checkpoint_prune


@checkpoint_p.def_lower
def _checkpoint_lower(*vals: Any, program: Program, policy: Any = None) -> list:
    return lower_program(program)(*vals)


@checkpoint_p.def_host
def _checkpoint_host(*vals: Any, program: Program, policy: Any = None) -> list:
    return host_call(program, vals)


@checkpoint_p.def_jvp
def _checkpoint_jvp(primals: list, tangents: list, *, program: Program, policy: Any = None):
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
    if passes.has_io_callback(program):
        # the backward pass runs the program again: its side effects would repeat
        raise NotImplementedError(
            "Effects not supported in partial-eval of `checkpoint`/`remat`: io_callback "
            "(the recomputation would run it again)"
        )
    if policy is None:  # save only the inputs
        outs = bind(checkpoint_p, *primals, program=program, policy=policy)
        return outs, (list(primals), active, None)
    vp = ad.vjp_program(program, active=active)
    n = len(program.outvars)
    saved = _policy_saved_vars(vp.fwd, n, policy)
    fwd = passes.dce(vp.fwd.replace(outvars=(*vp.fwd.outvars[:n], *saved)))
    res = eval_program(fwd, *primals)
    return res[:n], (list(primals), active, (vp, saved, res[n:]))


def _checkpoint_vjp_bwd(res: tuple, cts: list, *, program: Program, policy: Any = None) -> list:
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


@checkpoint_p.def_batch
def _checkpoint_batch(args: list, dims: list, *, program: Program, policy: Any = None) -> tuple:
    size = rules.batch_size(args, dims)
    bprog, ods = batching.batch_program(program, dims, size)
    bprog, consts = close(bprog)
    return bind(checkpoint_p, *consts, *args, program=bprog, policy=policy), ods


@checkpoint_p.def_examples
def _checkpoint_examples(rng: np.random.Generator) -> list[Example]:
    avals = [Aval((3,), np.dtype("float64")), Aval((3,), np.dtype("float64"))]
    prog = _sub_program(lambda x, y: [ew.sin(ew.mul(ew.sin(x), y))], avals)
    return [Example([rand(rng, (3,)), rand(rng, (3,))], {"program": prog})]


# --------------------------------------------------------------------------- checkpoint_name

#: an identity that tags a value with a name, for ``checkpoint`` policies
#: (``save_only_these_names`` ...); JAX's ``name_p``
checkpoint_name_p = Primitive("checkpoint_name", family=FAMILY)
checkpoint_name_p.abstract_eval = lambda x, *, name: x
checkpoint_name_p.lower = lambda x, *, name: x
checkpoint_name_p.host = lambda x, *, name: x


@checkpoint_name_p.def_jvp
def _checkpoint_name_jvp(primals: list, tangents: list, *, name: Any) -> tuple:
    return checkpoint_name(primals[0], name), tangents[0]


@checkpoint_name_p.def_vjp
def _checkpoint_name_vjp(ct: Any, x: Any, *, out: Any, name: Any) -> tuple:
    return (ct,)


rules.def_vectorized_unary(checkpoint_name_p)


checkpoint_name_p.examples = lambda rng: [Example([rand(rng, (3,))], {"name": "a"})]


def checkpoint_name(x: Any, name: Any) -> Any:
    """``x`` (a pytree of arrays) unchanged, tagged ``name`` for checkpoint policies."""
    if isinstance(x, Tracer):
        return bind(checkpoint_name_p, x, name=name)
    return tree_map(lambda leaf: bind(checkpoint_name_p, leaf, name=name), x)


# --------------------------------------------------------------------------- composite

#: ``lax.composite``: a region named for the compiler (``stablehlo.composite``), computed
#: by its decomposition. As JAX's, it has no derivative and no batching rule: the rules
#: raise JAX's errors, pointing to ``custom_jvp`` (or ``vmap`` of the decomposition).
composite_p = Primitive("composite", family=FAMILY, multiple_results=True)


class CompositeAttribute:
    """A static attribute of a composite (a NumPy array compared by value, so equal
    programs share their compiled form)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def _key(self) -> Any:
        v = self.value
        if isinstance(v, np.ndarray):
            return ("array", v.dtype.str, v.shape, v.tobytes())
        return ("value", type(v).__name__, v)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CompositeAttribute) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return repr(self.value)


# params: ``program`` (inputs: the ``inline`` constants, then the operands), ``name``,
# ``attributes`` (pairs of name and CompositeAttribute), ``version``, ``inline`` (scalar
# constants of the decomposition, kept in it as JAX keeps literals)


@composite_p.def_abstract_eval
def _composite_abstract_eval(*avals: Aval, program: Program, inline: tuple, **_: Any) -> list:
    want = program.in_avals[len(inline) :]
    if [(a.shape, a.dtype) for a in avals] != [(w.shape, w.dtype) for w in want]:
        raise TypeError(f"composite: operands {list(avals)}, the decomposition expects {want}")
    return program.out_avals


@composite_p.def_lower
def _composite_lower(
    *vals: Any, program: Program, name: str, attributes: tuple, version: int, inline: tuple
) -> list:
    # JAX's own composite, so the StableHLO is what jax.lax.composite writes (the
    # decomposition as a private function named ``name``, the attributes on the op)
    run = lower_program(program)
    consts = [c.value for c in inline]
    attrs = {k: a.value for k, a in attributes}
    outs = lax.composite(lambda *a, **_: run(*consts, *a), name, version)(*vals, **attrs)
    return list(outs)


@composite_p.def_host
def _composite_host(*vals: Any, program: Program, inline: tuple, **_: Any) -> list:
    return host_call(program, [*(c.value for c in inline), *vals])


@composite_p.def_jvp
def _composite_jvp(primals: list, tangents: list, **_: Any) -> tuple:
    raise ValueError(  # (JAX's words, which name JAX's decorator; then funcgrad's)
        "JVP rule for composite not implemented. You can use `jax.custom_jvp` to add support. "
        "See https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html "
        "(in funcgrad: funcgrad.custom_jvp)"
    )


@composite_p.def_vjp
def _composite_vjp(cts: list, *primals: Any, out: Any, **_: Any) -> tuple:
    # (JAX's reverse mode linearizes first, so it meets the JVP rule's error)
    return _composite_jvp(list(primals), [])


@composite_p.def_batch
def _composite_batch(args: list, dims: list, **_: Any) -> tuple:
    raise NotImplementedError("Batching rule for 'composite' not implemented")


@composite_p.def_examples
def _composite_examples(rng: np.random.Generator) -> list[Example]:
    avals = [Aval((3,), np.dtype("float64"))]
    prog = _sub_program(lambda x: [ew.mul(x, x), ew.sin(x)], avals)
    params = {
        "program": prog,
        "name": "my.square_sin",
        "attributes": (("k", CompositeAttribute(3)),),
        "version": 0,
        "inline": (),
    }
    return [Example([rand(rng, (3,))], params, diff_argnums=(), batch_argnums=())]


# --------------------------------------------------------------------------- jit_call fusion


def fuse_calls(prog: Program) -> Program:
    """Merge a ``jit_call`` with a later ``jit_call`` that consumes its outputs.

    Legal when every other input of the later call is defined before the first:
    the pair then runs as one call placed where the first was. This is what turns
    ``grad(jit(f))`` — the inner function's forward call and its backward call
    seeded with a constant cotangent — into one call holding ``f``'s whole
    value-and-gradient program. Applied again inside the fused program, so
    nested jits fuse too.
    """
    if sum(e.prim is jit_call_p for e in prog.eqns) < 2:
        return prog
    eqns = list(prog.eqns)
    fused_any = False
    while True:
        pair = _fusable_pair(eqns, jit_call_p)
        if pair is None:
            break
        i, j = pair
        used_later = {a for k, e in enumerate(eqns) if k != j for a in e.inputs}
        used_later.update(a for a in prog.outvars if isinstance(a, Var))
        fused = _fuse_pair(eqns[i], eqns[j], used_later)
        if fused is None:
            break
        eqns[i] = fused
        del eqns[j]
        fused_any = True
    return prog.replace(eqns=tuple(eqns)) if fused_any else prog


def _fusable(e: Eqn, call: Any) -> bool:
    """Whether ``e`` is a call of ``call`` that may fuse: not one placing its operands or
    results (a jit's shardings, which JAX checks at that call's own boundary)."""
    return e.prim is call and "in_shardings" not in e.params and "out_shardings" not in e.params


def _fusable_pair(eqns: list[Eqn], call: Any) -> tuple[int, int] | None:
    """Indices ``(i, j)`` of calls to fuse, after moving before ``i`` the equations
    between them that ``j`` needs and that do not depend on ``i`` (in place)."""
    producer = {v: k for k, e in enumerate(eqns) for v in e.outvars}

    def deps(k: int) -> set[int]:
        return {producer[a] for a in eqns[k].inputs if isinstance(a, Var) and a in producer}

    for j, b in enumerate(eqns):
        if not _fusable(b, call):
            continue
        calls = [k for k in deps(j) if _fusable(eqns[k], call)]
        if not calls:
            continue
        i = max(calls)
        # equations in (i, j) that j needs, found backwards from j
        needed: set[int] = set()
        todo = [k for k in deps(j) if k > i]
        while todo:
            k = todo.pop()
            if k == i:
                break
            if k not in needed:
                needed.add(k)
                todo.extend(d for d in deps(k) if d >= i)
        else:
            if needed:  # none depends on i: hoist them above it, keeping their order
                moved = [eqns[k] for k in sorted(needed)]
                rest = [e for k, e in enumerate(eqns) if k not in needed]
                eqns[:] = rest[:i] + moved + rest[i:]
                return i + len(moved), j
            return i, j
    return None


def _fuse_pair(a: Eqn, b: Eqn, used_later: set) -> Eqn | None:
    """One ``jit_call`` computing ``a`` then ``b``; ``a``'s outputs that only fed
    ``b`` become internal."""

    from_a = {v: k for k, v in enumerate(a.outvars)}
    ext = [x for x in b.inputs if isinstance(x, Var) and x not in from_a]
    keep = [k for k, v in enumerate(a.outvars) if v in used_later]
    with new_builder("jit") as bld:
        a_args = [bld.new_arg(x.aval) for x in a.inputs]
        ext_args = {x: bld.new_arg(x.aval) for x in dict.fromkeys(ext)}
        a_outs = eval_program(a.params["program"], *a_args)
        b_ins = [
            x.val if isinstance(x, Literal) else a_outs[from_a[x]] if x in from_a else ext_args[x]
            for x in b.inputs
        ]
        b_outs = eval_program(b.params["program"], *b_ins)
        program = bld.build([a_outs[k] for k in keep] + b_outs)
    if program.constvars:
        return None
    program = fuse_calls(passes.simplify(program))
    name = a.params["name"]
    if name.startswith("fwd_"):
        name = "vjp_" + name.removeprefix("fwd_")
    return Eqn(
        jit_call_p,
        (*a.inputs, *ext_args),
        (*(a.outvars[k] for k in keep), *b.outvars),
        {"program": program, "name": name},
        a.source,
    )
