"""PyTorch's gradient accumulation and hook calls, shared by both evaluation modes of the
engine: ``AccumulateGrad`` (first gradient stored, later ones added in place), tensor
hooks (a returned tensor replaces the gradient), and the small array ops they need.

Gradient conventions: the engine's cotangents are funcgrad's (JAX's); what users see
and pass (seeds, ``.grad``, ``autograd.grad`` results, hook arguments, a Function's
``backward``) is PyTorch's, their complex conjugate. :func:`flip` maps one to the other
at each of those boundaries.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from compat._core.graph import TYPE_NAMES, CopyBackwards
from compat._core.ops.spectral import conj_copy as conj
from compat._core.restride import laid_out_like
from compat._core.tensor import Tensor, apply
from funcgrad._compat_contract import trace_op, x64

#: PyTorch's warning for ``backward(create_graph=True)`` (once per process)
CYCLE_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this "
    "function, make sure to reset the .grad fields of your parameters to None after use "
    "to break the cycle and avoid the leak."
)


def _add_fn(a: Any, b: Any) -> Any:
    return a + b


def add(a: Any, b: Any) -> Any:
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if is_sparse(a) or is_sparse(b):
            return add_sparse(a, b)
        return apply(_add_fn, "AddBackward0", (a, b))
    return trace_op(_add_fn, "add", (), (a, b)).apply(a, b)[0]


def is_sparse(g: Any) -> bool:
    """Whether a gradient is a sparse COO tensor (``nn.Embedding(sparse=True)``'s)."""
    return isinstance(g, Tensor) and g.is_sparse


def add_sparse(a: Any, b: Any) -> Any:
    """Two gradients of which one at least is sparse: two sparse ones concatenate (their
    entries kept, uncoalesced, as PyTorch's sparse addition); a dense one gets the sparse
    one's values added at its indices (a dense result, an array when it came as one)."""
    if is_sparse(a) and is_sparse(b):
        return a + b
    sp, dense = (a, b) if is_sparse(a) else (b, a)
    out = sp.__radd__(as_tensor(dense))
    return out if isinstance(dense, Tensor) else out._st.array


def _conj_fn(a: Any) -> Any:
    return fnp.conj(a)


def flip(g: Any) -> Any:
    """A gradient in the other convention (funcgrad's cotangent <-> PyTorch's gradient):
    the complex conjugate, recorded when ``g`` is a Tensor (``create_graph``); ``g``
    itself for real dtypes and ``None`` (nothing is dispatched)."""
    if g is None:
        return None
    if isinstance(g, Tensor):
        return conj(g)  # torch.conj: the tensor itself for real dtypes
    if np.dtype(g.dtype).kind != "c":
        return g
    return _conj_array(g)


@x64
def _conj_array(g: Any) -> Any:
    return trace_op(_conj_fn, "conj", (), (g,)).apply(g)[0]


def _cast_fn(a: Any, *, dtype: Any) -> Any:
    return a.astype(dtype)


def cast(a: Any, dtype: np.dtype) -> Any:
    if a.dtype == dtype:
        return a
    return trace_op(_cast_fn, "cast", (("dtype", dtype),), (a,)).run(a)[0]


def zeros(aval: Any, batch: int | None) -> np.ndarray:
    return np.zeros(aval.shape if batch is None else (batch, *aval.shape), aval.dtype)


def as_tensor(g: Any) -> Tensor:
    return g if isinstance(g, Tensor) else Tensor._wrap_result(g)


def as_value(t: Any, create_graph: bool) -> Any:
    if t is None:
        return None
    if not isinstance(t, Tensor):
        raise TypeError(f"hook returned a {type(t).__name__}, expected a Tensor or None")
    return t if create_graph or t.is_sparse else t._st.array


def run_hooks(hooks: dict, g: Any, create_graph: bool) -> Any:
    """Tensor hooks in order: ``hook(grad)`` (``None`` for an output without gradient);
    a returned tensor of the same size and type replaces the gradient."""
    for h in list(hooks.values()):
        r = h(None if g is None else as_tensor(g))
        if r is None:
            continue
        if not isinstance(r, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
        if g is not None and not (is_sparse(g) or is_sparse(r)):
            old = g._st.array if isinstance(g, Tensor) else g
            new = r._st.array
            name = getattr(h, "__name__", type(h).__name__)
            if new.shape != old.shape:
                raise RuntimeError(f"hook '{name}' has changed the size of value")
            if new.dtype != old.dtype:
                raise RuntimeError(
                    f"hook '{name}' has changed the type of value (was "
                    f"torch.{_type_name(old.dtype)} got torch.{_type_name(new.dtype)})"
                )
        g = as_value(r, create_graph)
    return g


def _type_name(dtype: np.dtype) -> str:
    return TYPE_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)


def _second_fn(a: Any, b: Any) -> Any:
    return b


def first_copy(g: Any) -> Any:
    """A leaf's first gradient under ``create_graph``: PyTorch copies it into a new tensor,
    so the leaf's ``.grad`` has a ``CopyBackwards`` node on the gradient's graph."""
    if not isinstance(g, Tensor) or g._gfn is None:
        return g
    out = apply(_second_fn, "CopyBackwards", (Tensor._wrap_result(np.zeros((), g._npdtype)), g))
    out._gfn.__class__ = CopyBackwards  # the node class PyTorch's graph shows
    return out


def accumulate(var: Tensor, g: Any, create_graph: bool) -> None:
    """PyTorch's AccumulateGrad: the first gradient is stored; later ones are added in
    place (out of place when ``create_graph``). A leaf that stopped requiring grad (its
    ``detach_()`` after recording) is skipped, as PyTorch's AccumulateGrad does."""
    if not var._requires_grad:
        return
    if is_sparse(g) or is_sparse(var._grad):
        _accumulate_sparse(var, g)
    elif create_graph:
        var._grad = first_copy(g) if var._grad is None else add(var._grad, g)
    elif var._grad is None:
        var._grad = laid_out_like(cast(g, var._st.a.dtype), var)
    else:
        old = var._grad
        old._set_data_inplace(add(old._data, cast(g, old._st.a.dtype)))
    _post_accumulate(var)


def _accumulate_sparse(var: Tensor, g: Any) -> None:
    """AccumulateGrad with a sparse gradient on either side: a first sparse gradient is
    stored as it is (in the leaf's dtype); sparse onto sparse concatenates; sparse onto
    dense adds in place; dense onto sparse gives a new dense ``.grad``."""
    old = var._grad
    if old is None:
        var._grad = g if g._npdtype == var._npdtype else g.to(var.dtype)
    elif is_sparse(old) and is_sparse(g):
        var._grad = old + (g if g._npdtype == old._npdtype else g.to(old.dtype))
    elif is_sparse(g):
        dense = g.__radd__(as_tensor(old._data))
        old._set_data_inplace(cast(dense._st.array, old._st.a.dtype))
    else:
        var._grad = as_tensor(add_sparse(as_tensor(g), old)).to(var.dtype)


def _post_accumulate(var: Tensor) -> None:
    if var._post_acc_hooks:
        for h in list(var._post_acc_hooks.values()):
            r = h(var)
            if r is not None:
                if not isinstance(r, Tensor):
                    raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
