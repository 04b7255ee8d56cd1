"""Forward-mode AD for compat tensors (PyTorch's ``torch.autograd.forward_ad``).

While a dual level is entered, a tensor may carry a *tangent* (another compat tensor,
kept in the tensor's ``__dict__`` as ``_fw``). Every op dispatched through
:func:`compat._core.tensor.apply` is a funcgrad program, so when one of its inputs
carries a tangent the op's output tangents are the op's JVP: :func:`_tangent_f`
traces ``funcgrad.jvp`` of the op's pure function, and that traced tangent program is
applied as one more compat op on the primal and tangent tensors. It is therefore
recorded like any op (backward through tangents, ``create_graph``) and cached like
any op (one trace per op and input avals).

Hooks: ``tensor.FORWARD`` is this module's :class:`_Hooks` while a level is entered and
``None`` otherwise, so the dispatch path pays one global read when no level is active.
In-place ops (:mod:`compat._core.mutation`) update the tangent in place (keeping its
identity, as PyTorch does); views of a dual tensor get a tangent that is a view of the
base's tangent (:func:`_Hooks.view`), so an in-place op on a view updates the base's
tangent. Only level 0 exists (PyTorch does not nest levels either).
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import funcgrad as fg
from compat._core import dtypes as _dt
from compat._core import mutation as _mut
from compat._core import tensor as _t
from compat._core import views as _views
from compat._core.ops import conventions as _conv
from compat._core.tensor import Tensor
from funcgrad import numpy as fnp
from funcgrad._compat_contract import torch_rows


class _State:
    level = -1
    enabled = True
    #: tensors given a tangent at the current level (cleared when it exits)
    duals: list = []


STATE = _State()


def tangent_of(t: Tensor) -> Tensor | None:
    """``t``'s tangent at the current level, or ``None``."""
    return t.__dict__.get("_fw")


def set_tangent(t: Tensor, tangent: Tensor | None) -> None:
    """Give ``t`` the tangent ``tangent`` at the current level (``None``: remove it)."""
    if tangent is None:
        t.__dict__.pop("_fw", None)
        return
    t.__dict__["_fw"] = tangent
    STATE.duals.append(weakref.ref(t))


def _float(t: Any) -> bool:
    return isinstance(t, Tensor) and _dt.kind(t._npdtype) in "fc"


# --------------------------------------------------------------------------- levels


def enter_dual_level() -> int:
    """Enter a new forward-grad level (only level 0 exists)."""
    if STATE.level >= 0:
        raise RuntimeError(
            "Nested forward mode AD is not supported at the moment. Exit the current dual "
            "level before entering a new one."
        )
    STATE.level = 0
    _set_bottom(None, HOOKS)
    return 0


def _set_bottom(old: Any, new: Any) -> None:
    """Put ``new`` where ``old`` is at the bottom of the dispatch slot's chain: under the
    dispatch modes entered (each mode's hooks keep what was below them), else the slot."""
    h = _t.FORWARD
    if h is old:
        _t.FORWARD = new
        return
    while getattr(h, "below", old) is not old:
        h = h.below
    if hasattr(h, "below"):
        h.below = new


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the current level: every tangent made at it is dropped."""
    if level is None:
        level = STATE.level
    if level != STATE.level or level < 0:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    for ref in STATE.duals:
        t = ref()
        if t is not None:
            t.__dict__.pop("_fw", None)
    STATE.duals = []
    STATE.level = -1
    _set_bottom(HOOKS, None)


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Run ops without pushing tangents (inside the tangent computations themselves, a
    custom Function's ``forward`` and ``jvp``, ``make_dual``/``unpack_dual``'s views)."""
    saved = _t.FORWARD
    _t.FORWARD = None
    try:
        yield
    finally:
        _t.FORWARD = saved


def set_fwd_grad_enabled(mode: bool) -> None:
    """Switch forward grad computation on or off (PyTorch's ``_set_fwd_grad_enabled``)."""
    STATE.enabled = bool(mode)


# --------------------------------------------------------------------------- tangents of ops


def _tangent_f(*xs: Any, fn: Callable, kw: tuple, pos: tuple, n: int) -> list:
    """The tangents of ``fn``'s inexact outputs: ``xs`` are ``fn``'s ``n`` arguments
    followed by the tangents of the arguments at ``pos``."""
    prim = list(xs[:n])

    def f(*d: Any) -> Any:
        full = list(prim)
        for p, v in zip(pos, d):
            full[p] = v
        return fn(*full, **dict(kw))

    out, tout = fg.jvp(f, tuple(prim[p] for p in pos), tuple(xs[n:]))
    many = isinstance(out, (tuple, list))
    outs, touts = (out, tout) if many else ([out], [tout])
    return [t for o, t in zip(outs, touts) if fnp.issubdtype(o.dtype, fnp.inexact)]


#: ops PyTorch has no forward derivative for (node name -> op name: their rows say
#: ``forward_ad=False``): they raise here too
_NO_FORWARD = {
    p.torch.grad_fn: p.torch.name or p.name for p in torch_rows() if not p.torch.forward_ad
}
_NO_FORWARD_TAIL = (
    " that does not support it because it has not been implemented yet.\nPlease file an "
    "issue to PyTorch at https://github.com/pytorch/pytorch/issues/new?template=feature-"
    "request.yml so that we can prioritize its implementation"
)


