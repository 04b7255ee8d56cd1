"""User-defined derivative rules (``custom_jvp``, ``custom_vjp``) and ``checkpoint``.

Each traces the wrapped function into a program and binds one call
primitive holding it, so the custom rule travels with the equation through
every transform.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import config
from funcgrad._custom_messages import (
    fwd_types_error,
    shown,
    type_str,
    typed_tree,
    types_differ,
)
from funcgrad._rule_closures import (
    RULES_IN_TRACE,
    CustomFunction,
    insert_invars,
    jvp_from_program,
    live_tracers,
    trace_jvp_rule,
    trace_vjp_rules,
    vjp_from_programs,
)
from funcgrad._rules_at_call import fwd_at_call, jvp_at_call, pending_level
from funcgrad.api._levels import zero_tangents
from funcgrad.api._tracing import fun_name
from funcgrad.core import dtypes
from funcgrad.core.ad_util import close
from funcgrad.core.errors import LeakedTracerError
from funcgrad.core.interp import (
    UNKNOWN,
    Tracer,
    bind,
    current_builder,
    is_tracing,
    new_builder,
    to_aval,
)
from funcgrad.core.ir import Aval, Var
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import rules
from funcgrad.primitives.custom_calls import (
    custom_jvp_call_p,
    custom_vjp_call_p,
)
from funcgrad.primitives.custom_calls import (
    inline_custom_jvp as _inline_custom_jvp,
)
from funcgrad.primitives.elementwise import convert_element_type
from funcgrad.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)


def trace_function(
    fun: Callable, leaves: list, in_tree: Any, name: str, known: bool = True
) -> tuple:
    """Trace ``fun``; with ``known`` (custom_jvp/custom_vjp, as in JAX) the function
    may read its arguments' values when they are known (outside jit)."""
    with new_builder(name) as b:
        args = tree_unflatten(
            in_tree, [b.new_arg(to_aval(x), x if known else UNKNOWN) for x in leaves]
        )
        out = fun(*args)
        out_leaves, out_tree = tree_flatten(out)
        prog = b.build(out_leaves)
    prog, consts = close(prog)
    return prog, consts, out_tree


def _split_nondiff(args: tuple, nondiff: tuple[int, ...]) -> tuple[list, tuple]:
    static = [args[i] for i in nondiff]
    dyn = tuple(a for i, a in enumerate(args) if i not in nondiff)
    return static, dyn


def _merge(static: list, dyn: Sequence, nondiff: tuple[int, ...]) -> list:
    out, s, d = [], iter(static), iter(dyn)
    for i in range(len(static) + len(dyn)):
        out.append(next(s) if i in nondiff else next(d))
    return out


def _nondiff_nums(fun: Callable, argnums: Sequence[int], argnames: Sequence[str]) -> tuple:
    """``nondiff_argnums`` plus the positions of ``nondiff_argnames`` in ``fun``'s signature."""
    nums = set(argnums)
    if argnames:
        params = list(inspect.signature(fun).parameters)
        for name in argnames:
            if name not in params:
                raise ValueError(f"nondiff_argnames: {name!r} is not a parameter of {fun}")
            nums.add(params.index(name))
    return tuple(sorted(nums))


def forward_attr(self: Any, name: str) -> Any:
    """``__getattr__`` of the custom-rule wrappers: attributes they lack come from the
    function they wrap, so stacked wrappers (``custom_vjp(custom_vmap(f))``) reach each
    other's ``def*`` methods, as in JAX."""
    if name.startswith("__") or name in ("fun", "__wrapped__"):
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
    try:
        fun = object.__getattribute__(self, "fun")
    except AttributeError:
        raise AttributeError(name) from None
    return getattr(fun, name)


