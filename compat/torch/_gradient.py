"""``torch.gradient``: central differences in the interior, one-sided ones at the edges
(first or second order), over uniform spacings or 1-D coordinates, as PyTorch's (and
NumPy's ``gradient``). Built from tensor operations, so it records a graph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compat._core.ops.array_rows import cat
from compat._core.tensor import Tensor

__all__ = ["gradient"]


def _dims(input: Tensor, dim: Any) -> list[int]:
    if dim is None:
        return list(range(input.ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = []
    for d in dims:
        if not -input.ndim <= d < input.ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                f"{input.ndim - 1}], but got {d})"
            )
        d %= input.ndim
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return out


def _spacings(input: Tensor, spacing: Any, dims: list[int], dim_given: bool) -> list[Any]:
    """One spacing per dimension: a number (uniform) or a 1-D tensor of coordinates (a
    list holds one per dimension: of length 1, it is not repeated, as PyTorch's)."""
    if not isinstance(spacing, (list, tuple)):
        return [spacing] * len(dims)
    if len(spacing) != len(dims):
        if dim_given:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                "and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacing)} and a dim argument of length {len(dims)}."
            )
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got "
            f"a list of length {len(spacing)}"
        )
    out = list(spacing)
    if any(isinstance(s, Tensor) for s in out):  # all coordinates or all numbers
        for i, s in enumerate(out):
            if not isinstance(s, Tensor):
                raise TypeError(
                    f"expected Tensor as element {i} in argument 1, but got {type(s).__name__}"
                )
    for d, s in zip(dims, out):
        if isinstance(s, Tensor):
            if s.ndim != 1:
                raise RuntimeError(
                    "torch.gradient expected each element of spacing to have one dimension, "
                    f"but got an element with {s.ndim} dimensions!"
                )
            if s.shape[0] != input.shape[d]:
                raise RuntimeError(
                    f"torch.gradient expected the coordinates of dimension {d} to have "
                    f"{input.shape[d]} values, but got {s.shape[0]}"
                )
    return out


def _along(t: Tensor, d: int, ndim: int) -> Tensor:
    """A 1-D tensor shaped to broadcast along dimension ``d`` of an ``ndim``-D tensor."""
    shape = [1] * ndim
    shape[d] = t.shape[0]
    return t.reshape(shape)


def _uniform(x: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    n = x.shape[d]

    def at(start: int, length: int) -> Tensor:
        return x.narrow(d, start % n, length)

    inner = (at(2, n - 2) - at(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first = (at(1, 1) - at(0, 1)) / h
        last = (at(-1, 1) - at(-2, 1)) / h
    else:
        first = (-1.5 * at(0, 1) + 2 * at(1, 1) - 0.5 * at(2, 1)) / h
        last = (0.5 * at(-3, 1) - 2 * at(-2, 1) + 1.5 * at(-1, 1)) / h
    return cat([first, inner, last], d)


def _coordinates(x: Tensor, d: int, c: Tensor, edge_order: int) -> Tensor:
    n = x.shape[d]

    def at(start: int, length: int) -> Tensor:
        return x.narrow(d, start % n, length)

    dx = _along(c[1:] - c[:-1], d, x.ndim)

    def step(start: int, length: int) -> Tensor:
        return dx.narrow(d, start % (n - 1), length)

    h1, h2 = step(0, n - 2), step(1, n - 2)
    inner = (
        -h2 / (h1 * (h1 + h2)) * at(0, n - 2)
        + (h2 - h1) / (h1 * h2) * at(1, n - 2)
        + h1 / (h2 * (h1 + h2)) * at(2, n - 2)
    )
    if edge_order == 1:
        first = (at(1, 1) - at(0, 1)) / step(0, 1)
        last = (at(-1, 1) - at(-2, 1)) / step(-1, 1)
    else:
        a, b = step(0, 1), step(1, 1)
        first = (
            -(2 * a + b) / (a * (a + b)) * at(0, 1)
            + (a + b) / (a * b) * at(1, 1)
            - a / (b * (a + b)) * at(2, 1)
        )
        a, b = step(-2, 1), step(-1, 1)
        last = (
            b / (a * (a + b)) * at(-3, 1)
            - (a + b) / (a * b) * at(-2, 1)
            + (2 * b + a) / (b * (a + b)) * at(-1, 1)
        )
    return cat([first, inner, last], d)


def gradient(
    input: Tensor,
    *,
    spacing: Any = 1,
    dim: int | Sequence[int] | None = None,
    edge_order: int = 1,
) -> tuple[Tensor, ...]:
    """The derivative estimates of ``input`` along each of ``dim`` (all dimensions by
    default): ``spacing`` is a number, one number per dimension, or one 1-D tensor of
    coordinates per dimension; ``edge_order`` (1 or 2) is the order of the edges'
    one-sided differences."""
    if not isinstance(input, Tensor):
        raise TypeError(f"gradient(): argument 'input' must be Tensor, not {type(input).__name__}")
    dims = _dims(input, dim)
    spacings = _spacings(input, 1 if spacing is None else spacing, dims, dim is not None)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1"
            )
    out = []
    for d, s in zip(dims, spacings):
        if isinstance(s, Tensor):
            out.append(_coordinates(input, d, s, edge_order))
        else:
            out.append(_uniform(input, d, s, edge_order))
    return tuple(out)
