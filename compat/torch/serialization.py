"""``torch.save`` / ``torch.load`` in PyTorch's zip format, without importing torch.

A checkpoint is a zip archive (records stored uncompressed under one folder):
``data.pkl`` (the pickled object, protocol 2, tensors referring to their bytes by
persistent ids), ``data/<key>`` (one record of raw little-endian bytes per storage),
``byteorder``, ``version``, ``.format_version``, ``.storage_alignment`` and
``.data/serialization_id``. Files written here load in PyTorch 2.13 and PyTorch's
files load here: state dicts, optimizer state dicts, nested containers of tensors and
plain Python objects. ``weights_only=True`` (the default, as in PyTorch 2.6+) allows
only PyTorch's allow-listed globals and those added with :func:`add_safe_globals`.

Differences: loaded tensors never share storage (views saved by PyTorch come back as
copies), and ``mmap=True`` and the legacy pre-1.6 format are not supported.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import random
import struct
import sys
import zipfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from compat._core import device as _dev
from compat.torch import _torch_pickle as _tp

__all__ = [
    "DEFAULT_PROTOCOL",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]

DEFAULT_PROTOCOL = 2
_ALIGN = 64
_NO_CUDA_LOAD = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
    "False. If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU."
)


# ------------------------------------------------------------------------------- safe globals


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes/functions in ``weights_only`` loads."""
    _tp.safe_globals_registry.extend(safe_globals)


def get_safe_globals() -> list:
    return list(_tp.safe_globals_registry)


def clear_safe_globals() -> None:
    _tp.safe_globals_registry.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list) -> Iterator[None]:
    """Allow these globals in ``weights_only`` loads inside the ``with`` block."""
    before = list(_tp.safe_globals_registry)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _tp.safe_globals_registry[:] = before


# ------------------------------------------------------------------------------- save


def _archive_name(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


def _padding(zf: zipfile.ZipFile, name: str) -> bytes:
    """An extra field that starts the record's data on a 64-byte boundary."""
    try:
        pos = zf.fp.tell()  # type: ignore[union-attr]
    except (AttributeError, OSError):
        return b""
    start = pos + 30 + len(name.encode()) + 4
    pad = (-start) % _ALIGN
    return b"FB" + struct.pack("<H", pad) + b"Z" * pad


def _write(zf: zipfile.ZipFile, name: str, data: bytes, align: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    if align:
        info.extra = _padding(zf, name)
    zf.writestr(info, data)


def save(
    obj: Any,
    f: Any,
    pickle_module: Any = pickle,
    pickle_protocol: int = DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save ``obj`` to ``f`` (a path or a writable binary file) in PyTorch's zip format."""
    if pickle_module is not pickle:
        raise NotImplementedError("torch.save: pickle_module other than pickle")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("torch.save: _use_new_zipfile_serialization=False")
    buf = io.BytesIO()
    pickler = _tp.TorchPickler(buf, pickle_protocol)
    pickler.dump(obj)
    prefix = _archive_name(f) + "/"
    with contextlib.ExitStack() as stack:
        if isinstance(f, (str, os.PathLike)):
            target: Any = stack.enter_context(open(f, "wb"))
        else:
            target = f
        with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zf:
            _write(zf, prefix + "data.pkl", buf.getvalue())
            _write(zf, prefix + ".format_version", b"1")
            _write(zf, prefix + ".storage_alignment", str(_ALIGN).encode())
            if not _disable_byteorder_record:
                _write(zf, prefix + "byteorder", sys.byteorder.encode())
            for key, ref in pickler.storages.items():
                _write(zf, prefix + "data/" + key, ref.array.tobytes(), align=True)
            _write(zf, prefix + "version", b"3\n")
            sid = "".join(random.choice("0123456789") for _ in range(40))
            _write(zf, prefix + ".data/serialization_id", sid.encode())


# ------------------------------------------------------------------------------- load


def _resolve_location(map_location: Any, storage: _tp.LoadedStorage) -> Any:
    """Where a storage saved at ``storage.location`` goes, as a torch device."""
    loc = storage.location
    if map_location is None:
        target: Any = loc
    elif isinstance(map_location, dict):
        target = map_location.get(loc, loc)
    elif isinstance(map_location, (str, _dev.device)):
        target = map_location
    elif callable(map_location):
        out = map_location(storage, loc)
        target = loc if out is None else getattr(out, "device", out)
    else:
        raise TypeError(f"torch.load: unsupported map_location {map_location!r}")
    dev = _dev.as_device(target)
    if dev.type == "cuda" and not _dev.gpus():
        raise RuntimeError(_NO_CUDA_LOAD)
    if dev.type not in ("cpu", "cuda"):
        _dev.jax_device(dev)
    return dev


def _byteorder(zf: zipfile.ZipFile, prefix: str) -> str:
    try:
        return zf.read(prefix + "byteorder").decode()
    except KeyError:
        return "little"


def load(
    f: Any,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load an object saved by ``torch.save`` (PyTorch's or compat's) from a path or file.

    ``weights_only`` defaults to ``True`` (``False`` when a ``pickle_module`` is given);
    ``map_location`` may be a device, a string, a dict of locations or a callable
    ``(storage, location)``; tensors are placed on the resulting device.
    """
    if mmap:
        raise NotImplementedError("torch.load: mmap=True")
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module not in (None, pickle):
        raise NotImplementedError("torch.load: pickle_module other than pickle")
    with contextlib.ExitStack() as stack:
        if isinstance(f, (str, os.PathLike)):
            fh: Any = stack.enter_context(open(f, "rb"))
        else:
            fh = f
        start = fh.tell() if hasattr(fh, "tell") else 0
        if not zipfile.is_zipfile(fh):
            raise NotImplementedError(
                "torch.load: only PyTorch's zip format (torch >= 1.6) is supported"
            )
        fh.seek(start)
        zf = stack.enter_context(zipfile.ZipFile(fh))
        pkl = next((n for n in zf.namelist() if n.endswith("data.pkl")), None)
        if pkl is None:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        prefix = pkl[: -len("data.pkl")]
        swap = _byteorder(zf, prefix) != sys.byteorder
        cache: dict[str, _tp.LoadedStorage] = {}

        def load_storage(key: str, dtype: np.dtype, location: str) -> _tp.LoadedStorage:
            if key not in cache:
                raw = np.frombuffer(zf.read(prefix + "data/" + key), dtype)
                arr = raw.byteswap() if swap else raw
                st = _tp.LoadedStorage(arr, location)
                st.device = _resolve_location(map_location, st)
                cache[key] = st
            return cache[key]

        enc = pickle_load_args.pop("encoding", "utf-8")
        unpickler = _tp.TorchUnpickler(
            io.BytesIO(zf.read(pkl)), load_storage, bool(weights_only), encoding=enc
        )
        return unpickler.load()
