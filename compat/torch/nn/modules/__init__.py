"""The ``nn`` layers, one file per family as in ``torch/nn/modules/``."""

from compat.torch.nn.modules.activation import (
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from compat.torch.nn.modules.activation_attention import MultiheadAttention
from compat.torch.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from compat.torch.nn.modules.container import ModuleDict, ModuleList, Sequential
from compat.torch.nn.modules.conv import Conv1d, Conv2d
from compat.torch.nn.modules.dropout import Dropout
from compat.torch.nn.modules.flatten import Flatten, Unflatten
from compat.torch.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d
from compat.torch.nn.modules.linear import Identity, Linear
from compat.torch.nn.modules.loss import (
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
)
from compat.torch.nn.modules.module import Module
from compat.torch.nn.modules.normalization import GroupNorm, LayerNorm
from compat.torch.nn.modules.pooling import (
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)

# recurrent layers
from compat.torch.nn.modules.rnn import (
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)
from compat.torch.nn.modules.sparse import Embedding
from compat.torch.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

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
    "ReLU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "Unflatten",
]

# recurrent layers
__all__ += [
    "GRU",
    "LSTM",
    "RNN",
    "GRUCell",
    "LSTMCell",
    "RNNBase",
    "RNNCell",
    "RNNCellBase",
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
