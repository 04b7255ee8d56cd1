"""``torch.special``: the op table's rows of that namespace (see ``compat/_core/ops/special.py``)."""

from __future__ import annotations

from compat._core.optable import functions as _functions
from compat._core.out_arg import with_out as _with_out

globals().update(_functions(_with_out, module="special"))
