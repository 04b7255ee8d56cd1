"""``reduce_general`` and ``reduce_window_general``: ``jax.lax``'s ``reduce`` and
``reduce_window`` with any computation (the recognised monoids have their own
primitives, in ``reductions`` and ``windowed``).

Both carry the computation as a closed funcgrad ``Program`` over scalars (``2n`` inputs:
the ``n`` accumulated values, then the ``n`` incoming ones; ``n`` outputs of the same
dtypes) and its concrete constants; their inputs are the ``n`` operands then the ``n``
scalar initial values. Forward evaluation lowers to ``lax.reduce`` / ``lax.reduce_window``
with a computation that evaluates the program with its lowering rules.

Derivatives, as ``jax.lax`` defines them for a general computation:

* ``reduce_general``: both modes, through an explicit pairwise tree (halve the reduced
  axis, pad an odd half with the initial value, combine the halves elementwise with the
  program, batched): the primal and tangent come from that tree, so for a computation
  that is not associative the JVP's primal is the tree's value, as in JAX. A tangent on
  an initial value is refused (NotImplementedError), as JAX refuses it.
* ``reduce_window_general``: forward mode only, a ``reduce_window_general`` over
  (primal, tangent) pairs whose program is the JVP of the computation; reverse mode
  raises ``ValueError`` as JAX's linearization does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import lax

from funcgrad import ad, batching
from funcgrad.core.interp import eval_program, to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.lowering import lower_program
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.control_flow.common import _run, _strong, trace_program
from funcgrad.primitives.windowed import _out_shape as win_out_shape

#: one family for both: they hold a program, unlike the single-operand ``reductions`` and
#: ``windowed`` families (whose smoke tests assume one operand and one result)
FAMILY = "general_reductions"

INIT_TANGENT_ERROR = (
    "Gradient of general lax.reduce with non-zero tangents for initial values to "
    "reduction not implemented"
)
WINDOW_VJP_ERROR = (
    "reduce_window with a general computation has no reverse-mode derivative (as in JAX: "
    "linearization fails); use forward mode (jvp), or add/max/min as the computation"
)


def _desc(avals: Sequence[Aval]) -> str:
    return "[" + ", ".join(str(a) for a in avals) + "]"


def check_computation(name: str, prog: Program, consts: tuple, dts: Sequence[np.dtype]) -> None:
    """``prog`` (closed: its consts first) maps ``2n`` scalars of ``dts`` (twice) to ``n``
    scalars of ``dts``; ValueError otherwise (JAX's lowering refuses it as a ValueError)."""
    n = len(dts)
    want = [Aval((), np.dtype(d)) for d in dts] * 2
    got_in = [v.aval for v in prog.invars[len(consts) :]]
    if [(a.shape, a.dtype) for a in got_in] != [(a.shape, a.dtype) for a in want]:
        raise ValueError(f"{name}: the computation takes {_desc(got_in)}, expected {_desc(want)}")
    outs = prog.out_avals
    if len(outs) != n or any(a.shape != () or a.dtype != np.dtype(d) for a, d in zip(outs, dts)):
        raise ValueError(
            f"{name}: the computation must return {n} scalar(s) of dtypes "
            f"{[np.dtype(d).name for d in dts]} (one per operand), got {_desc(outs)}"
        )


def _split_avals(name: str, avals: Sequence[Aval]) -> tuple[list[Aval], list[Aval]]:
    n = len(avals) // 2
    ops, inits = list(avals[:n]), list(avals[n:])
    if any(a.shape != () for a in inits):
        raise ValueError(f"{name}: found non-scalar initial value(s): {[a.shape for a in inits]}")
    if [a.dtype for a in ops] != [a.dtype for a in inits]:
        raise TypeError(
            f"{name}: operand dtypes should match the corresponding initial value dtypes, "
            f"got operands={_desc(ops)} and initial_values={_desc(inits)}"
        )
    if any(a.shape != ops[0].shape for a in ops):
        raise ValueError(f"{name}: all operands must have the same shape, got {_desc(ops)}")
    return ops, inits


def _lowered(prog: Program, consts: tuple, dts: Sequence[np.dtype]) -> Callable:
    """The computation as ``jax.lax`` wants it: two tuples in, one tuple out."""
    fn = lower_program(prog)
    out_avals = [Aval((), np.dtype(d)) for d in dts]

    def comp(a: Sequence[Any], b: Sequence[Any]) -> tuple:
        outs = fn(*consts, *a, *b)
        return tuple(_strong(o, av) for o, av in zip(outs, out_avals))

    return comp


def _lower_with(name: str, params: dict, vals: Sequence[Any], reduce: Callable) -> list:
    """Lower ``name``: operands and inits made strongly typed, the Program handed to
    ``reduce(operands, inits, computation)`` (``jax.lax.reduce`` or ``reduce_window``)."""
    n = len(vals) // 2
    avals = [to_aval(v).strip_weak() for v in vals[:n]]
    dts = [a.dtype for a in avals]

    def run(*vals: Any) -> list:
        xs = tuple(_strong(v, a) for v, a in zip(vals[:n], avals))
        inits = tuple(_strong(v, a.update(shape=())) for v, a in zip(vals[n:], avals))
        return list(reduce(xs, inits, _lowered(params["computation"], params["consts"], dts)))

    return _run(name, params, run, vals)


def _apply(prog: Program, consts: tuple, a: Sequence[Any], b: Sequence[Any]) -> list:
    """The computation applied elementwise to equal-shaped arrays (batched over axis 0 of
    their flattened forms)."""
    shape = to_aval(a[0]).shape
    size = math.prod(shape)
    flat = [sh.reshape(x, (size,)) for x in (*a, *b)]
    if size == 0:
        return [sh.full(shape, 0, v.aval.dtype) for v in prog.outvars]
    outs = batching.vmap_leading(lambda *zs: eval_program(prog, *consts, *zs), *flat)
    return [sh.reshape(o, shape) for o in outs]


def _tree(prog: Program, consts: tuple, dimensions: tuple, *vals: Any) -> list:
    """The reduction as a pairwise tree of funcgrad operations (what the derivative rules
    differentiate): the reduced axes moved first and flattened, then halved until one row
    is left, an odd half padded with the initial value."""
    n = len(vals) // 2
    xs, inits = list(vals[:n]), list(vals[n:])
    shape = to_aval(xs[0]).shape
    keep = [d for d in range(len(shape)) if d not in dimensions]
    kept = tuple(shape[d] for d in keep)
    rows = math.prod(shape[d] for d in dimensions)
    m = math.prod(kept)
    xs = [sh.reshape(sh.transpose(x, (*dimensions, *keep)), (rows, m)) for x in xs]
    if rows == 0:
        return [
            sh.broadcast_in_dim(ew.convert_element_type(i, to_aval(x).dtype), kept, ())
            for i, x in zip(inits, xs)
        ]
    while rows > 1:
        n1 = (rows + 1) // 2
        lo = [sh.slice(x, (0, 0), (n1, m)) for x in xs]
        hi = [sh.slice(x, (n1, 0), (rows, m)) for x in xs]
        if rows - n1 != n1:
            hi = [sh.pad(h, i, ((0, 1, 0), (0, 0, 0))) for h, i in zip(hi, inits)]
        xs = _apply(prog, consts, lo, hi)
        rows = n1
    return [sh.reshape(x, kept) for x in xs]


# --------------------------------------------------------------------------- reduce_general

reduce_general_p = Primitive(
    "reduce_general", family=FAMILY, multiple_results=True, vjp_fwd_active=True
)


@reduce_general_p.def_abstract_eval
def _reduce_general_abstract_eval(
    *avals: Aval, computation: Program, consts: tuple, dimensions: tuple
) -> list[Aval]:
    ops, _ = _split_avals("reduce", avals)
    nd = ops[0].ndim
    for d in dimensions:
        if d >= nd:
            raise IndexError(f"reduce: dimension {d} is out of bounds for operands {_desc(ops)}")
        if d < 0:
            raise ValueError(f"reduce: out-of-bounds dimension {d}, expected in [0, {nd})")
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"reduce: duplicate reduction dimension in {dimensions}")
    check_computation("reduce", computation, consts, [a.dtype for a in ops])
    shape = tuple(s for i, s in enumerate(ops[0].shape) if i not in dimensions)
    return [Aval(shape, a.dtype) for a in ops]


