"""A tensor and a Python number (``y * 0.5``, ``2 - y``): dispatch memoised per signature.

The general dispatch (:func:`compat._core.tensor.apply`) builds each call's input
signature, looks the op up by it, and runs it through the op's VJP forward, its
executable's lazy check and the tier: ~15 Python calls for a recorded ``y * c``. For
``+ - * /`` of a floating tensor and a Python ``float``/``int``, the operator's first
calls go through ``apply``; once they have found the op and its executable, a
:class:`_Fast` record for that signature (the number's type, the tensor's shape and
dtype) binds what ``apply`` found: the op's :class:`~funcgrad.core.tiers.Tiered`
executable (unrecorded), and its VJP forward's one plus the VJP (recorded). Later calls
with that signature run the executable and build the node and output tensor
directly, when nothing ``apply`` would do differently is in force:

* no forward-AD level or dispatch mode (``tensor.FORWARD``), no funcgrad trace
  (``torch.func``), no lazy execution, a tier mode that runs cold work on the host
  tier (Python numbers then go to the program as they are, as in ``apply``);
* the tensor is not a view and its storage is not a pending lazy value;
* the op saves no tensor (no version check, no saved-tensor hooks): true of ``y * c``,
  ``y + c``, ``y - c``, ``y / c`` (the number is recomputed by the backward), not of
  ``c / y``;
* its executable has not been replaced by a compiled one (``Tiered.exe``).

Anything else takes ``apply``. The node, output tensor and counters are the ones
``apply`` makes (anomaly mode's stack included). The records are emptied with the
compile cache (and compat's op cache with it).
"""

from __future__ import annotations

from typing import Any

import jax

from compat._core import grad_mode as _gm
from compat._core import tensor as _t
from compat._core.anomaly import STATE as _ANOMALY
from compat._core.anomaly import record_stack as _record_stack
from compat._core.graph import Node
from compat._core.tensor import Tensor, _new_tensor
from compat._core.tensor import apply as _apply
from funcgrad._compat_contract import (
    HOST_MODES,
    LazyArray,
    MetaArray,
    compile_cache,
    host_callable,
    lazy_state,
    op_cache,
    tier_local,
    tier_policy,
    tracing,
)

_swap_x64, _restore_x64 = jax.enable_x64.swap_local, jax.enable_x64.set_local
#: the records of every operator (one dict each); emptied with the compile cache (compat's
#: op cache goes with it), and each when it reaches :data:`MAX_SIGNATURES`
_MEMOS: list[dict] = []
MAX_SIGNATURES = 256
#: storage types the fast path leaves to ``apply``
_NOT_HOST = (LazyArray, MetaArray)


def _clear() -> None:
    for memo in _MEMOS:
        memo.clear()


compile_cache.register("compat_fast_ops", size=lambda: sum(map(len, _MEMOS)), clear=_clear)


class _Fast:
    """What ``apply`` found for one signature: the op's executable (``run``), and its
    VJP forward's executable, the VJP and where its residuals come from (``rec``,
    ``entry``, ``res``). ``None`` where not found yet, ``False`` where not eligible."""

    __slots__ = ("entry", "last", "rec", "res", "run")

    def __init__(self) -> None:
        self.run: Any = None
        self.rec: Any = None
        self.entry: Any = None
        self.res: tuple[int, ...] = ()
        #: the last one-residual tuple whose residual was the number (a loop's ``y * c``
        #: saves the same ``c``: its nodes share one tuple, one object less per node for
        #: Python's cyclic GC); never an array's, which it would keep alive
        self.last: tuple | None = None


