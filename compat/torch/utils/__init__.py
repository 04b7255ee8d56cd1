"""``torch.utils``: the parts of PyTorch's utilities compat provides (``torch.utils.data``)."""

from __future__ import annotations

from compat.torch.utils import data  # noqa: F401
