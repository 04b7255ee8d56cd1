"""Errors for bad arguments carry what JAX's say (same exception type, JAX's wording
first, funcgrad's context after): each case is checked on JAX and funcgrad alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

_STRUCT = np.zeros(2, dtype=[("a", "<i4"), ("b", "<i4")])

_CASES: list[tuple[str, type, str, Callable[[Any, Any], Any]]] = [
    (
        "broadcast_to fewer dims",
        ValueError,
        r"Cannot broadcast to shape with fewer dimensions",
        lambda lib, np_: np_.broadcast_to(np.ones((3, 4, 5)), (4, 5)),
    ),
    (
        "broadcast_to incompatible",
        ValueError,
        r"Incompatible.*broadcasting: .*",
        lambda lib, np_: np_.broadcast_to(np.ones((2, 3)), (1, 3)),
    ),
    (
        "take_along_axis float indices",
        TypeError,
        r"take_along_axis indices must be of integer type, got float32",
        lambda lib, np_: np_.take_along_axis(np.ones(3), np.ones(1, np.float32), axis=0),
    ),
    (
        "grad has_aux without a pair",
        TypeError,
        r"two-element tuple",
        lambda lib, np_: lib.grad(lambda x: (x, x, x), has_aux=True)(1.0),
    ),
]


@pytest.mark.parametrize(("name", "exc", "pattern", "call"), _CASES, ids=[c[0] for c in _CASES])
def test_error_like_jax(name: str, exc: type, pattern: str, call: Callable) -> None:
    for lib, np_ in ((jax, jnp), (fg, fnp)):
        with pytest.raises(exc, match=pattern):
            call(lib, np_)


def test_unsupported_dtype_message() -> None:
    with pytest.raises(TypeError, match=r"JAX only supports number, bool, and string dtypes"):
        fnp.asarray(_STRUCT)
    with pytest.raises(TypeError):
        jnp.asarray(_STRUCT)
