"""Structured control flow with JAX's signatures: ``cond``, ``switch``,
``while_loop``, ``fori_loop`` and ``scan``.

The functions passed in are traced into closed sub-programs (values they
close over become explicit operands) and bound as one ``cond`` / ``while`` /
``scan`` equation, so they differentiate, batch and compile as a unit::

    import funcgrad as fg
    import funcgrad.numpy as fnp

    def f(x):
        return fg.fori_loop(0, 3, lambda i, c: fnp.sin(c) * x, x)

    fg.grad(f)(1.0)            # reverse mode: static bounds lower to scan
    fg.vmap(f)(fnp.ones(4))

Carries are pytrees of arrays whose shapes and dtypes must not change across
iterations; a Python scalar in the initial carry takes the dtype the body
gives it (as JAX's weak types do).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import tree_util

from funcgrad import passes
from funcgrad.core import dtypes
from funcgrad.core.ad_util import close
from funcgrad.core.errors import ConcretizationTypeError, user_frame, where
from funcgrad.core.interp import Tracer, eval_program, new_builder, to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.tree_diff import (
    bullet_list,
    structure_differences_of_trees,
    type_mismatch_reason,
    typed_tree,
)
from funcgrad.primitives import control_flow as cf
from funcgrad.primitives import elementwise as ew
from funcgrad.tree_util import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["cond", "fori_loop", "scan", "switch", "while_loop"]


# --------------------------------------------------------------------------- tracing helpers


def _aval(x: Any, what: str) -> Aval:
    try:
        return to_aval(x)
    except TypeError:
        raise TypeError(
            f"{what}: {x!r} of type {type(x).__name__} is not an array; control-flow "
            "operands and carries must be arrays, Python scalars or pytrees of them"
        ) from None


def _trace(fun: Callable, in_tree: Any, avals: Sequence[Aval], name: str) -> tuple:
    """Trace ``fun(*unflatten(in_tree, args))``: (closed program, consts, out_tree)."""
    with new_builder(name) as b:
        args = tree_unflatten(in_tree, [b.new_arg(a) for a in avals])
        out = fun(*args)
        leaves, out_tree = tree_flatten(out)
        for o in leaves:
            _aval(o, f"{name} output")
        prog = b.build(leaves)
    prog, consts = close(prog)
    return prog, list(consts), out_tree


def _paths(tree: Any) -> list[str]:
    """``keystr`` of each leaf of a treedef, e.g. ``[0]['w']`` (empty for a bare leaf)."""
    dummy = tree_unflatten(tree, list(range(tree.num_leaves)))
    return [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]


def _desc(a: Aval) -> str:
    return f"shape {a.shape} and dtype {a.dtype.name}"


def _coerce(prog: Program, n_consts: int, targets: Sequence[Aval | None]) -> Program:
    """``prog`` with output ``i`` converted to ``targets[i]``'s dtype where given."""
    outs = prog.out_avals
    if all(t is None or o.dtype == t.dtype for o, t in zip(outs, targets)):
        return prog

    def fn(*args: Any) -> list:
        res = eval_program(prog, *args)
        return [
            r if t is None else ew.convert_element_type(r, t.dtype, False)
            for r, t in zip(res, targets)
        ]

    new, consts = cf.trace_program(fn, prog.in_avals, "control_flow")
    assert not consts
    return new


# --------------------------------------------------------------------------- cond / switch


def _as_index(index: Any, n: int, what: str) -> Any:
    aval = _aval(index, what)
    if aval.shape != ():
        raise TypeError(
            f"{what} must be a scalar, but has shape {aval.shape}.{where(user_frame())}"
        )
    if not dtypes.is_integer(aval.dtype) and aval.dtype != np.dtype("bool"):
        raise TypeError(
            f"{what} must have an integer or boolean type, got {aval.dtype.name}."
            f"{where(user_frame())}"
        )
    if not isinstance(index, Tracer):
        i = int(np.asarray(index))
        return np.int32(min(max(i, 0), n - 1))
    index = ew.convert_element_type(index, np.int32)
    if n > 1:
        index = ew.min(ew.max(index, 0), n - 1)
    return index


