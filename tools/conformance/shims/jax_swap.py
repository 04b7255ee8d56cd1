"""The ``jax`` -> ``funcgrad`` swap for JAX's test files.

``jax.X`` resolves to ``funcgrad.X`` name for name; ``jax._src.test_util`` (and
``jax.test_util``'s helpers) to :mod:`tools.conformance.shims.jax_test_util`; a few
of JAX's private modules whose names the test files import at top level map onto
the public namesakes funcgrad has (``jax._src.api`` -> ``funcgrad``); everything
else under ``jax._src`` is JAX's implementation: looked-up names there are recorded
as internals.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import importlib.util
import pathlib
import types
from collections.abc import Iterator
from typing import Any

import numpy as np

from tools import jax_coverage
from tools.conformance.shims.swap import Alias, Missing, Swap

SHIM = "tools.conformance.shims.jax_test_util"
MESH_SHIM = "tools.conformance.shims.jax_test_mesh"
UTIL = "tools.conformance.shims.jax_util"
DTYPE_UTIL = "tools.conformance.shims.jax_dtype_util"


#: public JAX names whose tests are out of scope, and why (a test looking one up is
#: listed as out of scope whatever its outcome)
SCOPE: dict[str, str] = {
    "jax.make_jaxpr": "jaxpr text and JAX's IR",
    "jax.pmap": "pmap / several devices",
    "jax.random.key_data": "typed PRNG keys",
    "jax.random.wrap_key_data": "typed PRNG keys",
    "jax.random.key_impl": "typed PRNG keys",
    "jax.dtypes.prng_key": "typed PRNG keys",
    "jax.export": "jax.export",
    **{
        f"jax.lax.{name}": "named-axis collectives (pmap/shard_map)"
        for name in (
            "pbroadcast",
            "pcast",
            "pvary",
        )
    },
    # configuration of JAX's own runtime: out of scope in docs/jax-coverage.md
    "jax.numpy_dtype_promotion": "JAX runtime configuration",
    "jax.numpy_rank_promotion": "JAX runtime configuration",
    "jax.default_matmul_precision": "JAX runtime configuration",
    "jax.enable_x64": "JAX runtime configuration",
    "jax.disable_jit": "JAX runtime configuration",
    "jax.transfer_guard": "JAX runtime configuration",
    "jax.log_compiles": "JAX runtime configuration",
    "jax.checking_leaks": "JAX runtime configuration",
    "jax.check_tracer_leaks": "JAX runtime configuration",
    "jax.default_device": "JAX runtime configuration",
    "jax.default_prng_impl": "JAX runtime configuration",
    "jax.legacy_prng_key": "JAX runtime configuration",
    "jax.enable_custom_prng": "JAX runtime configuration",
    "re:jax\\.lax\\.[a-z0-9_]+_p": "JAX's primitives (funcgrad has its own)",
    # the dtype of typed keys (``key<impl>``), which funcgrad's raw keys do not have
    "jax.random.key_dtype": "typed PRNG keys",
    # JAX's private helper listing the residuals of its own jaxpr as (aval, description)
    # pairs (not in jax.ad_checkpoint); the rename of its module would hand tests
    # funcgrad.debug.saved_residuals, whose rows and choice of residuals are funcgrad's
    "jax._src.ad_checkpoint.saved_residuals": "jaxpr text of residuals",
}

#: the short reasons for the out-of-scope classes of ``docs/jax-coverage.md``
_COVERAGE_REASONS = {
    jax_coverage._CONFIG: "JAX runtime configuration",
    jax_coverage._MESH: "device meshes and several devices",
    jax_coverage._KEYS: "typed PRNG keys",
}


def _coverage_scope() -> dict[str, str]:
    """The names ``docs/jax-coverage.md`` calls out of scope (JAX's runtime
    configuration, device meshes, typed keys) that funcgrad does not have."""
    out = {}
    for ns, names in jax_coverage.OUT_OF_SCOPE.items():
        target = importlib.import_module(ns.replace("jax", "funcgrad", 1))
        for name, why in names.items():
            if why in _COVERAGE_REASONS and not hasattr(target, name):
                out.setdefault(f"{ns}.{name}", _COVERAGE_REASONS[why])
    return out


#: ``jax._src.random.prng.prngs``'s keys in JAX 0.10.2 (read from that JAX)
PRNG_NAMES = ["philox2x32", "philox4x32", "threefry2x32", "rbg", "unsafe_rbg", "threefry4x32"]


def make_swap() -> Swap:
    """The swap, with the ``jtu`` shim registered as an importer of swapped names."""
    swap: Swap

    def jtu() -> Any:
        swap.add_importer(SHIM)
        swap.add_importer(MESH_SHIM)
        return importlib.import_module(SHIM)

    def prng() -> Any:
        # random_test builds its case names from the PRNG implementations' names at
        # import: the same names, in JAX 0.10.2's registration order; each is internal
        mod = Alias("jax._src.random.prng", None, swap)
        mod.__dict__["prngs"] = {
            n: Missing(f"jax._src.random.prng.prngs[{n!r}]", "internal") for n in PRNG_NAMES
        }
        return mod

    def core() -> Any:
        # ``jax._src.core`` is JAX's internals, but the errors of ``jax.errors`` live
        # there too and tests name them through it (``core.ConcretizationTypeError``):
        # those are funcgrad's public errors of the same names
        mod = Alias("jax._src.core", None, swap)
        real_core = importlib.import_module("jax._src.core")
        real_errors = importlib.import_module("jax.errors")
        ours = importlib.import_module("funcgrad.errors")
        for name in dir(real_errors):
            public = getattr(real_errors, name)
            if getattr(real_core, name, None) is public and hasattr(ours, name):
                mod.__dict__[name] = getattr(ours, name)
        # the error of a sharding over explicit axes that leaves a result's type open
        # (``jax.errors`` does not hold it): funcgrad's, which is JAX's own class
        mod.__dict__["ShardingTypeError"] = ours.ShardingTypeError
        # the class of ``lax.create_token``'s values (public in JAX as
        # ``jax.extend.core.Token``): the class of funcgrad's tokens
        lax = importlib.import_module("funcgrad.lax")
        mod.__dict__["Token"] = type(lax.create_token())
        # the class of ``jax.typeof``'s values (public as ``jax.core.ShapedArray``)
        mod.__dict__["ShapedArray"] = importlib.import_module("funcgrad.core.ir").ShapedArray
        # the class of traced values (public as ``jax.core.Tracer``): funcgrad's
        mod.__dict__["Tracer"] = importlib.import_module("funcgrad.core.interp").Tracer
        return mod

    def public_core() -> Any:
        # ``jax.core``: JAX's public module of its IR's types; ``ShapedArray`` is the
        # class of ``jax.typeof``'s values, which is funcgrad's (``fg.typeof``'s);
        # shard_map_test names its sampled cases with it at import
        mod = Alias("jax.core", importlib.import_module("funcgrad.core"), swap)
        mod.__dict__["ShapedArray"] = importlib.import_module("funcgrad.core.ir").ShapedArray
        return mod

    def shard_map_module() -> Any:
        # ``jax.shard_map`` is this module's ``shard_map``: funcgrad's; the rest of the
        # module stays internal
        mod = Alias("jax._src.shard_map", None, swap)
        mod.__dict__["shard_map"] = importlib.import_module("funcgrad").shard_map
        return mod

    def mesh() -> Any:
        # the mesh names ``jax.sharding`` makes public from here (``AxisType``,
        # ``get_abstract_mesh``): funcgrad.sharding's; the rest stays internal
        mod = Alias("jax._src.mesh", None, swap)
        ours = importlib.import_module("funcgrad.sharding")
        for name in ("AxisType", "get_abstract_mesh", "AbstractMesh", "Mesh"):
            mod.__dict__[name] = getattr(ours, name)
        # the empty meshes are values of those classes (funcgrad's meshes are JAX's)
        mod.__dict__["empty_concrete_mesh"] = ours.Mesh(np.empty((), dtype=object), ())
        mod.__dict__["empty_abstract_mesh"] = ours.AbstractMesh((), ())
        return mod

    def sharding_impls() -> Any:
        # the sharding classes ``jax.sharding`` makes public from JAX's private modules
        # (``sharding_impls.NamedSharding``, ``sharding.Sharding``...): funcgrad.sharding's
        # (JAX's own classes, by funcgrad's design); the rest stays internal
        ours = importlib.import_module("funcgrad.sharding")
        mods = {}
        for private, names in (
            ("jax._src.sharding_impls", ("NamedSharding", "SingleDeviceSharding", "PartitionSpec")),
            ("jax._src.sharding", ("Sharding",)),
            ("jax._src.partition_spec", ("PartitionSpec",)),
        ):
            mod = Alias(private, None, swap)
            for name in names:
                mod.__dict__[name] = getattr(ours, name)
            mods[private] = mod
        # the error a sharding that does not divide a shape raises: JAX's class (the
        # shardings are JAX's), public as ``jax.sharding.IndivisibleError`` in later JAX
        real = importlib.import_module("jax._src.sharding")
        mods["jax._src.sharding"].__dict__["IndivisibleError"] = real.IndivisibleError
        return mods

    def named_sharding() -> Any:
        # the error ``NamedSharding`` raises for an axis named twice in a spec: the class
        # is JAX's (funcgrad's NamedSharding is JAX's), public as
        # ``jax.sharding.DuplicateSpecError`` in later JAX
        mod = Alias("jax._src.named_sharding", None, swap)
        real = importlib.import_module("jax._src.named_sharding")
        mod.__dict__["DuplicateSpecError"] = real.DuplicateSpecError
        return mod

    def pjit() -> Any:
        # ``pjit`` (public as ``jax.experimental.pjit.pjit``): ``jit`` with positional
        # shardings, on the swapped ``jit``; the rest of the module stays internal
        mod = Alias("jax._src.pjit", None, swap)
        swap.add_importer(MESH_SHIM)  # (its ``jax`` is the swapped one)
        mod.__dict__["pjit"] = importlib.import_module(MESH_SHIM).pjit
        return mod

    def array() -> Any:
        # funcgrad's concrete arrays are the runtime's own ``ArrayImpl`` objects (what
        # ``jax.Array`` is at run time), so ``array.ArrayImpl`` is that class (read
        # off jaxlib: making an array would start the backend before a test file's
        # ``jtu.request_cpu_devices``)
        mod = Alias("jax._src.array", None, swap)
        mod.__dict__["ArrayImpl"] = importlib.import_module("jaxlib._jax").ArrayImpl
        return mod

    def config() -> Any:
        return _Config("jax._src.config", importlib.import_module("funcgrad.config"), swap)

    def dtypes() -> Any:
        # funcgrad.dtypes, plus JAX's private lists of dtypes (``_float8_dtypes``)
        # that test files build their cases from: data, the same in both runs
        ours = importlib.import_module("funcgrad.dtypes")
        mod = Alias("jax._src.dtypes", ours, swap)
        real = importlib.import_module("jax._src.dtypes")
        for name, value in vars(real).items():
            if name.startswith("_") and _is_dtype_list(value):
                mod.__dict__[name] = list(value)
            elif _is_scalar_type(value) and not hasattr(ours, name):
                # the scalar types it re-exports (``float8_e4m3fn``, ``int4``): data
                mod.__dict__[name] = value
        # the dtype helpers test files build NumPy references with (own code)
        helpers = importlib.import_module(DTYPE_UTIL)
        for name in ("to_inexact_dtype", "to_floating_dtype", "to_complex_dtype"):
            mod.__dict__[name] = getattr(helpers, name)
        # the dtypes arrays of Python scalars get (float32 and int32 without x64),
        # read from funcgrad's canonicalisation (stax_test builds its inputs with them)
        mod.__dict__["default_float_dtype"] = lambda: ours.canonicalize_dtype(np.float64)
        mod.__dict__["default_int_dtype"] = lambda: ours.canonicalize_dtype(np.int64)

        def dtype(x: Any, canonicalize: bool = False) -> np.dtype:
            # the dtype of a value or dtype-like (Python scalars: their 64-bit types)
            if type(x) in helpers.PYTHON_SCALAR_DTYPES:
                dt = helpers.PYTHON_SCALAR_DTYPES[type(x)]
            else:
                dt = np.dtype(getattr(x, "dtype", x))
            return ours.canonicalize_dtype(dt) if canonicalize else dt

        mod.__dict__["dtype"] = dtype
        return mod

    def debugging() -> Any:
        # JAX's ``jax.debug.print``/``callback`` are ``debugging.debug_print``/
        # ``debug_callback`` (the same objects), which debugging_primitives_test reads
        # from here: funcgrad.debug's; the rest of the module stays internal
        ours = importlib.import_module("funcgrad.debug")
        mod = Alias("jax._src.debugging", None, swap)
        mod.__dict__["debug_print"] = ours.print
        mod.__dict__["debug_callback"] = ours.callback
        return mod

    def dispatch() -> Any:
        # the ordered-effect tokens of the runtime funcgrad lowers to (funcgrad's ordered
        # debug callbacks are JAX's), which debugging_primitives_test clears in tearDown;
        # the rest of the module stays internal
        mod = Alias("jax._src.dispatch", None, swap)
        real = importlib.import_module("jax._src.dispatch")
        mod.__dict__["runtime_tokens"] = real.runtime_tokens
        return mod

    def lax_test_util() -> Any:
        # JAX's table of lax operations for its lax tests (a test helper beside
        # ``test_util``): upstream's own module, read from the JAX funcgrad runs on
        # (the pinned version) and run under the swap, so its operations are
        # funcgrad's and its random inputs the ``jtu`` shim's
        return _load_under_swap(swap, "jax._src.internal_test_util.lax_test_util")

    def lib() -> Any:
        # the runtime's version numbers, read from the jaxlib funcgrad runs on
        mod = Alias("jax._src.lib", None, swap)
        real = importlib.import_module("jax._src.lib")
        for name in ("jaxlib_extension_version", "version", "version_str"):
            mod.__dict__[name] = getattr(real, name)
        return mod

    swap = _JaxSwap(
        root="jax",
        target="funcgrad",
        overrides={
            "jax._src.test_util": jtu,
            "jax._src.random.prng": prng,
            "jax._src.config": config,
            "jax._src.core": core,
            "jax.core": public_core,
            "jax._src.shard_map": shard_map_module,
            "jax._src.mesh": mesh,
            "jax._src.array": array,
            "jax._src.sharding_impls": lambda: sharding_impls()["jax._src.sharding_impls"],
            "jax._src.sharding": lambda: sharding_impls()["jax._src.sharding"],
            "jax._src.partition_spec": lambda: sharding_impls()["jax._src.partition_spec"],
            "jax._src.named_sharding": named_sharding,
            "jax._src.pjit": pjit,
            "jax._src.lib": lib,
            "jax._src.dtypes": dtypes,
            "jax._src.debugging": debugging,
            "jax._src.dispatch": dispatch,
            "jax._src.internal_test_util.lax_test_util": lax_test_util,
            # NumPy reference implementations of lax's operations: the oracle of
            # lax_test, the same module (JAX's own) in both runs
            "jax._src.lax_reference": lambda: importlib.import_module("jax._src.lax_reference"),
            "jax._src.util": lambda: Alias("jax._src.util", importlib.import_module(UTIL), swap),
        },
        internal=("jax._src", "jax.interpreters", "jax.extend", "jax.experimental"),
        renames={
            "jax._src.api": "funcgrad",
            "jax._src.ad_checkpoint": "funcgrad.ad_checkpoint",
            # an attribute of jax.ad_checkpoint (JAX's module of policies), funcgrad's too
            "jax.ad_checkpoint.checkpoint_policies": "funcgrad.checkpoint_policies",
            "jax._src.custom_derivatives": "funcgrad.custom_derivatives",
            "jax._src.random": "funcgrad.random",
            "jax._src.lax.control_flow": "funcgrad.lax",
            "jax._src.tree_util": "funcgrad.tree_util",
            "jax._src.numpy": "funcgrad.numpy",
            # the package ``jax.lax`` re-exports; its primitives (``add_p``) and private
            # names stay internals (funcgrad.lax lacks them)
            "jax._src.lax": "funcgrad.lax",
            "jax._src.lax.linalg": "funcgrad.lax.linalg",
            "jax._src.errors": "funcgrad.errors",
            # checkify's exception types (``JaxRuntimeError``, ``FailedCheckError``,
            # ``OOBError``) are public in funcgrad's module; its effects stay internals
            "jax._src.checkify": "funcgrad.experimental.checkify",
        },
        scope={**_coverage_scope(), **SCOPE},
    )
    import funcgrad  # noqa: F401 - funcgrad (and the real jax under it) loads first

    return swap


#: ``jax.experimental``'s public submodules of transformations, solvers and RNGs (JAX's API
#: documentation lists them): absent ones count as missing names, not internals
PUBLIC_EXPERIMENTAL = ("ode", "jet", "checkify", "random")


class _JaxSwap(Swap):
    """The swap with ``jax.experimental``'s public submodules (``PUBLIC_EXPERIMENTAL``)
    taken out of the internal package ``jax.experimental``."""

    def _is_internal(self, name: str) -> bool:
        for sub in PUBLIC_EXPERIMENTAL:
            public = f"jax.experimental.{sub}"
            if name == public or name.startswith(public + "."):
                # its private names (``jet._logistic_taylor``) stay internals
                return any(part.startswith("_") for part in name.split(".")[3:])
        return super()._is_internal(name)


def _is_dtype_list(value: Any) -> bool:
    """Whether ``value`` is a non-empty list of NumPy dtypes or scalar types (or of the
    Python scalar types, ``_weak_types``)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(v, np.dtype)
            or (isinstance(v, type) and issubclass(v, np.generic))
            or v in (bool, int, float, complex)
            for v in value
        )
    )


