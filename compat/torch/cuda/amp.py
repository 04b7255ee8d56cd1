"""``torch.cuda.amp``: PyTorch's deprecated aliases of ``torch.amp`` for the ``cuda`` device."""

from __future__ import annotations

from compat.torch.amp import device_aliases

__all__ = ["GradScaler", "autocast"]

autocast, GradScaler = device_aliases("cuda", __name__)
