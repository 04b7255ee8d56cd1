"""``torch.utils.tensorboard``: PyTorch's ``SummaryWriter`` for compat tensors.

Like PyTorch's module it needs the ``tensorboard`` package: importing this module
without it raises ``ModuleNotFoundError: No module named 'tensorboard'``, and a
TensorBoard older than 1.15 raises ``ImportError``. ``import compat.torch`` never
imports it; scripts import it explicitly, as with PyTorch.
"""

from __future__ import annotations

import tensorboard  # the package this module writes for; missing -> ModuleNotFoundError
from packaging.version import Version  # a dependency of tensorboard

if Version(getattr(tensorboard, "__version__", "0")) < Version("1.15"):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from compat.torch.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
