"""``torch.linalg``: the op table's rows of that namespace (see ``compat/_core/ops/linalg_ns.py``)."""

from __future__ import annotations

from compat._core.ops.linalg_decomp import EXTRA as _EXTRA
from compat._core.ops.linalg_ldl import EXTRA as _LDL_EXTRA
from compat._core.optable import functions as _functions
from compat._core.optable import name_as_public as _name_as_public
from compat._core.out_arg import with_out as _with_out

globals().update(_functions(_with_out, module="linalg"))
globals().update(_EXTRA)
globals().update(_LDL_EXTRA)
_name_as_public({**_EXTRA, **_LDL_EXTRA}, __name__)
