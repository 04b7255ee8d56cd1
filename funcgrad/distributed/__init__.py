"""``funcgrad.distributed``: several processes, one program (as ``jax.distributed``).

Start every process with :func:`initialize` (arguments or environment variables),
then build global arrays from each process's data, run ``fg.jit`` with shardings on a
mesh spanning the processes (:func:`global_mesh`), and read back the local shards.
:class:`ProcessGroup` gives collectives on process-local arrays (as
``torch.distributed`` does), on which ``compat.torch.distributed`` is built; a
:class:`Bucket` is an all-reduce of fixed arrays prepared once (data parallelism's
gradient average).
"""

from funcgrad.distributed._arrays import (
    broadcast_one_to_all,
    global_mesh,
    local_shards,
    make_array_from_process_local_data,
    process_allgather,
    sync_global_devices,
)
from funcgrad.distributed._buckets import Bucket
from funcgrad.distributed._groups import REDUCE_OPS, ProcessGroup, world
from funcgrad.distributed._runtime import (
    DEFAULT_COLLECTIVE_TIMEOUT,
    DEFAULT_HEARTBEAT_TIMEOUT,
    CollectiveError,
    collective_timeout,
    initialize,
    is_initialized,
    process_count,
    process_index,
    set_collective_timeout,
    shutdown,
)

__all__ = [
    "DEFAULT_COLLECTIVE_TIMEOUT",
    "DEFAULT_HEARTBEAT_TIMEOUT",
    "REDUCE_OPS",
    "Bucket",
    "CollectiveError",
    "ProcessGroup",
    "broadcast_one_to_all",
    "collective_timeout",
    "global_mesh",
    "initialize",
    "is_initialized",
    "local_shards",
    "make_array_from_process_local_data",
    "process_allgather",
    "process_count",
    "process_index",
    "set_collective_timeout",
    "shutdown",
    "sync_global_devices",
    "world",
]
