"""``compat.torch.nn``: PyTorch's module API (``Module``, layers, losses, ``init``, ``functional``).

Written against the public compat Tensor API only (ops, in-place ops under
``torch.no_grad()``, ``.grad``, ``requires_grad``), so models written for
``torch.nn`` run unchanged after ``import compat.torch as torch``.

Example:
    >>> import compat.torch as torch
    >>> import compat.torch.nn as nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    >>> loss = nn.CrossEntropyLoss()(model(torch.randn(5, 4)), torch.tensor([0, 1, 2, 0, 1]))
    >>> loss.backward()
"""

from compat.torch.nn import functional, init, utils
from compat.torch.nn.modules import (
    GELU,
    GRU,
    LSTM,
    RNN,
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    BCEWithLogitsLoss,
    Conv1d,
    Conv2d,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    GroupNorm,
    GRUCell,
    Identity,
    InstanceNorm1d,
    InstanceNorm2d,
    L1Loss,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    LSTMCell,
    MaxPool1d,
    MaxPool2d,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    ReLU,
    RNNBase,
    RNNCell,
    RNNCellBase,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
    Unflatten,
)
from compat.torch.nn.modules.activation_attention import MultiheadAttention
from compat.torch.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from compat.torch.nn.parameter import Parameter

__all__ = [
    "GELU",
    "AdaptiveAvgPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv1d",
    "Conv2d",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "GroupNorm",
    "Identity",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "L1Loss",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool1d",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "Unflatten",
    "functional",
    "init",
]

# parallel (single-process stand-ins)
from compat.torch.nn import parallel
from compat.torch.nn.parallel import DataParallel

__all__ += ["DataParallel", "parallel"]

# recurrent layers, nn.utils
__all__ += [
    "GRU",
    "LSTM",
    "RNN",
    "GRUCell",
    "LSTMCell",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
    "utils",
]

# attention
__all__ += [
    "MultiheadAttention",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]
