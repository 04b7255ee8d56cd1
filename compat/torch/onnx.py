"""``torch.onnx``: importable; exporting is not supported by compat."""

from __future__ import annotations

from typing import Any

__all__ = ["export"]


def export(model: Any, args: Any = (), f: Any = None, **kwargs: Any) -> None:
    """Not supported: compat models are funcgrad programs, not TorchScript/FX graphs."""
    raise NotImplementedError("torch.onnx.export: compat.torch cannot export ONNX models")
