"""The multi-process runtime: JAX's distributed service, started and queried.

``initialize`` starts ``jax.distributed`` (the coordination service on process 0, a
client in every process) with timeouts chosen so that a failure ends a run instead of
hanging it: a process that stops sending heartbeats (it died) makes the service end
the others within ``heartbeat_timeout`` seconds (30 by default), and every wait
funcgrad itself makes on the other processes (signature checks, barriers) gives up
after ``collective_timeout`` seconds (45 by default). The values are documented on
the "Many devices" page.

The key-value store of the coordination service, used for rendezvous and for the
signature checks of the collectives, is reached through ``jax._src.distributed``
(JAX has no public accessor for it); :func:`kv_client` is the one place that does.
:func:`block_assembler` is another use of JAX's internals: a collective's global
array built from this process's block without JAX's per-call checks; and
:func:`local_executable` the last: a program over a process mesh called with this
process's blocks, through the runtime executable that ``jax.jit`` itself runs; and
:func:`host_to_device`, a host buffer put on a device by JAX's C++ transfer without
``jax.device_put``'s Python layers.
"""

from __future__ import annotations

import functools
import os
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax._src import distributed as _jax_distributed
from jax._src import xla_bridge as _xla_bridge
from jax.sharding import Sharding

from funcgrad.core import compile_cache

try:  # JAX's array class and its abstract value: the checked-once global arrays below
    from jax._src.array import ArrayImpl as _ArrayImpl
    from jax._src.core import ShapedArray as _ShapedArray
    from jax._src.core import update_aval_with_sharding as _with_sharding
except ImportError:  # another JAX: the public, checked path
    _ArrayImpl = None
try:  # the C++ transfer under ``jax.device_put`` (one host buffer to one device)
    from jax._src.lib import xla_client as _xla_client

    _batched_device_put = _xla_client.batched_device_put
except (ImportError, AttributeError):  # another JAX: ``jax.device_put``
    _batched_device_put = None

__all__ = [
    "CollectiveError",
    "block_assembler",
    "collective_timeout",
    "host_to_device",
    "initialize",
    "is_initialized",
    "kv_client",
    "local_executable",
    "process_count",
    "process_index",
    "set_collective_timeout",
    "shutdown",
]

#: seconds without heartbeats after which the coordination service declares a process dead
DEFAULT_HEARTBEAT_TIMEOUT = 30
#: seconds a process waits for the others at a collective's check or a barrier
DEFAULT_COLLECTIVE_TIMEOUT = 45.0
#: seconds ``initialize`` waits for every process to connect
DEFAULT_INITIALIZATION_TIMEOUT = 50

_state: dict[str, Any] = {"initialized": False, "timeout": DEFAULT_COLLECTIVE_TIMEOUT}


class CollectiveError(RuntimeError):
    """A collective failed: a peer process is gone, timed out, or disagreed on the call."""


def _env_int(*names: str) -> int | None:
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            try:
                return int(v)
            except ValueError:
                raise ValueError(
                    f"funcgrad.distributed.initialize: {n}={v!r} is not an integer"
                ) from None
    return None


