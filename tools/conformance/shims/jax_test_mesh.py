"""The mesh helpers of JAX's ``jtu`` (``create_mesh``, ``with_explicit_mesh``,
``with_mesh``), written on the swapped ``jax`` (funcgrad's ``make_mesh``, ``set_mesh`` and
``devices``), and ``pjit``, JAX's older spelling of ``jit``.

JAX's sharding tests (``shard_map_test``, ``pjit_test``) build every mesh through them; a
mesh larger than the devices there skips the test, as JAX's helper does.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import math
import unittest
from collections.abc import Callable, Iterator, Sequence
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
        # (named as JAX's own wrapper, so that both runs group the tests alike)
        def mesh_fn(*args: Any, **kwargs: Any) -> Any:
            mesh = create_mesh(sizes, names, iota_order, axis_types=axis_types)
            with jax.set_mesh(mesh):
                return fn(*args, **kwargs, mesh=mesh)

        return mesh_fn

    return decorator


@contextlib.contextmanager
def with_mesh(named_shape: Sequence[tuple[str, int]]) -> Iterator[None]:
    """The block (or, as a decorator, the test) run inside ``with Mesh(...)`` of the first
    devices, one mesh axis per ``(name, size)`` pair: JAX's older mesh context, under
    which a ``PartitionSpec`` given to ``jit`` names that mesh's axes."""
    names = tuple(n for n, _ in named_shape)
    shape = tuple(s for _, s in named_shape)
    size = math.prod(shape)
    devices = jax.local_devices()
    if len(devices) < size:
        raise unittest.SkipTest(f"Test requires {size} local devices")
    with jax.sharding.Mesh(np.array(devices[:size]).reshape(shape), names):
        yield


def with_mesh_from_kwargs(f: Callable) -> Callable:
    """Decorator: the test run under :func:`with_mesh` of its ``mesh`` keyword."""
    return lambda *args, **kwargs: with_mesh(kwargs["mesh"])(f)(*args, **kwargs)


def _resource_mesh() -> Any:
    """The mesh of the innermost ``with mesh:`` block (JAX's resource environment; the
    runtime's own object, read off the real ``jax``: funcgrad's meshes are JAX's)."""
    return importlib.import_module("jax._src.mesh").thread_resources.env.physical_mesh


def _replicated_if_none(specs: Any, mesh: Any) -> Any:
    """``pjit``'s reading of its shardings under a mesh: ``None`` is replicated over it."""
    if specs is None:
        return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    if isinstance(specs, (jax.sharding.PartitionSpec, jax.sharding.Sharding)):
        return specs
    if isinstance(specs, (tuple, list)):
        return type(specs)(_replicated_if_none(s, mesh) for s in specs)
    if isinstance(specs, dict):
        return {k: _replicated_if_none(s, mesh) for k, s in specs.items()}
    return specs


class _Pjit:
    """``pjit(fun, ...)``: under a ``with mesh:`` block, ``fun`` jitted and called with that
    mesh set (its ``PartitionSpec``s name that mesh's axes; ``None`` shardings are
    replicated over it), else a plain ``jit``."""

    def __init__(self, fun: Callable, in_shardings: Any, out_shardings: Any, kw: dict) -> None:
        self._fun, self._in, self._out, self._kw = fun, in_shardings, out_shardings, kw
        self._cache: dict[Any, Any] = {}
        functools.update_wrapper(self, fun)

    def _jitted(self, mesh: Any) -> Any:
        key = None if mesh.empty else mesh
        if key not in self._cache:
            ins, outs = self._in, self._out
            if key is not None:
                ins, outs = _replicated_if_none(ins, mesh), _replicated_if_none(outs, mesh)
            self._cache[key] = jax.jit(self._fun, in_shardings=ins, out_shardings=outs, **self._kw)
        return self._cache[key]

    def _run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        mesh = _resource_mesh()
        fn = self._jitted(mesh)
        fn = fn if method == "__call__" else getattr(fn, method)
        if mesh.empty or jax.sharding.get_abstract_mesh() == mesh.abstract_mesh:
            return fn(*args, **kwargs)  # (no mesh, or set already: a nested pjit)
        try:
            ctx = jax.set_mesh(mesh)
            ctx.__enter__()
        except ValueError:  # (inside JAX's trace, which the outer call entered: its
            # abstract mesh, over which a nested pjit's specs are read)
            with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
                return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            ctx.__exit__(None, None, None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("__call__", *args, **kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("lower", *args, **kwargs)

    def trace(self, *args: Any, **kwargs: Any) -> Any:
        return self._run("trace", *args, **kwargs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)


def pjit(
    fun: Callable,
    in_shardings: Any = None,
    out_shardings: Any = None,
    **kwargs: Any,
) -> Any:
    """``jax.experimental.pjit.pjit``: ``jit`` with the shardings second and third by
    position, read against the mesh of a ``with mesh:`` block as JAX's ``pjit`` reads
    them (on the swapped ``jax.jit``, funcgrad's)."""
    return _Pjit(fun, in_shardings, out_shardings, kwargs)
