"""The function :func:`funcgrad.vjp` returns: a pullback whose saved values are its
pytree leaves, split as JAX 0.10's ``VJP`` splits them.

``args_res`` mirrors the primal arguments: each leaf is the primal value when the
backward pass reads it as a residual, or :class:`NotNeeded`; a caller may drop them
and put them back later (assign ``args_res`` or an item of it), to avoid keeping
inputs alive twice. ``opaque_residuals`` are the other saved values. The pullback
is a pytree over both lists, so it passes into and out of ``jit``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.api._tracing import _check_leaf, _complex_mismatch
from funcgrad.core import dtypes
from funcgrad.core.ir import Aval
from funcgrad.tree_util import register_pytree_node, tree_flatten, tree_unflatten


class NotNeeded:
    """The place in ``VJP.args_res`` of a primal input the pullback does not read."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NotNeeded()"


register_pytree_node(NotNeeded, lambda x: ((), None), lambda aux, children: NotNeeded())


def _jax_type(a: Aval) -> str:
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


_TOO_MANY_ARGS = """The function returned by `vjp` applied to {} was called with {} arguments,
but functions returned by `vjp` must be called with a single argument
corresponding to the single value returned by the function being differentiated
(even if that returned value is a tuple or other container).

For example, for `def f(x): return (x, x)` and `_, f_vjp = vjp(f, 1.0)`, call
`x_bar, = f_vjp((2.0, 2.0))`, not `f_vjp(2.0, 2.0)`."""


class VJP:
    """The pullback of :func:`funcgrad.vjp`: ``f_vjp(ct)`` returns one cotangent per
    primal argument.

    Attributes:
        args_res: one entry per primal argument, shaped like it: the primal leaves the
            backward pass reads, :class:`NotNeeded` for the others (assignable).
        opaque_residuals: the other values saved by the forward pass.
    """

    __slots__ = (
        "__weakref__",
        "_bwd",
        "_name",
        "_out_avals",
        "_spec",
        "args_res",
        "in_tree",
        "opaque_residuals",
        "out_tree",
    )

    def __init__(
        self,
        bwd: Callable[[list, list], Any],
        spec: Sequence[tuple[bool, int]],
        out_avals: Sequence[Aval],
        name: str,
        in_tree: Any,
        out_tree: Any,
        args_res: list,
        opaque_residuals: list,
    ) -> None:
        self._bwd = bwd
        self._spec = tuple(spec)
        self._out_avals = tuple(out_avals)
        self._name = name
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.args_res = args_res
        self.opaque_residuals = opaque_residuals

    @classmethod
    def build(
        cls,
        bwd: Callable[[list, list], Any],
        primals: Sequence[Any],
        in_tree: Any,
        residuals: Sequence[Any],
        primal_of: Sequence[int | None],
        out_avals: Sequence[Aval],
        out_tree: Any,
        name: str,
    ) -> VJP:
        """The pullback over ``residuals``: ``primal_of[k]`` is the index of the primal
        leaf residual ``k`` is (``None``: an opaque residual)."""
        spec, opaque, used = [], [], set()
        for r, i in zip(residuals, primal_of):
            if i is None:
                spec.append((False, len(opaque)))
                opaque.append(r)
            else:
                spec.append((True, i))
                used.add(i)
        leaves = [x if i in used else NotNeeded() for i, x in enumerate(primals)]
        args_res = list(tree_unflatten(in_tree, leaves))
        return cls(bwd, spec, out_avals, name, in_tree, out_tree, args_res, opaque)

    def __call__(self, ct: Any, *extra: Any) -> Any:
        """Pull ``ct`` (shaped like the function's output) back to the primals.

        Raises:
            TypeError: more than one argument (JAX's message).
            ValueError: ``ct``'s structure, shapes or dtypes differ from the output's
                (JAX's messages: "unexpected tree structure", "unexpected JAX type").
        """
        if extra:
            raise TypeError(_TOO_MANY_ARGS.format(self._name, len(extra) + 1))
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != self.out_tree:
            raise ValueError(
                "unexpected tree structure.\n\nThe argument to a VJP function returned by "
                "`vjp` must match the pytree structure of the differentiated function "
                f"{self._name}, {self.out_tree}, but got {ct_tree}."
            )
        for c, a in zip(ct_leaves, self._out_avals):
            ca = _check_leaf(c, "vjp cotangent")
            if ca.shape != a.shape or (
                dtypes.is_inexact(a.dtype)
                and ca.dtype != a.dtype
                and (not ca.weak_type or _complex_mismatch(ca.dtype, a.dtype))
            ):
                want = a.strip_weak()
                raise ValueError(
                    "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: "
                    f"got {_jax_type(ca)}, but expected {_jax_type(want)} because the "
                    "corresponding output of the differentiated function had JAX type "
                    f"{_jax_type(want)} (a cotangent has its output's shape and dtype)"
                )
        try:  # None or NotNeeded may stand at a leaf
            args = self.in_tree.flatten_up_to(tuple(self.args_res))
        except (ValueError, TypeError):
            raise ValueError(
                f"vjp: args_res has the structure {tree_flatten(list(self.args_res))[1]}, but "
                f"the primal arguments have {self.in_tree}: give args_res their structure"
            ) from None
        saved = []
        for primal, k in self._spec:
            x = args[k] if primal else self.opaque_residuals[k]
            if primal and (x is None or isinstance(x, NotNeeded)):
                raise ValueError(
                    f"vjp: leaf {k} of args_res is needed by the backward pass but is "
                    f"{x!r}: put the primal value back before calling the pullback"
                )
            saved.append(x)
        return self._bwd(saved, ct_leaves)

    def __repr__(self) -> str:
        return f"VJP({self._name})"


register_pytree_node(
    VJP,
    lambda f: (
        (f.args_res, f.opaque_residuals),
        (f._bwd, f._spec, f._out_avals, f._name, f.in_tree, f.out_tree),
    ),
    lambda aux, children: VJP(*aux, *children),
)