def _env_address() -> str | None:
    addr = os.environ.get("JAX_COORDINATOR_ADDRESS")
    if addr:
        return addr
    host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
    if host and port:
        return f"{host}:{port}"
    return None


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: int | Sequence[int] | None = None,
    *,
    initialization_timeout: int = DEFAULT_INITIALIZATION_TIMEOUT,
    heartbeat_timeout_seconds: int = DEFAULT_HEARTBEAT_TIMEOUT,
) -> None:
    """Join a multi-process run: connect to (process 0: start) the coordination service.

    Arguments left out are read from the environment: ``JAX_COORDINATOR_ADDRESS``,
    ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``, or torchrun's ``MASTER_ADDR`` +
    ``MASTER_PORT``, ``WORLD_SIZE``, ``RANK``. Call it before any array is created:
    the devices of all processes are fixed when JAX's backend starts.

    Args:
        coordinator_address: ``host:port`` where process 0 serves the coordination service.
        num_processes: how many processes take part.
        process_id: this process's index, ``0 <= process_id < num_processes``.
        local_device_ids: the local devices this process uses (default: all).
        initialization_timeout: seconds to wait for every process to connect.
        heartbeat_timeout_seconds: a process silent this long is declared dead and the
            service ends the others.

    Raises:
        RuntimeError: called twice, or after JAX's backend started; a process that
            cannot reach the coordinator within ``initialization_timeout``.
        ValueError: missing or inconsistent arguments.
    """
    if _state["initialized"]:
        raise RuntimeError("funcgrad.distributed.initialize should only be called once")
    coordinator_address = coordinator_address or _env_address()
    if num_processes is None:
        num_processes = _env_int("JAX_NUM_PROCESSES", "WORLD_SIZE")
    if process_id is None:
        process_id = _env_int("JAX_PROCESS_ID", "RANK")
    missing = [
        n
        for n, v in (
            ("coordinator_address", coordinator_address),
            ("num_processes", num_processes),
            ("process_id", process_id),
        )
        if v is None
    ]
    if missing:
        raise ValueError(
            f"funcgrad.distributed.initialize: {', '.join(missing)} not given and not in the "
            "environment (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID, or "
            "MASTER_ADDR/MASTER_PORT, WORLD_SIZE, RANK)"
        )
    assert num_processes is not None and process_id is not None
    if not 0 <= process_id < num_processes:
        raise ValueError(
            f"funcgrad.distributed.initialize: process_id={process_id} is not in "
            f"[0, {num_processes - 1}] for num_processes={num_processes}"
        )
    if _xla_bridge.backends_are_initialized():
        raise RuntimeError(
            "funcgrad.distributed.initialize must be called before any array is created "
            "(JAX's backend has already started in this process)"
        )
    if process_id != 0:  # JAX's client aborts the process when the coordinator never answers
        _wait_reachable(coordinator_address, initialization_timeout)
    else:  # and its service may crash the process on a port in use
        _check_port_free(coordinator_address)
    try:
        jax.distributed.initialize(
            coordinator_address,
            num_processes,
            process_id,
            local_device_ids,
            initialization_timeout=initialization_timeout,
            heartbeat_timeout_seconds=heartbeat_timeout_seconds,
        )
    except Exception as e:  # JAX's errors are runtime errors of the service
        if process_id == 0 and "Failed to start RPC server" in str(e):
            raise RuntimeError(
                f"funcgrad.distributed.initialize: process 0 could not start the coordination "
                f"service at {coordinator_address} (is the port in use?): {e}"
            ) from None
        raise RuntimeError(
            f"funcgrad.distributed.initialize: process {process_id} of {num_processes} could "
            f"not join the coordination service at {coordinator_address}: {e}"
        ) from e
    _state["initialized"] = True


def _check_port_free(address: str) -> None:
    """Raise if the port of ``host:port`` cannot be bound on every interface (JAX's bind)."""
    port = int(address.rpartition(":")[2])
    for family, host in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
        try:
            s = socket.socket(family, socket.SOCK_STREAM)
        except OSError:  # no IPv6 here: try IPv4
            continue
        with s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
            except OSError as e:
                raise RuntimeError(
                    f"funcgrad.distributed.initialize: process 0 could not start the "
                    f"coordination service at {address} (is the port in use?): {e}"
                ) from None
        return


def _wait_reachable(address: str, timeout: float) -> None:
    """Return once ``host:port`` accepts a TCP connection; raise after ``timeout`` seconds."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                return
        except OSError as e:
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"funcgrad.distributed.initialize: the coordinator at {address} did not "
                    f"answer within {timeout:g} s (is process 0 running?): {e}"
                ) from None
            time.sleep(0.1)


def is_initialized() -> bool:
    """Whether :func:`initialize` has run (and :func:`shutdown` has not)."""
    return bool(_state["initialized"])


def shutdown() -> None:
    """Leave the run: disconnect from (process 0: stop) the coordination service."""
    if _state["initialized"]:
        jax.distributed.shutdown()
        _state["initialized"] = False


def process_index() -> int:
    """This process's index among the processes of the run (0 in a single process)."""
    return jax.process_index()


def process_count() -> int:
    """How many processes take part in the run (1 in a single process)."""
    return jax.process_count()


def collective_timeout() -> float:
    """Seconds a process waits for the others at a collective's check or a barrier."""
    return float(_state["timeout"])


def set_collective_timeout(seconds: float) -> None:
    """Set the seconds a process waits for the others (see :func:`collective_timeout`)."""
    if not seconds > 0:
        raise ValueError(f"collective timeout must be positive, got {seconds}")
    _state["timeout"] = float(seconds)


