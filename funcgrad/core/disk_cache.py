"""The persistent compilation cache: XLA executables kept on disk across runs.

funcgrad compiles through ``jax.jit``, so it keeps executables across processes with
JAX's own persistent compilation cache, which it switches on (JAX leaves it off) when
funcgrad is imported: the second run of a script loads from disk what the first one
compiled instead of compiling it again. This module only configures that cache and
reports on it; the in-memory cache of a process is :mod:`funcgrad.core.compile_cache`.

* **Where.** ``$FUNCGRAD_CACHE_DIR``, else ``$XDG_CACHE_HOME/funcgrad/xla``, else
  ``~/.cache/funcgrad/xla``; entries go to a subdirectory named after the versions of
  JAX, jaxlib and funcgrad (:func:`cache_dir`), so incompatible versions never share
  entries and an old version's entries are one directory to delete.
* **What.** Every executable JAX compiles, however small: JAX writes only those that
  took at least ``jax_persistent_cache_min_compile_time_secs`` (1 s by default) to
  compile, and funcgrad's are mostly 10-50 ms, so funcgrad sets it to 0 (unless it was
  set already). JAX keys an entry by the program, the compile options and flags, the
  backend and the versions; it never writes programs with host callbacks.
* **How much.** ``funcgrad_persistent_cache_max_bytes`` (1 GiB): when funcgrad turns
  the cache on it trims the cache root (all version subdirectories) to 3/4 of the
  bound if it is over, least recently used entries first (by the files' access
  times), in a background thread. funcgrad does not use JAX's
  ``jax_compilation_cache_max_size``: it needs the ``filelock`` package, and its
  eviction takes a file lock and writes an access-time file on every read and scans
  the whole directory on every write, which costs more than compiling a small program
  once the cache holds thousands of entries.
* **Off.** ``FUNCGRAD_PERSISTENT_CACHE=0`` in the environment, or
  ``funcgrad.config.update("funcgrad_persistent_cache", False)`` (and ``True`` turns it
  back on).
* **Yours first.** When ``jax_compilation_cache_dir`` is already set (by
  ``JAX_COMPILATION_CACHE_DIR``, ``jax.config.update`` or the test suite) funcgrad
  leaves JAX's cache settings alone, and the switch above does nothing.
* **Never fatal.** A directory funcgrad cannot create is a warning and no cache; one it
  cannot write to is a warning and a cache that is read but not written; an entry JAX
  cannot read (a corrupt file) is JAX's warning and a compile, in every run: JAX never
  replaces an entry whose file exists (:func:`clear` deletes them).
* **Where it must stay.** JAX's keys include the cache directory's path (it passes the
  path to XLA as a compile option, its GPU autotuning cache), so entries moved or copied
  to another directory are never found there.

:func:`stats` reports the directory and counts JAX's cache events (hits: executables
loaded from disk; misses: programs compiled after a lookup found nothing); :func:`trim`
applies the size bound and :func:`clear` deletes this installation's entries.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

import jax

from funcgrad import config

#: the environment variables funcgrad reads
ENV_DIR = "FUNCGRAD_CACHE_DIR"
ENV_SWITCH = "FUNCGRAD_PERSISTENT_CACHE"
#: the size bound's default, in bytes
DEFAULT_MAX_BYTES = 1 << 30

# JAX's names: the entry files of its cache, and the monitoring events it records
_ENTRY_SUFFIXES = ("-cache", "-atime")
_EV_REQUEST = "/jax/compilation_cache/compile_requests_use_cache"
_EV_HIT = "/jax/compilation_cache/cache_hits"
_EV_WRITE = "/jax/compilation_cache/cache_misses"  # recorded when an entry is written
_EV_READ_TIME = "/jax/compilation_cache/cache_retrieval_time_sec"
_JAX_MIN_COMPILE_TIME = 1.0  # jax_persistent_cache_min_compile_time_secs's default
_VERSION_DIR_PREFIX = "jax-"


class _State:
    """What funcgrad set (so it undoes only that) and what it saw."""

    def __init__(self) -> None:
        self.dir: str | None = None  # the directory funcgrad gave JAX, while on
        self.read_only = False
        self.min_time_saved: float | None = None  # the min compile time funcgrad replaced
        self.error: str | None = None  # why the cache is off although switched on
        self.lock = threading.Lock()
        self.requests = self.hits = self.writes = 0
        self.read_s = 0.0


_state = _State()


# --------------------------------------------------------------------------- where


def cache_root() -> Path:
    """The directory holding one subdirectory per version triple."""
    d = os.environ.get(ENV_DIR)
    if d:
        return Path(d).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "funcgrad" / "xla"


def _funcgrad_version() -> str:
    v = getattr(sys.modules.get("funcgrad"), "__version__", None)
    if v is None:
        try:
            from importlib.metadata import version

            v = version("funcgrad")
        except Exception:
            v = "unknown"
    return str(v)


def _jaxlib_version() -> str:
    try:
        import jaxlib

        return str(jaxlib.__version__)
    except Exception:
        return "unknown"


def version_tag() -> str:
    """The name of this installation's subdirectory: JAX's, jaxlib's and funcgrad's versions."""
    tag = f"{_VERSION_DIR_PREFIX}{jax.__version__}_jaxlib-{_jaxlib_version()}_funcgrad-{_funcgrad_version()}"
    return re.sub(r"[^A-Za-z0-9._+-]", "_", tag)


def cache_dir() -> Path:
    """The directory funcgrad's entries go to (it may not exist yet)."""
    return cache_root() / version_tag()


