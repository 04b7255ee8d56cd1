"""Global arrays over the processes of a run: built from process-local data, read back.

A global ``jax.Array`` spans the devices of every process; each process holds the
shards on its own devices. ``fg.jit`` takes and returns such arrays when its
``in_shardings``/``out_shardings`` are on a mesh of all processes' devices: every
process runs the same program and XLA's SPMD partitioner inserts the communication.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, Sharding

from funcgrad.distributed._groups import world

__all__ = [
    "broadcast_one_to_all",
    "global_mesh",
    "local_shards",
    "make_array_from_process_local_data",
    "process_allgather",
    "sync_global_devices",
]


def global_mesh(axis_names: str | Sequence[str] = "data", platform: str | None = None) -> Mesh:
    """A one-axis mesh of every device of every process, in process order.

    Args:
        axis_names: the mesh axis name (or a one-name sequence).
        platform: ``"cpu"``, ``"gpu"``, or ``None`` for JAX's default backend.

    Returns:
        A ``jax.sharding.Mesh`` usable in ``fg.jit``'s shardings.
    """
    names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(names) != 1:
        raise ValueError(f"global_mesh: one axis name expected, got {names}")
    devs = sorted(jax.devices(platform), key=lambda d: (d.process_index, d.id))
    return Mesh(np.array(devs), names)


def make_array_from_process_local_data(
    sharding: Sharding, local_data: Any, global_shape: Sequence[int] | None = None
) -> jax.Array:
    """The global array whose process-local part is ``local_data``.

    Args:
        sharding: the global array's sharding (its mesh spans the processes).
        local_data: this process's rows (for a batch split over processes: its slice).
        global_shape: the global shape; inferred from the sharding when ``None``.

    Returns:
        A ``jax.Array`` of ``global_shape`` laid out as ``sharding``.
    """
    shape = None if global_shape is None else tuple(global_shape)
    return jax.make_array_from_process_local_data(sharding, np.asarray(local_data), shape)


def local_shards(x: jax.Array) -> list[np.ndarray]:
    """This process's shards of the global array ``x`` as NumPy arrays, by device id."""
    shards = sorted(x.addressable_shards, key=lambda s: s.device.id)
    return [np.asarray(s.data) for s in shards]


def process_allgather(x: Any, tiled: bool = False) -> np.ndarray:
    """Every process's ``x`` (same shape and dtype), stacked (or concatenated if ``tiled``)."""
    g = np.asarray(world().all_gather(x))
    return g.reshape((-1, *g.shape[2:])) if tiled and g.ndim > 1 else g


def broadcast_one_to_all(x: Any, is_source: bool | None = None) -> np.ndarray:
    """Process 0's ``x`` on every process (``is_source``: which process sends instead)."""
    g = world()
    if is_source is None:
        src = 0
    else:
        flags = np.asarray(g.all_gather(np.asarray(bool(is_source))))
        if flags.sum() != 1:
            raise ValueError(f"broadcast_one_to_all: {int(flags.sum())} processes are sources")
        src = int(flags.argmax())
    return np.asarray(g.broadcast(x, src))


def sync_global_devices(name: str) -> None:
    """A barrier over every process, named ``name`` for the error if one does not arrive."""
    world().barrier(f"sync_global_devices({name!r})")
