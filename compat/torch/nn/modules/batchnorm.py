"""``nn.BatchNorm1d``/``2d``/``3d`` and ``nn.SyncBatchNorm`` as in
``torch/nn/modules/batchnorm.py``.

Buffers ``running_mean``, ``running_var`` and ``num_batches_tracked`` (int64) are
registered like PyTorch's, so ``state_dict`` keys and values move between compat and
real PyTorch. In training mode the batch statistics normalise the input and the buffers
are updated in place without recording gradients (``momentum=None``: cumulative
average); in eval mode the buffers normalise.

Example:
    >>> import compat.torch as torch
    >>> bn = torch.nn.BatchNorm1d(3)
    >>> _ = bn(torch.randn(8, 3))
    >>> int(bn.num_batches_tracked)
    1
"""

from __future__ import annotations

from typing import Any

import compat.torch as torch
from compat.torch.nn import functional as F
from compat.torch.nn import init
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


def _factory(shape: tuple[int, ...], fn: Any, dtype: Any) -> Any:
    return fn(shape) if dtype is None else fn(shape, dtype=dtype)


class _NormBase(Module):
    """Parameters and running-statistics buffers (PyTorch's ``_NormBase``)."""

    _version = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(_factory((num_features,), torch.empty, dtype))
            if bias:
                self.bias = Parameter(_factory((num_features,), torch.empty, dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", _factory((num_features,), torch.zeros, dtype))
            self.register_buffer("running_var", _factory((num_features,), torch.ones, dtype))
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batches tracked."""
        if self.track_running_stats:
            with torch.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, ``weight`` to ones and ``bias`` to zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Any) -> None:
        raise NotImplementedError

    def _load_from_state_dict(
        self,
        state_dict: Any,
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Checkpoints older than version 2 have no ``num_batches_tracked``: it loads as
        the current count (0 on a fresh or meta module), as PyTorch's."""
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            tracked = self.num_batches_tracked
            fresh = tracked is None or tracked.is_meta  # (a meta count has no value to keep)
            state_dict[key] = torch.tensor(0, dtype=torch.long) if fresh else tracked
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    def forward(self, input: Any) -> Any:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with torch.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_buffers else None,
            self.running_var if use_buffers else None,
            self.weight,
            self.bias,
            bn_training,
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` input over all but dim 1."""

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)`` input over all but dim 1."""

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of ``(N, C, D, H, W)`` input over all but dim 1."""

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose statistics PyTorch reduces over a process group in
    training. In one process (no ``torch.distributed`` group, or a group of one) it is
    ``BatchNorm`` over ``(N, C, *)``, as PyTorch's; compat does not synchronise the
    statistics of several processes (``NotImplementedError`` there)."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input: Any) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input: Any) -> Any:
        training = self.training and (
            self.track_running_stats or self.running_mean is None or self.running_var is None
        )
        dist = torch.distributed  # (loaded on first use)
        if self.training and dist.is_available() and dist.is_initialized():
            self._check_input_dim(input)
            if input.device.type != "cuda":
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU")
            if training and dist.get_world_size(self.process_group) > 1:
                raise NotImplementedError(
                    "compat's SyncBatchNorm does not synchronise batch statistics across "
                    "processes (a process group of more than one)"
                )
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every ``BatchNorm*d`` replaced by a ``SyncBatchNorm`` sharing
        its parameters and buffers (a new module when ``module`` itself is one)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(
                module.num_features, module.eps, module.momentum, module.affine,
                module.track_running_stats, process_group, bias=module.bias is not None,
            )  # fmt: skip
            if module.affine:
                with torch.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
