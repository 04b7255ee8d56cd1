"""Integer division and remainder on the host tier take NumPy integer scalars (a ufunc's
0-d result, what 0-d integer values are between host-tier programs) as they take 0-d
arrays: C-style division and XLA's results for a zero divisor, against the compiled tier."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.lax as lax
from funcgrad.core import compile_cache
from funcgrad.core.host import HostPlan
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval


@pytest.mark.parametrize("op", [lax.div, lax.rem])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_integer_scalars_divide_as_xla(op, dtype):
    d = np.dtype(dtype)
    prog = trace_flat(lambda x, y: [op(x, y)], [Aval((), d), Aval((), d)], "test")
    plan = HostPlan(prog)
    exe = compile_cache.compiled(prog)
    signed = d.kind == "i"
    for a, b in [(7, 2), (7, 0), (0, 0), (5, 3)] + ([(-7, 2), (7, -2), (-7, 0)] if signed else []):
        x, y = dtype(a), dtype(b)
        want = np.asarray(exe(x, y)[0])
        for args in ((x, y), (np.asarray(x), np.asarray(y))):
            got = np.asarray(plan.run(*args)[0])
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{op.__name__}({a}, {b})")