def _branches(index: Any, funs: Sequence[Callable], operands: tuple, name: str, labels: list[str]):
    leaves, in_tree = tree_flatten(operands)
    avals = [_aval(x, f"{name} operand") for x in leaves]
    traced = [_trace(f, in_tree, avals, name) for f in funs]
    out_tree = traced[0][2]
    for i, (_, _, t) in enumerate(traced[1:], 1):
        if t != out_tree:
            a, b = (i, 0) if name == "cond" else (0, i)  # cond: true_fun first
            diffs = [
                f"{labels[a]} output{_at(path)} is a {x} but {labels[b]} output{_at(path)} "
                f"is a {y}, so {why}"
                for path, x, y, why in structure_differences_of_trees(traced[a][2], traced[b][2])
            ] or [f"{labels[a]} output is {traced[a][2]} but {labels[b]} output is {traced[b][2]}"]
            raise TypeError(
                f"{name} branch outputs must have the same pytree structure, but they differ:"
                f"\n\n{_branch_names(funs, labels, a, b)}{_sentences(diffs)}\nRevise "
                f"{labels[a]} and/or {labels[b]} so that they have the same pytree structure."
                f"{where(user_frame())}"
            )
    paths = _paths(out_tree)
    # join each output leaf over the branches (weakly typed outputs take the strong dtype)
    targets: list[Aval] = []
    for k, path in enumerate(paths):
        outs = [p.out_avals[k] for p, c, _ in traced]
        for i, o in enumerate(outs[1:], 1):
            strong_clash = not o.weak_type and not outs[0].weak_type and o.dtype != outs[0].dtype
            if o.shape != outs[0].shape or strong_clash:
                a, b = (i, 0) if name == "cond" else (0, i)  # cond: true_fun first
                at = f" at path {path}" if path else ""
                raise TypeError(
                    f"{name} branches must have equal output types but they differ.\n\n"
                    f"{_branch_names(funs, labels, a, b)}The output of {labels[a]}{at} has type "
                    f"{_type(outs[a])} but the corresponding output of {labels[b]} has type "
                    f"{_type(outs[b])}{type_mismatch_reason(outs[a], outs[b])}.\n\nRevise "
                    f"{labels[a]} and/or {labels[b]} so that all output types match."
                    f"{where(user_frame())}"
                )
        strong = [o.dtype for o in outs if not o.weak_type]
        dt = strong[0] if strong else dtypes.result_type(*[(o.dtype, True) for o in outs])[0]
        targets.append(Aval(outs[0].shape, dt))
    # outputs every branch passes through from the same operand are that operand (JAX's
    # forwarding: under vmap an unbatched operand stays unbatched), not cond outputs
    fwd = [_forwarded_operand(traced, k, targets[k]) for k in range(len(targets))]
    keep = [k for k, f in enumerate(fwd) if f is None]
    items = []
    for prog, consts, _ in traced:
        prog = prog.replace(outvars=tuple(prog.outvars[k] for k in keep))
        items.append((_coerce(prog, len(consts), [targets[k] for k in keep]), consts))
    progs, consts = cf.join_consts(items)
    # a cond whose outputs are all forwarded still runs for its branches' effects
    # (``debug.print`` in a branch that returns its operand)
    effects = any(passes.has_effects(e) for p in progs for e in p.eqns)
    res = iter(cf.cond(index, *consts, *leaves, branches=progs) if keep or effects else [])
    outs = []
    for k, f in enumerate(fwd):
        if f is not None:
            outs.append(_as_value(leaves[f]))
            continue
        o = next(res)
        # JAX's result is weakly typed where the first branch's output is
        first = traced[0][0].out_avals[k]
        if first.weak_type and first.dtype == targets[k].dtype:
            o = ew.convert_element_type(o, targets[k].dtype, True)
        outs.append(o)
    return tree_unflatten(out_tree, outs)


