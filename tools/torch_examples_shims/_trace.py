"""Record a program's losses and weights at every ``backward`` call, for step-by-step comparison.

Enabled by ``TORCH_EXAMPLES_TRACE`` (a file path). Each outermost ``Tensor.backward``
call appends one record to that file (pickled, one record after another), taken just
before the backward runs: the loss (the tensor ``backward`` was called on; the sum of
its elements when it is not a scalar) and every parameter of every ``nn.Module`` the
program has made, in module-creation order then ``parameters()`` order, as it stands
after the previous steps' updates. Parameters up to ``FULL`` elements are kept whole,
larger ones as ``SAMPLE`` evenly spaced elements plus their sum, sum of squares and
largest magnitude. ``TORCH_EXAMPLES_TRACE_STEPS=N`` ends the program (exit 0) at the
``N+1``-th backward, after recording it, so record ``k`` holds the weights after ``k``
steps. A final record (loss ``None``) is written at exit. ``TORCH_EXAMPLES_TRACE_GRADS``
adds, after each backward, a record of the parameters' gradients (``"grads"``);
``TORCH_EXAMPLES_TRACE_FULL`` changes ``FULL``.

Library-agnostic: works the same on real PyTorch and on compat.torch.
"""

from __future__ import annotations

import os
import pickle
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

FULL = int(os.environ.get("TORCH_EXAMPLES_TRACE_FULL", "100000"))
SAMPLE = 4096
#: also record every parameter's ``.grad`` after each backward (records with ``"grads"``)
_GRADS = bool(os.environ.get("TORCH_EXAMPLES_TRACE_GRADS"))
_PATH = os.environ.get("TORCH_EXAMPLES_TRACE", "")
_STEPS = int(os.environ.get("TORCH_EXAMPLES_TRACE_STEPS", "0") or 0)
_MODULES: list[weakref.ref] = []
_COUNT = [0]


class StopTracing(SystemExit):
    """Raised at the backward after ``TORCH_EXAMPLES_TRACE_STEPS`` recorded steps."""


def enabled() -> bool:
    """Whether this process records a trace."""
    return bool(_PATH)


def patch_module_class(module_cls: type) -> None:
    """Make ``module_cls.__init__`` remember every module made, in creation order."""
    init = module_cls.__init__
    if getattr(init, "_torch_examples_traced", False):
        return

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        _MODULES.append(weakref.ref(self))
        init(self, *args, **kwargs)

    __init__._torch_examples_traced = True  # type: ignore[attr-defined]
    module_cls.__init__ = __init__  # type: ignore[misc]


def _to_numpy(t: Any) -> np.ndarray:
    t = t.detach()
    if hasattr(t, "cpu"):
        t = t.cpu()
    if "bfloat16" in str(getattr(t, "dtype", "")) or "float16" in str(getattr(t, "dtype", "")):
        t = t.float()
    return np.asarray(t.numpy())


def _parameters() -> list[Any]:
    seen: set[int] = set()
    out = []
    for ref in _MODULES:
        m = ref()
        if m is None:
            continue
        try:
            params = list(m.parameters())
        except Exception:  # a module half-built when its __init__ failed
            continue
        for p in params:
            if id(p) not in seen:
                seen.add(id(p))
                out.append(p)
    return out


def _summary(p: Any) -> dict[str, Any]:
    a = _to_numpy(p).reshape(-1)
    rec: dict[str, Any] = {"shape": tuple(p.shape), "dtype": str(p.dtype)}
    if a.size > FULL:
        idx = np.linspace(0, a.size - 1, SAMPLE).astype(np.int64)
        rec["values"] = a[idx]
        w = a.astype(np.float64)
        rec["sum"], rec["sumsq"] = float(w.sum()), float((w * w).sum())
        rec["maxabs"] = float(np.abs(w).max())
    else:
        rec["values"] = a
    return rec


def record(loss: Any) -> None:
    """Append one record (``loss``: the tensor backward runs on, or None) to the trace file."""
    value = None
    if loss is not None:
        v = _to_numpy(loss).astype(np.float64)
        value = float(v.sum())
    rec = {"k": _COUNT[0], "loss": value, "params": [_summary(p) for p in _parameters()]}
    with open(_PATH, "ab") as f:
        pickle.dump(rec, f)


def record_grads() -> None:
    """Append the parameters' gradients (a ``"grads"`` record; None where a grad is None)."""
    grads = [None if p.grad is None else _summary(p.grad) for p in _parameters()]
    with open(_PATH, "ab") as f:
        pickle.dump({"k": _COUNT[0] - 1, "grads": grads}, f)


def before_backward(tensor: Any) -> None:
    """Record the step that this backward call starts; stop the program after the last one."""
    record(tensor)
    _COUNT[0] += 1
    if _STEPS and _COUNT[0] > _STEPS:
        print(f"[torch_examples] trace: stopping after {_STEPS} steps", flush=True)
        raise StopTracing(0)


def at_exit() -> None:
    """The final record: the weights as the program leaves them."""
    if _PATH and not (_STEPS and _COUNT[0] > _STEPS):
        record(None)


def wrap_backward(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a ``Tensor.backward``) that records a step first (outermost calls only)."""
    depth = [0]

    def backward(self: Any, *args: Any, **kwargs: Any) -> Any:
        if depth[0] == 0:
            before_backward(self)
        depth[0] += 1
        try:
            out = fn(self, *args, **kwargs)
        finally:
            depth[0] -= 1
        if depth[0] == 0 and _GRADS:
            record_grads()
        return out

    backward.__name__ = getattr(fn, "__name__", "backward")
    backward.__doc__ = getattr(fn, "__doc__", None)
    return backward
