"""The mesh helpers of JAX's ``jtu`` (``create_mesh``, ``with_explicit_mesh``), written on
the swapped ``jax`` (funcgrad's ``make_mesh``, ``set_mesh`` and ``devices``).

JAX's sharding tests (``shard_map_test``) build every mesh through them; a mesh larger than
the devices there skips the test, as JAX's helper does.
"""

from __future__ import annotations

import math
import unittest
from collections.abc import Callable, Sequence
from typing import Any

import jax  # swapped: the library under test
import numpy as np


def create_mesh(
    mesh_shape: Sequence[int],
    axis_names: Sequence[str] | str,
    iota_order: bool = False,
    axis_types: Sequence[Any] | None = None,
) -> Any:
    """A mesh of the first ``prod(mesh_shape)`` devices: in id order (``iota_order``) or
    as ``make_mesh`` lays them out; automatic axes unless ``axis_types`` says otherwise."""
    size = math.prod(mesh_shape)
    devices = jax.devices()
    if len(devices) < size:
        raise unittest.SkipTest(f"Test requires {size} global devices and found {len(devices)}.")
    if iota_order:
        chosen = sorted(devices, key=lambda d: d.id)[:size]
        grid = np.array(chosen).reshape(tuple(mesh_shape))
        return jax.sharding.Mesh(grid, axis_names, axis_types=axis_types)
    if axis_types is None:
        axis_types = (jax.sharding.AxisType.Auto,) * len(mesh_shape)
    # (the names as given: a string names a one-axis mesh, as in JAX)
    return jax.make_mesh(mesh_shape, axis_names, axis_types)


def with_explicit_mesh(
    sizes: Sequence[int],
    names: Sequence[str] | str,
    axis_types: Sequence[Any] | None = None,
    iota_order: bool = False,
) -> Callable[[Callable], Callable]:
    """Decorator: the test runs under ``set_mesh`` of a mesh with explicit axes (unless
    ``axis_types`` says otherwise), which it receives as ``mesh=``."""
    if axis_types is None:
        axis_types = (jax.sharding.AxisType.Explicit,) * len(names)

    def decorator(fn: Callable) -> Callable:
        # not functools.wraps: JAX's helper does not wrap either, and the runner groups
        # a file's tests by the function they run, so both runs must group them alike
        def with_mesh(*args: Any, **kwargs: Any) -> Any:
            mesh = create_mesh(sizes, names, iota_order, axis_types=axis_types)
            with jax.set_mesh(mesh):
                return fn(*args, **kwargs, mesh=mesh)

        return with_mesh

    return decorator
