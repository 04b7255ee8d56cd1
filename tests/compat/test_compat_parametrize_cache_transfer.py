"""``nn.utils.parametrize``'s ``cached()``, ``transfer_parametrizations_and_params`` and
the pickling/deep-copying of a parametrized module, against real PyTorch 2.13."""

from __future__ import annotations

import copy
import importlib
import pickle

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch


def _parametrize(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.parametrize")


def _modules(lib):
    calls = []

    class Double(lib.nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 2

        def right_inverse(self, x):
            return x / 2

    class Split(lib.nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, x):
            return x * 0.25, x * 0.75

    return calls, Double, Split


def test_cached_as_pytorch(real_torch):
    def run(lib):
        P = _parametrize(lib)
        calls, Double, _ = _modules(lib)
        m = lib.nn.Linear(2, 2)
        P.register_parametrization(m, "weight", Double())
        calls.clear()  # (registration's own checks call it too)
        with P.cached():
            a = m.weight
            with P.cached():
                b = m.weight
            c = m.weight
        inside = (a is b, b is c, len(calls))
        d = m.weight
        return inside, d is a, len(calls)

    assert run(torch) == run(real_torch) == ((True, True, 1), False, 2)


def test_pickling_refused_deepcopy_kept(real_torch):
    def run(lib):
        P = _parametrize(lib)
        _, Double, _ = _modules(lib)
        m = lib.nn.Linear(2, 3)
        P.register_parametrization(m, "weight", Double())
        with pytest.raises(RuntimeError) as err:
            pickle.dumps(m)
        twin = copy.deepcopy(m)
        with lib.no_grad():
            twin.parametrizations.weight.original.fill_(1.0)
        return (
            str(err.value),
            type(twin).__name__,
            npv(twin.weight).tolist(),
            bool((m.weight == twin.weight).all()),
            P.is_parametrized(twin, "weight"),
        )

    mine, theirs = run(torch), run(real_torch)
    assert mine == theirs
    assert mine[0].startswith("Serialization of parametrized modules is only supported")


def test_transfer_parametrizations_and_params_as_pytorch(real_torch):
    def run(lib):
        P = _parametrize(lib)
        _, Double, Split = _modules(lib)
        lib.manual_seed(0)
        src = lib.nn.Linear(3, 2)
        with lib.no_grad():
            src.weight.copy_(lib.arange(6.0).reshape(2, 3))
            src.bias.copy_(lib.tensor([1.0, -1.0]))
        P.register_parametrization(src, "weight", Double())
        P.register_parametrization(src, "bias", Split())
        src.extra = lib.nn.Parameter(lib.ones(2))
        P.register_parametrization(src, "extra", Double())
        dst = lib.nn.Linear(3, 2)
        P.transfer_parametrizations_and_params(src, dst)
        only = lib.nn.Linear(3, 2)
        P.transfer_parametrizations_and_params(src, only, "extra")
        return [
            npv(dst.weight).tolist(),
            npv(dst.bias).tolist(),
            npv(dst.extra).tolist(),
            dst.parametrizations.weight.original is src.parametrizations.weight.original,
            dst.parametrizations.bias.original1 is src.parametrizations.bias.original1,
            sorted(dst.parametrizations),
            sorted(only.parametrizations),
            P.is_parametrized(only, "weight"),
            sorted(dst.state_dict()),
        ]

    mine, theirs = run(torch), run(real_torch)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        if isinstance(a, list) and a and isinstance(a[0], float | list):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b))
        else:
            assert a == b
