"""Pickling compat objects as PyTorch pickles them, and unpickling PyTorch's pickles.

PyTorch's ``data.pkl`` refers to tensors through a few global names
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ``torch.float32``,
``torch.Size``, ``torch.device``, ...) and to tensor bytes through persistent ids
``('storage', storage_type, key, location, numel)``. :class:`TorchPickler` writes
those names without importing torch (a GLOBAL opcode per name);
:class:`TorchUnpickler` maps them back onto compat objects, and with
``weights_only`` refuses every global outside PyTorch's allow-list.
"""

from __future__ import annotations

import codecs
import collections
import importlib
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from compat._core import device as _dev
from compat._core import dtypes as _dt
from compat._core.tensor import Size, Tensor
from compat.torch.nn.parameter import Parameter

__all__ = ["TorchPickler", "TorchUnpickler", "safe_globals_registry"]


class _Global:
    """A global name of PyTorch's, written as a GLOBAL opcode."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # pickle requires reduce functions to be callable
        raise TypeError(f"{self.module}.{self.name} is a name written into pickles")


_G: dict[tuple[str, str], _Global] = {}


def _g(module: str, name: str) -> _Global:
    key = (module, name)
    if key not in _G:
        _G[key] = _Global(module, name)
    return _G[key]


# storage type names of the legacy typed storages PyTorch writes, per dtype name
_STORAGE_OF = {
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
    "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage",
    "int64": "LongStorage",
    "int32": "IntStorage",
    "int16": "ShortStorage",
    "int8": "CharStorage",
    "uint8": "ByteStorage",
    "bool": "BoolStorage",
    "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_DTYPE_OF_STORAGE = {v: k for k, v in _STORAGE_OF.items()}


class StorageRef:
    """One tensor's bytes, to be written as ``data/<key>``."""

    __slots__ = ("array", "key", "location")

    def __init__(self, array: np.ndarray, key: str, location: str) -> None:
        self.array, self.key, self.location = array, key, location