def _at(path: str) -> str:
    return f" at path {path}" if path else ""


def _type(a: Aval) -> str:
    """An aval as JAX's errors print it: ``float32[1]``."""
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def _branch_names(funs: Sequence[Callable], labels: list[str], a: int, b: int) -> str:
    """``true_fun is f at file.py:3`` lines for two branches, then a blank line."""

    def name(f: Callable) -> str:
        code = getattr(f, "__code__", None)
        n = getattr(f, "__name__", repr(f))
        return f"{n} at {code.co_filename}:{code.co_firstlineno}" if code is not None else n

    return f"{labels[a]} is {name(funs[a])}\n{labels[b]} is {name(funs[b])}\n\n"


def _sentences(items: list[str]) -> str:
    """One difference as a sentence, several as ``  * item;`` lines."""
    if len(items) == 1:
        return items[0] + ".\n"
    return "".join(f"  * {d};\n" for d in items[:-1]) + f"  * {items[-1]}.\n"


def _as_value(x: Any) -> Any:
    """A forwarded operand as an output: a Python scalar becomes a weakly typed array."""
    if type(x) in (bool, int, float, complex):
        return ew.convert_element_type(x, dtypes.python_scalar_dtype(x), type(x) is not bool)
    return x


def _forwarded_operand(traced: list, k: int, target: Aval) -> int | None:
    """The operand index every branch returns unchanged as output ``k``, if any."""
    found = None
    for prog, consts, _ in traced:
        ops = prog.invars[len(consts) :]
        v = prog.outvars[k]
        j = next((i for i, w in enumerate(ops) if w is v), None)
        if j is None or (found is not None and j != found):
            return None
        found = j
    a = traced[0][0].in_avals[len(traced[0][1]) + found] if found is not None else None
    return found if a is not None and a.dtype == target.dtype else None


#: ``operand=``'s default: no keyword operand given (``None`` is an operand)
_NO_OPERAND = object()