@reduce_general_p.def_lower
def _reduce_general_lower(
    *vals: Any, computation: Program, consts: tuple, dimensions: tuple
) -> list:
    params = {"computation": computation, "consts": consts, "dimensions": dimensions}
    return _lower_with(
        "reduce_general",
        params,
        vals,
        lambda xs, inits, comp: lax.reduce(xs, inits, comp, dimensions),
    )


def _tree_program(vals: Sequence[Any], **p: Any) -> tuple[Program, tuple]:
    avals = [to_aval(v).strip_weak() for v in vals]
    return trace_program(
        lambda *vs: _tree(p["computation"], p["consts"], p["dimensions"], *vs),
        avals,
        "reduce_general",
    )


@reduce_general_p.def_jvp
def _reduce_general_jvp(primals: list, tangents: list, **p: Any) -> tuple:
    n = len(primals) // 2
    if not all(is_zero(t) for t in tangents[n:]):
        raise NotImplementedError(INIT_TANGENT_ERROR)
    prog, consts = _tree_program(primals, **p)
    zeros = [Zero(ad.tangent_aval(to_aval(c))) for c in consts]
    outs, touts = ad.jvp_eval(prog, [*consts, *primals], [*zeros, *tangents])
    return outs, touts


def _reduce_general_vjp_fwd(*vals: Any, active: Sequence[bool], **p: Any) -> tuple:
    n = len(vals) // 2
    if any(active[n:]):
        raise NotImplementedError(INIT_TANGENT_ERROR)
    prog, consts = _tree_program(vals, **p)
    vp = ad.vjp_program(prog)
    outs = eval_program(vp.fwd, *consts, *vals)
    k = len(prog.outvars)
    out_avals = [to_aval(o).strip_weak() for o in outs[:k]]
    return outs[:k], (vp, outs[k:], out_avals, len(consts))


