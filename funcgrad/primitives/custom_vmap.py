"""``custom_vmap_call``: a function with a hand-written batching rule (JAX's
``custom_vmap``).

The equation holds the function's traced ``program`` and a ``rule`` over flat
operand lists, ``rule(axis_size, in_batched, args) -> (outs, out_batched)``: ``args``
are every operand, each batched one with its batch axis in front, ``in_batched``
says which are; ``out_batched`` says which outputs carry a leading batch axis.
Outside ``vmap`` the program runs. Under ``vmap`` the rule runs instead. Under
``jvp`` the call becomes another ``custom_vmap_call`` over (primals, tangents)
whose program is the program's JVP and whose rule is the JVP of the rule
(:class:`JvpOfRule`), so ``vmap`` of a ``jvp`` still uses the user's rule, as in
JAX. Reverse mode is not defined (JAX's neither): combine with ``custom_vjp``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import ad, batching
from funcgrad.core import dtypes
from funcgrad.core.ad_util import close
from funcgrad.core.interp import UNKNOWN, bind, new_builder, to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives.calls import FAMILY, _check_call_avals, _sub_program, host_call
from funcgrad.primitives.rules import rand

#: JAX's error for reverse mode of a ``custom_vmap`` function (its linearization cannot
#: separate the primal outputs), with what to do instead
VJP_ERROR = (
    "Linearization failed to produce known values for all output primals: "
    "custom_vmap functions do not support reverse-mode autodiff (grad, vjp); to give one "
    "a reverse-mode rule, wrap it in custom_vjp (custom_vjp outside, custom_vmap inside)."
)

custom_vmap_call_p = Primitive(
    "custom_vmap_call", family=FAMILY, multiple_results=True, reverse_differentiable=False
)


@custom_vmap_call_p.def_abstract_eval
def _custom_vmap_abstract_eval(*avals: Aval, program: Program, rule: Callable) -> list[Aval]:
    return _check_call_avals("custom_vmap_call", avals, program)


@custom_vmap_call_p.def_lower
def _custom_vmap_lower(*vals: Any, program: Program, rule: Callable) -> list:
    return lower_program(program)(*vals)


@custom_vmap_call_p.def_host
def _custom_vmap_host(*vals: Any, program: Program, rule: Callable) -> list:
    return host_call(program, vals)


def _rule_name(rule: Any) -> str:
    return getattr(rule, "__name__", "<unnamed rule>")


def _conform(outs: list, batched: list, program: Program, size: int, rule: Any) -> list:
    """The rule's outputs checked against the function's: the same shapes (with a
    leading axis of ``size`` where ``batched``), converted to its dtypes."""
    want = program.out_avals
    if len(outs) != len(want) or len(batched) != len(want):
        raise ValueError(
            f"custom vmap rule ({_rule_name(rule)}) returned {len(outs)} outputs and "
            f"{len(batched)} batching flags; the function has {len(want)} outputs"
        )
    fixed = []
    for k, (o, b, a) in enumerate(zip(outs, batched, want)):
        shape = ((size,) if b else ()) + a.shape
        got = to_aval(o)
        if got.shape != shape:
            raise ValueError(
                f"custom vmap rule ({_rule_name(rule)}): output {k} has shape {got.shape}, "
                f"but the function's output {k} is {a.str_short()} and the rule marked it "
                f"{'batched' if b else 'unbatched'}, so its shape should be {shape}"
            )
        fixed.append(o if got.dtype == a.dtype else ew.convert_element_type(o, a.dtype))
    return fixed


@custom_vmap_call_p.def_batch
def _custom_vmap_batch(args: list, dims: list, *, program: Program, rule: Callable) -> tuple:
    size = rules.batch_size(args, dims)
    args = [a if d is None else rules.moveaxis(a, d, 0) for a, d in zip(args, dims)]
    outs, out_batched = rule(size, [d is not None for d in dims], args)
    out_batched = [bool(b) for b in out_batched]
    outs = _conform(list(outs), out_batched, program, size, rule)
    return outs, [0 if b else None for b in out_batched]


def _inexact(avals: list[Aval]) -> list[bool]:
    return [dtypes.is_inexact(a.dtype) for a in avals]


def _jvp_program(program: Program) -> tuple[Program, list]:
    """(constants, primals, tangents of the inexact inputs) -> (outputs, tangents of the
    inexact outputs), zero tangents materialised, with the constants its rules made."""
    in_avals, out_avals = program.in_avals, program.out_avals
    with new_builder("custom_vmap") as b:
        ps = [b.new_arg(a) for a in in_avals]
        ts = [b.new_arg(a.strip_weak()) if on else Zero(a.strip_weak()) for a, on in
              zip(in_avals, _inexact(in_avals))]  # fmt: skip
        outs, touts = ad.jvp_eval(program, ps, ts)
        touts = [
            rules.instantiate(t, a.strip_weak())
            for t, a, on in zip(touts, out_avals, _inexact(out_avals))
            if on
        ]
        return close(b.build(list(outs) + touts))


class JvpOfRule:
    """The batching rule of a ``custom_vmap_call``'s JVP, built from the call's rule.

    Operands are (primals, tangents of the inexact primals). A primal batched along
    with its tangent goes to the rule batched; a primal or a tangent batched alone
    (``vmap`` of ``jvp`` over only one of them, as ``jacfwd`` does) is mapped over
    by an ordinary ``vmap`` around the JVP of the rule, which infers which outputs
    come out batched (so a linear rule keeps an unbatched tangent unbatched). An
    operand without a tangent (an integer) counts as batched with its tangent, and when
    batched pairs meet lone batched ones, the lone ones' partners are broadcast so the
    rule sees a single batch axis."""

    def __init__(self, rule: Callable, program: Program, n_consts: int = 0) -> None:
        self.rule = rule
        self.program = program
        self.n_consts = n_consts  # leading operands: constants of the JVP (unbatched)
        self.__name__ = _rule_name(rule)

    def __repr__(self) -> str:
        return f"jvp_of({self.rule!r})"

    def __eq__(self, other: object) -> bool:  # equal rules: one program structure (caches)
        return (
            type(other) is JvpOfRule
            and (self.rule, self.n_consts) == (other.rule, other.n_consts)
            and self.program.hashed_key() == other.program.hashed_key()
        )

    def __hash__(self) -> int:
        return hash((self.rule, self.n_consts, self.program.hashed_key()))

    @staticmethod
    def _pair_up(size: int, args: list, pb: list, tb: list, has_t: list) -> tuple:
        n = len(pb)
        t_pos = iter(range(n, len(args)))
        args = list(args)
        for i, on in enumerate(has_t):
            if not on:
                continue
            k = next(t_pos)
            if pb[i] and not tb[i]:
                args[k] = rules.bdim_to_front(args[k], None, size)
            elif tb[i] and not pb[i]:
                args[i] = rules.bdim_to_front(args[i], None, size)
        both = [p or t for p, t in zip(pb, tb)]
        return args, both, both

    def __call__(self, size: int, in_batched: list, args: list) -> tuple:
        in_batched, args = in_batched[self.n_consts :], args[self.n_consts :]
        in_avals, out_avals = self.program.in_avals, self.program.out_avals
        n = len(in_avals)
        has_t = _inexact(in_avals)
        pb, tb_it = in_batched[:n], iter(in_batched[n:])
        tb = [next(tb_it) if on else p for on, p in zip(has_t, pb)]  # no tangent: as its primal
        if any(p and t for p, t in zip(pb, tb)) and any(p != t for p, t in zip(pb, tb)):
            # batched pairs and lone batched primals or tangents together: the rule's batch
            # axis and the outer map's would be two axes, so the lone ones' partners are
            # broadcast and every batched operand goes to the rule batched (JAX's own
            # rule returns two batch axes here)
            args, pb, tb = self._pair_up(size, args, pb, tb, has_t)
        mutual = [p and t for p, t in zip(pb, tb)]
        extra = [p and not t for p, t in zip(pb, tb)] + [
            t and not p for p, t, on in zip(pb, tb, has_t) if on
        ]
        avals = [batching.unbatched_aval(to_aval(x), 0 if e else None) for x, e in zip(args, extra)]
        out_mutual: list = []

        def rule_program() -> Program:
            with new_builder("custom_vmap") as b:
                ps = [b.new_arg(a, UNKNOWN) for a in avals[:n]]
                outs, ob = self.rule(size, mutual, ps)
                out_mutual[:] = [bool(x) for x in ob]
                return b.build(_conform(list(outs), out_mutual, self.program, size, self.rule))

        rp = rule_program()
        with new_builder("custom_vmap") as b:
            ins = [b.new_arg(a, UNKNOWN) for a in avals]
            t_it = iter(ins[n:])
            ts = [next(t_it) if on else Zero(a.strip_weak()) for a, on in zip(avals, has_t)]
            outs, touts = ad.jvp_eval(rp, ins[:n], ts)
            touts = [
                rules.instantiate(t, to_aval(o).strip_weak())
                for t, o, on in zip(touts, outs, _inexact(out_avals))
                if on
            ]
            jp = b.build(list(outs) + touts)
        res, ods = batching.batch_eval(jp, args, [0 if e else None for e in extra])
        res = [r if d is None else rules.moveaxis(r, d, 0) for r, d in zip(res, ods)]
        mut_t = [x for x, on in zip(out_mutual, _inexact(out_avals)) if on]
        batched = [x or d is not None for x, d in zip(out_mutual + mut_t, ods)]
        return res, batched


@custom_vmap_call_p.def_jvp
def _custom_vmap_jvp(primals: list, tangents: list, *, program: Program, rule: Callable) -> tuple:
    in_avals, out_avals = program.in_avals, program.out_avals
    tans = [
        rules.instantiate(t, a.strip_weak())
        for t, a, on in zip(tangents, in_avals, _inexact(in_avals))
        if on
    ]
    jprog, consts = _jvp_program(program)
    outs = bind(
        custom_vmap_call_p,
        *consts,
        *primals,
        *tans,
        program=jprog,
        rule=JvpOfRule(rule, program, len(consts)),
    )
    m = len(out_avals)
    t_it = iter(outs[m:])
    touts = [next(t_it) if on else Zero(a.strip_weak()) for a, on in
             zip(out_avals, _inexact(out_avals))]  # fmt: skip
    return list(outs[:m]), touts


@custom_vmap_call_p.def_vjp
def _custom_vmap_vjp(cts: Any, *args: Any, out: Any, **params: Any) -> tuple:
    raise ValueError(VJP_ERROR)


def _custom_vmap_vjp_fwd(*primals: Any, **params: Any) -> tuple:
    # reverse mode fails in the forward pass, where JAX's linearization fails
    raise ValueError(VJP_ERROR)


custom_vmap_call_p.vjp_fwd = _custom_vmap_vjp_fwd


# the registry example: sin(x) * y, its rule the same computation on batched operands


def _example_f(x: Any, y: Any) -> Any:
    return ew.mul(ew.sin(x), y)


def _example_rule(size: int, in_batched: list, args: list) -> tuple:
    x, y = (a if b else rules.bdim_to_front(a, None, size) for a, b in zip(args, in_batched))
    return [_example_f(x, y)], [True]


@custom_vmap_call_p.def_examples
def _custom_vmap_examples(rng: np.random.Generator) -> list[Example]:
    avals = [Aval((3,), np.dtype("float64")), Aval((3,), np.dtype("float64"))]
    prog = _sub_program(lambda x, y: [_example_f(x, y)], avals)
    return [Example([rand(rng, (3,)), rand(rng, (3,))], {"program": prog, "rule": _example_rule})]