def _keyword_operand(operands: tuple, operand: Any) -> tuple:
    """The operands, with JAX's older keyword form ``operand=x`` (one operand)."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(
            "if 'operand' keyword is passed then no positional operands can be passed, "
            f"got {operand=} and positional operands {operands}"
        )
    return (operand,)


def cond(
    pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any, operand: Any = _NO_OPERAND
) -> Any:
    """Call ``true_fun(*operands)`` if ``pred`` is true, else ``false_fun(*operands)``.

    Both branches are traced and held by one ``cond`` equation; the choice is made when
    the program runs, so ``cond`` works under ``jit`` and on traced predicates, where a
    Python ``if`` cannot. Same signature as ``jax.lax.cond``.

    Args:
        pred: a boolean or numeric scalar (non-zero is true).
        true_fun: the function called when ``pred`` is true.
        false_fun: the function called otherwise; it must return a pytree of the same
            structure, shapes and dtypes as ``true_fun``.
        *operands: the arguments passed to the branch.
        operand: JAX's older form of a single operand, as a keyword (not with
            ``operands``).

    Returns:
        The chosen branch's result.

    Raises:
        TypeError: ``pred`` is not a scalar.

    Under ``vmap`` with a batched ``pred`` both branches run on the whole batch and the
    results are selected per example, as in JAX. Differentiable in both modes: the
    derivative is the chosen branch's.

    Example:
        >>> import funcgrad as fg
        >>> fg.cond(-2.0 > 0, lambda x: x, lambda x: -x, -2.0)  # |x|
        Array(2., dtype=float32)
    """
    operands = _keyword_operand(operands, operand)
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if pred is None:
        raise TypeError(f"cond predicate is None{where(user_frame())}")
    if isinstance(pred, (Sequence, str)) or np.ndim(pred) != 0:
        what = f"type {type(pred)}" if isinstance(pred, Sequence) else f"shape {np.shape(pred)}."
        raise TypeError(f"Pred must be a scalar, got {pred} of {what}{where(user_frame())}")
    try:
        aval = to_aval(pred)
    except TypeError:
        raise TypeError(
            f"Pred type must be either boolean or number, got {pred}.{where(user_frame())}"
        ) from None
    if aval.shape != ():
        raise TypeError(
            f"Pred must be a scalar, got {pred!r} of shape {aval.shape}.{where(user_frame())}"
        )
    if aval.dtype != np.dtype("bool"):
        if not dtypes.is_integer(aval.dtype) and not dtypes.is_float(aval.dtype):
            raise TypeError(f"Pred type must be either boolean or number, got {aval.dtype.name}.")
        pred = ew.ne(pred, 0) if isinstance(pred, Tracer) else bool(np.asarray(pred) != 0)
    index = _as_index(pred, 2, "cond predicate")
    return _branches(index, [false_fun, true_fun], operands, "cond", ["false_fun", "true_fun"])


def switch(
    index: Any, branches: Sequence[Callable], *operands: Any, operand: Any = _NO_OPERAND
) -> Any:
    """Call ``branches[index](*operands)``, with ``index`` clamped into range (``lax.switch``).

    Args:
        index: an integer scalar; values below 0 select the first branch, values past
            the end the last one.
        branches: the functions to choose from; all must return the same structure,
            shapes and dtypes.
        *operands: the arguments passed to the chosen branch.
        operand: a single operand as a keyword, as :func:`cond`'s.

    Returns:
        The chosen branch's result. Like :func:`cond` (which is ``switch`` on two
        branches), every branch is traced and the choice is made when the program runs.
    """
    operands = _keyword_operand(operands, operand)
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    if not isinstance(index, Tracer) and len(np.shape(index)) != 0:
        raise TypeError(
            f"Branch index must be scalar, got {index} of shape {np.shape(index)}."
            f"{where(user_frame())}"
        )
    try:
        to_aval(index)
    except TypeError:
        raise TypeError(
            f"Index type must be an integer, got {index}.{where(user_frame())}"
        ) from None
    idx = _as_index(index, len(branches), "switch index")
    # JAX's words: "branch 0", then "branch1", "branch2"...
    labels = ["branch 0"] + [f"branch{i}" for i in range(1, len(branches))]
    return _branches(idx, branches, operands, "switch", labels)


# --------------------------------------------------------------------------- loops


def _first_param(fun: Callable, k: int = 0) -> str | None:
    """The name of ``fun``'s ``k``-th parameter (the carry, named in errors), if known."""
    try:
        names = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return None
    return names[k] if len(names) > k else None


def _component(carry_name: str | None, path: str) -> str:
    if carry_name:
        return (
            f"the input carry component {carry_name}{path}"
            if path
            else (f"the input carry {carry_name}")
        )
    return f"the input carry at path {path}" if path else "the input carry"


def _jax_str(a: Aval) -> str:
    """An aval as JAX prints types in errors: ``float32[3,4]``."""
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def _carry_structure_error(shown: str, carry_name: str | None, t_in: Any, t_out: Any) -> None:
    """Raise JAX's error for a loop body that changed its carry's pytree structure,
    naming where the two structures differ."""
    diffs = [
        f"{_component(carry_name, path)} is a {x} but the corresponding component of the "
        f"carry output is a {y}, so {why}"
        for path, x, y, why in structure_differences_of_trees(t_in, t_out)
    ]
    if not diffs:
        diffs = [f"the input carry has structure {t_in} but the output has structure {t_out}"]
    raise TypeError(
        f"{shown} body function carry input and carry output must have the same pytree "
        f"structure, but they differ:\n\n{bullet_list(diffs)}\nRevise the function so that "
        f"the carry output has the same pytree structure as the carry input."
        f"{where(user_frame())}"
    )


