"""``nn.functional.grouped_mm`` against PyTorch 2.13 (CPU): the four operand forms,
values and gradients of both operands (rows/columns past ``offs[-1]``, uninitialised in
PyTorch, are compared as zeros on compat's side only), bfloat16, and the checks."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

RNG = np.random.default_rng(0)


def _col_major(lib, x):
    """``x`` in the column-major layout PyTorch's kernel wants for ``mat_b``."""
    return lib.tensor(np.swapaxes(x, -1, -2).copy()).transpose(-2, -1)


FORMS = {
    "2d_3d": (RNG.normal(size=(9, 8)), RNG.normal(size=(3, 8, 4)), [2, 5, 7]),
    "3d_2d": (RNG.normal(size=(3, 4, 8)), RNG.normal(size=(8, 16)), [4, 8, 12]),
    "2d_2d": (RNG.normal(size=(4, 16)), RNG.normal(size=(16, 4)), [4, 12]),
    "3d_3d": (RNG.normal(size=(2, 4, 8)), RNG.normal(size=(2, 8, 4)), None),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_forms(form, real_torch):
    a0, b0, ends = FORMS[form]
    results = []
    for lib in (real_torch, ctorch):
        a = lib.tensor(a0, dtype=lib.float32).requires_grad_()
        b = _col_major(lib, b0.astype(np.float32)).detach().requires_grad_()
        offs = None if ends is None else lib.tensor(ends, dtype=lib.int32)
        y = lib.nn.functional.grouped_mm(a, b, offs=offs)
        keep = y
        if form == "2d_3d":
            keep = y[: ends[-1]]
        elif form == "3d_2d":
            keep = y[:, : ends[-1]]
        w = lib.tensor(
            np.cos(np.arange(keep.numel())).reshape(tuple(keep.shape)), dtype=lib.float32
        )
        ga, gb = (g.numpy() for g in lib.autograd.grad((keep * w).sum(), (a, b)))
        if form == "2d_3d":  # (PyTorch leaves the gradient past offs[-1] uninitialised too)
            ga = ga[: ends[-1]]
        elif form == "3d_2d":
            gb = gb[:, : ends[-1]]
        elif form == "2d_2d":
            ga, gb = ga[:, : ends[-1]], gb[: ends[-1]]
        results.append((keep.detach().numpy(), ga, gb, tuple(y.shape)))
        if lib is ctorch and keep is not y:
            rest = y[ends[-1] :] if form == "2d_3d" else y[:, ends[-1] :]
            assert not rest.detach().numpy().any()
    for c, t in zip(results[1][:3], results[0][:3]):
        np.testing.assert_allclose(c, t, rtol=1e-5, atol=1e-5)
    assert results[1][3] == results[0][3]


def test_bfloat16(real_torch):
    a0, b0, ends = FORMS["2d_3d"]
    outs = []
    for lib in (real_torch, ctorch):
        a = lib.tensor(a0, dtype=lib.float32).bfloat16()
        b = _col_major(lib, b0.astype(np.float32)).bfloat16()
        y = lib.nn.functional.grouped_mm(a, b, offs=lib.tensor(ends, dtype=lib.int32))
        assert str(y.dtype) == "torch.bfloat16"
        outs.append(y[: ends[-1]].float().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: ((lib.ones(7, 8), lib.ones(2, 8, 4)), {"offs": lib.tensor([2, 5])}),
        lambda lib: (
            (lib.ones(7, 8), lib.ones(2, 8, 4)),
            {"offs": lib.tensor([2, 5, 6], dtype=lib.int32)},
        ),
        lambda lib: (
            (lib.ones(7, 8), lib.ones(2, 8, 4)),
            {"offs": lib.tensor([[2, 5]], dtype=lib.int32)},
        ),
        lambda lib: ((lib.ones(7, 8), lib.ones(2, 8, 4)), {}),
        lambda lib: (
            (lib.ones(7, 8, dtype=lib.float64), lib.ones(2, 8, 4)),
            {"offs": lib.tensor([2, 5], dtype=lib.int32)},
        ),
        lambda lib: (
            (lib.ones(7), lib.ones(2, 8, 4)),
            {"offs": lib.tensor([2, 5], dtype=lib.int32)},
        ),
        lambda lib: (
            (lib.ones(7, 8), lib.ones(2, 8, 4)),
            {"offs": lib.tensor([2, 5], dtype=lib.int32), "bias": lib.ones(4)},
        ),
    ],
)
def test_checks(make, real_torch):
    msgs = []
    for lib in (real_torch, ctorch):
        args, kw = make(lib)
        with pytest.raises(RuntimeError) as e:
            lib.nn.functional.grouped_mm(*args, **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
