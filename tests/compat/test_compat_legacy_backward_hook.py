"""``Module.register_backward_hook`` (PyTorch's deprecated, non-full backward hook)
against PyTorch 2.13: the hook sees the gradients of the last autograd node of the
output's first tensor (found through dicts and tuples), a non-``None`` result replaces
them, ``remove()`` unregisters it, and mixing it with full backward hooks is an error."""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]


def _modules(lib: Any) -> dict:
    class DictOut(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            return {"skip": 1, "out": (x * 3.0).sigmoid()}

    class TupleOut(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.l = lib.nn.Linear(3, 2).double()

        def forward(self, x: Any) -> Any:
            return (self.l(x).tanh(), x)

    return {"dict": DictOut, "tuple": TupleOut}


def _first(out: Any) -> Any:
    return out["out"] if isinstance(out, dict) else out[0]


@pytest.mark.parametrize("kind", ["dict", "tuple"])
@pytest.mark.parametrize("replace", [False, True])
def test_hook_sees_the_last_node(kind: str, replace: bool) -> None:
    x = np.random.default_rng(0).standard_normal((2, 3))
    results = []
    for lib in LIBS:
        lib.manual_seed(0)
        m = _modules(lib)[kind]()
        if kind == "tuple":
            with lib.no_grad():
                m.l.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 7))
        seen = []

        def hook(mod: Any, gin: tuple, gout: tuple, seen: list = seen, m: Any = m) -> Any:
            assert mod is m
            seen.append([g.numpy().copy() for g in gin] + [g.numpy().copy() for g in gout])
            return tuple(g * 2 for g in gin) if replace else None

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.register_backward_hook(hook)
            t = lib.tensor(x, requires_grad=True)
            _first(m(t)).sum().backward()
        results.append((seen, t.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    assert len(ours) == len(theirs) == 1
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-12)


def test_remove_mixing_and_pickle() -> None:
    for lib in LIBS:
        calls = []
        m = lib.nn.Linear(2, 2)
        handle = m.register_backward_hook(lambda *a: calls.append(1))
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
            m.register_full_backward_hook(lambda *a: None)
        handle.remove()
        m(lib.ones(1, 2)).sum().backward()
        assert calls == []
        full = lib.nn.Linear(2, 2)
        full.register_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
            full.register_backward_hook(lambda *a: None)
    m = ctorch.nn.Linear(2, 2)
    del m.__dict__["_non_full_backward_hooks"], m.__dict__["_is_full_backward_hook"]
    m = pickle.loads(pickle.dumps(m))  # a module pickled before these existed
    m(ctorch.ones(1, 2)).sum().backward()
