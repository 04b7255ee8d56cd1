"""compat's ``nn.init`` initialisers beyond the uniform/normal families (``trunc_normal_``,
``eye_``, ``dirac_``, ``orthogonal_``, ``sparse_``) and the deprecated names without the
underscore, against real PyTorch 2.13: the same seed gives the same values (compat's
generator reproduces PyTorch's stream), and the same checks raise the same errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch


def _init(lib, name, shape, *args, dtype=None, **kwargs):
    lib.manual_seed(7)
    w = lib.empty(*shape, dtype=dtype or lib.float32)
    out = getattr(lib.nn.init, name)(w, *args, **kwargs)
    assert out is w
    return w


CASES = [
    ("trunc_normal_", (40, 30), (), {}),  # [-2, 2] holds most mass: redraws
    ("trunc_normal_", (20, 25), (0.0, 1.0, 2.5, 4.0), {}),  # a narrow tail: rejection
    ("trunc_normal_", (17,), (1.0, 0.5, -1.0, 0.5), {}),
    ("eye_", (3, 5), (), {}),
    ("eye_", (4, 2), (), {}),
    ("dirac_", (4, 3, 5), (), {}),
    ("dirac_", (6, 2, 3, 3), (2,), {}),
    ("dirac_", (3, 4, 2, 3, 4), (), {}),
    ("orthogonal_", (3, 5), (), {}),
    ("orthogonal_", (6, 2, 2), (2.0,), {}),
    ("sparse_", (6, 4), (0.4,), {}),
]


@pytest.mark.parametrize("name,shape,args,kwargs", CASES)
def test_values_match_pytorch(real_torch, name, shape, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _init(torch, name, shape, *args, **kwargs)
        ref = _init(real_torch, name, shape, *args, **kwargs)
    assert tuple(ours.shape) == tuple(ref.shape) and str(ours.dtype) == str(ref.dtype)
    np.testing.assert_allclose(npv(ours), npv(ref), rtol=1e-5, atol=1e-6)


def test_trunc_normal_bounds_and_float64(real_torch):
    ours = _init(torch, "trunc_normal_", (500,), 0.0, 1.0, -0.5, 0.25, dtype=torch.float64)
    ref = _init(real_torch, "trunc_normal_", (500,), 0.0, 1.0, -0.5, 0.25,
                dtype=real_torch.float64)  # fmt: skip
    assert ours.min().item() >= -0.5 and ours.max().item() <= 0.25
    np.testing.assert_allclose(npv(ours), npv(ref), rtol=1e-12)


def test_orthogonal_is_orthogonal():
    w = torch.nn.init.orthogonal_(torch.empty(4, 7), gain=3.0)
    np.testing.assert_allclose(npv(w @ w.t()), 9.0 * np.eye(4), atol=1e-4)


def test_init_keeps_requires_grad_and_records_no_grad():
    w = torch.nn.Parameter(torch.empty(3, 3))
    for fn in (torch.nn.init.eye_, torch.nn.init.orthogonal_, torch.nn.init.trunc_normal_):
        fn(w)
        assert w.requires_grad and w.grad_fn is None


@pytest.mark.parametrize(
    "name,shape,args",
    [
        ("eye_", (2, 2, 2), ()),
        ("eye_", (3,), ()),
        ("dirac_", (3, 3), ()),
        ("dirac_", (2, 2, 2, 2, 2, 2), ()),
        ("dirac_", (5, 2, 3), (2,)),
        ("orthogonal_", (4,), ()),
        ("sparse_", (2, 3, 4), (0.1,)),
    ],
)
def test_errors_match_pytorch(real_torch, name, shape, args):
    with pytest.raises(ValueError) as ref:
        getattr(real_torch.nn.init, name)(real_torch.empty(*shape), *args)
    with pytest.raises(ValueError) as ours:
        getattr(torch.nn.init, name)(torch.empty(*shape), *args)
    assert str(ours.value) == str(ref.value)


@pytest.mark.parametrize("old", ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform",
                                 "xavier_normal", "kaiming_uniform", "kaiming_normal",
                                 "orthogonal", "sparse"])  # fmt: skip
def test_deprecated_names_warn_and_fill(real_torch, old):
    args = {"constant": (0.5,), "sparse": (0.3,)}.get(old, ())
    shape = (4, 3, 3) if old == "dirac" else (4, 3)
    got = {}
    for lib in (torch, real_torch):
        lib.manual_seed(1)
        w = lib.empty(*shape)
        with pytest.warns(FutureWarning) as rec:
            getattr(lib.nn.init, old)(w, *args)
        got[lib] = (str(rec[0].message), npv(w))
    assert got[torch][0] == got[real_torch][0]
    np.testing.assert_allclose(got[torch][1], got[real_torch][1], rtol=1e-5, atol=1e-6)
