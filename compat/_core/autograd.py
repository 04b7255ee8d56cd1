"""``backward`` and ``grad``: PyTorch's argument handling in front of the engine.

Mirrors ``torch/autograd/__init__.py`` (``_tensor_or_tensors_to_tuple``,
``_make_grads``, ``backward``, ``grad``) with PyTorch's wording of every error;
the flavour modules (``compat.torch``, ``compat.oneflow``) wrap these with their
own signatures and defaults.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from compat._core import engine
from compat._core import grad_mode as _gm
from compat._core.accumulate import cast, flip
from compat._core.graph import GradientEdge
from compat._core.tensor import Tensor
from funcgrad._compat_contract import MetaArray


def _tensor_or_tensors_to_tuple(tensors: Any, length: int) -> tuple:
    if tensors is None:
        return (None,) * length
    if isinstance(tensors, Tensor):
        return (tensors,)
    return tuple(tensors)


def _out_meta(out: Any) -> tuple[tuple, np.dtype]:
    if isinstance(out, GradientEdge):
        node, nr = out
        aval = node.variable._st.a if hasattr(node, "variable") else None
        if aval is not None:
            return tuple(aval.shape), aval.dtype
        if node._entry is None:  # an autograd.Function node
            return node._out_meta[nr][:2]
        a = node._entry.op.out_avals[nr]
        return tuple(a.shape), a.dtype
    return tuple(out.shape), out._npdtype


def _size(shape: tuple) -> str:
    return f"torch.Size({list(shape)!r})"


def _make_grads(outputs: Sequence[Any], grads: Sequence[Any], is_grads_batched: bool) -> tuple:
    new_grads: list = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        out_shape, out_dtype = _out_meta(out)
        if isinstance(grad, Tensor):
            first = tuple(grad.shape[1:]) if is_grads_batched else tuple(grad.shape)
            if is_grads_batched and grad.ndim == 0:
                first = ()
            if first != out_shape:
                if is_grads_batched:
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first "
                        "dimension of each grad_output as the batch dimension. "
                        "The sizes of the remaining dimensions are expected to match "
                        "the shape of corresponding output, but a mismatch "
                        f"was detected: grad_output[{i}] has a shape of {_size(first)} and "
                        f"output[{i}] has a shape of {_size(out_shape)}. "
                        "If you only want some tensors in `grad_output` to be considered "
                        "batched, consider using vmap."
                    )
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{_size(tuple(grad.shape))} and output[{i}] has a shape of "
                    f"{_size(out_shape)}."
                )
            if (_dt.kind(out_dtype) == "c") != (_dt.kind(grad._npdtype) == "c"):
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have "
                    f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{grad.dtype} and output[{i}] has a dtype of {_dt.from_np(out_dtype)}."
                )
            if grad._npdtype != out_dtype:  # PyTorch casts a gradient to its output's dtype
                grad = grad.to(_dt.from_np(out_dtype))
            new_grads.append(grad)
        elif grad is None:
            if isinstance(out, GradientEdge) or out.requires_grad:
                if math.prod(out_shape) != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if _dt.kind(out_dtype) != "f":
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{out_dtype}"
                    )
                if isinstance(out, Tensor) and out.is_meta:  # a meta output's seed is meta
                    seed: Any = MetaArray(out_shape, out_dtype)
                else:
                    seed = np.ones(out_shape, out_dtype)
                new_grads.append(Tensor._wrap_result(seed))
            else:
                new_grads.append(None)
        else:
            raise TypeError(
                "gradients can be either Tensors or None, but got " + type(grad).__name__
            )
    if len(new_grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(new_grads)} gradients")
    return tuple(new_grads)


def _inputs_tuple(inputs: Any, where: str) -> tuple:
    if isinstance(inputs, (Tensor, GradientEdge)):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{where}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    return tuple(inputs)


def _root_edges(tensors: Sequence[Any]) -> list:
    roots = []
    for i, t in enumerate(tensors):
        if isinstance(t, GradientEdge):
            roots.append((t.node, t.output_nr))
            continue
        if not t.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        roots.append(t._edge())
    return roots


def _input_edges(inputs: Sequence[Any], accumulate: bool) -> list:
    edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs must be Tensors or GradientEdges, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if accumulate and t.grad_fn is not None:
            t.retain_grad()
        edges.append(t._edge())
    return edges


def _seed(grads: Sequence[Any], outputs: Sequence[Any], create_graph: bool) -> list:
    """Engine seeds: arrays (Tensors when ``create_graph``), cast to the output dtype,
    in funcgrad's convention (:func:`~compat._core.accumulate.flip`)."""
    seeds = []
    for g, out in zip(grads, outputs):
        if g is None:
            seeds.append(None)
            continue
        _, dtype = _out_meta(out)
        if create_graph:
            if g._npdtype != dtype:
                g = g.to(dtype)
            seeds.append(flip(g))
        else:
            seeds.append(flip(cast(g._data, dtype)))
    return seeds


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """PyTorch's ``torch.autograd.backward`` (``retain_graph`` defaults to ``create_graph``)."""
    if grad_variables is not None:
        warnings.warn(
            "`grad_variables` is deprecated. Use `grad_tensors` instead.",
            FutureWarning,
            stacklevel=3,
        )
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) "
                "arguments both passed to `backward()`. Please only "
                "use `grad_tensors`."
            )
    inputs_tuple = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and len(inputs_tuple) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if isinstance(tensors, (Tensor, GradientEdge)):
        tensors = (tensors,)
    else:
        tensors = tuple(tensors)
    grads = _tensor_or_tensors_to_tuple(grad_tensors, len(tensors))
    grads = _make_grads(tensors, grads, is_grads_batched=False)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(tensors)
    in_edges = _input_edges(inputs_tuple, accumulate=True) if inputs is not None else None
    engine.run_backward(
        roots,
        _seed(grads, tensors, create_graph),
        in_edges,
        keep_graph=bool(retain_graph),
        create_graph=bool(create_graph),
        accumulate=True,
    )


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> Any:
    """PyTorch's ``torch.autograd.grad``: returns gradients, never accumulates."""
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if isinstance(outputs, (Tensor, GradientEdge)):
        outputs = (outputs,)
    else:
        outputs = tuple(outputs)
    inputs_tuple = _inputs_tuple(inputs, "grad")
    if len(inputs_tuple) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now "
            "(defaults to True). To accumulate gradient for other "
            "parts of the graph, please use torch.autograd.backward.",
            FutureWarning,
            stacklevel=3,
        )
    grads = _tensor_or_tensors_to_tuple(grad_outputs, len(outputs))
    grads = _make_grads(outputs, grads, is_grads_batched=is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    batch = None
    if is_grads_batched:
        sizes = sorted({g.shape[0] for g in grads if g is not None and g.ndim > 0})
        if any(g is not None and g.ndim == 0 for g in grads):
            raise ValueError(
                "vmap: Tried to map over dim 0 of a 0-dimensional grad_output; every "
                "grad_output must have a batch dimension when is_grads_batched=True"
            )
        if len(sizes) > 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, "
                f"got sizes {sizes} for the mapped dimension"
            )
        batch = sizes[0] if sizes else None
    roots = _root_edges(outputs)
    in_edges = _input_edges(inputs_tuple, accumulate=False)
    result = engine.run_backward(
        roots,
        _seed(grads, outputs, create_graph),
        in_edges,
        keep_graph=bool(retain_graph),
        create_graph=bool(create_graph),
        accumulate=False,
        batch_size=batch,
    )
    out = []
    for i, (r, inp) in enumerate(zip(result, inputs_tuple)):
        if r is None:
            if materialize_grads:
                if isinstance(inp, GradientEdge):
                    raise RuntimeError(
                        "materialize_grads cannot be used when the given input is a GradientEdge"
                    )
                shape = tuple(inp.shape) if batch is None else (batch, *inp.shape)
                z = Tensor._wrap_result(np.zeros(shape, inp._npdtype))
                if create_graph:
                    z._requires_grad = True
                out.append(z)
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            out.append(None)
            continue
        if isinstance(r, Tensor):
            out.append(r)
        else:
            out.append(Tensor._wrap_result(r))
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), out))
    return tuple(out)


def _sizes_equal(a: Any, b: Any) -> bool:
    return tuple(a) == tuple(b)


__all__ = ["backward", "grad", "is_grad_enabled"]
is_grad_enabled = _gm.is_grad_enabled
