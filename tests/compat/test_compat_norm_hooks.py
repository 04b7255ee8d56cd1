"""The hook-based ``nn.utils.weight_norm``/``spectral_norm`` (and their ``remove_*``),
``nn.LazyLinear`` with ``UninitializedParameter``, and ``F.pdist``/``torch.pdist``,
against PyTorch 2.13: values and gradients from the same weights, the parameters and
buffers each leaves, ``state_dict`` keys and metadata, the older checkpoint layout
``spectral_norm`` migrates, and the errors."""

from __future__ import annotations

import copy
import pickle
import warnings
from typing import Any

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]


def _linear(lib: Any, w: np.ndarray, b: np.ndarray) -> Any:
    m = lib.nn.Linear(w.shape[1], w.shape[0]).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(w))
        m.bias.copy_(lib.tensor(b))
    return m


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_values_and_gradients(dim: Any) -> None:
    rng = np.random.default_rng(0)
    w, b, x = rng.standard_normal((5, 4)), rng.standard_normal(5), rng.standard_normal((3, 4))
    results = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            m = lib.nn.utils.weight_norm(_linear(lib, w, b), dim=dim)
        assert any(issubclass(x.category, FutureWarning) for x in ws)
        out = m(lib.tensor(x))
        (out * out).sum().backward()
        names = sorted(n for n, _ in m.named_parameters())
        res = [names, npv(out), npv(m.weight_g), npv(m.weight_g.grad), npv(m.weight_v.grad)]
        m = lib.nn.utils.remove_weight_norm(m)
        res += [sorted(n for n, _ in m.named_parameters()), npv(m.weight)]
        results.append(res)
    ours, theirs = results
    assert ours[0] == theirs[0] == ["bias", "weight_g", "weight_v"]
    assert ours[5] == theirs[5] == ["bias", "weight"]
    for a, b in zip(ours[1:5] + ours[6:], theirs[1:5] + theirs[6:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_weight_norm_errors_pickle_and_rnn() -> None:
    warnings.simplefilter("ignore", FutureWarning)
    for lib in LIBS:
        m = lib.nn.utils.weight_norm(lib.nn.Linear(2, 3))
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same"):
            lib.nn.utils.weight_norm(m)
        m = pickle.loads(pickle.dumps(m))
        assert type(m).__name__ == "Linear" and hasattr(m, "weight_g")
        with pytest.raises(ValueError, match="weight_norm of 'bias' not found in"):
            lib.nn.utils.remove_weight_norm(m, "bias")
        lstm = lib.nn.utils.weight_norm(lib.nn.LSTM(4, 4), name="weight_ih_l0")
        flat = [isinstance(p, lib.nn.Parameter) for p in lstm._flat_weights]
        assert flat == [False, True, True, True]


def _spectral_pair(seed: int, dim: Any = None, conv: bool = False) -> list:
    """The same spectral-normalised layer in both libraries (compat's random start of
    ``u``/``v`` replaced by PyTorch's)."""
    mods = []
    for lib in LIBS:
        lib.manual_seed(seed)
        m = (lib.nn.ConvTranspose2d(3, 4, (2, 3)) if conv else lib.nn.Linear(5, 7)).double()
        mods.append(lib.nn.utils.spectral_norm(m, dim=dim))
    ours, theirs = mods
    with ctorch.no_grad():
        for name in ("weight_orig", "bias", "weight_u", "weight_v"):
            getattr(ours, name).copy_(ctorch.tensor(npv(getattr(theirs, name))))
    return mods


@pytest.mark.parametrize("conv", [False, True])
def test_spectral_norm_training_and_eval(conv: bool) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 5) if conv else (3, 5))
    results = []
    for lib, m in zip(LIBS, _spectral_pair(0, conv=conv)):
        assert sorted(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
        assert m.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
        outs = [m(lib.tensor(x)) for _ in range(3)]
        m.eval()
        outs.append(m(lib.tensor(x)))
        sum(o.sum() for o in outs).backward()
        res = [npv(o) for o in outs] + [npv(m.weight_u), npv(m.weight_v), npv(m.weight_orig.grad)]
        m = lib.nn.utils.remove_spectral_norm(m)
        res.append(npv(m.weight))
        assert sorted(m._parameters) == ["bias", "weight"] and not m._buffers
        results.append(res)
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_spectral_norm_loads_a_checkpoint_without_version() -> None:
    """The version-less layout (``weight`` saved, no ``weight_v``): ``v`` is solved for."""
    x = np.random.default_rng(2).standard_normal((2, 5))
    results = []
    for lib, m in zip(LIBS, _spectral_pair(3)):
        for _ in range(3):
            m(lib.tensor(x))
        sd = copy.deepcopy(m.state_dict())
        del sd._metadata[""]["spectral_norm"]
        del sd["weight_v"]
        sd["weight"] = m.weight.detach().clone()
        fresh = _spectral_pair(4)[LIBS.index(lib)]
        fresh.load_state_dict(sd)
        fresh.eval()
        results.append([npv(fresh.weight_v), npv(fresh(lib.tensor(x)))])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_spectral_norm_errors() -> None:
    for lib in LIBS:
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(2, 3))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(m)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(2, 3), n_power_iterations=0)
        with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in"):
            lib.nn.utils.remove_spectral_norm(m, "bias")
        with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(2, 3, bias=False), name="bias")
        assert type(pickle.loads(pickle.dumps(m))).__name__ == "Linear"