def _reduce_general_vjp_bwd(res: Any, cts: list, **p: Any) -> list:
    vp, residuals, out_avals, nc = res
    cts = [rules.instantiate(c, a) for c, a in zip(cts, out_avals)]
    in_cts = eval_program(vp.bwd, *residuals, *cts)[nc:]
    return [None if z else c for c, z in zip(in_cts, vp.zero_cts[nc:])]


reduce_general_p.vjp_fwd = _reduce_general_vjp_fwd
reduce_general_p.vjp_bwd = _reduce_general_vjp_bwd


@reduce_general_p.def_batch
def _reduce_general_batch(args: list, dims: list, **p: Any) -> tuple:
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce: batching over the initial values is not implemented")
    size = rules.batch_size(args, dims)
    xs = [batching.move_dim(x, d, 0, size) for x, d in zip(args[:n], dims[:n])]
    q = dict(p, dimensions=tuple(d + 1 for d in p["dimensions"]))
    return reduce_general_p.bind(*xs, *args[n:], **q), [0] * n


def reduce_general(
    operands: Sequence[Any],
    init_values: Sequence[Any],
    computation: Program,
    consts: tuple,
    dimensions: Sequence[int],
) -> list:
    """Reduce ``operands`` over ``dimensions`` with the closed scalar ``computation``."""
    return reduce_general_p.bind(
        *operands,
        *init_values,
        computation=computation,
        consts=tuple(consts),
        dimensions=tuple(int(d) for d in dimensions),
    )


# --------------------------------------------------------------------------- reduce_window_general

_WINDOW = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")

reduce_window_general_p = Primitive(
    "reduce_window_general",
    family=FAMILY,
    multiple_results=True,
    reverse_differentiable=False,
)


