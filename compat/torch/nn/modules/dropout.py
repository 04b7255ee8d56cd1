"""``nn.Dropout`` and its channel-wise and alpha variants: random zeroing in training mode,
the identity in eval mode."""

from __future__ import annotations

from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.module import Module

__all__ = [
    "AlphaDropout",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "FeatureAlphaDropout",
]


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


class _DropoutNd(Dropout):
    _fn = "dropout"

    def forward(self, input: Any) -> Any:
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input while training."""

    _fn = "dropout1d"


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` input while training."""

    _fn = "dropout2d"


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input while training."""

    _fn = "dropout3d"


class AlphaDropout(_DropoutNd):
    """Alpha dropout for SELU networks while training (keeps mean and variance)."""

    _fn = "alpha_dropout"


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels while training."""

    _fn = "feature_alpha_dropout"
