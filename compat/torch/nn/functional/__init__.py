"""``nn.functional``: stateless layers, activations and losses on compat Tensors.

Each function is a composite of the public compat ops (``matmul``,
``log_softmax``, comparisons, reductions), so its gradient comes from the
recorded graph like any user code. Signatures, defaults, reductions and the
ignore-index / label-smoothing arithmetic follow ``torch.nn.functional``.
``conv1d``/``conv2d`` are single compat ops (one ``ConvolutionBackward0`` node)
over funcgrad's ``conv_general_dilated`` primitive, with PyTorch's argument checks.

The functions live in modules by job (``activation``, ``conv``, ``pooling``,
``normalization``, ``sparse``, ``loss``, ``grid``); this package re-exports them.

Example:
    >>> import compat.torch as torch
    >>> import compat.torch.nn.functional as F
    >>> logits = torch.tensor([[2.0, 0.5, -1.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, torch.tensor([0]))
    >>> loss.backward()
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

from compat._core.optable import functional_forms as _functional_forms
from compat.torch.nn.functional import grad  # noqa: F401  (F.grad: nn.grad's functions)
from compat.torch.nn.functional._reduction import _legacy_reduction  # noqa: F401 (nn.modules.loss)
from compat.torch.nn.functional.activation import (  # noqa: F401
    celu,
    dropout,
    elu,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    linear,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    rrelu,
    selu,
    silu,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)
from compat.torch.nn.functional.activation_inplace import (  # noqa: F401
    celu_,
    elu_,
    hardtanh_,
    leaky_relu_,
    relu_,
    rrelu_,
    selu_,
    threshold_,
)
from compat.torch.nn.functional.attention import (  # noqa: F401
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from compat.torch.nn.functional.bilinear import bilinear  # noqa: F401
from compat.torch.nn.functional.conv import conv1d, conv2d, conv3d, conv_tbc  # noqa: F401
from compat.torch.nn.functional.conv_transpose import (  # noqa: F401
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from compat.torch.nn.functional.ctc import ctc_loss  # noqa: F401
from compat.torch.nn.functional.distance import (  # noqa: F401
    cosine_embedding_loss,
    cosine_similarity,
    hinge_embedding_loss,
    margin_ranking_loss,
    normalize,
    pairwise_distance,
    pdist,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from compat.torch.nn.functional.dropout_channel import (  # noqa: F401
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from compat.torch.nn.functional.embedding_bag import embedding_bag  # noqa: F401
from compat.torch.nn.functional.grid import (  # noqa: F401
    GRID_SAMPLE_INTERPOLATION_MODES,
    GRID_SAMPLE_PADDING_MODES,
    affine_grid,
    grid_sample,
)
from compat.torch.nn.functional.grouped_mm import grouped_mm  # noqa: F401
from compat.torch.nn.functional.im2col import fold, unfold  # noqa: F401
from compat.torch.nn.functional.linear_cross_entropy import linear_cross_entropy  # noqa: F401
from compat.torch.nn.functional.loss import (  # noqa: F401
    binary_cross_entropy_with_logits,
    cross_entropy,
    l1_loss,
    mse_loss,
    nll_loss,
)
from compat.torch.nn.functional.loss_margin import multi_margin_loss, multilabel_margin_loss  # noqa: F401
from compat.torch.nn.functional.loss_pointwise import (  # noqa: F401
    binary_cross_entropy,
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
)
from compat.torch.nn.functional.normalization import (  # noqa: F401
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    rms_norm,
)
from compat.torch.nn.functional.padding import pad  # noqa: F401
from compat.torch.nn.functional.pooling import (  # noqa: F401
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from compat.torch.nn.functional.pooling_adaptive import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
)
from compat.torch.nn.functional.pooling_fractional import (  # noqa: F401
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from compat.torch.nn.functional.pooling_unpool_lp import (  # noqa: F401
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from compat.torch.nn.functional.sparse import embedding, one_hot  # noqa: F401
from compat.torch.nn.functional.upsampling import (  # noqa: F401
    channel_shuffle,
    interpolate,
    native_channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

# ``sigmoid``, ``tanh``, ...: the plain elementwise activations, and ``softmax``,
# ``log_softmax``, from their op-table rows (``functional=``)
globals().update(_functional_forms())

#: every function imported or generated above: the imports and rows are the one list of
#: ``nn.functional``'s names (constants such as ``GRID_SAMPLE_*_MODES`` are attributes only,
#: as PyTorch's ``__all__`` leaves them out)
__all__ = sorted(
    name
    for name, value in globals().items()
    if not name.startswith("_")
    and name != "annotations"
    and not isinstance(value, _ModuleType)
    and callable(value)
)
