"""The ``nn`` layers, one file per family as in ``torch/nn/modules/``.

Each family module's ``__all__`` is the one list of its layers: this package exports
all of them (and ``Module`` and ``MultiheadAttention`` of the two modules that also
hold helpers).
"""

from compat.torch.nn.modules import (
    activation,
    activation_attention,
    adaptive,
    batchnorm,
    container,
    container_params,
    conv,
    conv_transpose,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy_layers,
    linear,
    linear_cross_entropy,
    loss,
    module,
    normalization,
    padding,
    pooling,
    pooling_fractional,
    pooling_unpool_lp,
    rnn,
    sparse,
    transformer,
    upsampling,
)

#: the modules whose ``__all__`` is exported whole (``module`` and ``activation_attention``
#: also hold helpers)
_FAMILIES = (
    activation,
    adaptive,
    batchnorm,
    container,
    container_params,
    conv,
    conv_transpose,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy_layers,
    linear,
    linear_cross_entropy,
    loss,
    normalization,
    padding,
    pooling,
    pooling_fractional,
    pooling_unpool_lp,
    rnn,
    sparse,
    transformer,
    upsampling,
)

__all__ = sorted(
    {"Module", "MultiheadAttention", *(name for family in _FAMILIES for name in family.__all__)}
)
globals().update(
    {"Module": module.Module, "MultiheadAttention": activation_attention.MultiheadAttention}
)
globals().update({name: getattr(family, name) for family in _FAMILIES for name in family.__all__})
