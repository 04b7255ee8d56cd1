"""``torch.backends``: flags PyTorch programs set for cuDNN, TF32 and MPS.

They are accepted, readable and settable with PyTorch's defaults, and have no effect:
XLA chooses its own kernels and precisions (``torch.set_float32_matmul_precision``
likewise)."""

from __future__ import annotations

from compat.torch.backends import cpu, cuda, cudnn, mkldnn, mps, quantized

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "quantized"]
