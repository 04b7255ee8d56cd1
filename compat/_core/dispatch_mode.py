"""Dispatch modes (PyTorch's ``TorchDispatchMode``) over compat's ops.

While a mode is entered, each compat op (every :func:`compat._core.tensor.apply`, every
in-place op) is handed to the mode's ``__torch_dispatch__(func, types, args, kwargs)``
with ``func`` the op's ``torch.ops.aten`` overload (:mod:`compat._core.aten`) and
``args`` the tensors and numbers the op was called with; calling ``func(*args)`` there
runs the op itself. The mode is popped while its handler runs, as in PyTorch, so the
ops the handler calls go to the modes below it.

The hook is the dispatch slot forward-mode AD uses (``tensor.FORWARD``): a mode installs
:class:`ModeHooks` there (over whatever was there), so the per-op path pays nothing
when no mode and no dual level is entered. Ops the aten namespace does not name (view
replays, ``CopySlices``) run without reaching the mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compat._core import mutation as _mut
from compat._core import tensor as _t
from compat._core.tensor import Tensor

#: ``compat._core.aten.overload_for`` (set when that module loads)
OVERLOAD_FOR: Callable[..., Any] | None = None
#: the modes entered, innermost last
STACK: list[Any] = []
#: (overload, args, run) of the op whose handler runs now: ``func(*args)`` runs it
_PENDING: list[tuple] = []


def _same(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(
        x is y or (type(x) is not Tensor and x == y) for x, y in zip(a, b)
    )


class ModeHooks:
    """What the dispatch slot holds while ``mode`` is entered; ``below`` is what it held
    before (``None``, a dual level's hooks or another mode's)."""

    def __init__(self, mode: Any, below: Any) -> None:
        self.mode = mode
        self.below = below

    def dispatch(self, op: Any, args: tuple, kwargs: dict, run: Callable[[], Any]) -> Any:
        """``mode.__torch_dispatch__`` for ``op`` (``run`` computes it), the mode popped."""
        saved = _t.FORWARD
        _t.FORWARD = self.below
        _PENDING.append((op, args, run))
        try:
            return self.mode.__torch_dispatch__(op, (Tensor,), args, kwargs)
        finally:
            _PENDING.pop()
            _t.FORWARD = saved

    def _below(self, run: Callable[[], Any]) -> Any:
        saved = _t.FORWARD
        _t.FORWARD = self.below
        try:
            return run()
        finally:
            _t.FORWARD = saved

    def apply(self, fn: Callable, name: str, args: Sequence[Any], static: tuple, saves: Any) -> Any:
        op = OVERLOAD_FOR(name, args) if OVERLOAD_FOR is not None else None

        def run() -> Any:
            return _t.apply(fn, name, args, static, saves)

        if op is None:
            return self._below(run)
        return self.dispatch(op, tuple(args), {}, run)

    def inplace(
        self, self_t: Tensor, fn: Callable, name: str, args: Sequence[Any], static: tuple
    ) -> Any:
        full = (self_t, *args)
        op = OVERLOAD_FOR(name, full, True) if OVERLOAD_FOR is not None else None

        def run() -> Any:
            return _mut.apply_inplace(self_t, fn, name, args, static)

        if op is None:
            return self._below(run)
        return self.dispatch(op, full, {}, run)

    def inplace_result(
        self, self_t: Tensor, fn: Callable, args: Sequence[Any], kwargs: dict
    ) -> Any:
        # the out-of-place op inside reaches the mode through ``apply``
        me = self

        def run_fn(*a: Any, **k: Any) -> Any:
            saved = _t.FORWARD
            _t.FORWARD = me
            try:
                return fn(*a, **k)
            finally:
                _t.FORWARD = saved

        return self._below(lambda: _mut.inplace_result(self_t, run_fn, args, kwargs))

    def view(self, out: Tensor, base: Tensor, step: tuple, dyn: tuple) -> None:
        if self.below is not None:
            self.below.view(out, base, step, dyn)


def push(mode: Any) -> None:
    """Enter ``mode``: compat's ops go to its ``__torch_dispatch__``."""
    STACK.append((mode, _t.FORWARD))
    _t.FORWARD = ModeHooks(mode, _t.FORWARD)


def pop(mode: Any) -> None:
    """Leave ``mode`` (the innermost one entered)."""
    if not STACK or STACK[-1][0] is not mode:
        raise RuntimeError("dispatch modes must be exited in the reverse order of entering")
    _t.FORWARD = STACK.pop()[1]


def current() -> Any:
    """The innermost mode entered whose handler is not running now, or ``None``."""
    h = _t.FORWARD
    while h is not None and not isinstance(h, ModeHooks):
        h = getattr(h, "below", None)
    return None if h is None else h.mode


def call_overload(op: Any, args: tuple, kwargs: dict, impl: Callable) -> Any:
    """Call the aten overload ``op``: inside a handler on the op it was handed, the op
    itself; under a mode, through the mode; else ``impl``."""
    if _PENDING:
        pop_op, pop_args, run = _PENDING[-1]
        if pop_op is op and not kwargs and _same(pop_args, args):
            _PENDING[-1] = (None, (), run)  # once
            return run()
    h = _t.FORWARD
    if isinstance(h, ModeHooks):
        return h.dispatch(op, args, kwargs, lambda: impl(*args, **kwargs))
    return impl(*args, **kwargs)


def call_from_autograd(op: Any, args: tuple, impl: Callable) -> Any:
    """Call ``op`` as PyTorch's autograd layer does (saved-tensor hooks run above every
    mode): through the innermost mode entered even while a handler of it runs."""
    if not STACK:
        return impl(*args)
    mode, below = STACK[-1]
    return ModeHooks(mode, below).dispatch(op, args, {}, lambda: impl(*args))