# --------------------------------------------------------------------------- on, off


def _jax_cache_module() -> Any:
    from jax.experimental.compilation_cache import compilation_cache

    return compilation_cache


def _reset_jax_cache() -> None:
    """Make JAX open the cache afresh at its next compile (it opens it once)."""
    with contextlib.suppress(Exception):
        _jax_cache_module().reset_cache()


def _writable(d: Path) -> bool:
    try:
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=d)
    except OSError:
        return False
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return True


def _warn(msg: str) -> None:
    warnings.warn(f"funcgrad: persistent compilation cache: {msg}", RuntimeWarning, stacklevel=2)


def _enable() -> None:
    current = jax.config.jax_compilation_cache_dir
    if current is not None and current != _state.dir:
        return  # the user's (or the test suite's) cache: theirs to configure
    try:
        d = cache_dir()
        d.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError) as e:  # RuntimeError: no home directory
        _state.error = f"cannot create {ENV_DIR if isinstance(e, RuntimeError) else d}: {e}"
        _warn(f"{_state.error}; executables are compiled in each run")
        return
    _state.error = None
    _state.read_only = not _writable(d)
    if _state.read_only:
        _warn(f"{d} is not writable; entries in it are read, new ones are not written")
    # JAX writes only what took 1 s to compile; funcgrad's programs take 10-50 ms. The
    # threshold is changed only when it is JAX's default (or funcgrad set it), and a
    # directory that cannot be written to gets an infinite one: JAX reads it, never tries
    # to write (it would warn at each write)
    min_time = jax.config.jax_persistent_cache_min_compile_time_secs
    user_set = "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" in os.environ
    mine = _state.min_time_saved is not None
    if mine or _state.read_only or (min_time == _JAX_MIN_COMPILE_TIME and not user_set):
        if not mine:
            _state.min_time_saved = min_time
        saved = _state.min_time_saved
        default = saved == _JAX_MIN_COMPILE_TIME and not user_set
        want = math.inf if _state.read_only else (0.0 if default else saved)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", want)
    jax.config.update("jax_compilation_cache_dir", str(d))
    _state.dir = str(d)
    _reset_jax_cache()
    _trim_soon()


def _disable() -> None:
    if _state.dir is None or jax.config.jax_compilation_cache_dir != _state.dir:
        _state.dir = None
        return  # never funcgrad's, or replaced by the user's since
    jax.config.update("jax_compilation_cache_dir", None)
    if _state.min_time_saved is not None:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", _state.min_time_saved)
        _state.min_time_saved = None
    _state.dir = None
    _state.read_only = False
    _reset_jax_cache()


def _apply(on: Any) -> None:
    if on:
        _enable()
    else:
        _state.error = None
        _disable()


# --------------------------------------------------------------------------- size bound


def _entries(root: Path) -> list[tuple[float, int, Path]]:
    """(access time, size, path) of each entry file of JAX's under ``root``'s version
    subdirectories (nothing else there is touched)."""
    out = []
    with contextlib.suppress(OSError), os.scandir(root) as subdirs:
        for sub in subdirs:
            if not (sub.name.startswith(_VERSION_DIR_PREFIX) and sub.is_dir()):
                continue
            with contextlib.suppress(OSError), os.scandir(sub.path) as files:
                for f in files:
                    if f.name.endswith(_ENTRY_SUFFIXES[0]):
                        with contextlib.suppress(OSError):
                            st = f.stat()
                            out.append((st.st_atime, st.st_size, Path(f.path)))
    return out


def trim(max_bytes: int | None = None, root: Path | None = None) -> int:
    """Delete the least recently used entries under ``root`` (:func:`cache_root`) until
    they take at most 3/4 of ``max_bytes`` (default: the
    ``funcgrad_persistent_cache_max_bytes`` option), if they take more than
    ``max_bytes``; returns the bytes freed."""
    bound = config.read("funcgrad_persistent_cache_max_bytes") if max_bytes is None else max_bytes
    if bound is None or bound < 0:
        return 0
    root = cache_root() if root is None else root
    entries = _entries(root)
    total = sum(size for _, size, _ in entries)
    if total <= bound:
        return 0
    freed = 0
    for _, size, path in sorted(entries, key=lambda e: e[0]):
        if total - freed <= bound * 3 // 4:
            break
        with contextlib.suppress(OSError):
            path.unlink()
            freed += size
        with contextlib.suppress(OSError):  # JAX's access-time file, when it keeps one
            path.with_name(path.name[: -len(_ENTRY_SUFFIXES[0])] + _ENTRY_SUFFIXES[1]).unlink()
    current = version_tag()
    with contextlib.suppress(OSError), os.scandir(root) as subdirs:
        for sub in subdirs:  # other versions' subdirectories, once empty
            if sub.name.startswith(_VERSION_DIR_PREFIX) and sub.name != current:
                with contextlib.suppress(OSError):
                    os.rmdir(sub.path)
    return freed


