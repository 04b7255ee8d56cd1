"""In-place ops: ``self`` takes a new value (and node), bumping its version.

Two entry points: :func:`apply_inplace` traces ``fn(self, *args)`` as one op;
:func:`inplace_result` reuses an out-of-place torch function. On a view (see
:mod:`compat._core.views`) the new value is written through to the view's root, and a
recorded op is followed by ``CopySlices`` on the root.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core import overlap as _overlap
from compat._core import tensor as _tensor
from compat._core import tensor_checks as _tc
from compat._core import views as _views
from compat._core.device import dev_scalar as _dev_scalar
from compat._core.graph import SAVED_HOOKS
from compat._core.saved import original_alias
from compat._core.tensor import (
    _PY_SCALARS,
    Tensor,
    _record,
    _saved_entry,
)
from funcgrad._compat_contract import MetaArray, torch_rows, x64

#: in-place ops that write one value to every element they touch: PyTorch allows them on
#: tensors whose elements overlap in memory (an ``expand``), as the result is well defined
_FILLS = frozenset(
    (
        "FillBackward0",
        "FillBackward2",
        "FillBackward3",
        "MaskedFillBackward0",
        "IndexFillBackward0",
        "masked_fill",
        "index_fill",
        # (an advanced-index write on an expanded tensor: PyTorch warns and writes, each
        # memory place taking a value written to one of its elements; see shape_ops)
        "IndexPutBackward0",
    )
)


#: in-place forms whose derivative PyTorch does not implement (``derivatives.yaml``'s
#: ``not_implemented``): their node, of PyTorch's name, raises when backward reaches it;
#: the primitive rows declare them (``TorchForm.inplace_grad_fn``)
_NO_INPLACE_DERIVATIVE = {
    p.torch.name or p.name: p.torch.inplace_grad_fn
    for p in torch_rows()
    if p.torch.inplace_grad_fn is not None
}


def _second_f(x: Any, y: Any) -> Any:
    return y


def _underivable(src: Tensor, r: Tensor, name: str) -> Tensor:
    """``r``'s value as the output of a node on ``src`` whose backward raises PyTorch's
    error (a pre-hook: it runs before the node, whatever hooks the tensor gets later)."""
    out = _tensor.apply(_second_f, _NO_INPLACE_DERIVATIVE[name], (src, r.detach()))

    def refuse(grad_outputs: Any) -> None:
        raise NotImplementedError(
            f"the derivative for 'inplace version of {name}' is not implemented."
        )

    out._grad_fn.register_prehook(refuse)
    return out


def check_inplace(self: Tensor, req: bool, name: str = "") -> None:
    """PyTorch's errors for modifying ``self`` in place (``req``: an input requires grad)."""
    if self._view is not None:
        _views.check_inplace(self, req, name in _FILLS)
        if self._view.meta != _views.DEFAULT:
            _tc.check_inplace(self)
            return  # a view made under no_grad: its requires_grad does not make it a leaf
    self._check_inplace()


@x64
def apply_inplace(
    self: Tensor, fn: Callable, name: str, args: Sequence[Any], static: tuple = ()
) -> Tensor:
    """In-place op: ``self`` takes the value of ``fn(self, *args)`` (same shape and dtype)."""
    if _tensor.FORWARD is not None:  # a forward-AD dual level: tangents too
        return _tensor.FORWARD.inplace(self, fn, name, args, static)
    full = (self, *args)
    arrays = []
    req = False
    for a in full:
        if isinstance(a, Tensor):
            if a._view is not None and a._view.seen != a._vc.v:
                a._view.sync(a)
            arrays.append(a._data)
            if a._requires_grad:
                req = True
        else:
            arrays.append(a)
    check_inplace(self, req, name)
    op = _tc.trace_op(fn, name, static, arrays, full)
    arrays = [_dev_scalar(a) if type(a) in _PY_SCALARS else a for a in arrays]
    out = op.out_avals[0]
    cur = arrays[0]
    if tuple(out.shape) != tuple(cur.shape):
        raise RuntimeError(
            f"output with shape {list(cur.shape)} doesn't match the broadcast shape "
            f"{list(out.shape)}"
        )
    if out.dtype != cur.dtype:
        raise AssertionError("in-place ops cast to self's dtype in their function")
    if not (req and _gm._state.record):
        new = op.run(*arrays)[0]
        if type(cur) is MetaArray:  # a meta tensor stays meta (``copy_`` from the CPU: no-op)
            new = MetaArray(cur.shape, cur.dtype)
        self._set_data_inplace(new)
    elif self._view is None:
        _record(op, full, arrays, inplace=self)
    else:
        r = _record(op, full, arrays)[0]
        _view_commit(self, r)
    return self


