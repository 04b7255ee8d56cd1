"""``nn.InstanceNorm1d`` and ``nn.InstanceNorm2d`` as in ``torch/nn/modules/instancenorm.py``.

Each channel of each sample is normalised over its positions. By default there are
no affine parameters and no running statistics; with ``track_running_stats=True``
the buffers (``running_mean``, ``running_var``, ``num_batches_tracked`` — the last
never incremented, as in PyTorch) are updated in training mode and normalise in eval
mode. Unbatched input (``(C, L)`` / ``(C, H, W)``) is accepted.

Example:
    >>> import compat.torch as torch
    >>> torch.nn.InstanceNorm1d(3)(torch.randn(2, 3, 5)).shape
    torch.Size([2, 3, 5])
"""

from __future__ import annotations

import warnings
from typing import Any

from compat.torch.nn import functional as F
from compat.torch.nn.modules.batchnorm import _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class _InstanceNorm(_NormBase):
    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )

    def _get_no_batch_dim(self) -> int:
        raise NotImplementedError

    def _apply_instance_norm(self, input: Any) -> Any:
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def forward(self, input: Any) -> Any:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features"
                    f" ({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. "
                "You can silence this warning by not passing in num_features, "
                "which is not used because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._get_no_batch_dim():
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of ``(N, C, L)`` or unbatched ``(C, L)`` input."""

    def _get_no_batch_dim(self) -> int:
        return 2

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of ``(N, C, H, W)`` or unbatched ``(C, H, W)`` input."""

    def _get_no_batch_dim(self) -> int:
        return 3

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)`` input."""

    def _get_no_batch_dim(self) -> int:
        return 4

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")