@reduce_window_general_p.def_abstract_eval
def _reduce_window_general_abstract_eval(
    *avals: Aval, computation: Program, consts: tuple, **p: Any
) -> list[Aval]:
    n = len(avals) // 2
    ops, inits = list(avals[:n]), list(avals[n:])
    if any(a.shape != () for a in inits):
        raise TypeError(
            f"reduce_window: expected init_values to be scalars but init_values have shapes "
            f"{[a.shape for a in inits]}"
        )
    if [a.dtype for a in ops] != [a.dtype for a in inits]:
        raise TypeError(
            f"reduce_window: got inconsistent dtypes for operands and init_values: operand "
            f"dtypes {[a.dtype.name for a in ops]} and init_value dtypes "
            f"{[a.dtype.name for a in inits]}"
        )
    if any(a.shape != ops[0].shape for a in ops):
        raise TypeError(f"reduce_window: all operands must have the same shape, got {_desc(ops)}")
    x = ops[0]
    for k in _WINDOW:
        if len(p[k]) != x.ndim:
            raise TypeError(
                f"reduce_window: got the wrong number of {k} for operand: operand shape "
                f"{x.shape} with {k} {p[k]}"
            )
    for k in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        if any(v < 1 for v in p[k]):
            raise TypeError(f"reduce_window: {k} must be strictly positive, got {p[k]}")
    check_computation("reduce_window", computation, consts, [a.dtype for a in ops])
    shape = win_out_shape("reduce_window", x, p)
    return [Aval(shape, a.dtype) for a in ops]


@reduce_window_general_p.def_lower
def _reduce_window_general_lower(*vals: Any, computation: Program, consts: tuple, **p: Any) -> list:
    params = {"computation": computation, "consts": consts, **p}
    window = tuple(p[k] for k in _WINDOW)
    return _lower_with(
        "reduce_window_general",
        params,
        vals,
        lambda xs, inits, comp: lax.reduce_window(xs, inits, comp, *window),
    )


def _jvp_computation(prog: Program, consts: tuple, dts: list, fl: list[int]) -> tuple:
    """The program over (primal, tangent) pairs: inputs ``(a, ta, b, tb)`` (tangents of
    the operands ``fl`` only), outputs ``(outs, tangents of fl)``."""
    n, k = len(dts), len(fl)
    avals = [Aval((), np.dtype(d)) for d in dts]
    tav = [avals[i] for i in fl]

    def f(*zs: Any) -> list:
        ap, at, bp, bt = zs[:n], zs[n : n + k], zs[n + k : 2 * n + k], zs[2 * n + k :]
        ta: list[Any] = [Zero(a) for a in avals]
        tb: list[Any] = [Zero(a) for a in avals]
        for j, i in enumerate(fl):
            ta[i], tb[i] = at[j], bt[j]
        cz = [Zero(ad.tangent_aval(to_aval(c))) for c in consts]
        outs, touts = ad.jvp_eval(prog, [*consts, *ap, *bp], [*cz, *ta, *tb])
        return [*outs, *(ad.instantiate(touts[i], avals[i]) for i in fl)]

    jprog, jconsts = trace_program(f, [*avals, *tav, *avals, *tav], "jvp")
    return jprog, tuple(np.asarray(c) for c in jconsts)


@reduce_window_general_p.def_jvp
def _reduce_window_general_jvp(primals: list, tangents: list, **p: Any) -> tuple:
    n = len(primals) // 2
    if not all(is_zero(t) for t in tangents[n:]):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    xs, inits = primals[:n], primals[n:]
    avals = [to_aval(x).strip_weak() for x in xs]
    fl = [i for i in range(n) if ad.differentiable_dtype(avals[i].dtype)]
    ts = [ad.instantiate(tangents[i], avals[i]) for i in fl]
    tinits = [np.zeros((), avals[i].dtype) for i in fl]
    jprog, jconsts = _jvp_computation(p["computation"], p["consts"], [a.dtype for a in avals], fl)
    q = dict(p, computation=jprog, consts=jconsts)
    outs = reduce_window_general_p.bind(*xs, *ts, *inits, *tinits, **q)
    touts: list[Any] = [Zero(to_aval(o).strip_weak()) for o in outs[:n]]
    for j, i in enumerate(fl):
        touts[i] = outs[n + j]
    return list(outs[:n]), touts


@reduce_window_general_p.def_vjp
def _reduce_window_general_vjp(ct: Any, *args: Any, out: Any, **p: Any) -> tuple:
    raise ValueError(WINDOW_VJP_ERROR)