def _trace_body(
    fun: Callable,
    make_args: Callable[[list], tuple],
    carry_leaves: list,
    carry_tree: Any,
    extra_avals: Sequence[Aval],
    extra_tree: Any,
    name: str,
    split_out: Callable[[Any], tuple[Any, Any]],
    label: tuple[str, str, str | None] | None = None,
) -> tuple:
    """Trace a loop body, giving weakly typed initial carries the dtype the body returns
    and checking that the carry keeps its structure, shapes and dtypes.

    ``label`` (the function the user called, the carry path prefix of funcgrad's own
    leading carries, the name of the user's carry parameter) names errors for loops built on this one (``fori_loop``).

    Returns (closed program, consts, carry avals, ``{"y_tree": ...}`` for the extra outputs).
    """
    init_avals = [_aval(x, f"{name} carry") for x in carry_leaves]
    paths = _paths(carry_tree)
    shown = name
    carry_name = _first_param(fun)
    if label is not None:
        shown, carry_name = label[0], label[2]
        paths = [p[len(label[1]) :] if p.startswith(label[1]) else p for p in paths]
    n = len(init_avals)

    def trace(avals: list[Aval]) -> tuple:
        holder: dict[str, Any] = {}

        def flat(*args: Any) -> Any:
            carry = tree_unflatten(carry_tree, list(args[:n]))
            extra = tree_unflatten(extra_tree, list(args[n:])) if extra_tree is not None else None
            c, y = split_out(fun(*make_args([carry, extra])))
            c_leaves, c_tree = tree_flatten(c)
            y_leaves, y_tree = tree_flatten(y)
            holder.update(c_tree=c_tree, y_tree=y_tree)
            return c_leaves + y_leaves

        prog, consts = cf.trace_program(flat, list(avals) + list(extra_avals), name)
        if holder["c_tree"] != carry_tree:
            t_in, t_out = carry_tree, holder["c_tree"]
            if label is not None:  # the user's part of funcgrad's (counter, ..., carry)
                k = int(label[1][1:-1])
                kids = t_out.children()
                t_in = t_in.children()[k]
                t_out = kids[k] if t_out.num_nodes > 1 and len(kids) > k else t_out
            _carry_structure_error(shown, carry_name, t_in, t_out)
        return prog, consts, holder

    avals = [a.strip_weak() for a in init_avals]
    weak = [a.weak_type for a in init_avals]
    if any(weak):
        # as JAX: a weakly typed initial carry (a Python scalar) takes the dtype the body
        # gives it when traced weakly, e.g. ``c + float32(1)`` makes a float32 carry
        weak_outs = trace(init_avals)[0].out_avals[:n]
        for i, (a, o) in enumerate(zip(init_avals, weak_outs)):
            if a.weak_type and o.shape == a.shape and (o.dtype != a.dtype or not o.weak_type):
                # the join of the two (``0`` carried through ``c + 1.5`` is a float carry)
                dt, _ = dtypes.result_type((a.dtype, True), (o.dtype, o.weak_type))
                avals[i] = Aval(a.shape, dt, False)
                weak[i] = False
    # a carry the body keeps weakly typed is traced weakly typed, as JAX's (``fori_loop``'s
    # counter ``i`` in ``x + i`` keeps an int8 ``x`` int8), and ends weakly typed
    # (``while_loop(c, b, 0)`` is a weak int32); the loop itself carries it strongly
    avals = [a if w else b for a, b, w in zip(init_avals, avals, weak)]
    prog, consts, holder = trace(avals)
    holder["weak"] = weak
    outs = prog.out_avals[:n]
    targets: list[Aval | None] = []
    bad = []
    for path, a, o in zip(paths, avals, outs):
        ok_weak = o.weak_type and dtypes.kind(o.dtype) <= dtypes.kind(a.dtype)
        if o.shape != a.shape or (o.dtype != a.dtype and not ok_weak):
            bad.append(
                f"{_component(carry_name, path)} has type {_jax_str(a)} but the corresponding "
                f"output carry component has type {_jax_str(o)}{type_mismatch_reason(a, o)}"
            )
        targets.append(a if o.dtype != a.dtype else None)
    if bad:
        raise TypeError(
            f"{shown} body function carry input and carry output must have equal types, but "
            f"they differ:\n\n{bullet_list(bad)}\nRevise the function so that all output "
            f"types match the corresponding input types.{where(user_frame())}"
        )
    targets += [None] * (len(prog.outvars) - n)
    prog = _coerce(prog, len(consts), targets)
    return prog, consts, avals, holder


