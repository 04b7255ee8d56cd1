"""Writing ``-0.0`` into a tensor, against PyTorch 2.13 bit for bit: an integer index,
an index tensor, a list, ``index_fill_`` and ``index_put_`` wrote ``+0.0`` (funcgrad's
compiled ``set`` scatter-added the value into a base of ``+0.0``); slices and fills
already kept the sign."""

from __future__ import annotations

import math

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

_WRITES = {
    "int": lambda T, x, v: x.__setitem__(1, v),
    "negative int": lambda T, x, v: x.__setitem__(-1, v),
    "index tensor": lambda T, x, v: x.__setitem__(T.tensor([0, 2]), v),
    "list": lambda T, x, v: x.__setitem__([1, 2], v),
    "slice": lambda T, x, v: x.__setitem__(slice(1, None), v),
    "index_fill_": lambda T, x, v: x.index_fill_(0, T.tensor([1]), v),
    "index_put_": lambda T, x, v: x.index_put_((T.tensor([2]),), T.tensor(v, dtype=x.dtype)),
    "masked_fill_": lambda T, x, v: x.masked_fill_(T.tensor([True, False, True]), v),
}


@pytest.mark.parametrize("how", _WRITES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("value", [-0.0, 0.0])
def test_signed_zero_written_as_pytorch(how, dtype, value):
    signs = []
    for T in (ctorch, torch):
        x = T.tensor([1.0, 2.0, 3.0], dtype=getattr(T, dtype))
        _WRITES[how](T, x, value)
        signs.append([math.copysign(1.0, v) for v in x.float().tolist()])
    assert signs[0] == signs[1]


def test_zeros_of_both_signs_one_after_the_other():
    # (compat's cache of device scalars keyed 0.0 and -0.0 as one: the first one's sign won)
    for T in (ctorch, torch):
        got = []
        for v in (0.0, -0.0, 0.0, complex(1, 0.0), complex(1, -0.0)):
            x = T.tensor([1.0, 2.0, 3.0], dtype=T.complex64 if type(v) is complex else T.float32)
            x[1:] = v
            got.append(
                [math.copysign(1.0, (t.imag if type(v) is complex else t)) for t in x.tolist()]
            )
        assert got == [
            [1.0, 1.0, 1.0],
            [1.0, -1.0, -1.0],
            [1.0, 1.0, 1.0],
            [1.0, 1.0, 1.0],
            [1.0, -1.0, -1.0],
        ], T
