"""``funcgrad.numpy.array``/``asarray`` of Python ints outside the integer dtype they
become raise ``OverflowError`` with JAX's words (they wrapped silently: ``array(2**31)``
was ``-2147483648``); NumPy values still wrap, as in JAX 0.10.2."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

CASES = [
    ("array", 2**31, None),
    ("array", -(2**31) - 1, None),
    ("array", 2**64, None),
    ("array", 2**63, None),
    ("array", [2**63], None),
    ("array", [2**64], None),
    ("array", [-(2**63) - 1], None),
    ("array", [2**63], "uint64"),
    ("array", 2**63, "uint64"),
    ("array", [2**63, 1.5], None),
    ("array", [np.int8(1), 2], None),
    ("array", 2**31 - 1, None),
    ("array", -(2**31), None),
    ("array", 300, "int8"),
    ("array", 2**31, "int32"),
    ("array", 2**31, "uint32"),
    ("array", -1, "uint32"),
    ("array", 2**31, "float32"),
    ("array", [2**31], None),
    ("array", [1, 2**31], None),
    ("array", [[2**40]], None),
    ("array", [2**31], "uint32"),
    ("array", [1.0, 2**31], None),
    ("array", (True, 2), None),
    ("asarray", 2**31, None),
    ("asarray", [2**31], None),
    ("asarray", np.int64(2**31), None),
    ("asarray", np.array([2**31]), None),
]


def _outcome(f: object) -> object:
    try:
        r = f()
    except OverflowError as e:
        return ("OverflowError", str(e))
    return (str(r.dtype), np.asarray(r).tolist())


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("name,value,dtype", CASES, ids=[str(i) for i in range(len(CASES))])
def test_as_jax(name: str, value: object, dtype: object, x64: bool) -> None:
    with jax.enable_x64(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a 64-bit dtype asked without x64
        theirs = _outcome(lambda: getattr(jnp, name)(value, dtype=dtype))
        ours = _outcome(lambda: getattr(fnp, name)(value, dtype=dtype))
    assert ours == theirs


def test_under_jit() -> None:
    msg = "Python int 2147483648 too large to convert to int32"
    with jax.enable_x64(False):
        with pytest.raises(OverflowError, match=msg):
            jax.jit(lambda: jnp.array(2**31))()
        with pytest.raises(OverflowError, match=msg):
            fg.jit(lambda: fnp.array(2**31))()