def _weak_again(outs: list, weak: list[bool]) -> list:
    """Final carries, weakly typed again where the initial carry and the body kept them so."""
    return [
        ew.convert_element_type(o, to_aval(o).dtype, True) if w and not to_aval(o).weak_type else o
        for o, w in zip(outs, weak)
    ]


def _cast_init(leaves: list, avals: list[Aval]) -> list:
    """Initial carries converted to the carry dtypes (a weak init may have taken another)."""
    return [
        x if to_aval(x).dtype == a.dtype else ew.convert_element_type(x, a.dtype)
        for x, a in zip(leaves, avals)
    ]


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)`` is true (``lax.while_loop``).

    Args:
        cond_fun: returns a boolean scalar for the current value.
        body_fun: returns the next value, with the same pytree structure, shapes and
            dtypes as its input.
        init_val: the initial value (any pytree of arrays).

    Returns:
        The value for which ``cond_fun`` first returned false.

    Forward-mode differentiable and batchable (under ``vmap`` with a batched
    condition the loop runs until every example is done). Reverse mode needs a trip
    count known when tracing, as in JAX: ``grad`` through it raises ``ValueError``; use
    :func:`fori_loop` with Python-int bounds, or :func:`scan`.
    """
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    return _while_loop(cond_fun, body_fun, init_val)


def _while_loop(
    cond_fun: Callable,
    body_fun: Callable,
    init_val: Any,
    label: tuple[str, str, str | None] | None = None,
) -> Any:
    leaves, tree = tree_flatten(init_val)
    body, bconsts, avals, held = _trace_body(
        body_fun,
        lambda a: (a[0],),
        leaves,
        tree,
        [],
        None,
        "while_loop",
        lambda o: (o, None),
        label,
    )
    _, args_tree = tree_flatten((init_val,))
    cprog, cconsts, cout = _trace(cond_fun, args_tree, avals, "while_loop")
    outs = cprog.out_avals
    if cout.num_nodes != 1 or len(outs) != 1:
        raise TypeError(
            f"cond_fun must return a boolean scalar, but got pytree {cout}.{where(user_frame())}"
        )
    if outs[0].shape != () or outs[0].dtype != np.dtype("bool"):
        weak = ", weak_type=True" if outs[0].weak_type else ""
        raise TypeError(
            "cond_fun must return a boolean scalar, but got output type(s) "
            f"[ShapedArray({_jax_str(outs[0])}{weak})].{where(user_frame())}"
        )
    init = _cast_init(leaves, avals)
    n_c = len(bconsts)
    fwd = [o is v for o, v in zip(body.outvars, body.invars[n_c:])]
    if any(fwd) and not all(fwd):
        # carries the body passes through unchanged are loop invariants: keep them out
        # of the loop (as JAX), so e.g. under vmap they stay unbatched
        return _while_without(cond_fun, body_fun, tree, init, fwd)
    out = cf.while_loop(cprog, body, cconsts, bconsts, init)
    return tree_unflatten(tree, _weak_again(out, held["weak"]))


def _while_without(
    cond_fun: Callable, body_fun: Callable, tree: Any, init: list, fwd: list[bool]
) -> Any:
    """``while_loop`` over the carries not in ``fwd``, the others held fixed."""
    fixed = [x for x, f in zip(init, fwd) if f]

    def full(moving: Sequence[Any]) -> Any:
        it_m, it_f = iter(moving), iter(fixed)
        return tree_unflatten(tree, [next(it_f) if f else next(it_m) for f in fwd])

    def cond2(moving: list) -> Any:
        return cond_fun(full(moving))

    def body2(moving: list) -> list:
        out = tree_leaves(body_fun(full(moving)))
        return [o for o, f in zip(out, fwd) if not f]

    moving = while_loop(cond2, body2, [x for x, f in zip(init, fwd) if not f])
    return full(moving)


def _index_dtype(lower: Any, upper: Any) -> np.dtype:
    """The loop counter's dtype, as JAX: the bounds' common dtype (any dtype, e.g.
    float bounds); differing dtypes only for two signed integers, one weakly typed."""
    la, ua = _aval(lower, "fori_loop lower"), _aval(upper, "fori_loop upper")
    if la.dtype == ua.dtype:
        return la.dtype
    if np.issubdtype(la.dtype, np.signedinteger) and np.issubdtype(ua.dtype, np.signedinteger):
        if la.weak_type and not ua.weak_type:
            return ua.dtype
        if ua.weak_type and not la.weak_type:
            return la.dtype
    raise TypeError(
        "lower and upper arguments to fori_loop must have equal types, got "
        f"{la.dtype.name} and {ua.dtype.name}"
    )


def fori_loop(
    lower: Any, upper: Any, body_fun: Callable, init_val: Any, *, unroll: int | bool | None = None
) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``, as ``lax.fori_loop``.

    Args:
        lower: the first value of the counter.
        upper: one past the last value of the counter; both bounds must have the same
            dtype (two signed integers may differ when one is a Python int), which may
            be a float.
        body_fun: ``body_fun(i, val)`` returns the next value, with ``val``'s structure,
            shapes and dtypes.
        init_val: the initial value (any pytree of arrays).
        unroll: accepted with concrete bounds only (XLA decides how to unroll).

    Returns:
        The final value.

    Raises:
        ValueError: ``unroll`` with traced bounds.

    With concrete (Python or non-traced) bounds this is a :func:`scan` of
    ``int(upper) - int(lower)`` steps whose counter ``i`` starts as the Python int
    ``int(lower)`` (so float bounds are truncated, as in JAX), and reverse-mode
    differentiation works; with traced bounds it is a :func:`while_loop` whose counter
    has the bounds' dtype, differentiable in forward mode only.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    dtype = _index_dtype(lower, upper)
    bounds: tuple[int, int] | None = None
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        try:
            bounds = int(np.asarray(lower)), int(np.asarray(upper))
        except TypeError:  # e.g. complex bounds: left to the while loop, as JAX
            bounds = None
    if bounds is not None:
        lo, hi = bounds

        def step(carry: tuple, _: Any) -> tuple:
            i, val = carry
            return (ew.add(i, 1), body_fun(i, val)), None

        (_, result), _ = _scan(
            step,
            (lo, init_val),
            None,
            max(hi - lo, 0),
            False,
            ("fori_loop", "[1]", _first_param(body_fun, 1)),
            unweak=1,
        )
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are statically known."
        )
    lower = ew.convert_element_type(lower, dtype)
    upper = ew.convert_element_type(upper, dtype)

    def cond_fun(c: tuple) -> Any:
        return ew.lt(c[0], c[1])

    def body(c: tuple) -> tuple:
        i, u, val = c
        return ew.add(i, 1), u, body_fun(i, val)

    label = ("fori_loop", "[2]", _first_param(body_fun, 1))
    return _while_loop(cond_fun, body, (lower, upper, init_val), label)[2]


def scan(
    f: Callable,
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs`` (``lax.scan``).

    Args:
        f: the step function; its new carry must have the structure, shapes and dtypes
            of the carry it receives.
        init: the initial carry (any pytree of arrays).
        xs: a pytree of arrays scanned over their leading axis, or ``None``.
        length: the number of steps; required when ``xs`` is ``None``, and must match
            the leading axis of ``xs`` otherwise.
        reverse: walk from the last element to the first (the outputs keep their
            positions).
        unroll: accepted for compatibility and ignored (XLA decides).

    Returns:
        ``(final_carry, ys)``, with the per-step outputs ``y`` stacked along a new
        leading axis.

    Raises:
        TypeError: the step changes the carry's shape or dtype.
        ValueError: ``length`` disagrees with the leading axis of ``xs``.

    One equation however many steps: the program and the compile time do not grow
    with the length. Differentiable in both modes (reverse mode is a reversed
    ``scan`` over the saved per-step values) and batchable.
    """
    if isinstance(unroll, Tracer):
        raise ConcretizationTypeError(
            "The `unroll` argument to `scan` expects a concrete `int` or `bool` value. "
            "Abstract tracer value encountered where concrete value is expected: traced "
            f"array with shape {unroll.aval}.{where(user_frame())}"
        )
    if not isinstance(unroll, bool) and (not isinstance(unroll, int) or unroll < 0):
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    return _scan(f, init, xs, length, reverse)


