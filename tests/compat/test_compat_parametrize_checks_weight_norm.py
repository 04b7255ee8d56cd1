"""``parametrize.register_parametrization`` appending to a parametrized tensor checks the new
parametrization's ``right_inverse`` (one tensor of the tensor's dtype and shape) in PyTorch's
words, and ``parametrizations.weight_norm`` loads a state dict of the old
``nn.utils.weight_norm`` (``weight_g``/``weight_v``): against PyTorch 2.13."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch

_INVERSES = {
    "tuple": lambda x: (x, x),
    "dtype": lambda x: x.double(),
    "shape": lambda x: x[:1],
    "consistent": lambda x: x * 2,
    "not_implemented": None,
}


def _append(lib, kind):
    nn = lib.nn

    class Identity(nn.Module):
        def forward(self, x):
            return x

        def right_inverse(self, x):
            return x

    class Appended(Identity):
        def right_inverse(self, x):
            if _INVERSES[kind] is None:
                raise NotImplementedError
            return _INVERSES[kind](x)

    m = nn.Linear(3, 3)
    lib.nn.utils.parametrize.register_parametrization(m, "weight", Identity())
    try:
        lib.nn.utils.parametrize.register_parametrization(m, "weight", Appended())
    except ValueError as e:
        return str(e), len(m.parametrizations.weight)
    return None, len(m.parametrizations.weight)


@pytest.mark.parametrize("kind", sorted(_INVERSES))
def test_appended_right_inverse_checked(real_torch, kind):
    assert _append(torch, kind) == _append(real_torch, kind)


def _old_state_into_new(lib):
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (the old weight_norm is deprecated)
        old = lib.nn.utils.weight_norm(lib.nn.Linear(4, 5))
    new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 5))
    new.load_state_dict(old.state_dict())
    x = lib.arange(12.0).reshape(3, 4) / 10
    return sorted(new.state_dict()), npv(old(x)), npv(new(x))


def test_weight_norm_loads_the_old_state_dict(real_torch):
    keys, old_out, new_out = _old_state_into_new(torch)
    ref_keys, _, ref_new = _old_state_into_new(real_torch)
    assert keys == ref_keys
    np.testing.assert_allclose(new_out, old_out, rtol=1e-6)
    np.testing.assert_allclose(new_out, ref_new, rtol=1e-6)