@pytest.mark.parametrize("p", [0, 1, 2, 0.5, 1.5, 3, float("inf")])
@pytest.mark.parametrize("shape", [(4, 5), (1, 3), (4, 0), (3, 2)])
def test_pdist(p: float, shape: tuple) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    if shape == (3, 2):
        x[2] = x[0]  # a zero distance: gradient 0 there, not NaN
    w = rng.standard_normal(shape[0] * (shape[0] - 1) // 2)
    results = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.pdist(t, p)
        (out * lib.tensor(w)).sum().backward()
        results.append((npv(out), npv(t.grad)))
        assert type(lib.pdist(t, p)).__name__ == "Tensor"
    for a, b in zip(*results):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "make", [lambda lib: lib.ones(3), lambda lib: lib.ones(2, 2, 2), lambda lib: lib.ones(3, 2, dtype=lib.long)]
)  # fmt: skip
def test_pdist_errors(make: Any) -> None:
    msgs = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            lib.pdist(make(lib))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        ctorch.pdist(ctorch.ones(3, 2), -1)


def test_lazy_linear() -> None:
    warnings.simplefilter("ignore", UserWarning)
    x = np.random.default_rng(6).standard_normal((2, 3))
    results = []
    for lib in LIBS:
        m = lib.nn.LazyLinear(4)
        assert isinstance(m.weight, lib.nn.parameter.UninitializedParameter)
        assert isinstance(m.weight, lib.nn.Parameter) and m.has_uninitialized_params()
        copied = copy.deepcopy(m)
        assert isinstance(copied.bias, lib.nn.parameter.UninitializedParameter)
        out = m(lib.tensor(x, dtype=lib.float32))
        assert type(m) is lib.nn.Linear and type(m.weight) is lib.nn.Parameter
        assert not m._forward_pre_hooks and not m._load_state_dict_pre_hooks
        copied.load_state_dict(m.state_dict())  # materialises from the checkpoint's shapes
        assert type(copied.weight) is lib.nn.Parameter
        out2 = copied(lib.tensor(x, dtype=lib.float32))
        results.append(
            (tuple(m.weight.shape), m.in_features, out.shape, np.allclose(npv(out), npv(out2)))
        )
        no_bias = lib.nn.LazyLinear(2, bias=False)
        no_bias(lib.ones(1, 5))
        assert no_bias.bias is None and tuple(no_bias.weight.shape) == (2, 5)
    assert results[0] == results[1]
    assert results[0][3]
