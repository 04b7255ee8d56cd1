"""``torch.utils``: the parts of PyTorch's utilities compat provides (``torch.utils.data``,
``torch.utils.checkpoint``, ``torch.utils.dlpack``, ``torch.utils.collect_env``,
``torch.utils.swap_tensors``)."""

from __future__ import annotations

from compat._core.tensor_swap import swap_tensors as swap_tensors
from compat.torch.utils import checkpoint, collect_env, data, dlpack  # noqa: F401
