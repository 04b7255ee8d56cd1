"""``nn.Flatten`` and ``nn.Unflatten``: merge a range of dimensions into one, or split one."""

from __future__ import annotations

import math
from typing import Any

from compat.torch.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dimensions ``start_dim`` .. ``end_dim`` (the batch dimension is kept by default)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Any) -> Any:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (one entry may be ``-1``)."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...] | list[int]) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be tuple or list")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(
                    f"unflattened_size must be tuple of ints, but found element of type "
                    f"{type(elem).__name__} at pos {idx}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Any) -> Any:
        shape = list(input.shape)
        dim = self.dim + len(shape) if self.dim < 0 else self.dim
        sizes = list(self.unflattened_size)
        known = math.prod(s for s in sizes if s != -1)
        if sizes.count(-1) == 1 and known and shape[dim] % known == 0:
            sizes[sizes.index(-1)] = shape[dim] // known
        if math.prod(sizes) != shape[dim] or sizes.count(-1):
            raise RuntimeError(
                f"unflatten: Provided sizes {list(self.unflattened_size)} don't multiply up to "
                f"the size of dim {self.dim} ({shape[dim]}) in the input tensor"
            )
        return input.reshape(shape[:dim] + sizes + shape[dim + 1 :])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
