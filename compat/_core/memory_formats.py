"""``torch.memory_format`` and its values (``torch.contiguous_format``, ``channels_last``,
...): accepted wherever PyTorch takes ``memory_format=``."""

from __future__ import annotations

__all__ = [
    "channels_last",
    "channels_last_3d",
    "contiguous_format",
    "memory_format",
    "preserve_format",
]


class memory_format:
    """``torch.contiguous_format`` & co: accepted by ``memory_format=`` arguments;
    compat's tensors are always contiguous, so every format reads as that."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
