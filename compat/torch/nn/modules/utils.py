"""Argument helpers shared by the layers and ``consume_prefix_in_state_dict_if_present``
(PyTorch's ``torch.nn.modules.utils``)."""

from __future__ import annotations

from typing import Any


def _ntuple(value: Any, n: int) -> tuple:
    """``value`` as a tuple: a sequence as is, a scalar repeated ``n`` times."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


def _single(value: Any) -> tuple:
    return _ntuple(value, 1)


def _pair(value: Any) -> tuple:
    return _ntuple(value, 2)


def _triple(value: Any) -> tuple:
    return _ntuple(value, 3)


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` (e.g. ``"module."`` of a ``DistributedDataParallel`` checkpoint)
    from the keys of ``state_dict`` that have it, and from its ``_metadata`` keys, in
    place."""
    for key in [k for k in state_dict if k.startswith(prefix)]:
        state_dict[key[len(prefix) :]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    bare = prefix.rstrip(".")
    for key in [k for k in metadata if k and (k == bare or k.startswith(prefix))]:
        metadata[key[len(prefix) :]] = metadata.pop(key)