@reduce_window_general_p.def_batch
def _reduce_window_general_batch(args: list, dims: list, **p: Any) -> tuple:
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce_window batching is not implemented for initial values")
    size = rules.batch_size(args, dims)
    xs = [batching.move_dim(x, d, 0, size) for x, d in zip(args[:n], dims[:n])]
    q = dict(p)
    for k in _WINDOW:
        q[k] = ((0, 0) if k == "padding" else 1, *p[k])
    return reduce_window_general_p.bind(*xs, *args[n:], **q), [0] * n


def reduce_window_general(
    operands: Sequence[Any],
    init_values: Sequence[Any],
    computation: Program,
    consts: tuple,
    window: dict,
) -> list:
    """``reduce_window`` of ``operands`` with the closed scalar ``computation``; ``window``
    holds ``window_dimensions``, ``window_strides``, ``padding`` (``(lo, hi)`` pairs),
    ``base_dilation`` and ``window_dilation``."""
    return reduce_window_general_p.bind(
        *operands, *init_values, computation=computation, consts=tuple(consts), **window
    )


# --------------------------------------------------------------------------- test examples


def _program(fn: Callable, dtype: str, n: int) -> Program:
    prog, consts = trace_program(fn, [Aval((), np.dtype(dtype))] * (2 * n), "example")
    assert not consts
    return prog


def _logaddexp(a: Any, b: Any) -> list:
    return [ew.log(ew.add(ew.exp(a), ew.exp(b)))]


def _shifted_mul(a: Any, b: Any) -> list:  # (1 + a)(1 + b) - 1: associative, identity 0
    return [ew.add(ew.add(ew.mul(a, b), a), b)]


def _complex_mul(ar: Any, ai: Any, br: Any, bi: Any) -> list:  # coupled pair, identity (1, 0)
    return [ew.sub(ew.mul(ar, br), ew.mul(ai, bi)), ew.add(ew.mul(ar, bi), ew.mul(ai, br))]


def _f64(v: float) -> np.ndarray:
    return np.asarray(v, np.float64)


@reduce_general_p.def_examples
def _reduce_general_examples(rng: np.random.Generator) -> list[Example]:
    def ps(fn: Callable, n: int, dims: tuple) -> dict:
        return {"computation": _program(fn, "float64", n), "consts": (), "dimensions": dims}

    r = rules.rand
    return [
        Example([r(rng, (5, 3)), _f64(-np.inf)], ps(_logaddexp, 1, (0,)), (0,), True, (0,)),
        Example([r(rng, (3, 2, 4)) / 4, _f64(0)], ps(_shifted_mul, 1, (0, 2)), (0,), True, (0,)),
        Example(
            [r(rng, (4, 3)) / 2, r(rng, (4, 3)) / 2, _f64(1), _f64(0)],
            ps(_complex_mul, 2, (0,)),
            (0, 1),
            True,
            (0, 1),
        ),
    ]


@reduce_window_general_p.def_examples
def _reduce_window_general_examples(rng: np.random.Generator) -> list[Example]:
    def ps(fn: Callable, n: int, win, strides, padding, bdil=None, wdil=None) -> dict:
        k = len(win)
        return {
            "computation": _program(fn, "float64", n),
            "consts": (),
            "window_dimensions": win,
            "window_strides": strides,
            "padding": padding,
            "base_dilation": bdil or (1,) * k,
            "window_dilation": wdil or (1,) * k,
        }

    r = rules.rand
    return [
        Example(
            [r(rng, (5,)) / 2, _f64(0)],
            ps(_shifted_mul, 1, (2,), (1,), ((0, 0),)),
            (0,),
            True,
            (0,),
        ),
        Example(
            [r(rng, (4, 5)) / 2, r(rng, (4, 5)) / 2, _f64(1), _f64(0)],
            ps(_complex_mul, 2, (2, 3), (2, 1), ((1, 0), (1, 1))),
            (0, 1),
            True,
            (0, 1),
        ),
        Example(
            [r(rng, (3, 4)) / 2, _f64(0)],
            ps(_shifted_mul, 1, (2, 2), (1, 2), ((0, 1), (1, 0)), (2, 1), (1, 2)),
            (0,),
            True,
            (0,),
        ),
    ]
