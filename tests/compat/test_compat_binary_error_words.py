"""Errors of binary ops in PyTorch's words and order, against real PyTorch (from
``test_binary_ufuncs.py``: ``test_heaviside_complex``, ``test_float_power_exceptions``);
``float_power`` of a complex operand is complex128 (it was computed in float64)."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

CALLS = {
    "heaviside complex128 complex64": lambda lib: lib.heaviside(
        lib.ones(2, dtype=lib.complex128), lib.ones(2, dtype=lib.complex64)
    ),
    "heaviside float complex": lambda lib: lib.heaviside(
        lib.ones(2), lib.ones(2, dtype=lib.complex64)
    ),
    "heaviside float double": lambda lib: lib.heaviside(lib.ones(2), lib.ones(2).double()),
    "heaviside complex out": lambda lib: lib.heaviside(
        lib.ones(2), lib.ones(2), out=lib.empty(2, dtype=lib.complex64)
    ),
    "heaviside_ complex": lambda lib: lib.ones(2, dtype=lib.complex64).heaviside_(
        lib.ones(2, dtype=lib.complex64)
    ),
    "float_power out long": lambda lib: lib.float_power(
        lib.tensor([1, 2]), -0.25, out=lib.empty(2, dtype=lib.long)
    ),
    "float_power out float": lambda lib: lib.float_power(
        lib.tensor([1.0, 2.0]), 2, out=lib.empty(2)
    ),
    "float_power out cdouble": lambda lib: lib.float_power(
        lib.tensor([1, 2]), 0.5, out=lib.empty(2, dtype=lib.cdouble)
    ),
    "float_power complex out double": lambda lib: lib.float_power(
        lib.tensor([1j, 2]), 2.0, out=lib.empty(2, dtype=lib.double)
    ),
    "float_power_ float": lambda lib: lib.tensor([1.0, 2.0]).float_power_(2),
    "float_power_ double": lambda lib: lib.tensor([1.0, 2.0]).double().float_power_(2),
    "float_power complex": lambda lib: lib.float_power(lib.tensor([1j, 2 - 1j]), 2.0),
    "float_power complex exponent": lambda lib: lib.float_power(lib.tensor([1.0, 2.0]), 1j),
    "float_power_ complex": lambda lib: lib.tensor([1j, 2]).to(lib.cdouble).float_power_(0.5),
}


@pytest.mark.parametrize("label", sorted(CALLS))
def test_binary_error_matches_pytorch(label, real_torch):
    try:
        theirs = CALLS[label](real_torch)
    except Exception as e:
        with pytest.raises(type(e)) as info:
            CALLS[label](ctorch)
        assert str(info.value) == str(e), label
        return
    ours = CALLS[label](ctorch)
    assert str(ours.dtype) == str(theirs.dtype), label
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, err_msg=label)
