"""``torch.bfloat16`` against real PyTorch: the dtype, promotion, limits, printing,
conversions, autograd, a module's training step and files saved by either library.
(Every op-table row in bfloat16 is checked in ``test_compat_optable.py``.)"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch

FLOATS = ["bfloat16", "float16", "float32", "float64"]
OTHERS = ["int64", "int32", "uint8", "bool", "complex64"]


def test_dtype_object(lib):
    d = lib.bfloat16
    assert (repr(d), d.is_floating_point, d.is_complex, d.is_signed, d.itemsize) == (
        "torch.bfloat16",
        True,
        False,
        True,
        2,
    )
    assert lib.tensor(1.0).bfloat16().dtype == d
    assert lib.ones(2, dtype=d).type() == "torch.BFloat16Tensor"
    assert lib.BFloat16Tensor([1.5]).dtype == d
    assert lib.ones(2).to(d).is_floating_point()


@pytest.mark.parametrize(("a", "b"), list(itertools.product(["bfloat16"], FLOATS + OTHERS)))
def test_promotion(a, b, real_torch):
    def table(lib):
        x, y = getattr(lib, a), getattr(lib, b)
        out = [str(lib.promote_types(x, y)), str(lib.promote_types(y, x))]
        t, u = lib.ones(2, dtype=x), lib.ones(2, dtype=y)
        out += [str((t + u).dtype), str((u * t).dtype), str((t + lib.ones((), dtype=y)).dtype)]
        out += [str((t * 2).dtype), str((t * 2.5).dtype), str((lib.ones((), dtype=x) * u).dtype)]
        return out

    assert table(ctorch) == table(real_torch)


@pytest.mark.parametrize("name", FLOATS + ["complex64", "complex128"])
def test_finfo(name, real_torch):
    ours, theirs = ctorch.finfo(getattr(ctorch, name)), real_torch.finfo(getattr(real_torch, name))
    for f in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, f) == getattr(theirs, f), (name, f)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name, real_torch):
    ours, theirs = ctorch.iinfo(getattr(ctorch, name)), real_torch.iinfo(getattr(real_torch, name))
    assert (ours.bits, ours.max, ours.min, ours.dtype, repr(ours)) == (
        theirs.bits,
        theirs.max,
        theirs.min,
        theirs.dtype,
        repr(theirs),
    )


def test_limits_errors_and_default(real_torch):
    assert repr(ctorch.finfo()) == repr(real_torch.finfo())
    for lib in (ctorch, real_torch):
        with pytest.raises(TypeError, match="requires a floating point input type"):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError, match="requires an integer input type"):
            lib.iinfo(lib.bfloat16)


def test_values_printing_and_conversions(real_torch):
    vals = [1 / 3, -2.71828, 1e-3, 300.7, 65504.0, 1e30]
    outs = []
    for lib in (ctorch, real_torch):
        t = lib.tensor(vals, dtype=lib.bfloat16)
        outs.append((repr(t), str(t * 3), t.tolist(), t[1].item(), repr(t[0]), t.float().tolist()))
        outs.append(repr(lib.tensor(vals).to(lib.bfloat16).to(lib.float64)))
        with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
            t.numpy()
    assert outs[:2] == outs[2:]


def test_autograd_and_training_step_match_pytorch(real_torch):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    results = []
    for lib in (ctorch, real_torch):
        m = lib.nn.Linear(4, 3)
        m.load_state_dict({"weight": lib.tensor(w), "bias": lib.tensor(b)})
        m = m.bfloat16()
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = lib.nn.functional.gelu(m(lib.tensor(x).bfloat16())).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert m.weight.dtype == lib.bfloat16 and m.weight.grad.dtype == lib.bfloat16
        results.append((losses, npv(m.weight.float()), npv(m.weight.grad.float())))
    (l0, w0, g0), (l1, w1, g1) = results
    # the first loss to one bfloat16 ulp; later steps compound one-ulp differences of the
    # update's rounding order, so they get a few ulps
    np.testing.assert_allclose(l0[0], l1[0], rtol=2**-7)
    np.testing.assert_allclose(l0, l1, rtol=2**-5)
    np.testing.assert_allclose(w0, w1, rtol=2**-6, atol=2**-6)
    np.testing.assert_allclose(g0, g1, rtol=2**-4, atol=2**-6)


def test_bfloat16_files_both_ways(tmp_path, real_torch):
    vals = np.linspace(-3, 3, 7, dtype=np.float32)
    real_torch.save({"w": real_torch.tensor(vals).bfloat16()}, tmp_path / "r.pt")
    got = ctorch.load(tmp_path / "r.pt")["w"]
    assert got.dtype == ctorch.bfloat16
    assert got.tolist() == real_torch.tensor(vals).bfloat16().tolist()
    ctorch.save({"w": ctorch.tensor(vals).bfloat16()}, tmp_path / "c.pt")
    back = real_torch.load(tmp_path / "c.pt")["w"]
    assert back.dtype == real_torch.bfloat16
    assert back.tolist() == got.tolist()


def test_random_draws_follow_pytorchs_stream(real_torch):
    def draws(lib):
        lib.manual_seed(3)
        out = [lib.rand(5, dtype=lib.bfloat16).tolist(), lib.randn(8, dtype=lib.bfloat16).tolist()]
        out.append(lib.empty(7, dtype=lib.bfloat16).uniform_(-1, 1).tolist())
        out.append(lib.nn.Linear(3, 2).bfloat16().weight.tolist())
        return out

    assert draws(ctorch) == draws(real_torch)