def _trim_soon(*_: Any) -> None:
    if _state.dir is None or _state.read_only:
        return
    root = Path(_state.dir).parent
    threading.Thread(
        target=trim, args=(None, root), name="funcgrad-cache-trim", daemon=True
    ).start()


# --------------------------------------------------------------------------- report


def _on_event(event: str, **_: Any) -> None:
    # JAX computes a key and records a request for every compile while its cache is
    # enabled (its default), with or without a directory: only those with one count
    if event == _EV_REQUEST and jax.config.jax_compilation_cache_dir is not None:
        with _state.lock:
            _state.requests += 1
    elif event == _EV_HIT:
        with _state.lock:
            _state.hits += 1
    elif event == _EV_WRITE:
        with _state.lock:
            _state.writes += 1


def _on_duration(event: str, duration: float, **_: Any) -> None:
    if event == _EV_READ_TIME:
        with _state.lock:
            _state.read_s += duration


def stats() -> dict[str, Any]:
    """Where the persistent cache is and how this process has used it.

    Returns:
        A dict: ``enabled`` (JAX reads and writes a persistent cache), ``owner``
        (``"funcgrad"``: configured here; ``"user"``: ``jax_compilation_cache_dir`` was
        set by someone else, funcgrad left it alone; ``None``: no cache), ``dir`` (the
        directory in use), ``read_only``, ``error`` (why funcgrad's cache is off though
        switched on), ``max_bytes``; this process's counts: ``hits`` (executables
        loaded from disk), ``misses`` (programs compiled after a lookup: not on disk,
        or an entry that could not be read), ``writes`` (entries written: JAX counts one
        for an entry whose file exists, which it leaves as it is), ``read_s``
        (seconds spent loading hits); and the directory's ``entries`` and ``bytes``.
    """
    d = jax.config.jax_compilation_cache_dir
    enabled = d is not None and bool(jax.config.jax_enable_compilation_cache)
    owner = None if d is None else ("funcgrad" if d == _state.dir else "user")
    entries = nbytes = 0
    if d is not None:
        with contextlib.suppress(OSError), os.scandir(d) as files:
            for f in files:
                if f.name.endswith(_ENTRY_SUFFIXES[0]):
                    with contextlib.suppress(OSError):
                        nbytes += f.stat().st_size
                        entries += 1
    with _state.lock:
        requests, hits, writes, read_s = (
            _state.requests,
            _state.hits,
            _state.writes,
            _state.read_s,
        )
    return {
        "enabled": enabled,
        "owner": owner,
        "dir": d,
        "read_only": _state.read_only if owner == "funcgrad" else False,
        "error": _state.error,
        "max_bytes": config.read("funcgrad_persistent_cache_max_bytes"),
        "hits": hits,
        "misses": requests - hits,
        "writes": writes,
        "read_s": read_s,
        "entries": entries,
        "bytes": nbytes,
    }


def clear() -> int:
    """Delete this installation's entries (those in :func:`cache_dir`); returns how many."""
    n = 0
    with contextlib.suppress(OSError), os.scandir(cache_dir()) as files:
        for f in files:
            if f.name.endswith(_ENTRY_SUFFIXES):
                with contextlib.suppress(OSError):
                    os.unlink(f.path)
                    n += f.name.endswith(_ENTRY_SUFFIXES[0])
    return n


# --------------------------------------------------------------------------- at import

jax.monitoring.register_event_listener(_on_event)
jax.monitoring.register_event_duration_secs_listener(_on_duration)

config.define(
    "funcgrad_persistent_cache_max_bytes",
    DEFAULT_MAX_BYTES,
    "Bound on the persistent compilation cache's size in bytes (all versions' entries); "
    "when over it, the least recently used entries are deleted. -1: no bound.",
    _trim_soon,
)
config.define(
    "funcgrad_persistent_cache",
    os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off"),
    "Keep compiled executables on disk across runs (JAX's persistent compilation cache "
    f"in ${ENV_DIR}, $XDG_CACHE_HOME/funcgrad/xla or ~/.cache/funcgrad/xla). Off: "
    f"{ENV_SWITCH}=0. Does nothing when jax_compilation_cache_dir is set otherwise.",
    _apply,
)
