"""``import compat.oneflow as flow``: OneFlow's flavour of the compat core.

The Tensor, ops and engine are the ones ``compat.torch`` uses; the autograd
functions take OneFlow's documented signatures and defaults —
``flow.autograd.backward(tensors, grad_tensors=None, retain_graph=False,
create_graph=False)``: ``retain_graph`` defaults to ``False``, not to
``create_graph``.
"""

from __future__ import annotations

import importlib
from typing import Any

import compat._core  # noqa: F401
from compat._core.namespace import *  # noqa: F403
from compat._core.namespace import __dict__ as _ns
from compat.oneflow import autograd  # noqa: F401

for _k, _v in _ns.items():
    if not _k.startswith("__"):
        globals()[_k] = _v
del _k, _v, _ns

__version__ = "0.9.0+compat"


def __getattr__(name: str) -> Any:
    if name in ("nn", "optim"):
        return importlib.import_module(f"compat.oneflow.{name}")
    raise AttributeError(f"module 'compat.oneflow' has no attribute {name!r}")
