"""``torch.broadcast_shapes``, ``torch.broadcast_tensors``, ``torch.can_cast`` and
``torch.scalar_tensor``: the namespace functions about shapes and dtypes that are not
rows of the op table (no kernel of their own: views, checks, a creation)."""

from __future__ import annotations

import builtins
from typing import Any

from compat._core import dtypes as _dt
from compat._core.creation import tensor as _tensor
from compat._core.tensor import Size, Tensor

__all__ = ["broadcast_shapes", "broadcast_tensors", "can_cast", "scalar_tensor"]


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape the given shapes broadcast to (each an int or a sequence of ints), with
    PyTorch's errors: a negative size is a ``ValueError``, a mismatch a ``RuntimeError``
    naming the first argument that does not fit."""
    dims: list[list[int]] = []
    for shape in shapes:
        if isinstance(shape, builtins.int) and not isinstance(shape, builtins.bool):
            dims.append([shape])
        elif isinstance(shape, (tuple, list)):
            dims.append([builtins.int(d) for d in shape])
        else:
            raise RuntimeError(
                f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}"
            )
    result = [1] * builtins.max([len(d) for d in dims], default=0)
    for index, shape in enumerate(dims):
        for i in range(-1, -len(shape) - 1, -1):
            size = shape[i]
            if size < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if size in (1, result[i]):
                continue
            if result[i] != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {i}! Mismatching "
                    f"argument at index {index} had {tuple(shape)}; but expected shape should be "
                    f"broadcastable to {result}"
                )
            result[i] = size
    return Size(result)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Each tensor expanded (a view) to the shape they broadcast to together; one that
    has that shape already is returned as it is."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    shape: list[int] = []
    for t in tensors:
        size = list(t.shape)
        n = builtins.max(len(shape), len(size))
        a, b = [1] * (n - len(shape)) + shape, [1] * (n - len(size)) + size
        for k in range(n):
            if a[k] != b[k] and 1 not in (a[k], b[k]):
                raise RuntimeError(
                    f"The size of tensor a ({a[k]}) must match the size of tensor b ({b[k]}) "
                    f"at non-singleton dimension {k}"
                )
        shape = [builtins.max(x, y) if 1 in (x, y) else x for x, y in zip(a, b)]
    # a tensor already of that shape comes back itself, as PyTorch's (no view)
    return tuple(t if list(t.shape) == shape else t.expand(shape) for t in tensors)


def _kind(d: _dt.dtype) -> builtins.int:
    """Bool < integers < floating < complex: a cast may not go down this order."""
    if d.is_complex:
        return 3
    if d.is_floating_point:
        return 2
    return 0 if d is _dt.bool else 1


def can_cast(from_: _dt.dtype, to: _dt.dtype) -> builtins.bool:
    """Whether PyTorch's type promotion allows casting ``from_`` to ``to``: never to a
    lower kind (complex to real, floating to integral, non-bool to bool); any size within
    a kind."""
    for pos, (name, d) in enumerate((("from_", from_), ("to", to)), start=1):
        if not isinstance(d, _dt.dtype):
            raise TypeError(
                f"can_cast(): argument '{name}' (position {pos}) must be torch.dtype, "
                f"not {type(d).__name__}"
            )
    return _kind(from_) <= _kind(to)


def scalar_tensor(
    s: Any, *, dtype: _dt.dtype | None = None, layout: Any = None, device: Any = None,
    requires_grad: builtins.bool = False, pin_memory: builtins.bool = False,
) -> Tensor:  # fmt: skip
    """A 0-d tensor holding ``s``, of the default dtype unless ``dtype`` is given (whatever
    the Python type of ``s``)."""
    dtype = _dt.get_default_dtype() if dtype is None else dtype
    return _tensor(s, dtype=dtype, device=device, requires_grad=requires_grad)
