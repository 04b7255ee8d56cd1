"""Policies for ``funcgrad.checkpoint(fun, policy=...)``, as ``jax.checkpoint_policies``.

A policy is called as ``policy(prim, *avals, **params)`` for each equation of the
checkpointed function's forward pass and returns whether its result may be saved
for the backward pass (``True``) or must be recomputed (``False``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.primitives.calls import checkpoint_name_p
from funcgrad.primitives.conv import conv_general_dilated_p
from funcgrad.primitives.linalg import dot_general_p

__all__ = [
    "checkpoint_dots",
    "checkpoint_dots_with_no_batch_dims",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "everything_saveable",
    "nothing_saveable",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
    "save_only_these_names",
]

Policy = Callable[..., bool]


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every residual (no recomputation: as if not checkpointed)."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Save nothing but the inputs; recompute everything (the default)."""
    return False


def dots_saveable(prim: Any, *_: Any, **__: Any) -> bool:
    """Save the results of matrix products and convolutions."""
    return prim is dot_general_p or prim is conv_general_dilated_p


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim: Any, *_: Any, **params: Any) -> bool:
    """Save the results of matrix products without batch dimensions."""
    if prim is not dot_general_p:
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_only_these_names(*names: str) -> Policy:
    """Save only the values tagged (``checkpoint_name``) with one of ``names``."""
    keep = frozenset(names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is checkpoint_name_p and params["name"] in keep

    return policy


def save_any_names_but_these(*names: str) -> Policy:
    """Save the tagged values except those tagged with one of ``names``."""
    skip = frozenset(names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is checkpoint_name_p and params["name"] not in skip

    return policy


def save_anything_except_these_names(*names: str) -> Policy:
    """Save every value except those tagged with one of ``names``."""
    skip = frozenset(names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is not checkpoint_name_p or params["name"] not in skip

    return policy


def save_from_both_policies(left: Policy, right: Policy) -> Policy:
    """Save what either policy saves."""

    def policy(prim: Any, *args: Any, **params: Any) -> bool:
        return bool(left(prim, *args, **params)) or bool(right(prim, *args, **params))

    return policy
