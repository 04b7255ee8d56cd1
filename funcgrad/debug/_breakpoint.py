"""``funcgrad.debug.breakpoint`` (JAX's ``jax.debug.breakpoint``): a debug callback that
carries the array-valued locals of the calling frames and, when it fires, starts a
debugger on their concrete values. Debuggers are pluggable backends
(:func:`register_debugger`); the default, ``"cli"``, is :mod:`pdb`."""

from __future__ import annotations

import dataclasses
import pdb
import sys
import threading
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any

from funcgrad.core.interp import Tracer, to_aval
from funcgrad.primitives.effects import debug_callback
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["DebuggerFrame", "breakpoint", "register_debugger"]

#: Modules whose frames are never captured (the XLA tracing machinery under ``jit``).
_ALWAYS_HIDDEN = frozenset({"jax", "jaxlib"})


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One captured Python frame as a debugger sees it: where it is, and its locals
    with every array leaf replaced by its runtime (concrete) value."""

    filename: str
    function: str
    lineno: int
    locals: dict[str, Any]
    globals: dict[str, Any]


#: Debugger backends by name: ``(priority, fn)``; ``fn(frames, thread_id, **kwargs)``.
_DEBUGGERS: dict[str, tuple[int, Callable[..., None]]] = {}


def register_debugger(name: str, debugger: Callable[..., None], priority: int) -> None:
    """Make ``debugger(frames, thread_id, **kwargs)`` available as ``backend=name``
    (``frames``: list of :class:`DebuggerFrame`, innermost first). With
    ``backend=None`` the backend of highest priority is used."""
    if not isinstance(name, str):
        raise TypeError(f"debugger name must be a str, got {type(name).__name__}")
    if not callable(debugger):
        raise TypeError(f"debugger must be callable, got {type(debugger).__name__}")
    _DEBUGGERS[name] = (priority, debugger)


def _get_debugger(backend: str | None) -> Callable[..., None]:
    if backend is None:
        return max(_DEBUGGERS.values(), key=lambda pd: pd[0])[1]
    if backend not in _DEBUGGERS:
        raise ValueError(f"Unknown debugger backend {backend!r}; available: {sorted(_DEBUGGERS)}")
    return _DEBUGGERS[backend][1]


def _pdb_debugger(frames: list[DebuggerFrame], thread_id: int | None, **kwargs: Any) -> None:
    """The ``"cli"`` backend: :class:`pdb.Pdb` stopped in a namespace holding the
    innermost frame's globals and (concrete) locals. ``kwargs`` go to ``pdb.Pdb``
    (e.g. ``stdin``/``stdout``)."""
    frame = frames[0]
    out = kwargs.get("stdout") or sys.stdout
    out.write(
        f"Entering funcgrad.debug.breakpoint: {frame.filename}({frame.lineno}){frame.function}()\n"
    )
    kwargs.setdefault("nosigint", True)
    kwargs.setdefault("readrc", False)
    debugger = pdb.Pdb(**kwargs)
    debugger.run("pass", frame.globals, dict(frame.locals))


register_debugger("cli", _pdb_debugger, -1)


def _is_array(x: Any) -> bool:
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (bool, int, float, complex, type, ModuleType)):
        return False
    if not (hasattr(x, "dtype") and hasattr(x, "shape") and hasattr(x, "__array__")):
        return False
    try:
        to_aval(x)
    except (TypeError, ValueError):
        return False
    return True


def _user_frames(start: FrameType | None, filter_frames: bool, num_frames: int | None) -> list:
    """The frames from ``start`` outwards, without JAX's (always) and funcgrad's own
    (with ``filter_frames``), at most ``num_frames`` of them."""
    frames = []
    f = start
    while f is not None and (num_frames is None or len(frames) < num_frames):
        root = str(f.f_globals.get("__name__", "")).partition(".")[0]
        if root not in _ALWAYS_HIDDEN and not (filter_frames and root == "funcgrad"):
            frames.append(f)
        f = f.f_back
    return frames


def _capture(frame: FrameType) -> tuple[tuple, list]:
    """``(spec, dynamic leaves)`` of one frame's locals: each local is kept as it is
    unless its pytree leaves include arrays, which become callback arguments."""
    spec, dyn = [], []
    for name, value in frame.f_locals.items():
        try:
            leaves, tree = tree_flatten(value)
        except Exception:  # a structure the tree code cannot flatten: keep as is
            spec.append((name, None, value))
            continue
        mask = [_is_array(x) for x in leaves]
        if not any(mask):
            spec.append((name, None, value))
            continue
        statics = [None if m else x for m, x in zip(mask, leaves)]
        dyn.extend(x for m, x in zip(mask, leaves) if m)
        spec.append((name, (tree, tuple(mask)), statics))
    code = frame.f_code
    where = (code.co_filename, code.co_name, frame.f_lineno, frame.f_globals)
    return (where, tuple(spec)), dyn


def _rebuild(captured: list, values: tuple) -> list[DebuggerFrame]:
    it = iter(values)
    frames = []
    for (filename, function, lineno, globs), spec in captured:
        local_vars = {}
        for name, structure, payload in spec:
            if structure is None:
                local_vars[name] = payload
                continue
            tree, mask = structure
            leaves = [next(it) if m else s for m, s in zip(mask, payload)]
            local_vars[name] = tree_unflatten(tree, leaves)
        frames.append(DebuggerFrame(filename, function, lineno, local_vars, globs))
    return frames


def breakpoint(
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    **kwargs: Any,
) -> Any:
    """Stop in a debugger with the caller's locals at their runtime values, eagerly or
    from inside any transform (under ``jit`` when the compiled program runs; under
    ``vmap`` once per batch element; under ``grad`` on the primal values).

    ``backend`` names a debugger (:func:`register_debugger`; default ``"cli"``, i.e.
    :mod:`pdb`), ``filter_frames`` drops funcgrad's own frames, ``num_frames`` caps
    how many frames are captured (``None``: all), ``ordered`` orders it with the other
    ordered callbacks, ``kwargs`` go to the debugger. With a ``token`` the breakpoint
    is ordered and the token is returned."""
    if not isinstance(ordered, bool):
        raise TypeError(f"debug.breakpoint: ordered must be a bool, got {ordered!r}")
    if num_frames is not None and (not isinstance(num_frames, int) or num_frames < 1):
        raise ValueError(f"debug.breakpoint: num_frames must be a positive int, got {num_frames!r}")
    _get_debugger(backend)  # an unknown backend fails at the call, not when it fires
    frames = _user_frames(sys._getframe(1), filter_frames, num_frames)
    captured, dyn = [], []
    for f in frames:
        c, d = _capture(f)
        captured.append(c)
        dyn.extend(d)
    del frames

    def fire(*values: Any) -> None:
        debugger = _get_debugger(backend)  # looked up when it fires: a cached program
        debugger(_rebuild(captured, values), threading.get_ident(), **kwargs)

    debug_callback(fire, *dyn, ordered=ordered or token is not None)
    return token
