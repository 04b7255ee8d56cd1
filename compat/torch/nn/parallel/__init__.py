"""``torch.nn.parallel``: data parallelism.

``DataParallel`` wraps a module and calls it (one device, no scatter or gather);
its ``state_dict`` keys carry the ``module.`` prefix as PyTorch's.
``DistributedDataParallel`` (in :mod:`compat.torch.nn.parallel.distributed`) averages
gradients over the processes of a ``torch.distributed`` process group.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compat._core import device as _dev
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Runs ``module`` on the inputs as they are (compat uses one device)."""

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[int | _dev.device] | None = None,
        output_device: int | _dev.device | None = None,
        dim: int = 0,
    ) -> None:
        super().__init__()
        self.module = module
        n = len(_dev.gpus())
        self.device_ids = [] if n == 0 else list(range(n)) if device_ids is None else device_ids
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
