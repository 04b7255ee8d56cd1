"""``nn.Flatten``: merge a range of dimensions into one."""

from __future__ import annotations

from typing import Any

from compat.torch.nn.modules.module import Module

__all__ = ["Flatten"]


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
