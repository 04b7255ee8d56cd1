"""The hook-based ``weight_norm``/``spectral_norm`` of a lazy module's uninitialised
weight, refused with PyTorch 2.13's ``ValueError`` (compat failed deeper, on its shape)."""

from __future__ import annotations

import warnings

import pytest

import compat.torch as torch


@pytest.mark.parametrize("fn", ["weight_norm", "spectral_norm"])
def test_uninitialised_weight_refused_as_pytorch(real_torch, fn):
    def run(lib):
        with warnings.catch_warnings():  # (lazy modules' and the old weight_norm's)
            warnings.simplefilter("ignore")
            m = lib.nn.LazyLinear(7)
            with pytest.raises(ValueError) as err:
                getattr(lib.nn.utils, fn)(m)
        return str(err.value), sorted(n for n, _ in m.named_parameters())

    mine = run(torch)
    assert mine == run(real_torch)
    assert "can't have uninitialized parameters" in mine[0]
