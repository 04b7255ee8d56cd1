"""Forward mode: ``jvp`` and ``linearize``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import ad, passes
from funcgrad.api import _levels
from funcgrad.api._tracing import (
    TreeFunction,
    _check_leaf,
    _complex_mismatch,
    _zeros_ct,
    check_callable,
    trace_pytree,
)
from funcgrad.core import dtypes, tiers
from funcgrad.core.ad_util import close
from funcgrad.core.interp import is_tracing, new_builder, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.zeros import is_zero
from funcgrad.tree_util import tree_flatten, tree_unflatten


def _check_tangents(primals: tuple, tangents: tuple, name: str) -> tuple[list, list, Any]:
    p_leaves, p_tree = tree_flatten(primals)
    t_leaves = _check_tangent_avals([to_aval(p) for p in p_leaves], p_tree, tangents, name)
    return p_leaves, t_leaves, p_tree


#: the start of JAX's messages about jvp's and linearize's arguments (its test suite matches
#: them; they name the JAX function the user's code called, ``name``)
_JAX_WORDS = "primal and tangent arguments to jax.{name} "


def _jax_aval(a: Aval) -> str:
    return f"ShapedArray({a.dtype.name}[{','.join(map(str, a.shape))}])"


def _check_tangent_avals(p_avals: list[Aval], p_tree: Any, tangents: tuple, name: str) -> list:
    """Tangents that fit the primals, or JAX's errors: ``TypeError`` for another tree
    structure or dtype, ``ValueError`` for another shape (``linearize``'s function: a
    ``ValueError`` naming both avals)."""
    t_leaves, t_tree = tree_flatten(tangents)
    if p_tree != t_tree:
        raise TypeError(
            _JAX_WORDS.format(name=name) + "must have the same tree structure; "
            f"primals have tree structure {p_tree} whereas tangents have tree structure "
            f"{t_tree}. ({name})"
        )
    for pa, t in zip(p_avals, t_leaves):
        ta = to_aval(t)
        bad_dtype = (
            dtypes.is_inexact(pa.dtype)
            and ta.dtype != pa.dtype
            and (not ta.weak_type or _complex_mismatch(ta.dtype, pa.dtype))
        )
        if name == "linearize" and (pa.shape != ta.shape or bad_dtype):
            want = pa.dtype.name if dtypes.is_inexact(pa.dtype) else "float0"
            raise ValueError(
                "linearized function called on tangent values inconsistent with the original "
                f"primal values:\nGot tangent aval {_jax_aval(ta)} for primal aval "
                f"{_jax_aval(pa)} but expected ShapedArray({want}"
                f"[{','.join(map(str, pa.shape))}])."
            )
        if bad_dtype:
            raise TypeError(
                _JAX_WORDS.format(name=name) + "do not match; dtypes must be "
                "equal, or in case of int/bool primal dtype the tangent dtype must be float0."
                f"Got primal dtype {pa.dtype.name} and so expected tangent dtype "
                f"{pa.dtype.name}, but got tangent dtype {ta.dtype.name} instead."
            )
        if pa.shape != ta.shape:
            raise ValueError(
                f"{name} called with different primal and tangent shapes;Got primal shape "
                f"{pa.shape} and tangent shape as {ta.shape}"
            )
    return t_leaves


def jvp(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False):
    """Evaluate ``fun`` and its directional derivative (forward mode).

    Args:
        fun: a function of the primals (arrays or pytrees of arrays).
        primals: a tuple or list with one value per positional argument of ``fun``.
        tangents: the direction, structured like ``primals`` with the same shapes and
            dtypes.
        has_aux: ``fun`` returns ``(out, aux)``; ``aux`` is returned as a third element.

    Returns:
        ``(out, tangent_out)``: ``fun(*primals)`` and the Jacobian of ``fun`` applied to
        ``tangents``; ``(out, tangent_out, aux)`` with ``has_aux``.

    Raises:
        TypeError: the tangents' tree structure or a tangent's dtype differs from the
            primals'.
        ValueError: a tangent's shape differs from its primal's.
    """
    check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            _JAX_WORDS.format(name="jvp")
            + (
                "must be tuples or lists; found "
                f"{type(primals).__name__} and {type(tangents).__name__}. (jvp)"
            )
        )
    p_leaves, t_leaves, p_tree = _check_tangents(primals, tangents, "jvp")
    holder: dict[str, Any] = {}

    def flat(*xs: Any) -> list:
        out = fun(*tree_unflatten(p_tree, list(xs)))
        aux = None
        if has_aux:
            out, aux = out
        ol, ot = tree_flatten(out)
        al, at = tree_flatten(aux)
        holder.update(out_tree=ot, n=len(ol), aux_tree=at)
        return ol + al

    avals = [_check_leaf(x, "jvp") for x in p_leaves]
    with new_builder("jvp") as b:
        ins = [b.new_arg(a, x) for a, x in zip(avals, p_leaves)]
        # (integer primals and explicitly symbolic-zero tangents perturb nothing)
        on = [not is_zero(t) for t in t_leaves]
        _levels.differentiates(
            b, [x for x, o in zip(ins, on) if o], [t for t, o in zip(t_leaves, on) if o]
        )
        prog = b.build(flat(*ins))
    tans = [t if dtypes.is_inexact(a.dtype) else ad.Zero(a) for t, a in zip(t_leaves, avals)]
    if is_tracing():
        outs, touts = ad.jvp_eval(prog, p_leaves, tans)
    else:  # eagerly: one (cached, compiled once it recurs) forward-mode program
        nz = [not is_zero(t) for t in tans]
        jprog, out_nz = ad.jvp_program(prog, nz, known=p_leaves, known_tangents=tans)
        res = tiers.run(jprog, *p_leaves, *[t for t, z in zip(tans, nz) if z])
        it = iter(res[len(prog.outvars) :])
        outs = res[: len(prog.outvars)]
        touts = [next(it) if z else ad.Zero(o.aval) for z, o in zip(out_nz, prog.outvars)]
    n = holder["n"]
    touts = [(_zeros_ct(o.aval) if is_zero(t) else t) for t, o in zip(touts[:n], prog.outvars[:n])]
    out = tree_unflatten(holder["out_tree"], outs[:n])
    tout = tree_unflatten(holder["out_tree"], touts)
    if has_aux:
        return out, tout, tree_unflatten(holder["aux_tree"], outs[n:])
    return out, tout


def linearize(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """Evaluate ``fun`` once and return its linear tangent map at that point.

    Args:
        fun: a function of the primals.
        *primals: the point of linearisation.
        has_aux: ``fun`` returns ``(out, aux)``.

    Returns:
        ``(out, jvp_fn)``, or ``(out, jvp_fn, aux)`` with ``has_aux``. ``jvp_fn(*tangents)``
        applies the Jacobian at ``primals`` to tangents structured like ``primals``,
        without evaluating ``fun`` again. ``jvp_fn`` is a pytree over its residuals, so it
        can pass through ``jit``.
    """
    check_callable(fun)
    if has_aux:

        def pair(*xs: Any) -> Any:
            res = fun(*xs)
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    "linearize with has_aux=True: the function must return a pair (out, aux), "
                    f"got {type(res).__name__}"
                )
            return tuple(res)

        (out, aux), lin = linearize(pair, *primals)
        inner = lin._fn
        return out, TreeFunction(lambda saved, *t: inner(saved, *t)[0], lin._leaves), aux
    prog, out_tree = trace_pytree(fun, primals, None, "linearize", known=True, differentiates=True)
    leaves, _in_tree = tree_flatten(primals)
    nonzero = [dtypes.is_inexact(a.dtype) for a in prog.in_avals]
    jprog, out_nz = ad.jvp_program(prog, nonzero, known=leaves)
    n_t = sum(nonzero)
    known, lin, unknown = ad.partial_eval(
        jprog, [False] * len(leaves) + [True] * n_t, list(leaves) + [None] * n_t
    )
    n_out = len(prog.outvars)
    outs = known[:n_out]
    if any(o is None for o in outs):
        # a call-like equation mixes primal and tangent outputs, so partial
        # evaluation staged it whole: compute the primal outputs directly
        outs = tiers.run(prog, *leaves)
    # which of the linear program's outputs are the tangent outputs
    lin_pos = [i for i, u in enumerate(unknown) if u]
    tangent_slots = [
        lin_pos.index(n_out + k) if (n_out + k) in lin_pos else None for k in range(sum(out_nz))
    ]
    known_tangents = known[n_out:]
    out_avals = [v.aval for v in prog.outvars]
    in_avals, in_tree = list(prog.in_avals), tree_flatten(primals)[1]
    # the linear program computes the tangent outputs only (a call-like equation staged
    # whole loses its primal outputs, and what only they needed: a checkpoint of cond
    # recomputes cos for the tangent, not sin)
    needed = [i in set(tangent_slots) for i in range(len(lin.outvars))]
    new_pos = {old: k for k, old in enumerate(i for i, n in enumerate(needed) if n)}
    tangent_slots = [None if t is None else new_pos[t] for t in tangent_slots]
    lin, lin_consts = close(passes.dce(lin, used_outputs=needed))
    n_consts = len(lin_consts)

    def jvp_fn(saved: list, *tangents: Any) -> Any:
        t_leaves = _check_tangent_avals(in_avals, in_tree, tangents, "linearize")
        t_in = [t for t, nz in zip(t_leaves, nonzero) if nz]
        lin_outs = tiers.run(lin, *saved[:n_consts], *t_in)
        known_tangents = saved[n_consts:]
        touts, k = [], 0
        for a, nz in zip(out_avals, out_nz):
            if not nz:
                touts.append(_zeros_ct(a))
                continue
            slot = tangent_slots[k]
            touts.append(lin_outs[slot] if slot is not None else known_tangents[k])
            k += 1
        return tree_unflatten(out_tree, touts)

    return tree_unflatten(out_tree, outs), TreeFunction(jvp_fn, [*lin_consts, *known_tangents])