def positional_args(fun: Callable, name: str, args: tuple, kwargs: dict) -> tuple:
    """The arguments resolved to positions through ``fun``'s signature, defaults
    applied, as JAX does (a ``functools.partial`` counts as ``*args, **kwargs``);
    ``name`` (``"custom_jvp"``...) is the decorator named by the error."""
    try:
        if isinstance(fun, functools.partial):
            if kwargs:
                raise TypeError(
                    "The following keyword arguments could not be resolved to positions: "
                    + ", ".join(kwargs)
                )
            return args
        try:
            sig = inspect.signature(fun)
        except (TypeError, ValueError):  # no signature (some builtins): positional only
            if kwargs:
                raise TypeError(f"{fun!r} has no signature to resolve keywords with") from None
            return args
        ba = sig.bind(*args, **kwargs)
        ba.apply_defaults()
        passed = [k for k in ba.kwargs if k in kwargs]
        if passed:
            raise TypeError(
                "The following keyword arguments could not be resolved to positions: "
                + ", ".join(passed)
            )
    except TypeError as e:
        fname = fun_name(fun)
        raise TypeError(
            f"The input arguments to the {name}-decorated function {fname} could not be "
            f"resolved to positional-only arguments. Binding failed with the error:\n{e}"
        ) from e
    return tuple(ba.args)


def _depends_on_trace_inputs(leaves: list) -> bool:
    """Whether a leaf is computed from the inputs of the innermost trace (there: the
    tangents of a custom rule's tangent map being transposed)."""
    b = current_builder()
    if b is None:
        return False
    dep = set(b.invars)
    for e in b.eqns:
        if any(type(a) is Var and a in dep for a in e.inputs):
            dep.update(e.outvars)
    return any(isinstance(x, Tracer) and x._builder is b and x._var in dep for x in leaves)


def _check_tangent_avals(primals: list, tangents: list) -> None:
    """JAX's check that a custom JVP rule's tangents have the primals' tangent types."""
    for p, t in zip(primals, tangents):
        pa = to_aval(p).strip_weak()
        if not dtypes.is_inexact(pa.dtype):
            continue
        ta = t.aval if isinstance(t, SymbolicZero) else to_aval(t)
        if ta.shape != pa.shape or (not ta.weak_type and ta.dtype != pa.dtype):
            ta = ta.strip_weak()
            raise TypeError(
                "Custom JVP rule must produce primal and tangent outputs with corresponding "
                f"shapes and dtypes. Expected {type_str(pa)} (tangent type of "
                f"{type_str(pa)}) but got {type_str(ta)}."
            )


