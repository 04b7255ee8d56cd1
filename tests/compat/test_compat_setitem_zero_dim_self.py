"""``x[idx] = v`` with ``v`` a 0-d view of ``x``'s own memory: PyTorch fills the indexed
part with ``v``'s number (``fill_`` on a basic index, ``masked_fill_`` on one bool mask),
so no overlap is refused, also when ``x`` is itself a view (compat refused those as an
overlap); list and integer-tensor indices stay refused. Real PyTorch is the oracle."""

from __future__ import annotations

import pytest
from torch_oracle import error_of, import_real_torch

import compat.torch as ct

real = import_real_torch()

BASES = {
    "plain": lambda lib: lib.arange(12.0).view(3, 4).clone(),
    "rows-view": lambda lib: lib.arange(24.0).view(6, 4)[1:4],
    "transposed": lambda lib: lib.arange(12.0).view(4, 3).t(),
    "unsqueezed": lambda lib: lib.arange(13.0)[1:].view(3, 4).unsqueeze(0)[0],
}
WRITES = {
    "int": lambda lib, x, v: x.__setitem__(0, v),
    "ints": lambda lib, x, v: x.__setitem__((1, 2), v),
    "ellipsis": lambda lib, x, v: x.__setitem__(..., v),
    "slice": lambda lib, x, v: x.__setitem__((slice(None), slice(1, 3)), v),
    "mask": lambda lib, x, v: x.__setitem__(x > 6, v),
    "row-mask": lambda lib, x, v: x.__setitem__(lib.tensor([True, False, True]), v),
    "int-and-mask": lambda lib, x, v: x.__setitem__((0, lib.tensor([True, False, True, True])), v),
    "list": lambda lib, x, v: x.__setitem__([0, 2], v),
    "int-tensor": lambda lib, x, v: x.__setitem__(lib.tensor([1]), v),
    "0-d mask": lambda lib, x, v: x.__setitem__(lib.tensor(True), v),
}


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("base", list(BASES))
@pytest.mark.parametrize("value", ["element", "one-element"])
def test_zero_dim_value_of_self(base, write, value):
    def run(lib):
        x = BASES[base](lib)
        v = x[1, 1] if value == "element" else x[1, 1:2].view(1, 1)  # (leading 1s dropped)
        err = error_of(lambda: WRITES[write](lib, x, v))
        return err if err != "no error" else x.tolist()

    assert run(ct) == run(real)


@pytest.mark.parametrize("own", [False, True])
@pytest.mark.parametrize("write", ["int", "ellipsis", "mask"])
def test_gradient_through_a_filled_view(write, own):
    """The fill's gradient: to a 0-d value computed from ``x``, or ``x``'s own element."""

    def run(lib):
        w = lib.arange(24.0).view(6, 4).requires_grad_()
        s = lib.tensor(2.5, requires_grad=True)
        base = w * 1.0
        x = base[1:4]
        WRITES[write](lib, x, x[2, 3] if own else x[2, 3] + s)
        (base * lib.arange(24.0).view(6, 4)).sum().backward()
        return base.tolist(), w.grad.tolist(), None if s.grad is None else s.grad.tolist()

    assert run(ct) == run(real)
