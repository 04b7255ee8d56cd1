"""``torch.__config__``: how this build of compat was put together, as text
(``show()``), and its threads (``parallel_info()``).

PyTorch's report names its C++ compiler, BLAS and OpenMP; compat's are funcgrad's, JAX's
and NumPy's versions, the XLA backend and its devices. compat has no C++ extension, so
``_cxx_flags()`` is empty.

Example:
    >>> import compat.torch as torch
    >>> "funcgrad" in torch.__config__.show()
    True
"""

from __future__ import annotations

import jax
import numpy as np

import funcgrad
from compat.torch import _runtime

__all__ = ["parallel_info", "show"]


def show() -> str:
    """The versions and backend compat runs on, one per line."""
    devices = jax.devices()
    return (
        "compat.torch built with:\n"
        f"  - funcgrad {funcgrad.__version__}\n"
        f"  - JAX {jax.__version__} (XLA backend: {jax.default_backend()}, "
        f"{len(devices)} device{'s' if len(devices) != 1 else ''})\n"
        f"  - NumPy {np.__version__} (the host tier)\n"
    )


def parallel_info() -> str:
    """The thread counts ``torch.get_num_threads`` and ``get_num_interop_threads`` report."""
    return (
        "compat/Parallel:\n"
        f"\ttorch.get_num_threads() : {_runtime.get_num_threads()}\n"
        f"\ttorch.get_num_interop_threads() : {_runtime.get_num_interop_threads()}\n"
    )


def _cxx_flags() -> str:
    """The C++ compiler flags of the build: none (compat is Python over funcgrad and JAX)."""
    return ""
