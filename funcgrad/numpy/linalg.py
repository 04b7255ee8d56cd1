"""``funcgrad.numpy.linalg``: norms, products and matrix helpers (no decompositions yet)."""

from __future__ import annotations

from typing import Any

from funcgrad.numpy._linalg import (
    cross,
    matmul,
    matrix_norm,
    norm,
    outer,
    tensordot,
    vecdot,
    vector_norm,
)
from funcgrad.numpy._shape import matrix_transpose

__all__ = [
    "cross",
    "diagonal",
    "matmul",
    "matrix_norm",
    "matrix_transpose",
    "norm",
    "outer",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Sum of the ``offset`` diagonal of the last two axes (Array API)."""
    from funcgrad.numpy._linalg import trace as _trace

    return _trace(x, offset, -2, -1, dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The ``offset`` diagonal of the last two axes (Array API)."""
    from funcgrad.numpy._shape import diagonal as _diagonal

    return _diagonal(x, offset, -2, -1)


def __getattr__(name: str) -> object:
    if name in (
        "inv",
        "solve",
        "det",
        "slogdet",
        "eig",
        "eigh",
        "svd",
        "qr",
        "cholesky",
        "pinv",
        "lstsq",
        "matrix_rank",
        "matrix_power",
        "eigvals",
        "eigvalsh",
    ):
        raise NotImplementedError(
            f"funcgrad.numpy.linalg.{name} is not implemented (no decomposition primitives yet)"
        )
    raise AttributeError(f"module 'funcgrad.numpy.linalg' has no attribute {name!r}")
