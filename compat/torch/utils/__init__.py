"""``torch.utils``: the parts of PyTorch's utilities compat provides (``torch.utils.data``,
``torch.utils.checkpoint``)."""

from __future__ import annotations

from compat.torch.utils import checkpoint, data  # noqa: F401
