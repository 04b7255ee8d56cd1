"""The model examples (examples/torch_*.py) train identically on compat.torch and real PyTorch.

Each example is written once against a ``torch`` module argument. The initial weights
come from real PyTorch (its own initialisers and RNG), are copied into both libraries as
NumPy arrays, and the synthetic data and noise come from NumPy, so the two runs must give
the same loss at every step (float32; rtol 1e-4).
"""

from __future__ import annotations

import importlib.util
import pathlib
from collections import deque
from types import ModuleType

import numpy as np
import pytest

import compat.torch as ctorch

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _state(model) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def _initial_weights(real_torch, example: ModuleType, name: str):
    real_torch.manual_seed(0)
    if name == "torch_dcgan":
        net_g, net_d = example.build_models(real_torch)
        return {"G": _state(net_g), "D": _state(net_d)}
    return _state(example.build_model(real_torch))


@pytest.mark.parametrize(
    ("name", "steps"),
    [("torch_lstm_lm", 6), ("torch_small_gpt", 6), ("torch_vae", 6), ("torch_dcgan", 4)],
)
def test_example_matches_real_pytorch_step_by_step(real_torch, name, steps):
    example = _load(name)
    init = _initial_weights(real_torch, example, name)
    ours = np.asarray(example.main(ctorch, steps=steps, init=init), dtype=np.float64)
    theirs = np.asarray(example.main(real_torch, steps=steps, init=init), dtype=np.float64)
    assert ours.shape == theirs.shape and len(ours) == steps
    assert np.all(np.isfinite(ours))
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)
    # the step changes the weights: later losses differ from the first
    assert not np.allclose(ours[1:], ours[0])


def test_examples_train_when_run_longer(real_torch):
    """Enough steps for the loss to fall (the examples learn, not only agree)."""
    gpt = _load("torch_small_gpt")
    losses = gpt.main(ctorch, steps=12, init=_initial_weights(real_torch, gpt, "torch_small_gpt"))
    assert np.mean(losses[-3:]) < 0.8 * np.mean(losses[:3])


@pytest.mark.parametrize(
    "make", [lambda d: d([1.0, -2.5]), lambda d: d([d([1, 2]), (3, 4)]), lambda d: range(4)]
)
def test_tensor_from_any_python_sequence(lib, make):
    """torch.tensor walks any sequence (pytorch/examples' REINFORCE passes a deque)."""
    t = lib.tensor(make(deque))
    ref = np.asarray([list(r) if isinstance(r, deque | tuple) else r for r in make(list)])
    np.testing.assert_array_equal(t.numpy(), ref)
    assert str(t.dtype).endswith("float32" if ref.dtype.kind == "f" else "int64")


def test_tensor_from_a_string_is_a_type_error(lib):
    with pytest.raises(TypeError):
        lib.tensor("abc")
