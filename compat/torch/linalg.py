"""``torch.linalg``: the op table's rows of that namespace (see ``compat/_core/ops/linalg_ns.py``)."""

from __future__ import annotations

from typing import Any

from compat._core.ops.linalg_decomp import EXTRA as _EXTRA
from compat._core.ops.linalg_decomp import UNSUPPORTED as _UNSUPPORTED
from compat._core.ops.linalg_decomp import unsupported as _unsupported
from compat._core.optable import functions as _functions
from compat._core.out_arg import with_out as _with_out

globals().update(_functions(_with_out, module="linalg"))
globals().update(_EXTRA)


def __getattr__(name: str) -> Any:
    if name in _UNSUPPORTED:  # no funcgrad kernel: a clear error, not a missing name
        raise _unsupported(name)
    raise AttributeError(f"module 'compat.torch.linalg' has no attribute {name!r}")
