"""funcgrad: composable function transforms over immutable arrays, compiled through XLA.

import funcgrad as fg
import funcgrad.numpy as fnp

fg.grad(lambda x: fnp.sum(fnp.sin(x) ** 2))(fnp.ones(3))
"""

from funcgrad import (
    custom_batching,  # noqa: F401  (fg.custom_batching, like jax.custom_batching)
    custom_derivatives,  # noqa: F401  (fg.custom_derivatives, like jax.custom_derivatives)
    errors,  # noqa: F401  (fg.errors, like jax.errors)
    lax,  # noqa: F401  (fg.lax, like jax.lax: convolutions)
    numpy,  # noqa: F401  (installs tracer operators)
    primitives,  # noqa: F401  (registers every primitive)
    random,  # noqa: F401  (fg.random, like jax.random)
    sharding,  # noqa: F401  (fg.sharding, like jax.sharding)
)
from funcgrad.ad_checkpoint import checkpoint, remat
from funcgrad.api import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    make_ir,
    shard_map,
    value_and_grad,
    vjp,
    vmap,
)
from funcgrad.callbacks import pure_callback
from funcgrad.control_flow import cond, fori_loop, scan, switch, while_loop
from funcgrad.core.errors import ConcretizationError, LeakedTracerError
from funcgrad.core.interp import Tracer
from funcgrad.core.ir import Aval, Eqn, Literal, Program, Var
from funcgrad.custom import custom_jvp, custom_vjp
from funcgrad.custom_derivatives import custom_gradient
from funcgrad.interop._jax_array import Array
from funcgrad.jit import jit
from funcgrad.primitives.calls import stop_gradient
from funcgrad.sharding import NamedSharding, make_mesh, reshard, set_mesh
from funcgrad.sharding import PartitionSpec as P
from funcgrad.toplevel import (
    Device,
    ShapeDtypeStruct,
    block_until_ready,
    cache_info,
    clear_caches,
    closure_convert,
    debug_infs,
    debug_nans,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    effects_barrier,
    enable_checks,
    ensure_compile_time_eval,
    eval_shape,
    float0,
    linear_transpose,
    local_device_count,
    local_devices,
    make_jaxpr,
    process_count,
    process_index,
    typeof,
)

__version__ = "0.1.0"

# the size of XLA's CPU thread pool (the option funcgrad_cpu_threads); executables kept
# on disk across runs (needs __version__: it names the cache directory)
from funcgrad.core import cpu_threads as _cpu_threads  # noqa: F401
from funcgrad.core import disk_cache as _disk_cache  # noqa: F401
from funcgrad.core.tiers import eager_tier

#: JAX's name for the reverse-mode Jacobian
jacobian = jacrev

__all__ = [
    "Array",
    "Aval",
    "ConcretizationError",
    "Device",
    "Eqn",
    "LeakedTracerError",
    "Literal",
    "NamedSharding",
    "P",
    "Program",
    "ShapeDtypeStruct",
    "Tracer",
    "Var",
    "block_until_ready",
    "cache_info",
    "checkpoint",
    "checkpoint_policies",
    "clear_caches",
    "closure_convert",
    "cond",
    "custom_gradient",
    "custom_jvp",
    "custom_vjp",
    "debug_infs",
    "debug_nans",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "eager_tier",
    "effects_barrier",
    "enable_checks",
    "ensure_compile_time_eval",
    "eval_shape",
    "float0",
    "fori_loop",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jit",
    "jvp",
    "linear_transpose",
    "linearize",
    "local_device_count",
    "local_devices",
    "make_ir",
    "make_jaxpr",
    "make_mesh",
    "process_count",
    "process_index",
    "pure_callback",
    "remat",
    "reshard",
    "scan",
    "set_mesh",
    "shard_map",
    "stop_gradient",
    "switch",
    "typeof",
    "value_and_grad",
    "vjp",
    "vmap",
    "while_loop",
]

_LAZY_SUBMODULES = (
    "dtypes",
    "optim",
    "interop",
    "nn",
    "testing",
    "scipy",
    "image",
    "debug",
    "tree",
    "tree_util",
    "config",
    "checkpoint_policies",
    "ad_checkpoint",
    "distributed",
    "ops",
)


def __getattr__(name: str) -> object:
    """``fg.optim``, ``fg.interop``, ``fg.nn``, ``fg.testing`` on first access."""
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"funcgrad.{name}")
    raise AttributeError(f"module 'funcgrad' has no attribute {name!r}")


# the ~120,000 objects the imports left alive stay out of Python's full collections
from funcgrad.core import gc_freeze as _gc_freeze  # noqa: E402

_gc_freeze.freeze()