def _no_forward(name: str, inplace: bool) -> None:
    op = _NO_FORWARD.get(name)
    if op is not None:
        tail = "." if inplace else " or submit a PR adding the implementation to derivatives.yaml"
        raise NotImplementedError(
            f"Trying to use forward AD with {op}{'_' if inplace else ''}{_NO_FORWARD_TAIL}{tail}"
        )


def _dual_args(args: Sequence[Any]) -> list:
    if not STATE.enabled:
        return []
    return [
        (i, t)
        for i, a in enumerate(args)
        if isinstance(a, Tensor) and (t := tangent_of(a)) is not None
    ]


def _tangents(fn: Callable, name: str, args: Sequence[Any], static: tuple, duals: list) -> list:
    """The output tangents of ``fn`` on ``args`` (one per inexact output)."""
    pos = tuple(i for i, _ in duals)
    tans = []
    for i, t in duals:
        a = args[i]
        if t._npdtype != a._npdtype:
            t = t.to(_dt.from_np(a._npdtype))
        tans.append(t)
    if _conv.REPEATS in static:  # (reverse mode's convention only: see conventions.REPEATS)
        static = tuple(kv for kv in static if kv != _conv.REPEATS)
    kw = (("fn", fn), ("kw", static), ("pos", pos), ("n", len(args)))
    r = _t.apply(_tangent_f, name, (*args, *tans), kw)
    return list(r) if isinstance(r, tuple) else [r]


class _Hooks:
    """What compat's dispatch calls while a dual level is entered."""

    @staticmethod
    def apply(fn: Callable, name: str, args: Sequence[Any], static: tuple, saves: Any) -> Any:
        duals = _dual_args(args)
        if duals:
            _no_forward(name, False)
        with suspended():
            out = _t.apply(fn, name, args, static, saves)
            if duals and not _t._tracing.stack:
                outs = out if isinstance(out, tuple) else (out,)
                floats = [o for o in outs if _float(o)]
                if floats:
                    for o, t in zip(floats, _tangents(fn, name, args, static, duals)):
                        set_tangent(o, t)
        return out

    @staticmethod
    def inplace(self: Tensor, fn: Callable, name: str, args: Sequence[Any], static: tuple) -> Any:
        full = (self, *args)
        duals = _dual_args(full)
        if duals:
            _no_forward(name, True)
        with suspended():
            new = None
            if duals and _float(self):
                new = _tangents(fn, name, full, static, duals)[0]
            _mut.apply_inplace(self, fn, name, args, static)
            if new is not None:
                update(self, new)
        return self

    @staticmethod
    def inplace_result(self: Tensor, fn: Callable, args: Sequence[Any], kwargs: dict) -> Any:
        got: list = []

        @functools.wraps(fn)
        def run(*a: Any, **k: Any) -> Any:
            _t.FORWARD = HOOKS
            try:
                r = fn(*a, **k)
            finally:
                _t.FORWARD = None
            got.append(tangent_of(r) if isinstance(r, Tensor) else None)
            return r

        with suspended():
            _mut.inplace_result(self, run, args, kwargs)
            if got and got[0] is not None and _float(self):
                update(self, got[0])
        return self

    @staticmethod
    def view(out: Tensor, base: Tensor, step: tuple, dyn: tuple) -> None:
        """``out`` was made a view of ``base``: its tangent becomes the same view of
        ``base``'s tangent (so in-place ops on either reach the other)."""
        bt, ot = tangent_of(base), tangent_of(out)
        if bt is None or ot is None or ot._view is not None:
            return
        with suspended():
            _views.make_view(ot, bt, step, dyn)


HOOKS = _Hooks()


def update(self: Tensor, new: Tensor) -> None:
    """``self`` (just modified in place) takes the tangent ``new``: written into its
    existing tangent (which keeps its identity), or made a view of its root's tangent."""
    if new._npdtype != self._npdtype:
        new = new.to(_dt.from_np(self._npdtype))
    old = tangent_of(self)
    if old is None and self._view is not None:
        root = self._view.root
        if tangent_of(root) is None and _views.layout_of(self) == _views.layout_of(root):
            # a view laid out as its root: both take the new tangent itself (PyTorch)
            set_tangent(root, new)
            set_tangent(self, new)
            return
        old = _root_view_tangent(self)
    if old is None:
        set_tangent(self, new)
        return
    old.copy_(new)


def _root_view_tangent(t: Tensor) -> Tensor | None:
    """A tangent for the view ``t`` that is the same view of its root's tangent (the root
    gets a zero tangent first if it has none), or ``None`` when the chain is not
    replayable here."""
    info = t._view
    root = info.root
    if info.dyn or not _float(root):
        return None
    rt = tangent_of(root)
    if rt is None:
        rt = root.detach().clone().zero_()
        set_tangent(root, rt)
    cur = rt
    for step in info.chain:
        nxt = _t.apply(_views.chain_f, "AsStridedBackward0", (cur,), (("chain", (step,)),))
        cur = _views.make_view(nxt, cur, step)
    set_tangent(t, cur)
    return cur
