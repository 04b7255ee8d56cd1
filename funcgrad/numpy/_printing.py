"""NumPy's printing helpers for (concrete) arrays: ``array_repr``, ``array_str`` and the
print options (``get_printoptions``, ``set_printoptions``, the ``printoptions`` context
manager), which are NumPy's own."""

from __future__ import annotations

import numpy as np

from funcgrad.numpy._core import ArrayLike

get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions


def array_repr(
    arr: ArrayLike,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    """NumPy's ``array_repr`` of the (concrete) array ``arr``."""
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(
    a: ArrayLike,
    max_line_width: int | None = None,
    precision: int | None = None,
    suppress_small: bool | None = None,
) -> str:
    """NumPy's ``array_str`` of the (concrete) array ``a``."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)
