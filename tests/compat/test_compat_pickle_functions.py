"""``torch.X`` functions pickle by name, as PyTorch's (``pickle.dumps(torch.tanh)``; compat
raised "Can't pickle local object '_unary_float.<locals>.f'" or "not the same object")."""

from __future__ import annotations

import pickle
from types import FunctionType

import pytest

import compat.torch as ctorch
from compat._core import optable

torch = pytest.importorskip("torch")

_NAMESPACES = ("torch", "linalg", "special", "fft")


def _public(module: str) -> dict:
    """Every public function of the namespace (the op table's rows and the rest)."""
    ns = ctorch if module == "torch" else getattr(ctorch, module)
    names = {
        n
        for d in optable.REGISTRY.values()
        if d.function and d.module == module
        for n in (d.name.rpartition(".")[2], *d.aliases)
    }
    if module != "torch":
        names |= {n for n in vars(ns) if not n.startswith("_")}
    return {
        n: getattr(ns, n) for n in sorted(names) if isinstance(getattr(ns, n, None), FunctionType)
    }


@pytest.mark.parametrize("module", _NAMESPACES)
def test_every_row_function_round_trips(module):
    funcs = _public(module)
    assert len(funcs) > 10
    for name, f in funcs.items():
        assert pickle.loads(pickle.dumps(f)) is f, name


@pytest.mark.parametrize(
    "path",
    ["tanh", "sin", "add", "gather", "clamp", "clip", "linalg.inv", "special.erf", "fft.fft"],
)
def test_named_functions_as_pytorch(path):
    """The same names PyTorch pickles, loaded back as the same function, which still computes."""
    for lib in (ctorch, torch):
        f = lib
        for part in path.split("."):
            f = getattr(f, part)
        assert pickle.loads(pickle.dumps(f)) is f
    f = pickle.loads(pickle.dumps(ctorch.tanh))
    assert float(f(ctorch.tensor(0.5))) == pytest.approx(float(torch.tanh(torch.tensor(0.5))))
