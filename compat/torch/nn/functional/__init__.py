"""``nn.functional``: stateless layers, activations and losses on compat Tensors.

Each function is a composite of the public compat ops (``matmul``,
``log_softmax``, comparisons, reductions), so its gradient comes from the
recorded graph like any user code. Signatures, defaults, reductions and the
ignore-index / label-smoothing arithmetic follow ``torch.nn.functional``.
``conv1d``/``conv2d`` are single compat ops (one ``ConvolutionBackward0`` node)
over funcgrad's ``conv_general_dilated`` primitive, with PyTorch's argument checks.

The functions live in modules by job (``activation``, ``conv``, ``pooling``,
``normalization``, ``sparse``, ``loss``); this package re-exports them.

Example:
    >>> import compat.torch as torch
    >>> import compat.torch.nn.functional as F
    >>> logits = torch.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, torch.tensor([0]))
    >>> loss.backward()
"""

from __future__ import annotations

from compat.torch.nn.functional._utils import _legacy_reduction  # noqa: F401 (nn.modules.loss)
from compat.torch.nn.functional.activation import (
    dropout,
    gelu,
    leaky_relu,
    linear,
    log_softmax,
    relu,
    sigmoid,
    silu,
    softmax,
    tanh,
)
from compat.torch.nn.functional.attention import (
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from compat.torch.nn.functional.conv import conv1d, conv2d
from compat.torch.nn.functional.loss import (
    binary_cross_entropy_with_logits,
    cross_entropy,
    l1_loss,
    mse_loss,
    nll_loss,
)
from compat.torch.nn.functional.normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
)
from compat.torch.nn.functional.pooling import (
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from compat.torch.nn.functional.sparse import embedding, one_hot

__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy_with_logits",
    "conv1d",
    "conv2d",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "group_norm",
    "instance_norm",
    "l1_loss",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log_softmax",
    "max_pool1d",
    "max_pool2d",
    "mse_loss",
    "nll_loss",
    "one_hot",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "tanh",
]

# attention
__all__ += [
    "multi_head_attention_forward",
    "scaled_dot_product_attention",
]