def _learn(f: _Fast, op: Any, mask: tuple[bool, bool]) -> None:
    """Fill ``f`` from ``op`` (an :class:`~funcgrad._compat_contract.OpProgram`) where
    ``apply`` has built its executables."""
    if op.generic:  # (a shape template's op: the concrete one may replace it)
        return
    if not op.single:
        f.run = f.rec = False
        return
    if f.run is None and op._exe is not None:
        f.run = host_callable(op._exe) or False
    if f.rec is None:
        entry = op._vjps.get(mask)
        if entry is None or entry._fwd_exe is None:
            return
        res = entry._res_in  # residuals: inputs only (else the forward returns more)
        if (
            entry.saved_in
            or entry.saved_out
            or not op.float_out[0]
            or res is None
            or (entry.res_src and len(res) != len(entry.res_src))
        ):
            f.rec = False
            return
        rec = host_callable(entry._fwd_exe)
        if rec is None:
            f.rec = False
        else:
            f.entry, f.res, f.rec = entry, res, rec


def binary_operator(fn: Any, node: str, reflected: bool, other_operands: Any) -> Any:
    """The operator ``op(tensor, other)``: for a floating tensor and a Python ``float`` or
    ``int``, ``apply(fn, node, (tensor, number) or reversed, (("dtype", tensor's
    dtype),))``, through the memoised record when it applies; any other operand goes to
    ``other_operands(tensor, other)``."""
    memo: dict[tuple, _Fast] = {}
    _MEMOS.append(memo)
    mask = (False, True) if reflected else (True, False)
    gm = _gm._state

    def slow(self: Tensor, other: Any, key: tuple, d: Any) -> Tensor:
        args = (other, self) if reflected else (self, other)
        out = _apply(fn, node, args, (("dtype", d),))
        f = memo.get(key)
        if f is None or f.run is None or f.rec is None:
            sig = (key[0], key[1:]) if reflected else (key[1:], key[0])
            op = op_cache.get((fn, node, (("dtype", d),), sig, None))
            if op is not None:
                if f is None:
                    if len(memo) >= MAX_SIGNATURES:
                        memo.clear()
                    f = memo[key] = _Fast()
                _learn(f, op, mask)
        return out

    def op(self: Tensor, other: Any) -> Any:
        to = type(other)
        if to is not float and to is not int:
            return other_operands(self, other)
        x = self._st.a
        av = getattr(x, "aval", x)  # (a jax array's aval is a faster read than its dtype)
        d = av.dtype
        if d.kind != "f":
            return other_operands(self, other)
        key = (to, av.shape, d)
        f = memo.get(key)
        if (
            f is None
            or self._view is not None
            or _t.FORWARD is not None
            or tracing.stack
            or lazy_state.on
            or type(x) in _NOT_HOST  # (a pending lazy value, a meta array: no values)
            or not HOST_MODES.get(tier_local.mode or tier_policy.tier)
        ):
            return slow(self, other, key, d)
        if self._requires_grad and gm.record:
            t = f.rec
            if not t or t.exe is not None:
                return slow(self, other, key, d)
            ins = (other, x) if reflected else (x, other)
            prev = _swap_x64(True)
            try:
                outs = t(*ins)
            finally:
                _restore_x64(prev)
            g = self._gfn  # (the edge's key: ``self._edge_key()`` inlined)
            if g is None:
                edge = self._edge()[0]  # (a leaf's AccumulateGrad: output 0)
            else:
                nr = self._output_nr
                edge = g if nr == 0 else (g, nr)
            r = f.res
            if not r:
                res = ()
            elif len(r) == 1:
                res = f.last
                v = ins[r[0]]
                if res is None or res[0] is not v:
                    res = (v,)
                    if v is other:
                        f.last = res
            else:
                res = (ins[r[0]], ins[r[1]])
            n = Node(f.entry, res, ins, (None, edge) if reflected else (edge, None), None)
            if _ANOMALY[0]:
                _record_stack(n)
            out = _new_tensor(Tensor, outs[0])
            out._requires_grad = True
            out._gfn = n
            return out
        t = f.run
        if not t or t.exe is not None:
            return slow(self, other, key, d)
        prev = _swap_x64(True)
        try:
            outs = t(other, x) if reflected else t(x, other)
        finally:
            _restore_x64(prev)
        return _new_tensor(Tensor, outs[0])

    return op
