"""``nn.Dropout``: random zeroing in training mode, the identity in eval mode."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero each element with probability ``p`` while training; scale the rest by ``1/(1-p)``.

    The mask comes from the generator ``torch.manual_seed`` seeds; after
    ``model.eval()`` the module returns its input unchanged.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Any) -> Any:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