def kv_client() -> Any:
    """The coordination service's key-value client (``None`` in a single process)."""
    return _jax_distributed.global_state.client


@compile_cache.register_lru_kind("distributed_block_assemblers")
@functools.lru_cache(maxsize=256)
def block_assembler(
    shape: tuple[int, ...], dtype: np.dtype, sharding: Sharding
) -> Callable[[jax.Array], jax.Array]:
    """A function making the global array of ``shape`` and ``sharding`` whose one block
    on this process is the device array it is given (of the block's shape and
    ``dtype``, on this process's one device of ``sharding``: the caller ensures it).

    ``jax.make_array_from_single_device_arrays`` does this with checks of the dtype, the
    block's shape and device and the sharding at every call, a fifth of a prepared
    all-reduce's main-thread time; here the abstract value is made once and the block
    is wrapped as it is. Where this JAX lacks the internals, the public function.
    """
    if _ArrayImpl is not None:
        try:
            aval = _with_sharding(_ShapedArray(shape, np.dtype(dtype)), sharding)
            make = functools.partial(_ArrayImpl, aval, sharding, committed=True, _skip_checks=True)
            return lambda block: make([block])
        except Exception:  # the internals changed: the public path
            pass
    return lambda block: jax.make_array_from_single_device_arrays(shape, sharding, [block])


def local_executable(
    jitted: Any, args: Sequence[jax.ShapeDtypeStruct]
) -> Callable[[Sequence[jax.Array]], list[jax.Array]] | None:
    """``jitted`` (a ``jax.jit`` function over a process mesh) compiled for the global
    arguments ``args`` (shapes, dtypes, shardings), as a function of this process's one
    block of each argument returning its block of each output; ``None`` where this JAX
    lacks the internals or the executable is not a plain one (arguments pruned, tokens).

    A call of the ``jax.jit`` function builds a global array per argument and takes its
    slow path over a mesh with other processes' devices; the runtime executable under
    it takes the blocks as they are (device arrays of this process, of the blocks'
    shapes and dtypes: the caller ensures it) and hands back this process's blocks:
    one dispatch, no global arrays, in or out.
    """
    try:
        compiled = jitted.lower(*args).compile()
        mesh_exe = compiled._executable
        kept = getattr(mesh_exe, "_kept_var_idx", None)
        if kept is not None and set(kept) != set(range(len(args))):
            return None
        exe = mesh_exe.xla_executable
        if not callable(getattr(exe, "execute_sharded", None)):
            return None
    except Exception:  # the internals changed: the caller keeps the public path
        return None

    def call(blocks: Sequence[jax.Array]) -> list[jax.Array]:
        res = exe.execute_sharded(list(blocks))
        return [o[0] for o in res.disassemble_into_single_device_arrays()]

    return call


@compile_cache.register_lru_kind("distributed_device_shardings")
@functools.lru_cache(maxsize=64)
def _single_device(device: Any) -> Sharding:
    return jax.sharding.SingleDeviceSharding(device)


@compile_cache.register_lru_kind("distributed_host_avals")
@functools.lru_cache(maxsize=256)
def _host_aval(shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """The abstract value of a host array (made once: a bucket moves the same flat
    buffer every call, and ``ShapedArray``'s checks were a fifth of the transfer)."""
    return _ShapedArray(shape, dtype)


def host_to_device(x: np.ndarray, device: Any, *, alias: bool = False) -> jax.Array:
    """The host array ``x`` as a committed device array on ``device``, through the C++
    transfer under ``jax.device_put`` without that function's Python layers (measured
    in one process, 85,000 floats, loaded machine: 15 us copied against 120-150 us).
    With ``alias``, a CPU device array may share ``x``'s memory instead of copying it
    (when ``x`` is 64-byte aligned: 5 us): the caller must leave ``x`` unchanged while
    the device array is in use. A dtype JAX would canonicalise (64-bit outside JAX's
    64-bit mode), and a JAX without the internals, take ``jax.device_put``.
    """
    put = _batched_device_put
    if put is not None and _ArrayImpl is not None:
        dtype = x.dtype
        if jax.dtypes.canonicalize_dtype(dtype) == dtype:
            try:
                aval = _host_aval(x.shape, dtype)
                return put(aval, _single_device(device), [x], [device], True, not alias)
            except TypeError:  # the internals changed: the public path
                pass
    return jax.device_put(x, device)
