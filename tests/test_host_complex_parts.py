"""The host tier's ``complex`` writes its parts, bit for bit as the compiled tier (and
``jax.lax.complex``): a -0.0 imaginary part keeps its sign and an infinite part leaves
its partner alone (the host rule was ``x + 1j * y``: +0.0, and NaN real parts)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import funcgrad.lax as lax
from funcgrad.core import compile_cache
from funcgrad.core.host import HostPlan
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import aval_of

PARTS = [-0.0, 0.0, 1.5, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_host_complex_keeps_signed_zeros_and_infinities(dtype):
    x = np.array(PARTS, dtype)
    y = np.array(PARTS[::-1], dtype)
    prog = trace_flat(lambda a, b: [lax.complex(a, b)], [aval_of(x), aval_of(y)], "test")
    host = HostPlan(prog, generate_after=1).run(*prog.consts, x, y)[0]
    compiled = np.asarray(compile_cache.compiled(prog)(*prog.consts, x, y)[0])
    expect = np.asarray(jax.lax.complex(x, y))  # the oracle
    for got in (host, compiled):
        assert got.dtype == expect.dtype
        for part in (np.real, np.imag):
            np.testing.assert_array_equal(np.signbit(part(got)), np.signbit(part(expect)))
            np.testing.assert_array_equal(part(got), part(expect))
