"""PyTorch's ``torch.return_types``: the named tuples that ops returning several tensors
give (``torch.max(x, 0)``, ``torch.sort``, ``torch.linalg.qr``...), one type per op,
printed as PyTorch prints them::

    torch.return_types.max(
    values=tensor([2., 3.]),
    indices=tensor([1, 0]))
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

_TYPES: dict[str, type] = {}


def _repr(self: Any) -> str:
    body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
    return f"torch.return_types.{type(self).__name__}(\n{body})"


def return_type(name: str, fields: str) -> type:
    """The named tuple type ``torch.return_types.<name>`` with ``fields`` (space
    separated), made once per name; it pickles as a module global of this module."""
    t = _TYPES.get(name)
    if t is None:
        t = namedtuple(name, fields)
        t.__repr__ = _repr  # type: ignore[method-assign]
        t.__module__ = __name__
        _TYPES[name] = t
        globals()[name] = t
    elif " ".join(t._fields) != " ".join(fields.split()):
        raise ValueError(f"return type {name} already has fields {t._fields}")
    return t
