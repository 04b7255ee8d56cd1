"""Anomaly mode: ``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``.

While it is on, recording a node stores the user's forward stack in
``node.metadata["traceback_"]`` (as PyTorch; frames inside compat and funcgrad are left
out, so the last one is the user's line), and the engine runs node by node, checking
each node's gradients: a NaN raises PyTorch's ``RuntimeError`` ("Function
'SqrtBackward0' returned nan values in its 0th output."), and any error in a node's
backward is preceded by PyTorch's warning naming the node and that forward stack.
The normal path pays one list lookup per recorded op.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import funcgrad
from compat._core import dtypes as _dt
from compat._core.graph import full_inputs

#: ``[enabled, check_nan]``
STATE: list[bool] = [False, True]
#: the node whose backward runs now, in anomaly mode (a ``create_graph`` backward
#: records new nodes: their ``metadata["parent_"]``)
PARENT: list[Any] = [None]
_INTERNAL = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.dirname(os.path.abspath(funcgrad.__file__)) + os.sep,
)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return STATE[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks backward results for NaN."""
    return STATE[1]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``)."""
    STATE[0] = bool(enabled)
    STATE[1] = bool(check_nan)


def record_stack(node: Any) -> None:
    """Store the user's part of the current stack on ``node`` (PyTorch's key)."""
    frames = [
        f
        for f in traceback.extract_stack()[:-1]
        if not os.path.abspath(f.filename).startswith(_INTERNAL)
    ]
    node.metadata["traceback_"] = traceback.format_list(frames)
    if PARENT[0] is not None:  # recorded by a backward (create_graph): what induced it
        node.metadata["parent_"] = PARENT[0]


def warn_error(node: Any) -> None:
    """PyTorch's warning before an error in ``node``'s backward propagates."""
    stack = node.metadata.get("traceback_") if node.metadata else None
    if not stack:
        _warn(
            f"Error detected in {node.name()}. No forward pass information available. "
            "Enable detect anomaly during forward pass for more information."
        )
        return
    _warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the "
        "error:\n" + "".join(stack)
    )
    parent = node.metadata.get("parent_")
    while parent is not None and parent.metadata.get("traceback_"):
        _warn(
            f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward "
            "call that induced the previous calculation:\n" + "".join(parent.metadata["traceback_"])
        )
        parent = parent.metadata.get("parent_")


def _warn(message: str) -> None:
    """A warning; printed to ``stderr`` when warnings are errors (the backward's own error
    is the one that propagates, as in PyTorch)."""
    try:
        warnings.warn(message, UserWarning, stacklevel=3)
    except Warning:
        print(f"Warning: {message}", file=sys.stderr)


def check_nan(node: Any, grads: Sequence[Any]) -> None:
    """PyTorch's error for a NaN among ``node``'s input gradients (one per edge)."""
    for i, g in enumerate(grads):
        if g is None:
            continue
        a = g._st.array if hasattr(g, "_st") else g
        if _dt.kind(np.asarray(a).dtype) in "fc" and np.isnan(np.asarray(a)).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def checked(transpose: Callable) -> Callable:
    """The engine's per-node step in anomaly mode: NaN checks, the forward stack on
    errors."""

    def step(n: Any, cts: list) -> Any:
        prev, PARENT[0] = PARENT[0], n
        try:
            in_cts = transpose(n, cts)
            if in_cts is not None and STATE[1]:
                check_nan(n, full_inputs(n, in_cts))
        except Exception:
            warn_error(n)
            raise
        finally:
            PARENT[0] = prev
        return in_cts

    return step


class detect_anomaly:
    """Context manager turning anomaly detection on (PyTorch warns when created)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = STATE[0]
        self.check_nan = check_nan
        self.prev_check_nan = STATE[1]
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Set anomaly detection on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = STATE[0]
        self.prev_check_nan = STATE[1]
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)
