"""``import compat.torch as torch``: PyTorch's tensor and autograd API on funcgrad.

Porting code means changing the import. Tensors, ops, grad mode and
``torch.autograd`` follow PyTorch (documented semantics and error messages);
gradients come from funcgrad's VJP transform of the recorded graph. ``torch.nn``
and ``torch.optim`` are imported lazily on first access.
"""

from __future__ import annotations

import importlib
from typing import Any

import compat._core  # noqa: F401  (enables x64, installs Tensor methods)
from compat._core.namespace import *  # noqa: F403
from compat._core.namespace import __dict__ as _ns
from compat.torch import autograd  # noqa: F401

for _k, _v in _ns.items():
    if not _k.startswith("__"):
        globals()[_k] = _v
del _k, _v, _ns

__version__ = "2.13.0+compat"
_LAZY = ("nn", "optim", "utils", "compile", "func", "vmap")


def __getattr__(name: str) -> Any:
    if name in ("nn", "optim", "func"):
        return importlib.import_module(f"compat.torch.{name}")
    if name == "vmap":  # torch.vmap is torch.func.vmap
        return importlib.import_module("compat.torch.func").vmap
    raise AttributeError(f"module 'compat.torch' has no attribute {name!r}")
