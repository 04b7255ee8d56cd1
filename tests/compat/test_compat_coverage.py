"""The generated "PyTorch API coverage" page is current, and compat.torch serves its lazy submodules."""

from __future__ import annotations

import importlib
import pathlib
import pkgutil
import subprocess
import sys
import types

import pytest

import compat.torch as ctorch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import torch_coverage  # noqa: E402


def test_page_is_current(real_torch):
    """The committed page equals a fresh rendering against real PyTorch."""
    fresh = torch_coverage.render(real_torch)
    committed = torch_coverage.PAGE.read_text() if torch_coverage.PAGE.exists() else ""
    assert committed == fresh, (
        "docs/compat_coverage.md is out of date; regenerate it from the repository root with: "
        f"{torch_coverage.COMMAND}"
    )


def test_public_name_rules(real_torch):
    """The documented rules pick PyTorch's API and drop imports, bindings and stubs."""
    F = torch_coverage.public_names("torch.nn.functional", real_torch)
    assert {"relu", "conv2d", "cross_entropy", "scaled_dot_product_attention"} <= set(F)
    assert not {"Callable", "Optional", "DType", "BroadcastingList2"} & set(F)
    assert not {"handle_torch_function", "has_torch_function"} & set(F)
    top = torch_coverage.public_names("torch", real_torch)
    assert {"tensor", "float32", "set_default_dtype", "strided", "pi"} <= set(top)
    assert not {"AliasDb", "Graph", "eig", "symeig", "cudnn_convolution", "abs_"} & set(top)
    T = torch_coverage.public_names("torch.Tensor", real_torch)
    assert {"add", "add_", "shape", "__add__", "__radd__", "__getitem__", "__len__"} <= set(T)
    assert not {"__init__", "__repr__", "__torch_function__", "eig", "reinforce"} & set(T)
    sched = torch_coverage.public_names("torch.optim.lr_scheduler", real_torch)
    assert "StepLR" in sched and "Optimizer" not in sched
    fft = torch_coverage.public_names("torch.fft", real_torch)
    assert "hfft2" in fft and "Tensor" not in fft
    assert "LinAlgError" in torch_coverage.public_names("torch.linalg", real_torch)
    assert "no_grad" in torch_coverage.public_names("torch.autograd", real_torch)
    assert torch_coverage.deprecated("upsample", real_torch.nn.functional.upsample)
    assert not torch_coverage.deprecated("interpolate", real_torch.nn.functional.interpolate)


def test_presence_check():
    """Present needs the attribute and the same kind; an ``object`` dunder is not present."""

    class Fake:
        def add(self):
            pass

        shape = property(lambda self: ())

    has = torch_coverage._compat_has
    assert has(Fake, "add", lambda: 0, True) == "present"
    assert has(Fake, "shape", property(lambda s: 0), True) == "present"
    assert has(Fake, "shape", lambda: 0, True) == "kind"
    assert has(Fake, "__eq__", lambda: 0, True) == "missing"
    assert has(Fake, "sub", lambda: 0, True) == "missing"


@pytest.mark.parametrize("name", ctorch._LAZY)
def test_lazy_names_resolve(name):
    """Every name in ``_LAZY`` is served by attribute access as that submodule."""
    mod = getattr(ctorch, name)
    assert isinstance(mod, types.ModuleType)
    assert mod is importlib.import_module(f"compat.torch.{name}")


def test_public_submodules_reachable():
    """Every public submodule of ``compat.torch`` is reachable as ``compat.torch.<name>``."""
    names = [m.name for m in pkgutil.iter_modules(ctorch.__path__) if not m.name.startswith("_")]
    assert names
    unreachable = [n for n in names if not isinstance(getattr(ctorch, n, None), types.ModuleType)]
    assert not unreachable, f"add these to compat.torch._LAZY: {unreachable}"
    with pytest.raises(AttributeError):
        ctorch.no_such_submodule  # noqa: B018


def test_compared_namespaces_reachable_in_fresh_interpreter():
    """A compared namespace that compat has as a module is reachable as ``torch.a.b`` right
    after ``import compat.torch as torch``, with no further import (as real code uses it)."""
    code = (
        "import importlib.util, sys\n"
        "import compat.torch as torch\n"
        f"spaces = {torch_coverage.NAMESPACES[2:]!r}\n"
        "bad = []\n"
        "for ns in spaces:\n"
        "    if importlib.util.find_spec('compat.' + ns) is None:\n"
        "        continue\n"
        "    obj = torch\n"
        "    for part in ns.split('.')[1:]:\n"
        "        obj = getattr(obj, part, None)\n"
        "    if obj is None:\n"
        "        bad.append(ns)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "", f"not reachable by attribute access: {out.stdout.strip()}"
