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
from compat.torch.nn.modules.container import ModuleDict, ModuleList, Sequential
from compat.torch.nn.modules.conv import Conv1d, Conv2d
from compat.torch.nn.modules.dropout import Dropout
from compat.torch.nn.modules.flatten import Flatten
from compat.torch.nn.modules.linear import Identity, Linear
from compat.torch.nn.modules.loss import (
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
)
from compat.torch.nn.modules.module import Module

__all__ = [
    "GELU",
    "BCEWithLogitsLoss",
    "Conv1d",
    "Conv2d",
    "CrossEntropyLoss",
    "Dropout",
    "Flatten",
    "Identity",
    "L1Loss",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
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
]
