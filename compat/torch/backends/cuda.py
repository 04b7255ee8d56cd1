"""``torch.backends.cuda``: ``matmul.allow_tf32`` and friends, settable with PyTorch's
defaults; no effect in compat (XLA picks matmul precision)."""

from __future__ import annotations

from compat._core import device as _dev


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: reduced-precision matmul switches."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()


def is_built() -> bool:
    """Whether compat can use a CUDA device (jax has a GPU)."""
    return bool(_dev.gpus())
