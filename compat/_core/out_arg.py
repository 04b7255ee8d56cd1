"""PyTorch's ``out=`` argument for every ``torch.X`` of the op table.

The op runs as usual and its result is written into ``out`` (resized when its shape
differs, with PyTorch's warning when ``out`` was not empty; cast to ``out``'s dtype
under PyTorch's rule); ``out`` is returned. As in PyTorch, ``out=`` does not
support automatic differentiation: it raises when the result would require grad.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from compat._core import dtypes as _dt
from compat._core import grad_mode as _gm
from compat._core.tensor import Tensor


def with_out(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` taking a keyword ``out=`` (a tensor, or a tuple for several results)."""

    @functools.wraps(fn)
    def f(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        result = fn(*args, **kwargs)
        return write_out(fn.__name__, result, out)

    return f


def write_out(name: str, result: Any, out: Any) -> Any:
    """Write ``result`` (a tensor or tuple of tensors) into ``out``; returns ``out``."""
    results = result if isinstance(result, tuple) else (result,)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(results) != len(outs):
        raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(results)} Tensors")
    for r, o in zip(results, outs):
        if not isinstance(o, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(o).__name__}")
        if not isinstance(r, Tensor):
            raise TypeError(f"{name}() does not return a tensor, so it takes no out= argument")
        if _gm._state.record and (r.requires_grad or o.requires_grad):
            raise RuntimeError(
                f"{name}(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad."
            )
        if _dt.category(r._npdtype) > _dt.category(o._npdtype):
            raise RuntimeError(
                f"result type {_dt.scalar_type_name(r._npdtype)} can't be cast to the desired "
                f"output type {_dt.scalar_type_name(o._npdtype)}"
            )
        if tuple(o.shape) != tuple(r.shape) and o.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(o.shape)}, which does not match the required output shape "
                f"{list(r.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).",
                UserWarning,
                stacklevel=3,
            )
        value = r if r._npdtype == o._npdtype else r.to(_dt.from_np(o._npdtype))
        o._set_data_inplace(value._st.array)
    if isinstance(out, (tuple, list)) and isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)(*outs)
    return out
