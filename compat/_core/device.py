"""``torch.device`` and where compat tensors live.

A compat tensor lives where its ``jax.Array`` lives: jax's CPU device is PyTorch's
``cpu``, jax's GPU devices (``jax.devices('gpu')``) are ``cuda:0``, ``cuda:1``, ... .
Tensors are made on the CPU, as in PyTorch, and move with ``.to(device)`` or
``.cuda()``. Without a jax GPU, asking for ``cuda`` raises PyTorch's CPU-build error
(no silent CPU fallback). A factory called without ``device=`` uses the thread's default
device (``torch.set_default_device``, or a ``with torch.device(...)`` block), as PyTorch's.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import jax
import numpy as np

from funcgrad._compat_contract import MetaArray, x64

# PyTorch's device type names, in the order of its DeviceType enum (hash values use it)
_TYPES = (
    "cpu",
    "cuda",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "fpga",
    "maia",
    "xla",
    "vulkan",
    "metal",
    "xpu",
    "mps",
    "meta",
    "hpu",
    "ve",
    "lazy",
    "ipu",
    "mtia",
    "privateuseone",
)
_ORDINAL = {t: i for i, t in enumerate(_TYPES)}
_LISTED = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
    "vulkan, mps, meta, hpu, mtia, privateuseone"
)
_DEVICE_RE = re.compile(r"([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?")
NO_CUDA = "Torch not compiled with CUDA enabled"


class device:
    """A device a tensor lives on: ``device('cuda:0')``, ``device('cpu')``, ``device('cuda', 1)``."""

    __slots__ = ("_index", "_type")

    def __init__(self, type: Any, index: int | None = None) -> None:
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object takes no index")
            self._type, self._index = type._type, type._index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if not isinstance(type, str):
            raise TypeError(
                f"device() received an invalid combination of arguments - got "
                f"({_tname(type)}), but expected one of: (torch.device device), "
                "(str type, int index = -1)"
            )
        m = _DEVICE_RE.fullmatch(type)
        if m is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        name, idx = m.group(1), m.group(2)
        if name not in _ORDINAL:
            raise RuntimeError(_unknown(type))
        if idx is not None and index is not None:
            raise RuntimeError(
                "type (string) must not include an index because index was passed "
                f"explicitly: {type}"
            )
        if index is not None:
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError(
                    f"device(): argument 'index' (position 2) must be int, not {_tname(index)}"
                )
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        self._type = name
        self._index = int(idx) if idx is not None else index

    @property
    def type(self) -> str:
        return self._type

    @property
    def index(self) -> int | None:
        return self._index

    def __str__(self) -> str:
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self) -> str:
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return False
        return self._type == other._type and self._index == other._index

    def __hash__(self) -> int:
        idx = -1 if self._index is None else self._index
        return (_ORDINAL[self._type] << 16) | (idx & 0xFF)

    def __reduce__(self) -> Any:
        return (device, (str(self),))

    def __enter__(self) -> device:
        """``with torch.device(d):``: factories in the block (this thread) default to ``d``."""
        stack = _default.__dict__.setdefault("stack", [])
        stack.append(default_device())
        _default.device = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _default.device = _default.stack.pop()
        return None


def _tname(x: Any) -> str:
    return "NoneType" if x is None else type(x).__name__


def _unknown(s: str) -> str:
    return f"Expected one of {_LISTED} device type at start of device string: {s}"


CPU = device("cpu")
#: PyTorch's shape-only device: its tensors hold a ``MetaArray`` (shape and dtype, no values)
META = device("meta")

#: this thread's default device for factories (``device``: the current one; ``stack``:
#: the ones ``with torch.device(...)`` blocks replaced); PyTorch's is per thread too
_default = threading.local()


def default_device() -> device | None:
    """The device a factory called without ``device=`` uses on this thread (``None``: the
    CPU, nothing set)."""
    return _default.__dict__.get("device")  # (getattr's miss raises inside: 0.4 us)


def set_default_device(d: Any) -> None:
    """``torch.set_default_device``: factories called without ``device=`` on this thread
    allocate on ``d`` (``None``: back to the CPU); a device index is taken as given. The
    old default goes first, so a bad ``d`` leaves the CPU (PyTorch's order)."""
    _default.device = None
    _default.device = None if d is None else as_device(d)


def get_default_device() -> device:
    """``torch.get_default_device``: the default device, ``cuda`` with the current index
    (PyTorch's CPU-build error without a GPU)."""
    d = default_device()
    if d is None:
        return CPU
    if d._type == "cuda" and d._index is None:
        if not gpus():
            raise AssertionError(NO_CUDA)
        return device("cuda", 0)
    return d


def as_device(d: Any) -> device:
    """A ``device`` from a device, a string or an int (a CUDA index, as PyTorch's ``.to(0)``)."""
    if isinstance(d, device):
        return d
    if isinstance(d, int) and not isinstance(d, bool):
        if not gpus():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return device("cuda", d)
    return device(d)


def is_device_like(x: Any) -> bool:
    """Whether ``x`` names a device (a ``device``, a device string or a bare index)."""
    return isinstance(x, (device, str)) or (isinstance(x, int) and not isinstance(x, bool))


_gpu_cache: list = []


def gpus() -> list:
    """jax's GPU devices (empty on a CPU-only jax)."""
    if not _gpu_cache:
        try:
            found = list(jax.local_devices(backend="gpu"))
        except RuntimeError:
            found = []
        _gpu_cache.append(found)
    return _gpu_cache[0]


_cpu_dev: list = []


def cpu_jax() -> Any:
    if not _cpu_dev:
        _cpu_dev.append(jax.local_devices(backend="cpu")[0])
    return _cpu_dev[0]


_default_cpu: list = []


def default_is_cpu() -> bool:
    """Whether jax places uncommitted arrays on its CPU (then creation needs no device)."""
    if not _default_cpu:
        _default_cpu.append(jax.default_backend() == "cpu")
    return _default_cpu[0]


def jax_device(d: Any) -> Any:
    """The jax device behind a torch device, raising PyTorch's errors for absent kinds."""
    d = as_device(d)
    if d._type == "cpu":
        return cpu_jax()
    if d._type == "cuda":
        g = gpus()
        if not g:
            raise AssertionError(NO_CUDA)
        i = 0 if d._index is None else d._index
        if i >= len(g):
            raise RuntimeError("CUDA error: invalid device ordinal")
        return g[i]
    if d._type == "xpu":
        raise AssertionError("Torch not compiled with XPU enabled")
    if d._type == "mps":
        raise RuntimeError("PyTorch is not linked with support for mps devices")
    raise NotImplementedError(f"compat.torch has no '{d._type}' device (cpu and cuda only)")


def of_array(a: Any) -> device:
    """The torch device of a jax array (``meta`` for a ``MetaArray``)."""
    if type(a) is MetaArray:
        return META
    try:
        dev = a.device
    except (AttributeError, ValueError):
        return CPU
    if getattr(dev, "platform", "cpu") == "cpu":
        return CPU
    g = gpus()
    return device("cuda", g.index(dev) if dev in g else 0)


@x64
def place(a: Any, d: Any) -> Any:
    """``a`` (a NumPy or jax array) on torch device ``d`` (``None``: the CPU).

    A NumPy array bound for the CPU, when that is JAX's default backend, stays a NumPy
    array: a read-only copy (1 us, where ``jax.device_put`` costs ~100 us of Python), the
    host tier's own kind of value, made a JAX array only if a compiled program takes it."""
    cpu = d is None or (isinstance(d, str) and d == "cpu")
    if not cpu and as_device(d)._type == "meta":
        return MetaArray(np.shape(a), a.dtype)
    if type(a) is MetaArray:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    if type(a) is np.ndarray and default_is_cpu() and (cpu or as_device(d)._type == "cpu"):
        out = np.array(a, copy=True)
        out.flags.writeable = False
        return out
    if cpu:
        return jax.device_put(a) if default_is_cpu() else jax.device_put(a, cpu_jax())
    target = jax_device(d)
    if target is cpu_jax() and default_is_cpu():
        return jax.device_put(a)
    return jax.device_put(a, target)


def same_place(a: Any, d: Any) -> bool:
    """Whether array ``a`` already lives on torch device ``d`` (``cuda`` = ``cuda:0``)."""
    want = as_device(d)
    have = of_array(a)
    if want._type != have._type and "meta" in (want._type, have._type):
        return False
    if want._type != have._type:
        jax_device(want)  # the absent-device error first, as PyTorch
        return False
    return want._type == "cpu" or (want._index or 0) == (have._index or 0)


_scalar_cache: dict = {}


def scalar_array(x: Any) -> Any:
    """A cached weakly typed device scalar for a Python number: passing device arrays to
    the compiled programs is faster than passing Python numbers (64-bit mode must be on).
    Keyed by value, and by sign where equal values differ in it: ``-0.0 == 0.0``, so a
    float zero and a complex number are keyed by their ``repr`` (the first zero's sign was
    every later zero's: ``x[1:] = -0.0`` after ``x[1:] = 0.0`` wrote ``+0.0``)."""
    t = type(x)
    key = (t, repr(x)) if t is complex or (t is float and not x) else (t, x)
    a = _scalar_cache.get(key)
    if a is None:
        if len(_scalar_cache) > 4096:
            _scalar_cache.clear()
        a = _scalar_cache[key] = jax.device_put(x)
    return a


#: :func:`scalar_array` with 64-bit mode switched on for the call
dev_scalar = x64(scalar_array)
