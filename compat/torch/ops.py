"""``torch.ops``: ``torch.ops.aten.<op>.<overload>``, naming compat's ops (generated from
the op table, :mod:`compat._core.aten`)."""

from __future__ import annotations

from compat._core.aten import ATEN as aten
from compat._core.aten import OpOverload, OpOverloadPacket

__all__ = ["OpOverload", "OpOverloadPacket", "aten"]