class TorchPickler(pickle._Pickler):  # the Python pickler: its dispatch table is extensible
    """Pickles compat tensors, dtypes, devices and sizes in PyTorch's form; the tensor
    bytes are collected in ``self.storages`` (key -> StorageRef)."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file: Any, protocol: int = 2) -> None:
        super().__init__(file, protocol)
        self.storages: dict[str, StorageRef] = {}
        self._by_cell: dict[int, StorageRef] = {}

    def _save_global_name(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    def _save_dtype(self, obj: _dt.dtype) -> None:
        self._save_global_name(_g("torch", obj.name))

    dispatch[_Global] = _save_global_name
    dispatch[_dt.dtype] = _save_dtype

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is StorageRef:
            numel = obj.array.size
            stype = _g("torch", _STORAGE_OF[obj.array.dtype.name])
            return ("storage", stype, obj.key, obj.location, numel)
        return None

    def _storage(self, t: Tensor) -> StorageRef:
        data = t._st.array  # tensors sharing a storage cell are saved once
        ref = self._by_cell.get(id(data))
        if ref is None:
            arr = np.ascontiguousarray(np.asarray(data)).reshape(-1)
            if arr.dtype.name not in _STORAGE_OF:
                raise NotImplementedError(f"torch.save: tensors of dtype {arr.dtype}")
            ref = StorageRef(arr, str(len(self.storages)), str(t.device))
            self.storages[ref.key] = ref
            self._by_cell[id(data)] = ref
        return ref

    def _tensor_args(self, t: Tensor, requires_grad: bool) -> tuple:
        shape = tuple(t.shape)
        strides = []
        acc = 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= n
        hooks = collections.OrderedDict()
        return (self._storage(t), 0, shape, tuple(reversed(strides)), requires_grad, hooks)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            rebuild = _g("torch._utils", "_rebuild_tensor_v2")
            if isinstance(obj, Parameter):
                data = _PlainView(obj)
                return (
                    _g("torch._utils", "_rebuild_parameter"),
                    (data, obj.requires_grad, collections.OrderedDict()),
                )
            return (rebuild, self._tensor_args(obj, obj.requires_grad))
        if type(obj) is _PlainView:
            return (_g("torch._utils", "_rebuild_tensor_v2"), self._tensor_args(obj.t, False))
        if isinstance(obj, _dev.device):
            return (_g("torch", "device"), (str(obj),))
        if isinstance(obj, Size):
            return (_g("torch", "Size"), (tuple(obj),))
        return NotImplemented


class _PlainView:
    """A Parameter's data, pickled as a plain tensor (as PyTorch's ``Parameter.__reduce_ex__``)."""

    __slots__ = ("t",)

    def __init__(self, t: Tensor) -> None:
        self.t = t


# ------------------------------------------------------------------------------ loading


class LoadedStorage:
    """The bytes of one ``data/<key>`` record as a flat NumPy array, and where it goes."""

    def __init__(self, array: np.ndarray, location: str) -> None:
        self.array = array
        self.location = location
        self.device: Any = location

    # what ``map_location`` callables usually call
    def cpu(self) -> LoadedStorage:
        self.device = "cpu"
        return self

    def cuda(self, device: Any = None) -> LoadedStorage:
        self.device = "cuda" if device is None else _dev.device("cuda", int(device))
        return self

    def size(self) -> int:
        return int(self.array.size)

    def nbytes(self) -> int:
        return int(self.array.nbytes)


def _rebuild_tensor_v2(
    storage: LoadedStorage,
    storage_offset: int,
    size: tuple,
    stride: tuple,
    requires_grad: bool,
    backward_hooks: Any,
    metadata: Any = None,
) -> Tensor:
    base = storage.array
    item = base.dtype.itemsize
    if len(size) and 0 in size:
        arr = np.zeros(size, base.dtype)
    else:
        view = np.lib.stride_tricks.as_strided(
            base[storage_offset:], shape=tuple(size), strides=tuple(s * item for s in stride)
        )
        arr = np.array(view)
    return Tensor._make(_dev.place(arr, storage.device), bool(requires_grad))


def _rebuild_tensor(storage: LoadedStorage, offset: int, size: tuple, stride: tuple) -> Tensor:
    return _rebuild_tensor_v2(storage, offset, size, stride, False, None)


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Parameter:
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(
    data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any
) -> Parameter:
    p = Parameter(data, requires_grad)
    if isinstance(state, tuple):
        state = state[0]
    if state:
        for k, v in state.items():
            setattr(p, k, v)
    return p


def _rebuild_from_type_v2(func: Callable, new_type: type, args: tuple, state: Any) -> Any:
    out = func(*args)
    if isinstance(new_type, type) and new_type is not type(out) and issubclass(new_type, Tensor):
        out = Tensor._make_subclass(new_type, out, out.requires_grad)
    if state:
        for k, v in (state[0] if isinstance(state, tuple) else state).items():
            setattr(out, k, v)
    return out


class _StorageType:
    """``torch.FloatStorage`` and friends, found in persistent ids."""

    def __init__(self, name: str, dtype: np.dtype) -> None:
        self.name, self.dtype = name, dtype


def _storage_type(name: str) -> _StorageType:
    if name in ("UntypedStorage", "ByteStorage"):
        return _StorageType(name, np.dtype(np.uint8))
    if name not in _DTYPE_OF_STORAGE:
        raise NotImplementedError(f"torch.load: compat has no dtype for torch.{name}")
    return _StorageType(name, np.dtype(_DTYPE_OF_STORAGE[name]))


_BUILTIN_SAFE = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("_codecs", "encode"): codecs.encode,
}
_TORCH_FUNCS = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch", "Size"): Size,
    ("torch", "device"): _dev.device,
    ("torch", "Tensor"): Tensor,
    ("torch.nn.parameter", "Parameter"): Parameter,
}

#: globals allowed with ``weights_only=True`` besides PyTorch's own (``add_safe_globals``)
safe_globals_registry: list = []


def _qualified(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"


class TorchUnpickler(pickle.Unpickler):
    """Reads a PyTorch ``data.pkl``: torch globals become compat objects; storages come
    from ``load_storage(key, dtype, location)``."""

    def __init__(self, file: Any, load_storage: Callable, weights_only: bool, **kw: Any):
        super().__init__(file, **kw)
        self._load_storage = load_storage
        self._weights_only = weights_only

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, stype, key, location, _numel = pid
        dtype = stype.dtype if isinstance(stype, _StorageType) else np.dtype(np.uint8)
        return self._load_storage(str(key), dtype, str(location))

    def find_class(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)  # protocol 2 writes Python 2 module names
        key = (module, name)
        if key in _TORCH_FUNCS:
            return _TORCH_FUNCS[key]
        if key in _BUILTIN_SAFE:
            return _BUILTIN_SAFE[key]
        if module in ("torch", "torch.storage") and name.endswith("Storage"):
            return _storage_type(name)
        if module == "torch" and name in _DT_NAMES:
            return _dt.to_dtype(name)
        for obj in safe_globals_registry:
            if _qualified(obj) == f"{module}.{name}":
                return obj
        if self._weights_only:
            raise pickle.UnpicklingError(_weights_only_message(module, name))
        if module == "torch" or module.startswith("torch."):
            try:
                return getattr(importlib.import_module("compat." + module), name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(
                    f"torch.load: compat.torch has no {module}.{name}"
                ) from None
        return super().find_class(module, name)


_DT_NAMES = {d.name for d in _dt._ALL}
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


def _weights_only_message(module: str, name: str) -> str:
    full = f"{module}.{name}"
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two "
        "options, do those steps only if you trust the source of the checkpoint. \n\t(1) "
        "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
        "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` "
        "set to `False` will likely succeed, but it can result in arbitrary code execution. "
        "Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to "
        "load with `weights_only=True` please check the recommended steps in the following "
        f"error message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL {full} was "
        "not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full}])` or the "
        f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
        "global if you trust this class/function."
    )