class SymbolicZero:
    """A zero (co)tangent passed to a rule defined with ``symbolic_zeros=True``:
    it has the value's ``aval``, ``shape`` and ``dtype`` but no data."""

    def __init__(self, aval: Any) -> None:
        self.aval = aval
        self.shape = aval.shape
        self.dtype = aval.dtype

    def __getattr__(self, name: str) -> Any:  # ndim, size, weak_type: the aval's
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(val: Any) -> SymbolicZero:
        """The symbolic zero tangent of ``val``."""
        return SymbolicZero(to_aval(val).strip_weak())

    def instantiate(self) -> Any:
        """Materialise as an array of zeros."""
        return rules.zeros_like_aval(self.aval)

    def __repr__(self) -> str:
        return "SymbolicZero"


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents for the pytree ``val``: :class:`SymbolicZero` leaves, or arrays."""

    def zero(x: Any) -> Any:
        z = SymbolicZero.from_primal_value(x)
        return z if symbolic_zeros else z.instantiate()

    return tree_map(zero, val)


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """The values of a pytree of :class:`CustomVJPPrimal` (what ``fwd`` receives
    with ``symbolic_zeros=True``), without the perturbation flags."""

    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_map(value, tree, is_leaf=lambda x: type(x) is CustomVJPPrimal)


class CustomVJPPrimal:
    """A primal passed to ``fwd`` defined with ``symbolic_zeros=True``: its
    ``value`` and whether it is ``perturbed`` (differentiated)."""

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def _is_zero_marker(x: Any) -> bool:

    return x is None or isinstance(x, SymbolicZero) or is_zero(x)


class custom_jvp(CustomFunction):
    """A function with a hand-written JVP rule, as JAX's ``custom_jvp``.

    Used as a decorator; set the rule with ``f.defjvp(jvp)``, where
    ``jvp(primals, tangents) -> (primal_out, tangent_out)``, or give one rule per
    argument with ``f.defjvps(*jvps)``. Reverse mode uses the same rule (funcgrad
    transposes its linear part), so one rule serves ``jvp``, ``grad`` and ``vmap``.

    Args:
        fun: the function; called as is when nothing differentiates it.
        nondiff_argnums: positions of arguments that are not differentiated (passed to
            the rule first).
        nondiff_argnames: the same, by name.

    Raises:
        AttributeError: the function is called before ``defjvp`` set a rule.
        TypeError: the rule's output structure differs from the function's (JAX's
            message, naming both structures).

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> @fg.custom_jvp
        ... def softplus(x):
        ...     return fnp.log1p(fnp.exp(x))
        >>> @softplus.defjvp
        ... def _(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return softplus(x), t * fg.nn.sigmoid(x)
        >>> fg.grad(softplus)(100.0)  # the derived rule would give nan
        Array(1., dtype=float32, weak_type=True)
    """

    def __init__(
        self,
        fun: Callable,
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_nums(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    __getattr__ = forward_attr

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``; with
        ``symbolic_zeros`` zero tangents arrive as :class:`SymbolicZero` (and the
        rule may return one)."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """One rule per differentiable argument: ``jvp_i(g_i, ans, *primals)`` is the
        output tangent due to argument ``i``'s tangent ``g_i``; ``None`` means that
        argument does not affect the output. The contributions are summed."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple, tangents: tuple) -> tuple:
            ans = self(*primals)
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is None or _is_zero_marker(t):
                    continue
                part = rule(t, ans, *primals)
                total = part if total is None else tree_map(lambda a, b: a + b, total, part)
            if total is None:
                total = tree_map(lambda a: a * 0, ans)
            return ans, total

        self.defjvp(jvp, symbolic_zeros=True)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def _rule(
        self,
        static: list,
        in_tree: Any,
        in_avals: list,
        out_tree: Any,
        n_consts: int,
        got: dict | None = None,
        out_avals: Sequence[Aval] = (),
    ) -> Callable:
        """The user's rule over flat lists ``(primals, tangents)`` (``n_consts`` leading
        entries skipped), with JAX's checks of what it returns; ``out_tree`` is the
        function's output structure when the function ran, ``out_avals`` its outputs'
        types (else the rule's structure is stored in ``got["out_tree"]``)."""
        user_jvp, symbolic = self.jvp, self.symbolic_zeros
        name = fun_name(self.fun)
        rule_name = f"{fun_name(user_jvp)} for function {name}"

        def jvp_rule(primals: list, tangents: list) -> tuple:
            tans = []
            for t, a in zip(tangents[n_consts:], in_avals):
                if symbolic and _is_zero_marker(t):
                    tans.append(SymbolicZero(a.strip_weak()))
                else:
                    tans.append(rules.instantiate(t, a.strip_weak()))
            p = tree_unflatten(in_tree, primals[n_consts:])
            t = tree_unflatten(in_tree, tans)
            res = user_jvp(*static, tuple(p), tuple(t))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"Custom JVP rule {rule_name} must produce a pair (list or tuple of length "
                    f"two) representing primal and tangent outputs, but got {shown(res)}."
                )
            out, tout = res
            o_leaves, o_tree = tree_flatten(out)
            t_leaves, t_tree = tree_flatten(tout, is_leaf=lambda x: isinstance(x, SymbolicZero))
            if t_tree != o_tree:
                raise TypeError(
                    f"Custom JVP rule {rule_name} must produce primal and tangent outputs with "
                    f"equal container (pytree) structures, but got {o_tree} and {t_tree} "
                    "respectively."
                )
            if out_tree is None:
                if got is not None:
                    got["out_tree"] = o_tree
            elif o_tree != out_tree:
                raise TypeError(
                    f"Custom JVP rule {rule_name} must produce a pair (list or tuple of length "
                    "two) where the first element represents the primal output (equal in value "
                    f"to the output of the custom_jvp-decorated function {name}, and in "
                    "particular of the same container/pytree structure), but instead the JVP "
                    "rule output's first element had container/pytree structure:\n"
                    f"    {typed_tree(o_tree, map(to_aval, o_leaves))}\n"
                    f"while the custom_jvp-decorated function {name} had output "
                    "container/pytree structure:\n"
                    f"    {typed_tree(out_tree, out_avals)}."
                )
            elif types_differ(o_leaves, out_avals):
                raise TypeError(
                    f"Custom JVP rule {rule_name} must produce a pair (list or tuple of length "
                    "two) where the first element represents the primal output (equal in value "
                    f"to the output of the custom_jvp-decorated function {name}, and in "
                    "particular with leaves of the same shape/dtype), but instead the JVP rule "
                    "output's first element had shapes/dtypes of:\n"
                    f"    {typed_tree(o_tree, map(to_aval, o_leaves))}\n"
                    f"while the custom_jvp-decorated function {name} had output shapes/dtypes "
                    f"of:\n    {typed_tree(out_tree, out_avals)}"
                )
            _check_tangent_avals(o_leaves, t_leaves)
            # a SymbolicZero stays symbolic, so rules downstream see it as one
            t_leaves = [
                Zero(to_aval(o).strip_weak()) if isinstance(t, SymbolicZero) else t
                for o, t in zip(o_leaves, t_leaves)
            ]
            return o_leaves, t_leaves

        return jvp_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function; under a transform its JVP rule (set by ``defjvp``) is used.

        Raises:
            AttributeError: no rule was set with ``defjvp`` (JAX's message).
        """
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {fun_name(self.fun)} using defjvp."
            )
        args = positional_args(self.fun, "custom_jvp", args, kwargs)
        if not is_tracing():  # nothing differentiates it: the function itself, as JAX runs it
            return self.fun(*args)
        if _inline_custom_jvp() and _depends_on_trace_inputs(tree_flatten(args)[0]):
            # applied to tangents inside the transpose of a custom rule's tangent map: the
            # function is used as the linear map it is, not differentiated again (else a
            # rule that calls its own function on the tangents would recurse forever);
            # calls on primals keep their rule, so higher derivatives stay exact
            return self.fun(*args)
        static, dyn = _split_nondiff(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(dyn)
        in_avals = [to_aval(x) for x in leaves]
        name = fun_name(self.fun)
        level, pert = pending_level(leaves, "custom_jvp", name)
        if level is not None:
            # an eager differentiation perturbs the arguments: JAX runs the rule now and
            # never the function (its primal output is the rule's)
            closed = live_tracers((self.jvp, static))
            got: dict = {}
            rule = self._rule(static, in_tree, in_avals, None, 0, got)
            consts, prog, jvp_now, zero = jvp_at_call(
                rule, rule, leaves, in_avals, level, pert, closed, name
            )
            if prog is not None:
                outs = bind(custom_jvp_call_p, *consts, *leaves, program=prog, jvp=jvp_now)
                zero_tangents([o for o, z in zip(outs, zero) if z], level)
                return tree_unflatten(got["out_tree"], outs)
        fun = lambda *d: self.fun(*_merge(static, d, self.nondiff_argnums))
        prog, consts, out_tree = trace_function(fun, leaves, in_tree, "custom_jvp")
        n_consts = len(consts)
        jvp_rule = self._rule(static, in_tree, in_avals, out_tree, n_consts, None, prog.out_avals)

        closed = live_tracers((self.jvp, static))
        if closed:
            # the rule closes over values of live traces (a vmap's batched value, a jvp's
            # primal): trace it now, while they are alive, with them as explicit operands,
            # so transforms that apply it after those traces end get their values
            key = (id(self), in_tree, tuple(in_avals), tuple(map(id, closed)))
            ref = RULES_IN_TRACE.get(key) or trace_jvp_rule(
                key, jvp_rule, closed, leaves, in_avals, n_consts
            )
            jvp_rule = jvp_from_program(ref, n_consts, len(closed), in_avals, name)
            prog = insert_invars(prog, n_consts, [to_aval(t) for t in closed])
            consts = (*consts, *closed)
        outs = bind(custom_jvp_call_p, *consts, *leaves, program=prog, jvp=jvp_rule)
        return tree_unflatten(out_tree, outs)


class custom_vjp(CustomFunction):
    """A function with hand-written reverse-mode rules, as JAX's ``custom_vjp``.

    Used as a decorator; set the rules with ``f.defvjp(fwd, bwd)``:
    ``fwd(*args) -> (out, residuals)`` runs in the forward pass and chooses what to
    keep, ``bwd(*nondiff, residuals, ct) -> tuple`` returns one cotangent per
    differentiable argument (``None`` for a zero one).

    Args:
        fun: the function; called as is when nothing differentiates it.
        nondiff_argnums: positions of arguments that are not differentiated (passed to
            ``bwd`` first).
        nondiff_argnames: the same, by name.

    Raises:
        AttributeError: the function is called before ``defvjp`` set the rules.
        TypeError: ``fwd`` or ``bwd`` returns the wrong structure (JAX's messages).

    As in JAX, forward mode (``jvp``) of a ``custom_vjp`` function is an error.
    ``bwd`` runs when the pullback is applied; inside ``jit``, loops or
    ``checkpoint`` it is traced with that body's backward program.

    Example:
        >>> import funcgrad as fg, funcgrad.numpy as fnp
        >>> @fg.custom_vjp
        ... def clip_gradient(x):
        ...     return x
        >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (fnp.clip(g, -1.0, 1.0),))
        >>> fg.grad(lambda x: 10.0 * clip_gradient(x))(2.0)
        Array(1., dtype=float32, weak_type=True)
    """

    def __init__(
        self,
        fun: Callable,
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_nums(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False
        self.optimize_remat = False

    __getattr__ = forward_attr

    def defvjp(
        self,
        fwd: Callable,
        bwd: Callable,
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        """Set the rules. With ``symbolic_zeros`` ``fwd`` receives
        :class:`CustomVJPPrimal` arguments and ``bwd`` may receive
        :class:`SymbolicZero` cotangents. ``optimize_remat`` is accepted: funcgrad
        already runs ``fwd`` once, inside the forward pass, and saves only what
        ``bwd`` uses."""
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError(
                "remat optimization for custom_vjp does not support symbolic zeros"
            )
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros
        self.optimize_remat = optimize_remat

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def _fwd_rule(
        self,
        static: list,
        in_tree: Any,
        in_avals: list,
        out_tree: Any,
        n_consts: int,
        got: dict | None = None,
        out_avals: Sequence[Aval] = (),
    ) -> Callable:
        """The user's ``fwd`` over flat primals (``n_consts`` leading entries skipped) and
        their activity, with JAX's checks; ``out_tree`` is the function's output
        structure when the function ran, ``out_avals`` its outputs' types (else
        ``fwd``'s structure is stored in ``got``)."""
        user_fwd, symbolic, nd = self.fwd, self.symbolic_zeros, self.nondiff_argnums
        name = fun_name(self.fun)
        fwd_name = f"{fun_name(user_fwd)} for function {name}"

        def fwd_rule(primals: list, active: list | None = None) -> tuple:
            vals = primals[n_consts:]
            if symbolic:
                act = active[n_consts:] if active is not None else [True] * len(vals)
                vals = [
                    CustomVJPPrimal(v, bool(on) and dtypes.is_inexact(a.dtype))
                    for v, a, on in zip(vals, in_avals, act)
                ]
            p = tree_unflatten(in_tree, vals)
            res = user_fwd(*_merge(static, p, nd))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} must produce a pair (list or tuple of length "
                    f"two) where the first element represents the primal output and the second "
                    f"the residuals, but got {type(res).__name__}."
                )
            out, residuals = res
            out_leaves, tree = tree_flatten(out)
            if out_tree is None:
                if got is not None:
                    got["out_tree"] = tree
            elif tree != out_tree:
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} must produce a pair (list or tuple of "
                    "length two) where the first element represents the primal output (equal "
                    f"to the output of the custom_vjp-decorated function {name}) and the second "
                    "element represents residuals (i.e. values stored from the forward pass for "
                    "use on the backward pass), but instead the fwd rule output's first element "
                    "had container/pytree structure:\n"
                    f"    {typed_tree(tree, map(to_aval, out_leaves))}\n"
                    f"while the custom_vjp-decorated function {name} had output "
                    "container/pytree structure:\n"
                    f"    {typed_tree(out_tree, out_avals)}."
                )
            elif types_differ(out_leaves, out_avals):
                fwd_types_error(fwd_name, name, tree, out_leaves, out_avals)
            return out_leaves, residuals

        return fwd_rule

    def _bwd_rule(
        self,
        static: list,
        dyn: tuple,
        in_avals: list,
        out_avals: list,
        out_tree: Any,
        n_consts: int,
    ) -> Callable:
        """The user's ``bwd`` over the residuals and flat output cotangents, giving one
        cotangent per operand (``None`` for the ``n_consts`` leading ones and for zeros)."""
        user_bwd, symbolic = self.bwd, self.symbolic_zeros
        name = fun_name(self.fun)

        def bwd_rule(res: Any, cts: list) -> list:
            if symbolic:
                cts = [
                    SymbolicZero(a.strip_weak()) if _is_zero_marker(c) else c
                    for c, a in zip(cts, out_avals)
                ]
            else:
                cts = [rules.instantiate(c, a.strip_weak()) for c, a in zip(cts, out_avals)]
            ct = tree_unflatten(out_tree, cts)
            flat = _flat_cotangents(user_bwd(*static, res, ct), dyn, name)
            for k, (c, a) in enumerate(zip(flat, in_avals)):
                if c is None or not dtypes.is_inexact(a.dtype):  # float0: no cotangent
                    flat[k] = None
                    continue
                if isinstance(c, SymbolicZero):
                    za = c.aval
                    if (za.shape, za.dtype) != (a.shape, a.dtype):
                        path = keystr(tree_flatten_with_path(dyn)[0][k][0])
                        raise ValueError(
                            "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype "
                            "that does not match the corresponding input tangent shape/dtype: "
                            f"at output{path} the SymbolicZero had shape/dtype {type_str(za)} "
                            "while the corresponding input had shape/dtype "
                            f"{type_str(a)}. Consider just returning a None here instead of a "
                            "SymbolicZero object."
                        )
                    flat[k] = None
                    continue
                ca = to_aval(c)
                if ca.shape != a.shape and not config.read("jax_disable_bwd_checks"):
                    path = keystr(tree_flatten_with_path(dyn)[0][k][0])
                    raise ValueError(
                        f"Custom VJP bwd rule {name} must produce an output with the same "
                        "type as the args tuple of the primal function, but at "
                        f"output{path} the bwd rule produced an output of type "
                        f"{type_str(ca)} corresponding to an input of type {type_str(a)}"
                    )
                if ca.dtype != a.dtype and dtypes.is_inexact(a.dtype):
                    # e.g. a float32 cotangent for a weakly typed float64 input
                    flat[k] = convert_element_type(c, a.dtype)
            return [None] * n_consts + flat

        return bwd_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function; under a transform its rules (set by ``defvjp``) are used.

        Raises:
            AttributeError: no rules were set with ``defvjp`` (JAX's message).
        """
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {fun_name(self.fun)} using defvjp."
            )
        args = positional_args(self.fun, "custom_vjp", args, kwargs)
        if not is_tracing():
            return self.fun(*args)
        nd = self.nondiff_argnums
        static, dyn = _split_nondiff(args, nd)
        if any(isinstance(x, Tracer) for x in tree_flatten(static)[0]):
            raise LeakedTracerError(
                "Found a JAX Tracer object passed as an argument to a custom_vjp function in "
                "a position indicated by nondiff_argnums as non-differentiable. Tracers "
                "cannot be passed as non-differentiable arguments to custom_vjp functions; "
                "pass arrays as ordinary arguments (nondiff_argnums is for values that are "
                f"not arrays, e.g. functions). Function: {fun_name(self.fun)}."
            )
        leaves, in_tree = tree_flatten(dyn)
        in_avals = [to_aval(x) for x in leaves]
        name = fun_name(self.fun)
        level, pert = pending_level(leaves, "custom_vjp", name)
        if level is not None and not live_tracers((self.bwd,)):
            # an eager differentiation perturbs the arguments: JAX runs fwd now (bwd when
            # the backward pass runs) and never the function (a bwd closing over traced
            # values is traced with fwd below, while they are alive)
            closed = live_tracers((self.fwd, static))
            got: dict = {}
            fwd = self._fwd_rule(static, in_tree, in_avals, None, 0, got)
            consts, prog, fwd_now = fwd_at_call(
                fwd, fwd, leaves, in_avals, level, pert, closed, name, self.symbolic_zeros
            )
            out_tree = got["out_tree"]
            bwd = self._bwd_rule(static, dyn, in_avals, prog.out_avals, out_tree, len(consts))
            outs = bind(custom_vjp_call_p, *consts, *leaves, program=prog, fwd=fwd_now, bwd=bwd)
            return tree_unflatten(out_tree, outs)
        fun = lambda *d: self.fun(*_merge(static, d, nd))
        prog, consts, out_tree = trace_function(fun, leaves, in_tree, "custom_vjp")
        traced = [c for c in consts if isinstance(c, Tracer) and dtypes.is_inexact(c.aval.dtype)]
        if traced and config.read("jax_custom_vjp3"):  # JAX's opt-in stricter custom_vjp
            raise LeakedTracerError(
                f"custom_vjp-decorated function {fun_name(self.fun)} closed over a tracer of "
                f"type {type_str(traced[0].aval)} (traced by {traced[0]._builder.transform}), "
                "but custom_vjp functions can't close over Tracers with jax_custom_vjp3 set. "
                "Rewrite the function to take it as an explicit input."
            )
        n_consts = len(consts)
        fwd_rule = self._fwd_rule(
            static, in_tree, in_avals, out_tree, n_consts, None, prog.out_avals
        )
        bwd_rule = self._bwd_rule(static, dyn, in_avals, prog.out_avals, out_tree, n_consts)
        user_fwd, user_bwd = self.fwd, self.bwd

        closed = live_tracers((user_fwd, user_bwd, static)) if is_tracing() else []
        if closed:
            # the rules close over values of live traces: trace them now (see custom_jvp)
            key = (id(self), in_tree, tuple(in_avals), tuple(map(id, closed)))
            ref = RULES_IN_TRACE.get(key) or trace_vjp_rules(
                key, fwd_rule, bwd_rule, closed, leaves, in_avals, n_consts, prog.out_avals
            )
            fwd_rule, bwd_rule = vjp_from_programs(ref, n_consts, len(closed), in_avals, name)
            prog = insert_invars(prog, n_consts, [to_aval(t) for t in closed])
            consts = (*consts, *closed)
        outs = bind(custom_vjp_call_p, *consts, *leaves, program=prog, fwd=fwd_rule, bwd=bwd_rule)
        return tree_unflatten(out_tree, outs)


def _flat_cotangents(in_cts: Any, dyn: tuple, name: str) -> list:
    """A ``bwd`` rule's cotangents, one per leaf of the differentiable arguments
    ``dyn`` (``None`` for zero), as JAX reads them: ``None`` stands for zeros of a
    whole subtree (an argument, or part of one), a ``SymbolicZero`` for zeros of its
    leaf (kept, for the caller to check its type), and an array where the argument has
    a subtree serves each of its leaves."""
    if isinstance(in_cts, list) and len(in_cts) == len(dyn):
        in_cts = tuple(in_cts)
    if not isinstance(in_cts, tuple):
        raise TypeError(
            f"Custom VJP bwd rule {name} must produce a tuple with one cotangent per "
            f"differentiable argument, got {type(in_cts).__name__}"
        )
    if len(in_cts) != len(dyn):
        raise TypeError(
            f"Custom VJP bwd rule {name} must produce a tuple of length equal to the "
            f"number of primal arguments ({len(dyn)}), but got a tuple of length "
            f"{len(in_cts)}."
        )
    leaves, tree = tree_flatten(dyn)
    dummy = tree_unflatten(tree, [_Slot() for _ in leaves])
    flat: list = []

    def put(c: Any, d: Any) -> Any:
        n = len(tree_flatten(d)[0])
        flat.extend([c] * n)
        return c  # (tree_map rebuilds the cotangents' tree: user nodes may check leaves)

    try:
        tree_map(put, in_cts, dummy, is_leaf=lambda x: x is None)
    except (ValueError, TypeError):
        raise TypeError(
            f"Custom VJP bwd rule {name} must produce an output with the same container "
            "(pytree) structure as the args tuple of the primal function, and in particular "
            "must produce a tuple of length equal to the number of arguments to the primal "
            f"function, but got bwd output structure {tree_flatten(in_cts)[1]} for primal "
            f"input structure {tree}."
        ) from None
    return flat


class _Slot:
    """A leaf of the primal arguments' structure (what ``_flat_cotangents`` matches a
    cotangent against: never ``None``, never a pytree node)."""