def _is_scalar_type(value: Any) -> bool:
    """Whether ``value`` is one of NumPy's or ml_dtypes' scalar types (not JAX's own)."""
    return (
        isinstance(value, type)
        and issubclass(value, np.generic)
        and value.__module__.split(".")[0] in ("numpy", "ml_dtypes")
    )


def _load_under_swap(swap: Swap, name: str) -> types.ModuleType:
    """Upstream module ``name``, executed from the installed JAX's source with its
    own imports of ``jax`` swapped (it is registered as an importer)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ImportError(f"{name} is not in the installed JAX")
    own = f"{__name__}.upstream.{name}"
    mod = types.ModuleType(own)
    mod.__file__ = spec.origin
    swap.add_importer(own)
    code = compile(pathlib.Path(spec.origin).read_text(), spec.origin, "exec", dont_inherit=True)
    exec(code, mod.__dict__)
    return mod


class _Flag:
    """A JAX option as ``jax._src.config`` exposes it: ``.value`` reads it through
    ``funcgrad.config``; calling it gives a context manager that sets it."""

    def __init__(self, cfg: Any, name: str) -> None:
        self._cfg, self._name = cfg, name

    @property
    def value(self) -> Any:
        return self._cfg.read(self._name)

    def __call__(self, new: Any) -> Any:
        return _set_option(self._cfg, self._name, new)


@contextlib.contextmanager
def _set_option(cfg: Any, name: str, new: Any) -> Iterator[None]:
    old = cfg.read(name)
    cfg.update(name, new)
    try:
        yield
    finally:
        cfg.update(name, old)


class _Config(Alias):
    """``jax._src.config`` over ``funcgrad.config``: options by name (``.value``,
    context managers), ``parse_flags_with_absl`` a no-op."""

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        target = self.__dict__["_target"]
        if attr == "parse_flags_with_absl":
            return lambda *a, **k: None
        real = getattr(importlib.import_module("jax._src.config"), attr, None)
        if isinstance(real, type) and issubclass(real, enum.Enum):
            return real  # an option's values (ExplicitX64Mode): the runtime's enum
        name = getattr(real, "name", None)
        if isinstance(name, str) and name.startswith("jax_") and hasattr(real, "value"):
            # an option as JAX's module holds it (``config.jax_foo``/``config.foo``, a
            # State: ``.value``, a context manager when called), read through funcgrad
            try:
                target.read(name)
            except AttributeError:
                return super().__getattr__(attr)
            return _Flag(target, name)
        if hasattr(target, attr):
            return getattr(target, attr)
        try:
            target.read(f"jax_{attr}")
        except AttributeError:
            return super().__getattr__(attr)
        return _Flag(target, f"jax_{attr}")
