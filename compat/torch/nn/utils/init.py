"""``nn.utils.skip_init``: build a module without initialising its parameters.

PyTorch builds the module on the ``meta`` device and allocates it empty; compat has no
``meta`` device, so the module is built as usual, with the random generator's state put
back afterwards (the draws of its initialisation leave no trace, as on ``meta``), and its
parameters and buffers are then replaced by uninitialised (empty) tensors.

Example:
    >>> import compat.torch as torch
    >>> layer = torch.nn.utils.skip_init(torch.nn.Linear, 5, 1)
    >>> tuple(layer.weight.shape)
    (1, 5)
"""

from __future__ import annotations

import inspect
from typing import Any

import compat.torch as torch
from compat.torch.nn.modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """``module_cls(*args, **kwargs)`` with uninitialised parameters and buffers; the
    class must take a ``device`` argument (PyTorch's requirement)."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    state = torch.get_rng_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        torch.set_rng_state(state)
    with torch.no_grad():
        module._apply(torch.empty_like)
    return module.to(device)
