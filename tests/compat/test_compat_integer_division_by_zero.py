"""Integer division and remainder by zero against real PyTorch (``test_binary_ufuncs``'
``test_fmod_remainder_by_zero_integral``, ``test_floor_divide_zero``): PyTorch's CPU
kernels raise ``RuntimeError: ZeroDivisionError`` where NumPy's give 0, for a zero
anywhere in the divisor (a tensor, a 0-d tensor or a number), in every form; a true
division still gives infinities, float remainders NaN; bool operands are refused.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch

CALLS = {
    "fmod": lambda lib, x, z: lib.fmod(x, z),
    "remainder": lambda lib, x, z: lib.remainder(x, z),
    "floordiv operator": lambda lib, x, z: x // z,
    "floor_divide": lambda lib, x, z: lib.floor_divide(x, z),
    "div trunc": lambda lib, x, z: lib.div(x, z, rounding_mode="trunc"),
    "div floor": lambda lib, x, z: lib.div(x, z, rounding_mode="floor"),
    "fmod number": lambda lib, x, z: lib.fmod(x, 0),
    "remainder number": lambda lib, x, z: lib.remainder(x, 0),
    "floordiv number": lambda lib, x, z: x // 0,
    "mod operator": lambda lib, x, z: x % z,
    "remainder of a number": lambda lib, x, z: lib.remainder(5, z),
    "fmod_": lambda lib, x, z: x.fmod_(z),
    "remainder_ number": lambda lib, x, z: x.remainder_(0),
    "fmod 0-d": lambda lib, x, z: lib.fmod(x, lib.tensor(0)),
    "fmod uint8": lambda lib, x, z: lib.fmod(x.abs().byte(), z.byte()),
    "fmod one zero": lambda lib, x, z: lib.fmod(x, lib.tensor([1, 0, 1])),
    "fmod no zero": lambda lib, x, z: lib.fmod(x, lib.tensor([2, -3, 1])),
    "remainder no zero": lambda lib, x, z: lib.remainder(x, lib.tensor([2, -3, 1])),
    "floordiv no zero": lambda lib, x, z: x // lib.tensor([2, -3, 1]),
    "fmod empty": lambda lib, x, z: lib.fmod(x[:0], z[:0]),
    "true div": lambda lib, x, z: lib.div(x, z),
    "float remainder": lambda lib, x, z: lib.remainder(x.double(), z.double()),
    "float floordiv": lambda lib, x, z: x.double() // z.double(),
    "fmod bool": lambda lib, x, z: lib.fmod(x.bool(), z.bool()),
    "remainder bool": lambda lib, x, z: lib.remainder(x.bool(), x.bool()),
    "floordiv bool": lambda lib, x, z: x.bool() // x.bool(),
}


@pytest.mark.parametrize("label", sorted(CALLS))
def test_integer_division_by_zero_matches_pytorch(label, real_torch):
    def run(lib):
        x, z = lib.tensor([3, -4, 5]), lib.zeros(3, dtype=lib.int64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return CALLS[label](lib, x, z)

    try:
        theirs = run(real_torch)
    except Exception as e:
        with pytest.raises(type(e)) as info:
            run(ctorch)
        assert str(info.value) == str(e), label
        return
    ours = run(ctorch)
    assert str(ours.dtype) == str(theirs.dtype), label
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=label)
