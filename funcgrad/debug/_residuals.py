"""``funcgrad.debug.saved_residuals``: what the reverse pass of a function keeps.

``grad``/``vjp`` split the program into a forward half that also returns
*residuals* and a backward half that reads them (:func:`funcgrad.ad.vjp_program`);
the residuals are exactly the forward values the backward rules use, so they are
what the reverse pass keeps alive between the two halves. Each row names where the
value comes from: an argument, a constant, or the forward equation (primitive and
user line) that produced it. ``checkpoint`` and its policies change the list.
"""

from __future__ import annotations

import inspect as _inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jax import tree_util

from funcgrad import ad
from funcgrad.core.interp import Tracer, new_builder, to_aval
from funcgrad.core.ir import Program, Var
from funcgrad.primitives.calls import checkpoint_name_p
from funcgrad.tree_util import tree_flatten

__all__ = ["Residual", "SavedResiduals", "saved_residuals"]


@dataclass(frozen=True)
class Residual:
    """One array the reverse pass keeps."""

    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    #: ``"argument 'x'[0]"``, ``"constant"`` or the producing primitive's name
    origin: str
    #: the user's ``(file, line)`` of the producing equation, if known
    source: tuple[str, int] | None
    #: for an argument, its name and path in the tree (``"params[0]"``)
    argument: str | None = None
    #: the name ``checkpoint_name`` gave the value, if any
    name: str | None = None


class SavedResiduals(list):
    """The rows (:class:`Residual`) with their total; ``str()`` is a table."""

    @property
    def total_bytes(self) -> int:
        return sum(r.nbytes for r in self)

    def __str__(self) -> str:
        rows = [("shape", "dtype", "bytes", "from", "line")]
        for r in self:
            line = f"{r.source[0]}:{r.source[1]}" if r.source else ""
            shape = "[" + ",".join(map(str, r.shape)) + "]"
            rows.append((shape, r.dtype, str(r.nbytes), r.origin, line))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        out = [
            "  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4] for row in rows
        ]
        out.append(f"total: {self.total_bytes} bytes in {len(self)} arrays")
        return "\n".join(s.rstrip() for s in out)


def _arg_labels(fun: Callable, args: tuple, nums: Sequence[int]) -> list[tuple]:
    """Each leaf of the arguments ``nums``: its parameter's name, its path in the
    argument's tree, the argument's position and the leaf's (``("W", "[0]", 0, 0)``)."""
    try:
        names = list(inspect_names(fun))
    except (TypeError, ValueError):
        names = []
    labels = []
    for i in nums:
        head = names[i] if i < len(names) else f"args[{i}]"
        for k, (path, _) in enumerate(tree_util.tree_flatten_with_path(args[i])[0]):
            labels.append((head, tree_util.keystr(path), i, k))
    return labels


def inspect_names(fun: Callable) -> list[str]:
    """The names of ``fun``'s positional parameters."""
    sig = _inspect.signature(fun)
    return [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]


def _argument(label: tuple | None) -> tuple[str, str | None]:
    """A row's ``origin`` and ``argument`` for an argument's leaf (``None``: a constant)."""
    if label is None:
        return "constant", None
    head, path = label[:2]
    return f"argument '{head}'{path}", head + path


def _inner_producer(eqn: Any, v: Var) -> Any:
    """The equation that computes ``v`` inside a call (``checkpoint``, ``jit``) whose
    output it is, looking through nested calls; ``eqn`` itself where ``v`` is one of the
    call's inputs passed through, or the call has no program."""
    while isinstance(prog := eqn.params.get("program"), Program):
        inner = prog.outvars[eqn.outvars.index(v)]
        found = next((e for e in prog.eqns if inner in e.outvars), None)
        if found is None:
            return eqn
        eqn, v = found, inner
    return eqn


def _rows(
    fwd: Program,
    n_out: int,
    labels: list[tuple],
    bwd_consts: Sequence[Any],
    const_labels: dict,
) -> SavedResiduals:
    """The rows in JAX's order: arguments (in order), constants, then the forward
    equations' outputs in program order."""
    producer: dict[Var, tuple[int, Any]] = {
        v: (i, e) for i, e in enumerate(fwd.eqns) for v in e.outvars
    }
    arg_index = {v: i for i, v in enumerate(fwd.invars)}
    keyed = []
    for v in fwd.outvars[n_out:]:
        aval = v.aval
        nbytes = aval.size * aval.dtype.itemsize
        argument = name = None
        if type(v) is Var and v in producer:
            i, e = producer[v]
            e = _inner_producer(e, v)
            origin, src, key = e.prim.name, e.source, (2, i)
            if e.prim is checkpoint_name_p:
                name = e.params["name"]
        elif type(v) is Var and v in arg_index:
            i = arg_index[v]
            origin, argument = _argument(labels[i])
            src, key = None, (0, *labels[i][2:])
        else:
            origin, argument = _argument(None)
            src, key = None, (1, 0)
        keyed.append(
            (key, Residual(aval.shape, aval.dtype.name, nbytes, origin, src, argument, name))
        )
    for c in bwd_consts:  # arrays the backward holds directly (fixed arguments, closures)
        if getattr(c, "shape", None) is None or isinstance(c, Tracer):
            continue
        aval = to_aval(c)
        label = const_labels.get(id(c))
        origin, argument = _argument(label)
        key = (1, 0) if label is None else (0, *label[2:])
        keyed.append(
            (key, Residual(aval.shape, aval.dtype.name, int(c.nbytes), origin, None, argument))
        )
    keyed.sort(key=lambda kr: kr[0])  # (stable: ties keep the program's order)
    return SavedResiduals(r for _, r in keyed)


def saved_residuals(
    fun: Callable, *args: Any, argnums: int | Sequence[int] = 0, **kwargs: Any
) -> SavedResiduals:
    """The arrays the reverse pass of ``fun`` (differentiated with respect to
    ``argnums``) keeps from its forward pass: shape, dtype, bytes, the primitive (or
    argument) that produced each and the user's line, with ``.total_bytes``;
    ``print(...)`` shows a table."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    nums = tuple(i % len(args) for i in nums)
    diff = [args[i] for i in nums]
    leaves, in_tree = tree_flatten(diff)

    def flat(*xs: Any) -> list:
        full = list(args)
        for i, d in zip(nums, tree_util.tree_unflatten(in_tree, list(xs))):
            full[i] = d
        return tree_flatten(fun(*full, **kwargs))[0]

    with new_builder("saved_residuals") as b:
        prog = b.build(flat(*[b.new_arg(to_aval(x)) for x in leaves]))
    vp = ad.vjp_program(prog)
    others = [i for i in range(len(args)) if i not in nums]
    fixed_leaves = [leaf for i in others for leaf in tree_util.tree_leaves(args[i])]
    const_labels = dict(zip(map(id, fixed_leaves), _arg_labels(fun, args, others)))
    labels = _arg_labels(fun, args, nums)
    return _rows(vp.fwd, len(prog.outvars), labels, vp.bwd.consts, const_labels)
