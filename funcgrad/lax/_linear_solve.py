"""``lax.custom_linear_solve`` and ``lax.custom_root``: a user's solvers, differentiated
implicitly.

The user's functions are traced into closed programs (the values they close over become
operands, so derivatives reach them) and bound as one ``linear_solve`` primitive
(:mod:`funcgrad.primitives.linear_solve`, where the rules are): ``matvec``, its transpose
``vecmat`` (the VJP of ``matvec`` in its vector, exact since it is linear), ``solve`` and
``transpose_solve`` (``solve`` itself when ``symmetric``). Pytrees of vectors are
flattened; each function's output tree is checked against ``b``'s, with JAX's errors.

``custom_root`` is a ``custom_jvp`` over the values ``f`` closes over: the root is the
user's ``solve``; its tangent is ``-tangent_solve(g, d_params f)`` with ``g`` the
linearisation of ``f`` at the root in ``x`` (the implicit function theorem), written with
differentiable operations so every order of derivatives follows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad import ad
from funcgrad.core.ad_util import close
from funcgrad.core.interp import eval_program, new_builder, to_aval
from funcgrad.core.ir import Aval, Program
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.custom import custom_jvp
from funcgrad.numpy._core import as_array
from funcgrad.primitives.calls import stop_gradient
from funcgrad.primitives.linear_solve import linear_solve
from funcgrad.primitives.shape import full
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_linear_solve", "custom_root"]


def _trace(fn: Callable[..., list], avals: list[Aval]) -> tuple[Program, tuple]:
    """``fn`` of flat vectors as a closed program and the values it closes over."""
    with new_builder("custom_linear_solve") as b:
        prog = b.build(list(fn(*[b.new_arg(a) for a in avals])))
    return close(prog)


def _flat(name: str, tree: Any, want: Any, avals: list[Aval]) -> list:
    """``tree``'s leaves, checked against ``b``'s structure, shapes and dtypes."""
    leaves, struct = tree_flatten(tree)
    if struct != want:
        raise TypeError(f"{name}() output pytree structure must match b, got {struct} and {want}.")
    leaves = [as_array(x, name) for x in leaves]
    got = [(to_aval(x).shape, to_aval(x).dtype) for x in leaves]
    expected = [(a.shape, a.dtype) for a in avals]
    if got != expected:
        raise ValueError(
            f"{name}() output shapes and dtypes must match b, got {got} and {expected}"
        )
    return leaves


def _vecmat(matvec: Program, n_mv: int, avals: list[Aval]) -> Program:
    """The transpose of the (linear) ``matvec`` in its vector, over the same constants
    (the VJP's own constants stay inside the program)."""
    active = [False] * n_mv + [True] * len(avals)
    vp = ad.vjp_program(matvec, active=active)
    fwd, fconsts = close(vp.fwd)
    bwd, bconsts = close(vp.bwd)
    mv_avals = matvec.in_avals[:n_mv]

    def apply(*args: Any) -> list:
        mv, y = args[:n_mv], args[n_mv:]
        zeros = [full(a.shape, 0, a.dtype) for a in avals]
        res = eval_program(fwd, *fconsts, *mv, *zeros)[len(matvec.outvars) :]
        return eval_program(bwd, *bconsts, *res, *y)[n_mv:]

    with new_builder("custom_linear_solve") as b:
        return b.build(list(apply(*[b.new_arg(a) for a in [*mv_avals, *avals]])))


def custom_linear_solve(
    matvec: Callable[[Any], Any],
    b: Any,
    solve: Callable[[Callable, Any], Any],
    transpose_solve: Callable[[Callable, Any], Any] | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """``solve(matvec, b)`` differentiated as the solution of ``matvec(x) = b``: the
    derivative depends on ``matvec`` and ``b`` only (implicit differentiation), so
    ``solve`` may be any (even non-differentiable) solver. Reverse mode needs
    ``transpose_solve(vecmat, b)`` (or ``symmetric=True``). With ``has_aux``, ``solve``
    returns ``(x, aux)`` and so does this function (``aux`` carries no derivative)."""
    leaves, tree = tree_flatten(b)
    leaves = [as_array(x, "custom_linear_solve") for x in leaves]
    avals = [to_aval(x).strip_weak() for x in leaves]
    if symmetric:
        transpose_solve = solve

    def as_tree(xs: Any) -> Any:
        return tree_unflatten(tree, list(xs))

    mv_prog, mv_consts = _trace(lambda *x: _flat("matvec", matvec(as_tree(x)), tree, avals), avals)

    def solved(fn: Callable, name: str, operator: Callable) -> Callable:
        def run(*y: Any) -> list:
            out = fn(operator, as_tree(y))
            if has_aux:
                out = out[0]
            return _flat(name, out, tree, avals)

        return run

    def apply(prog: Program, consts: tuple) -> Callable:
        return lambda x: as_tree(eval_program(prog, *consts, *tree_flatten(x)[0]))

    s_prog, s_consts = _trace(solved(solve, "solve", matvec), avals)
    if transpose_solve is None:
        vm_prog, t_prog, t_consts = None, None, ()
    elif symmetric:
        vm_prog, t_prog, t_consts = mv_prog, s_prog, s_consts
    else:
        vm_prog = _vecmat(mv_prog, len(mv_consts), avals)
        vecmat = apply(vm_prog, mv_consts)
        t_prog, t_consts = _trace(solved(transpose_solve, "transpose_solve", vecmat), avals)
    x = linear_solve(
        mv_prog, vm_prog, s_prog, t_prog, list(mv_consts), list(s_consts), list(t_consts), leaves
    )
    out = as_tree(x)
    if not has_aux:
        return out
    aux = solve(matvec, b)[1]
    return out, tree_map(stop_gradient, aux)


def custom_root(
    f: Callable[[Any], Any],
    initial_guess: Any,
    solve: Callable[[Callable, Any], Any],
    tangent_solve: Callable[[Callable, Any], Any],
    has_aux: bool = False,
) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, differentiated with respect to the
    values ``f`` closes over by the implicit function theorem (``solve`` itself is not
    differentiated). ``tangent_solve(g, y)`` solves the linear system ``g(x) = y`` of
    ``f`` linearised at the root. With ``has_aux``, ``solve`` returns ``(root, aux)``."""
    leaves, tree = tree_flatten(initial_guess)
    leaves = [as_array(x, "custom_root") for x in leaves]
    avals = [to_aval(x).strip_weak() for x in leaves]
    n = len(avals)

    def as_tree(xs: Any) -> Any:
        return tree_unflatten(tree, list(xs))

    f_prog, f_consts = _trace(lambda *x: _flat("f", f(as_tree(x)), tree, avals), avals)

    def f_at(params: Any) -> Callable:
        return lambda x: as_tree(eval_program(f_prog, *params, *tree_flatten(x)[0]))

    # solve and tangent_solve as closed programs too: what they close over is passed to
    # the custom_jvp function explicitly (a custom rule must not close over a tracer)
    aux_tree: list = []

    def run_solve(*guess: Any) -> list:
        out = solve(f_at(f_consts), as_tree(guess))
        found = _flat("solve", out[0] if has_aux else out, tree, avals)
        aux, at = tree_flatten(out[1]) if has_aux else ([], None)
        aux_tree.append(at)
        return [*found, *aux]

    s_prog, s_consts = _trace(run_solve, avals)

    def linearised(params: list, found: list) -> Callable:
        def g(v: Any) -> Any:
            zp = [Zero(to_aval(p).strip_weak()) for p in params]
            return as_tree(ad.jvp_eval(f_prog, [*params, *found], [*zp, *tree_flatten(v)[0]])[1])

        return g

    def run_tangent_solve(*args: Any) -> list:
        found, rhs = args[:n], args[n:]
        step = tangent_solve(linearised(list(f_consts), list(found)), as_tree(rhs))
        return _flat("tangent_solve", step, tree, avals)

    l_prog, l_consts = _trace(run_tangent_solve, avals + avals)

    @custom_jvp
    def root(params: list, s_params: list, l_params: list, guess: list) -> list:
        return eval_program(s_prog, *s_params, *guess)

    @root.defjvp
    def _root_jvp(primals: tuple, tangents: tuple) -> tuple:
        params, s_params, l_params, guess = primals
        out = root(params, s_params, l_params, guess)
        found = out[:n]
        dots = [
            Zero(to_aval(p).strip_weak()) if is_zero(t) else t for p, t in zip(params, tangents[0])
        ]
        _, rhs = ad.jvp_eval(f_prog, [*params, *found], [*dots, *[Zero(a) for a in avals]])
        rhs = [full(a.shape, 0, a.dtype) if is_zero(r) else r for r, a in zip(rhs, avals)]
        step = eval_program(l_prog, *l_params, *found, *rhs)
        aux_dot = [full(to_aval(a).shape, 0, to_aval(a).dtype) for a in out[n:]]
        return out, [*[-x for x in step], *aux_dot]

    out = root(list(f_consts), list(s_consts), list(l_consts), leaves)
    found = as_tree(out[:n])
    if not has_aux:
        return found
    return found, tree_map(stop_gradient, tree_unflatten(aux_tree[-1], list(out[n:])))
