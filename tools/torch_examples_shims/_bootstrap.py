"""Run one program under real PyTorch or compat, timing its optimizer steps.

Usage: ``python _bootstrap.py {torch|compat} SCRIPT [ARGS...]``. In ``compat`` mode
``torch`` and ``torch.*`` resolve to ``compat.torch`` and its submodules (the same
module objects). In both modes every ``torch.optim`` optimizer's ``step`` and
``Tensor.backward`` record a wall-clock timestamp; at exit the timestamps go to the
JSON file named by ``TORCH_EXAMPLES_TIMING``. ``TORCH_EXAMPLES_MAX_STEPS`` ends the
program (exit 0) after that many optimizer steps, for programs without an iteration flag;
``TORCH_EXAMPLES_COMPAT_ROOT`` names the funcgrad checkout to import compat from;
``TORCH_EXAMPLES_DEFAULT_DTYPE`` (e.g. ``float64``) sets the default dtype and
``TORCH_EXAMPLES_SEED`` seeds Python's, NumPy's and torch's generators before the
program runs. ``TORCH_EXAMPLES_TRACE`` records losses and weights at every step
(``_trace.py``).
"""

from __future__ import annotations

import atexit
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import runpy
import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import _trace

EVENTS: dict[str, list[float]] = {"step": [], "backward": []}
_DEPTH = {"step": 0, "backward": 0}
_MAX_STEPS = int(os.environ.get("TORCH_EXAMPLES_MAX_STEPS", "0"))


class _StopProgram(SystemExit):
    """Raised after ``TORCH_EXAMPLES_MAX_STEPS`` optimizer steps."""


def _timed(kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``fn`` so that each outermost call appends its end time to ``EVENTS[kind]``."""
    if getattr(fn, "_torch_examples_timed", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _DEPTH[kind] += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            _DEPTH[kind] -= 1
        if _DEPTH[kind] == 0:
            EVENTS[kind].append(time.time())
            if kind == "step" and _MAX_STEPS and len(EVENTS["step"]) >= _MAX_STEPS:
                print(f"[torch_examples] stopping after {_MAX_STEPS} optimizer steps", flush=True)
                raise _StopProgram(0)
        return out

    wrapper._torch_examples_timed = True  # type: ignore[attr-defined]
    return wrapper


def _patch_optim(module: ModuleType) -> None:
    """Time ``step`` of every optimizer class ``torch.optim`` exports."""
    base = getattr(module, "Optimizer", None)
    if base is None:
        return
    for obj in list(vars(module).values()):
        if isinstance(obj, type) and issubclass(obj, base):
            for cls in obj.__mro__:  # the class that defines step may be an unexported base
                if issubclass(cls, base) and "step" in vars(cls):
                    cls.step = _timed("step", vars(cls)["step"])


def _patch_torch(module: ModuleType) -> None:
    """Time ``Tensor.backward``; with ``TORCH_EXAMPLES_NUMPY_LOADS``, allow NumPy arrays in loads."""
    tensor = getattr(module, "Tensor", None)
    if tensor is not None and "backward" in vars(tensor):
        backward = vars(tensor)["backward"]
        if _trace.enabled():
            backward = _trace.wrap_backward(backward)
        tensor.backward = _timed("backward", backward)
    seed = os.environ.get("TORCH_EXAMPLES_SEED")
    if seed and hasattr(module, "manual_seed"):
        module.manual_seed(int(seed))
    dtype = os.environ.get("TORCH_EXAMPLES_DEFAULT_DTYPE")
    if dtype and hasattr(module, "set_default_dtype"):
        module.set_default_dtype(getattr(module, dtype))
    if os.environ.get("TORCH_EXAMPLES_NUMPY_LOADS"):
        import numpy as np

        allowed = [np._core.multiarray._reconstruct, np.ndarray, np.dtype, np.dtypes.Float64DType]
        importlib.import_module(module.__name__ + ".serialization").add_safe_globals(allowed)


def _patch_nn(module: ModuleType) -> None:
    """With a trace on, remember every ``nn.Module`` made (``_trace``)."""
    if _trace.enabled() and isinstance(getattr(module, "Module", None), type):
        _trace.patch_module_class(module.Module)


_PATCHES = {
    "torch": _patch_torch,
    "compat.torch": _patch_torch,
    "torch.nn": _patch_nn,
    "compat.torch.nn": _patch_nn,
    "torch.optim": _patch_optim,
    "compat.torch.optim": _patch_optim,
}


class _PatchingLoader(importlib.abc.Loader):
    """Delegate to the real loader, then apply a patch to the loaded module."""

    def __init__(self, inner: Any, patch: Callable[[ModuleType], None]) -> None:
        self.inner = inner
        self.patch = patch

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        self.patch(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _PatchFinder(importlib.abc.MetaPathFinder):
    """Find the watched modules with the other finders and wrap their loaders."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        patch = _PATCHES.get(name)
        aliased = any(isinstance(f, _AliasFinder) for f in sys.meta_path)
        if patch is None or (aliased and name.startswith("torch")):
            return None
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, _AliasFinder):
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader, patch)
                return spec
        return None


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolve ``torch`` and ``torch.X`` to the module objects ``compat.torch[.X]``."""

    def __init__(self) -> None:
        self.modules: dict[str, ModuleType] = {}

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != "torch" and not name.startswith("torch."):
            return None
        real = "compat." + name
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as exc:
            if exc.name != real:
                raise
            raise ModuleNotFoundError(
                f"No module named {name!r} (compat has no {real})", name=name
            ) from None
        self.modules[name] = module
        return importlib.util.spec_from_loader(name, self, is_package=hasattr(module, "__path__"))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = self.modules[spec.name]
        self.modules[spec.name + ".__spec__"] = module.__spec__  # type: ignore[assignment]
        return module

    def exec_module(self, module: ModuleType) -> None:
        # importlib set __spec__ to the alias's; give the module back its own
        module.__spec__ = self.modules.pop(module.__spec__.name + ".__spec__")  # type: ignore[union-attr,assignment]


def _write_timing() -> None:
    out = os.environ.get("TORCH_EXAMPLES_TIMING")
    if out:
        with open(out, "w") as f:
            json.dump(EVENTS, f)


def main(argv: list[str]) -> None:
    """Install the hooks for ``argv[0]`` (mode) and run ``argv[1]`` as ``__main__``."""
    mode, script, *args = argv
    here = os.path.dirname(os.path.abspath(__file__))
    if mode == "compat":
        repo = os.environ.get("TORCH_EXAMPLES_COMPAT_ROOT") or os.path.dirname(
            os.path.dirname(here)
        )
        sys.path.append(repo)
        sys.meta_path.insert(0, _AliasFinder())
    elif mode != "torch":
        raise SystemExit(f"unknown mode {mode!r}")
    sys.meta_path.insert(0, _PatchFinder())
    atexit.register(_write_timing)
    atexit.register(_trace.at_exit)
    seed = os.environ.get("TORCH_EXAMPLES_SEED")
    if seed:  # for programs that draw from unseeded generators (Python's, NumPy's, torch's)
        import random

        import numpy as np

        random.seed(int(seed))
        np.random.seed(int(seed))
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    sys.path.insert(1, here)  # the torchvision stand-in
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