def _scan(
    f: Callable,
    init: Any,
    xs: Any,
    length: int | None,
    reverse: bool,
    label: tuple[str, str, str | None] | None = None,
    unweak: int = 0,
) -> tuple[Any, Any]:
    """``scan``; the first ``unweak`` carries (funcgrad's own, dropped by the caller) are
    not made weakly typed again at the end."""
    x_leaves, x_tree = tree_flatten(xs)
    x_avals = [_aval(x, "scan xs") for x in x_leaves]
    for p, a in zip(_paths(x_tree), x_avals):
        if not a.shape:
            raise ValueError(
                f"scan got value with no leading axis to scan over: xs{p} has shape (). "
                f"{where(user_frame())}"
            )
    lengths = sorted({a.shape[0] for a in x_avals})
    if length is not None:
        if isinstance(length, Tracer):
            raise ConcretizationTypeError(
                "The `length` argument to `scan` expects a concrete `int` value. "
                f"Abstract tracer value encountered where concrete value is expected: "
                f"traced array with shape {length.aval}.{where(user_frame())}"
            )
        length = int(length)
        if lengths and lengths != [length]:
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading axis "
                f"sizes {lengths}."
            )
    elif not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    elif len(lengths) > 1:
        raise ValueError(
            f"scan got values with different leading axis sizes: {', '.join(map(str, lengths))}."
        )
    else:
        length = lengths[0]
    slices = [Aval(a.shape[1:], a.dtype, a.weak_type) for a in x_avals]

    def split_out(out: Any) -> tuple:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            leaves, tree = tree_flatten(out)
            shown = typed_tree(tree, [to_aval(x) for x in leaves])
            raise TypeError(f"scan body output must be a pair, got {shown}.{where(user_frame())}")
        return out[0], out[1]

    leaves, tree = tree_flatten(init)
    prog, consts, avals, holder = _trace_body(
        f, lambda a: (a[0], a[1]), leaves, tree, slices, x_tree, "scan", split_out, label
    )
    init = _cast_init(leaves, avals)
    outs = cf.scan(prog, consts, init, x_leaves, length=length, reverse=reverse)
    holder["weak"][:unweak] = [False] * min(unweak, len(leaves))
    n = len(leaves)
    # a carry the body returns unchanged ends as it started (JAX's forwarding: under vmap
    # an unbatched read-only carry stays unbatched)
    carry_in = prog.invars[len(consts) : len(consts) + n]
    outs = [
        _as_value(init[k]) if k < n and prog.outvars[k] is carry_in[k] else o
        for k, o in enumerate(outs)
    ]
    carries = _weak_again(outs[:n], holder["weak"])
    return tree_unflatten(tree, carries), tree_unflatten(holder["y_tree"], outs[n:])
