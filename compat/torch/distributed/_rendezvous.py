"""How the processes of a run find each other: ``init_method`` URLs as PyTorch reads them.

``env://`` reads ``MASTER_ADDR``, ``MASTER_PORT``, ``RANK`` and ``WORLD_SIZE``;
``tcp://host:port`` names the coordinator and takes rank and world size from the
arguments; ``file:///path`` lets rank 0 publish a free port of its host in the file,
which the others wait for (use a new file, or an empty one, per run, as PyTorch asks).
The coordinator address is where process 0 serves JAX's coordination service.
"""

from __future__ import annotations

import os
import socket
import time
import urllib.parse

__all__ = ["rendezvous"]


def _err(scheme: str, what: str) -> ValueError:
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: {what}")


def _env(name: str) -> str:
    v = os.environ.get(name)
    if v in (None, ""):
        raise _err("env", f"environment variable {name} expected, but not set")
    return v


def _int(scheme: str, name: str, v: str) -> int:
    try:
        return int(v)
    except ValueError:
        raise _err(scheme, f"{name}={v!r} is not an integer") from None


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _host_address() -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _file(path: str, rank: int, timeout: float) -> str:
    """Rank 0 writes ``host:port`` into ``path``; the others read it when it appears."""
    if rank == 0:
        host = _host_address()
        addr = f"{host}:{_free_port(host)}"
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(addr)
        os.replace(tmp, path)
        return addr
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                addr = f.read().strip()
            if addr:
                return addr
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise RuntimeError(
        f"Error initializing torch.distributed using file:// rendezvous: rank 0 did not write "
        f"{path} within {timeout:g} s"
    )


def rendezvous(
    init_method: str, rank: int, world_size: int, timeout: float
) -> tuple[str, int, int]:
    """``(coordinator address, rank, world size)`` for ``init_method``.

    ``rank`` and ``world_size`` of ``-1`` mean "not given": env:// reads them from the
    environment, the other methods raise PyTorch's ``ValueError``.

    Raises:
        RuntimeError: an unknown scheme (PyTorch's "No rendezvous handler").
        ValueError: a missing rank, world size, variable or port.
    """
    url = urllib.parse.urlparse(init_method)
    scheme = url.scheme
    query = dict(urllib.parse.parse_qsl(url.query))
    if rank < 0 and "rank" in query:
        rank = _int(scheme, "rank", query["rank"])
    if world_size < 0 and "world_size" in query:
        world_size = _int(scheme, "world_size", query["world_size"])
    if scheme == "env":
        if rank < 0:
            rank = _int("env", "RANK", _env("RANK"))
        if world_size < 0:
            world_size = _int("env", "WORLD_SIZE", _env("WORLD_SIZE"))
        addr = f"{_env('MASTER_ADDR')}:{_int('env', 'MASTER_PORT', _env('MASTER_PORT'))}"
        return addr, rank, world_size
    if scheme not in ("tcp", "file"):
        raise RuntimeError(f"No rendezvous handler for {scheme}://")
    if rank < 0:
        raise _err(scheme, "rank parameter missing")
    if world_size < 0:
        raise _err(scheme, "world size parameter missing")
    if scheme == "tcp":
        if url.port is None:
            raise _err("tcp", "port number missing")
        return f"{url.hostname}:{url.port}", rank, world_size
    return _file(url.path, rank, timeout), rank, world_size
