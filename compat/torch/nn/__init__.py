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

from compat.torch.nn import functional, init
from compat.torch.nn.modules import (
    GELU,
    BCEWithLogitsLoss,
    Conv1d,
    Conv2d,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    L1Loss,
    LeakyReLU,
    Linear,
    LogSoftmax,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from compat.torch.nn.parameter import Parameter

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
    "Parameter",
    "ReLU",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "functional",
    "init",
]
