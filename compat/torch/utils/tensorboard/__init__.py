"""``torch.utils.tensorboard``: PyTorch's ``SummaryWriter`` for compat tensors.

Like PyTorch's module it needs the ``tensorboard`` package: importing this module
without it raises ``ModuleNotFoundError: No module named 'tensorboard'``, and a
TensorBoard older than 1.15 raises ``ImportError``. ``import compat.torch`` never
imports it; scripts import it explicitly, as with PyTorch.
"""

from __future__ import annotations

import tensorboard  # the package this module writes for; missing -> ModuleNotFoundError


def _version_tuple(version: str) -> tuple[int, ...]:
    """The leading numeric fields of a version string ("2.21.0rc1" -> (2, 21, 0))."""
    parts: list[int] = []
    for field in version.split(".")[:3]:
        digits = ""
        for ch in field:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


if _version_tuple(getattr(tensorboard, "__version__", "0")) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from compat.torch.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
