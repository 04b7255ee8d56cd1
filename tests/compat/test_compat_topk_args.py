"""``topk`` refuses a bool ``k`` or ``dim`` as PyTorch 2.13's parser does (compat read
``q.topk(4, True)`` as ``dim=1``)."""

from __future__ import annotations

import pytest
from torch_oracle import import_real_torch, outcome

import compat.torch as ct

real = import_real_torch()

CALLS = {
    "method_bool_dim": lambda t: t.ones(3, 3).topk(2, True)[0],
    "function_bool_dim": lambda t: t.topk(t.ones(3, 3), 2, True)[0],
    "keyword_bool_dim": lambda t: t.ones(3, 3).topk(2, dim=True)[0],
    "bool_k": lambda t: t.ones(3, 3).topk(True)[0],
    "int_dim": lambda t: t.arange(9.0).reshape(3, 3).topk(2, 0)[0],
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_topk_arguments(name: str) -> None:
    got, want = outcome(ct, CALLS[name]), outcome(real, CALLS[name])
    if isinstance(want[1], str):  # the same error type; PyTorch's words less the position
        assert got[0] == want[0] and got[1] == want[1].replace(" (position 2)", "").replace(
            " (position 3)", ""
        ).replace(" (position 1)", "")
        return
    assert got[:2] == want[:2]
    assert (got[2] == want[2]).all()
