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

from typing import Any

from compat.torch.nn import (
    functional,
    grad,  # noqa: F401
    init,
    modules,
    parallel,
    utils,
)
from compat.torch.nn.modules import *  # noqa: F403  (every layer: modules.__all__ is the list)
from compat.torch.nn.parallel import DataParallel
from compat.torch.nn.parameter import (
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)

__all__ = [
    *modules.__all__,
    "Buffer",
    "DataParallel",
    "Parameter",
    "UninitializedBuffer",
    "UninitializedParameter",
    "factory_kwargs",
    "functional",
    "init",
    "parallel",
    "utils",
]


_FACTORY_KEYS = {"device", "dtype", "memory_format"}


def factory_kwargs(kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """The factory arguments (``device``, ``dtype``, ``memory_format``) among a module's
    ``**kwargs``, merged with an explicit ``factory_kwargs`` dict in them, for
    ``torch.empty(..., **factory_kwargs(kwargs))``; any other key is a ``TypeError``,
    and so is a key given both ways."""
    if kwargs is None:
        return {}
    unexpected = kwargs.keys() - _FACTORY_KEYS - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for k in _FACTORY_KEYS & kwargs.keys():
        if k in out:
            raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
        out[k] = kwargs[k]
    return out