def _view_commit(self: Tensor, r: Tensor) -> None:
    """``self`` (a view) takes the recorded result ``r``: the op read ``self`` before
    overwriting it, so it does not count as saved at its new version."""
    node = r._grad_fn
    old = _saved_entry(self)
    _views.commit(self, r)
    if node._saved:
        node._saved = [e for e in node._saved if not _is_entry_of(e, old)]


def _is_entry_of(e: tuple, old: tuple) -> bool:
    """Whether the saved entry ``e`` is of the tensor whose entry was ``old`` (views of one
    base share a version counter, so the node tells them apart)."""
    return e[0] is old[0] and e[1] == old[1] and e[4] is old[4] and e[5] == old[5]


#: the in-place ops whose index, source or mask may share no memory with ``self`` (PyTorch's
#: indexing kernels' check; others refuse only a partial overlap)
_INDEXING = frozenset(
    (
        "index_add",
        "index_copy",
        "index_fill",
        "index_reduce",
        "masked_fill",
        "masked_scatter",
        "scatter",
        "scatter_add",
        "scatter_reduce",
    )
)

#: the filling index ops PyTorch lets write into a tensor whose elements overlap, with a
#: deprecation warning
_EXPANDED_WARNING = frozenset(("index_fill", "masked_fill"))


def _check_overlap(self: Tensor, name: str, args: tuple) -> None:
    """PyTorch's memory-overlap errors (and warnings) for ``self.name_(*args)``."""
    if name in _INDEXING:
        _overlap.check_none(self, args)
        if name in _EXPANDED_WARNING and _overlap.internal_overlap(self):
            warnings.warn(
                f"Use of {name}_ on expanded tensors is deprecated. Please clone() the tensor "
                "before performing this operation. This also applies to advanced indexing "
                "e.g. tensor[mask] = scalar",
                UserWarning,
                stacklevel=4,
            )
    else:
        _overlap.check_partial(self, args)


def inplace_result(self: Tensor, fn: Callable, args: Sequence[Any], kwargs: dict) -> Tensor:
    """``self.X_(*args)`` from the out-of-place ``X``: ``self`` takes the result's value and
    graph node (bumping its version), as PyTorch's in-place ops rebind the tensor's node.

    The result must have ``self``'s shape, and its dtype must cast to ``self``'s under
    PyTorch's rule (float results do not go into integer tensors).
    """
    if _tensor.FORWARD is not None:  # a forward-AD dual level: tangents too
        return _tensor.FORWARD.inplace_result(self, fn, args, kwargs)
    if self._view is None:
        check_inplace(self, False)
    _check_overlap(self, getattr(fn, "__name__", ""), (*args, *kwargs.values()))
    # under saved-tensor hooks ``pack`` sees a copy of the original, as in PyTorch
    src = original_alias(self) if SAVED_HOOKS and self._view is None else self
    try:
        r = fn(src, *args, **kwargs)
    except NotImplementedError:
        # a kernel's refusal of a dtype comes after PyTorch's refusal of a write into
        # overlapping elements (``bitwise_not_`` of an expanded double; an op's own checks,
        # ``neg_`` of a bool, come before it)
        if self._view is not None and _overlap.internal_overlap(self):
            req = any(isinstance(a, Tensor) and a._requires_grad for a in (self, *args))
            check_inplace(self, req, getattr(fn, "__name__", ""))
        raise
    if not isinstance(r, Tensor):
        raise TypeError(f"in-place variant of {getattr(fn, '__name__', fn)} has no tensor result")
    if r._grad_fn is not None and getattr(fn, "__name__", "") in _NO_INPLACE_DERIVATIVE:
        r = _underivable(src, r, fn.__name__)
    if self._view is not None:
        check_inplace(self, r._grad_fn is not None, getattr(fn, "__name__", ""))
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(r.shape)}"
        )
    if r._npdtype != self._npdtype:
        if _dt.category(r._npdtype) > _dt.category(self._npdtype):
            raise RuntimeError(
                f"result type {_dt.scalar_type_name(r._npdtype)} can't be cast to the "
                f"desired output type {_dt.scalar_type_name(self._npdtype)}"
            )
        r = r.to(_dt.from_np(self._npdtype))
    node = r._grad_fn
    if node is None:
        self._set_data_inplace(r._data)
        if self._grad_fn is not None and self._view is None:
            # the old graph no longer describes the value (PyTorch: computed under no_grad)
            self._unregister_retain()
            self._grad_fn = None
            self._requires_grad = False
        return self
    if self._view is not None:
        _view_commit(self, r)
        return self
    old = _saved_entry(self)
    self._st.array = r._data
    self._vc.v += 1
    self._rebind(node, r._output_nr)
    if node._saved:
        # the op read self before overwriting it (PyTorch saves the original), and a
        # result it saved is now self
        saved = []
        for e in node._saved:
            if _is_entry_of(e, old):
                continue
            saved.append(_saved_entry(self, True) if e[0] is r._vc else e)
        node._saved = saved
    return self
