"""A small stand-in for ``jax._src.test_util`` (``jtu``), written on the public API.

Imported by the swapped conformance run in place of JAX's own module: its ``jax`` is
whatever the swap gives (``funcgrad``). It follows the conventions JAX's test files
rely on, so that the swapped run generates the *same* test cases as the upstream run
(same names, same parameters): case sampling (``sample_product`` picks the cases
``numpy.random.RandomState(42).choice`` picks among the product, first argument
fastest, ``JAX_NUM_GENERATED_CASES`` of them), the dtype lists of a CPU without x64,
shape/dtype strings in case names, and the per-dtype tolerances. Helpers that measure
JAX's own machinery (compile counters, lowering collectors, meshes) are absent: the
swap reports them as missing names, so tests using them are listed, not hidden.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import os
import re
import sys
import textwrap
import types
import unittest
import warnings
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax  # swapped: the library under test
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from absl.testing import absltest, parameterized
from jax import tree_util

from tools.conformance.shims.jax_test_mesh import create_mesh as create_mesh
from tools.conformance.shims.jax_test_mesh import with_explicit_mesh as with_explicit_mesh
from tools.conformance.shims.jax_test_mesh import with_mesh as with_mesh
from tools.conformance.shims.jax_test_mesh import with_mesh_from_kwargs as with_mesh_from_kwargs

# random test inputs, re-exported under JAX's names
from tools.conformance.shims.jax_test_rand import (
    NUMPY_SCALAR_SHAPE as NUMPY_SCALAR_SHAPE,
)
from tools.conformance.shims.jax_test_rand import (
    PYTHON_SCALAR_SHAPE as PYTHON_SCALAR_SHAPE,
)
from tools.conformance.shims.jax_test_rand import (
    ScalarShape as ScalarShape,
)
from tools.conformance.shims.jax_test_rand import (
    _dims_of_shape as _dims_of_shape,
)
from tools.conformance.shims.jax_test_rand import (
    dtype_str as dtype_str,
)
from tools.conformance.shims.jax_test_rand import (
    format_shape_dtype_string as format_shape_dtype_string,
)
from tools.conformance.shims.jax_test_rand import (
    is_valid_shape as is_valid_shape,
)
from tools.conformance.shims.jax_test_rand import (
    rand_bool as rand_bool,
)
from tools.conformance.shims.jax_test_rand import (
    rand_default as rand_default,
)
from tools.conformance.shims.jax_test_rand import (
    rand_fullrange as rand_fullrange,
)
from tools.conformance.shims.jax_test_rand import (
    rand_int as rand_int,
)
from tools.conformance.shims.jax_test_rand import (
    rand_nonzero as rand_nonzero,
)
from tools.conformance.shims.jax_test_rand import (
    rand_not_small as rand_not_small,
)
from tools.conformance.shims.jax_test_rand import (
    rand_positive as rand_positive,
)
from tools.conformance.shims.jax_test_rand import (
    rand_small as rand_small,
)
from tools.conformance.shims.jax_test_rand import (
    rand_small_positive as rand_small_positive,
)
from tools.conformance.shims.jax_test_rand import (
    rand_some_equal as rand_some_equal,
)
from tools.conformance.shims.jax_test_rand import (
    rand_some_inf as rand_some_inf,
)
from tools.conformance.shims.jax_test_rand import (
    rand_some_inf_and_nan as rand_some_inf_and_nan,
)
from tools.conformance.shims.jax_test_rand import (
    rand_some_nan as rand_some_nan,
)
from tools.conformance.shims.jax_test_rand import (
    rand_some_zero as rand_some_zero,
)
from tools.conformance.shims.jax_test_rand import (
    rand_uniform as rand_uniform,
)
from tools.conformance.shims.jax_test_rand import (
    rand_unique_int as rand_unique_int,
)

#: a flag as JAX's test files read it (``jtu.NUM_GENERATED_CASES.value``)
NUM_GENERATED_CASES = types.SimpleNamespace(
    name="jax_num_generated_cases", value=int(os.getenv("JAX_NUM_GENERATED_CASES", "10"))
)

bfloat16 = np.dtype(ml_dtypes.bfloat16)
float0 = np.dtype([("float0", np.void, 0)])


# -- devices and environment ---------------------------------------------------
def device_under_test() -> str:
    """The platform the tests run on (always the CPU here)."""
    return "cpu"


def test_device_matches(device_types: Sequence[str]) -> bool:
    """Whether the device under test is one of ``device_types``."""
    return "cpu" in device_types


def _device_filter(keep: Callable[[], bool], reason: str) -> Callable[[Any], Any]:
    def decorator(test: Any) -> Any:
        if isinstance(test, type):
            return test if keep() else unittest.skip(reason)(test)

        @functools.wraps(test)
        def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
            if not keep():
                raise unittest.SkipTest(reason)
            return test(self, *args, **kwargs)

        return wrapped

    return decorator


def skip_on_devices(*disabled: str, skip_reason: str | None = None) -> Callable:
    """Skip a test on the named platforms."""
    return _device_filter(lambda: "cpu" not in disabled, skip_reason or f"not on {disabled}")


def run_on_devices(*enabled: str, skip_reason: str | None = None) -> Callable:
    """Run a test only on the named platforms."""
    return _device_filter(lambda: "cpu" in enabled, skip_reason or f"only on {enabled}")


def skip_on_flag(flag_name: str, skip_value: Any) -> Callable:
    """Skip when a config flag has a value (the flags are left at their defaults)."""
    return lambda test: test


def thread_unsafe_test(*args: Any, **kwargs: Any) -> Any:
    """Marker (tests run on one thread here)."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


thread_unsafe_test_class = thread_unsafe_test


def pytest_mark_if_available(marker: str) -> Callable:
    """Marker (no pytest marks here)."""
    return lambda f: f


def is_device_rocm() -> bool:
    return False


def is_device_cuda() -> bool:
    return False


def is_device_tpu(version: int | None = None, variant: str = "") -> bool:
    return False


def is_device_tpu_at_least(version: int) -> bool:
    return False


def is_cloud_tpu() -> bool:
    return False


def is_optimized_build() -> bool:
    return True


def is_test_rbe() -> bool:
    """Whether Bazel's remote test toolchain runs the tests (JAX reads the same
    variable)."""
    return os.getenv("IS_JAX_RBE_TESTING", "").lower() in {"true", "1", "yes", "y"}


def is_tsan() -> bool:
    """Whether Python is a ThreadSanitizer build (these runs never are)."""
    return False


def is_gil_disabled() -> bool:
    """Whether this is a free-threaded Python with the GIL off."""
    check = getattr(sys, "_is_gil_enabled", None)
    return check is not None and not check()


def is_sanitized() -> bool:
    return False


def request_cpu_devices(nr_devices: int) -> None:
    """Ask the runtime for ``nr_devices`` CPU devices (JAX's option, before the backend
    starts; too late is ignored, as JAX's helper does): tests needing more skip."""
    with contextlib.suppress(RuntimeError):
        jax.config.update("jax_num_cpu_devices", nr_devices)


def is_running_under_pytest() -> bool:
    return "pytest" in sys.modules


def device_supports_buffer_donation() -> Callable:
    """Decorator: buffer donation is out of scope (the runner lists these tests)."""
    return _device_filter(lambda: False, "out of scope: buffer donation")


def parse_version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def numpy_version() -> tuple[int, ...]:
    return parse_version(np.__version__)


def jaxlib_version() -> tuple[int, ...]:
    return parse_version(getattr(jax, "__version__", "0.10.2"))


def ignore_warning(*, message: str = "", category: type[Warning] = Warning, **kw: Any) -> Any:
    """Decorator/context manager ignoring matching warnings."""

    class _Ignore(contextlib.ContextDecorator):
        def __enter__(self) -> None:
            self._cm = warnings.catch_warnings()
            self._cm.__enter__()
            warnings.filterwarnings("ignore", message=message, category=category)

        def __exit__(self, *exc: Any) -> None:
            self._cm.__exit__(*exc)

    return _Ignore()


@contextlib.contextmanager
def capture_stdout() -> Iterator[Callable[[], str]]:
    """Capture what is printed to ``sys.stdout``."""
    buf = io.StringIO()
    old = sys.stdout
    sys.stdout = buf
    try:
        yield buf.getvalue
    finally:
        sys.stdout = old


# -- dtypes and tolerances -----------------------------------------------------
_X64_TYPES = {np.int64, np.uint64, np.float64, np.complex128}


def supported_dtypes() -> set[type]:
    """The CPU's scalar types (JAX's list: classes, callable on a value), the 64-bit
    ones only with x64."""
    types = {np.bool_, ml_dtypes.int4, np.int8, np.int16, np.int32, np.int64}
    types |= {ml_dtypes.uint4, np.uint8, np.uint16, np.uint32, np.uint64}
    types |= {ml_dtypes.bfloat16, np.float16, np.float32, np.float64, np.complex64, np.complex128}
    if not _x64_enabled():
        types -= _X64_TYPES
    return types


def _x64_enabled() -> bool:
    try:
        return bool(jax.config.read("jax_enable_x64"))
    except Exception:
        return False


class _Dtypes:
    """The dtype lists JAX's tests draw cases from, filtered by the platform."""

    def supported(self, dts: Sequence[Any]) -> list[Any]:
        ok = {np.dtype(t) for t in supported_dtypes()}
        return [d for d in dts if np.dtype(d) in ok]

    @property
    def custom_floats(self) -> list[Any]:
        return self.supported([ml_dtypes.bfloat16])

    @property
    def floating(self) -> list[Any]:
        return self.supported([np.float32, np.float64])

    @property
    def all_floating(self) -> list[Any]:
        return self.supported([ml_dtypes.bfloat16, np.float16, np.float32, np.float64])

    @property
    def integer(self) -> list[Any]:
        return self.supported([np.int32, np.int64])

    @property
    def all_integer(self) -> list[Any]:
        return self.supported([np.int8, np.int16, np.int32, np.int64])

    @property
    def unsigned(self) -> list[Any]:
        return self.supported([np.uint32, np.uint64])

    @property
    def all_unsigned(self) -> list[Any]:
        return self.supported([np.uint8, np.uint16, np.uint32, np.uint64])

    @property
    def complex(self) -> list[Any]:
        return self.supported([np.complex64, np.complex128])

    @property
    def boolean(self) -> list[Any]:
        return self.supported([np.bool_])

    @property
    def inexact(self) -> list[Any]:
        return self.floating + self.complex

    @property
    def all_inexact(self) -> list[Any]:
        return self.all_floating + self.complex

    @property
    def numeric(self) -> list[Any]:
        return self.floating + self.integer + self.unsigned + self.complex

    @property
    def all(self) -> list[Any]:
        return (
            self.all_floating + self.all_integer + self.all_unsigned + self.complex + self.boolean
        )


dtypes = _Dtypes()

_TOL = {
    bfloat16: 1e-2,
    np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6,
    np.dtype(np.complex128): 1e-15,
}
default_gradient_tolerance = {
    bfloat16: 1e-1,
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


def _canonical(dt: Any) -> np.dtype:
    dt = np.dtype(dt)
    if not _x64_enabled():
        dt = {"int64": np.dtype("int32"), "uint64": np.dtype("uint32")}.get(dt.name, dt)
        dt = {"float64": np.dtype("float32"), "complex128": np.dtype("complex64")}.get(dt.name, dt)
    return dt


def default_tolerance() -> dict[np.dtype, float]:
    return dict(_TOL)


def tolerance(dtype: Any, tol: Any = None) -> float:
    """The tolerance for ``dtype``: ``tol`` itself, its entry, or the default."""
    if tol is not None and not isinstance(tol, dict):
        return tol
    table = {np.dtype(k): v for k, v in (tol or {}).items()}
    dt = _canonical(dtype)
    return table.get(dt, _TOL.get(dt, 0))


def join_tolerance(a: Any, b: Any) -> dict[np.dtype, float]:
    """The larger tolerance per dtype of two tolerance tables."""
    a = a if isinstance(a, dict) else {k: a for k in _TOL} if a else {}
    b = b if isinstance(b, dict) else {k: b for k in _TOL} if b else {}
    out = {np.dtype(k): v for k, v in a.items()}
    for k, v in b.items():
        out[np.dtype(k)] = max(out.get(np.dtype(k), v), v)
    return out


def _dtype_of(x: Any) -> np.dtype:
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, int):
        return np.dtype("int32")
    if isinstance(x, float):
        return np.dtype("float32")
    if isinstance(x, complex):
        return np.dtype("complex64")
    return np.asarray(x).dtype


def _check_dtypes_match(a: Any, b: Any) -> None:
    assert tree_util.tree_map(lambda x: _canonical(_dtype_of(x)), a) == tree_util.tree_map(
        lambda x: _canonical(_dtype_of(x)), b
    )


def num_float_bits(dtype: Any) -> int:
    return np.dtype(dtype).itemsize * 8


def _allclose(a: np.ndarray, b: np.ndarray, atol: float, rtol: float, err_msg: str) -> None:
    if a.dtype == bfloat16 or a.dtype == np.float16:
        a = a.astype(np.float32)
    if b.dtype == bfloat16 or b.dtype == np.float16:
        b = b.astype(np.float32)
    if a.dtype.kind in "biu" and b.dtype.kind in "biu" and atol == 0:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)


def check_close(xs: Any, ys: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    """Leaves of ``xs`` and ``ys`` close within the per-dtype tolerances, as JAX's."""

    def one(x: Any, y: Any) -> None:
        x, y = np.asarray(x), np.asarray(y)
        _allclose(x, y, tolerance(x.dtype, atol), tolerance(x.dtype, rtol), err_msg)

    tree_util.tree_map(one, xs, ys)


def check_eq(xs: Any, ys: Any, err_msg: str = "") -> None:
    tree_util.tree_map(lambda x, y: _allclose(np.asarray(x), np.asarray(y), 0, 0, err_msg), xs, ys)


def check_raises(thunk: Callable[[], Any], err_type: type, msg: str) -> None:
    try:
        thunk()
    except err_type as e:
        assert str(e).startswith(msg), f"\n{e}\n\n{msg}\n"
    else:
        raise AssertionError(f"{err_type.__name__} not raised")


def check_raises_regexp(thunk: Callable[[], Any], err_type: type, pattern: str) -> None:
    try:
        thunk()
    except err_type as e:
        assert re.match(pattern, str(e)), f"{e}\n\n{pattern}\n"
    else:
        raise AssertionError(f"{err_type.__name__} not raised")


def check_grads(*args: Any, **kwargs: Any) -> Any:
    """``jax.test_util.check_grads`` of the library under test."""
    from jax.test_util import check_grads as impl

    return impl(*args, **kwargs)


def rand_like(rng: np.random.RandomState, x: Any) -> np.ndarray:
    """Normal draws shaped and typed as ``x`` (complex: both parts), as JAX's."""
    shape, dtype = np.shape(x), np.dtype(getattr(x, "dtype", None) or type(x))
    out = np.asarray(rng.randn(*shape), dtype=dtype)
    if np.issubdtype(dtype, np.complexfloating):
        out = out + dtype.type(1.0j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return out


def check_jvp(*args: Any, **kwargs: Any) -> Any:
    """``jax.test_util.check_jvp`` of the library under test."""
    from jax.test_util import check_jvp as impl

    return impl(*args, **kwargs)


def check_vjp(*args: Any, **kwargs: Any) -> Any:
    """``jax.test_util.check_vjp`` of the library under test."""
    from jax.test_util import check_vjp as impl

    return impl(*args, **kwargs)


def with_jax_dtype_defaults(func: Callable, use_defaults: bool = True) -> Callable:
    """Cast a NumPy reference's default-dtype outputs to the library's defaults."""

    def cast(x: Any) -> Any:
        x = np.asarray(x)
        return x.astype(_canonical(x.dtype)) if use_defaults else x

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return tree_util.tree_map(cast, func(*args, **kwargs))

    return wrapped


def promote_like_jnp(fun: Callable, inexact: bool = False) -> Callable:
    """Promote a NumPy reference's arguments to ``jnp.result_type`` of them."""

    def wrapper(*args: Any, **kw: Any) -> Any:
        dt = jnp.result_type(*args)
        if inexact and not jnp.issubdtype(dt, jnp.inexact):
            dt = jnp.promote_types(dt, jnp.float32)
        return fun(*(np.asarray(a).astype(dt) for a in args), **kw)

    return wrapper


def strict_promotion_if_dtypes_match(dts: Sequence[Any]) -> Any:
    """Strict promotion when all dtypes agree, standard otherwise."""
    mode = "strict" if all(np.dtype(d) == np.dtype(dts[0]) for d in dts) else "standard"
    return _config_context(jax_numpy_dtype_promotion=mode)


@contextlib.contextmanager
def _config_context(**options: Any) -> Iterator[None]:
    old = {k: jax.config.read(k) for k in options}
    try:
        for k, v in options.items():
            jax.config.update(k, v)
        yield
    finally:
        for k, v in old.items():
            jax.config.update(k, v)


# -- test cases ---------------------------------------------------------------
@functools.cache
def _chosen(n: int, m: int) -> tuple[int, ...]:
    # the sampling convention of JAX's test files: the same m of n cases upstream
    return tuple(int(i) for i in np.random.RandomState(42).choice(n, size=m, replace=False))


def sample_product_testcases(*args: Any, **kw: Any) -> list[dict[str, Any]]:
    """Cases sampled from the product of ``args`` (lists of dicts) and ``kw``."""
    groups = [list(a) for a in args]
    named = [(k, list(v)) for k, v in kw.items()]
    n = math.prod(len(g) for g in groups) * math.prod(len(v) for _, v in named)
    cases = []
    for index in _chosen(n, min(n, NUM_GENERATED_CASES.value)):
        case: dict[str, Any] = {}
        for g in groups:
            case.update(g[index % len(g)])
            index //= len(g)
        for k, v in named:
            case[k] = v[index % len(v)]
            index //= len(v)
        cases.append(case)
    return cases


def sample_product(*args: Any, **kw: Any) -> Callable:
    """``parameterized.parameters`` over :func:`sample_product_testcases`."""
    return parameterized.parameters(*sample_product_testcases(*args, **kw))


def cases_from_list(xs: Sequence[Any]) -> list[Any]:
    return list(xs)


def cases_from_gens(*gens: Callable[[int], Any]) -> Iterator[tuple[Any, ...]]:
    """Named cases ``(name, *values)`` from generators of random values, at sizes 1, 3
    and 10 (JAX's convention: about ``NUM_GENERATED_CASES`` in all)."""
    sizes = (1, 3, 10)
    per_size = NUM_GENERATED_CASES.value // len(sizes) + 1
    for size in sizes:
        for i in range(per_size):
            yield (f"_{size}_{i}", *(gen(size) for gen in gens))


def sanitize_test_name(s: str) -> str:
    """Test names usable with ``-k`` filters (JAX's spelling)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", s)


def parameterized_filterable(
    *,
    kwargs: Sequence[dict[str, Any]],
    testcase_name: Callable[[dict[str, Any]], str] | None = None,
    one_containing: str | None = None,
) -> Callable:
    """Named parameters whose names come from the kwargs, sanitized."""
    cases = []
    for kw in kwargs:
        kw = dict(kw)
        if testcase_name is not None:
            name = str(testcase_name(kw))
        else:
            name = kw.get("testcase_name") or "_".join(f"{k}={kw[k]}" for k in sorted(kw))
        kw["testcase_name"] = sanitize_test_name(name)
        cases.append(kw)
    if one_containing is not None:
        pick = [c for c in cases if one_containing in c["testcase_name"]][:1]
        pick[0]["testcase_name"] = ""
        cases = pick
    return parameterized.named_parameters(*cases)


def _jit(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    return jax.jit(fun, *args, **kwargs)


def _noop_jit(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    return fun


_jit._name = "jit"  # type: ignore[attr-defined]
_noop_jit._name = "noop"  # type: ignore[attr-defined]
JIT_IMPLEMENTATION = (_jit, _noop_jit)


def with_config(**options: Any) -> Callable:
    """Class decorator: the options for every test of the class."""

    def decorator(cls: type) -> type:
        cls._default_config = {**getattr(cls, "_default_config", {}), **options}
        return cls

    return decorator


# -- the test case class -------------------------------------------------------
class JaxTestCase(parameterized.TestCase):
    """Assertions of JAX's test case class, written against the public API."""

    _default_config: dict[str, Any] = {
        "jax_enable_checks": True,
        "jax_numpy_dtype_promotion": "strict",
        "jax_numpy_rank_promotion": "raise",
    }

    def setUp(self) -> None:
        super().setUp()
        self._rng = np.random.RandomState(zlib.adler32(self._testMethodName.encode()))
        options = {**JaxTestCase._default_config, **self._default_config}
        for name, value in options.items():
            try:
                old = jax.config.read(name)
            except Exception:
                continue
            jax.config.update(name, value)
            self.addCleanup(jax.config.update, name, old)

    def rng(self) -> np.random.RandomState:
        return self._rng

    def assertDeprecationWarnsOrRaises(
        self, deprecation_id: str, message: str, *, error_class: type[Exception] = ValueError
    ) -> Any:
        """A ``DeprecationWarning`` matching ``message`` (funcgrad accelerates no
        deprecation into an error, so JAX's ``deprecation_id`` is only a label here)."""
        del deprecation_id, error_class
        return self.assertWarnsRegex(DeprecationWarning, message)

    def assertDtypesMatch(self, actual: Any, desired: Any, *, canonicalize_dtypes: bool = True):
        if canonicalize_dtypes:
            self.assertEqual(_canonical(_dtype_of(actual)), _canonical(_dtype_of(desired)))
        else:
            self.assertEqual(_dtype_of(actual), _dtype_of(desired))

    def assertArraysEqual(
        self,
        actual: Any,
        desired: Any,
        *,
        check_dtypes: bool = True,
        err_msg: str = "",
        allow_object_dtype: bool = False,
        verbose: bool = True,
    ) -> None:
        if check_dtypes:
            self.assertDtypesMatch(actual, desired)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(np.asarray(actual), np.asarray(desired), err_msg)

    def assertArraysAllClose(
        self, actual: Any, desired: Any, *, check_dtypes: bool = True, atol: Any = None,
        rtol: Any = None, err_msg: str = "",
    ) -> None:  # fmt: skip
        a, d = np.asarray(actual), np.asarray(desired)
        self.assertEqual(a.shape, d.shape)
        if a.dtype == d.dtype == jax.dtypes.float0:  # no values: equal (JAX's rule)
            np.testing.assert_array_equal(a, d, err_msg=err_msg)
            return
        at = max(tolerance(a.dtype, atol), tolerance(d.dtype, atol))
        rt = max(tolerance(a.dtype, rtol), tolerance(d.dtype, rtol))
        _allclose(a, d, at, rt, err_msg)
        if check_dtypes:
            self.assertDtypesMatch(actual, desired)

    def assertAllClose(
        self, actual: Any, desired: Any, *, check_dtypes: bool = True, atol: Any = None,
        rtol: Any = None, canonicalize_dtypes: bool = True, err_msg: str = "",
    ) -> None:  # fmt: skip
        kw = dict(check_dtypes=check_dtypes, atol=atol, rtol=rtol, err_msg=err_msg)
        if isinstance(actual, dict):
            self.assertIsInstance(desired, dict)
            self.assertEqual(set(actual), set(desired))
            for k in actual:
                self.assertAllClose(actual[k], desired[k], **kw)
        elif isinstance(actual, (list, tuple)) and not hasattr(actual, "__array__"):
            self.assertIsInstance(desired, (list, tuple))
            self.assertEqual(len(actual), len(desired))
            for a, d in zip(actual, desired):
                self.assertAllClose(a, d, **kw)
        elif hasattr(actual, "__array__") or np.isscalar(actual):
            if not (hasattr(desired, "__array__") or np.isscalar(desired)):
                self.fail(f"Expected array-like, got {desired}")
            if check_dtypes:
                self.assertDtypesMatch(actual, desired, canonicalize_dtypes=canonicalize_dtypes)
            self.assertArraysAllClose(
                np.asarray(actual), np.asarray(desired), check_dtypes=False, atol=atol,
                rtol=rtol, err_msg=err_msg,
            )  # fmt: skip
        elif actual != desired:
            raise TypeError((type(actual), type(desired)))

    def assertMultiLineStrippedEqual(self, expected: str, what: str) -> None:
        clean = lambda s: re.sub(r"\s*\n\s*", "\n", textwrap.dedent(s).strip())
        self.assertMultiLineEqual(clean(expected), clean(what))

    @contextlib.contextmanager
    def assertNoWarnings(self) -> Iterator[None]:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield

    def _CompileAndCheck(
        self, fun: Callable, args_maker: Callable, *, check_dtypes: bool = True,
        tol: Any = None, rtol: Any = None, atol: Any = None, check_cache_misses: bool = True,
    ) -> None:  # fmt: skip
        """``fun`` eagerly and under ``jit`` agree (twice, on two sets of arguments)."""
        kw = dict(check_dtypes=check_dtypes, atol=atol or tol, rtol=rtol or tol)
        args = args_maker()
        eager = fun(*args)
        self.assertEqual(
            tree_util.tree_map(np.shape, eager),
            tree_util.tree_map(lambda x: np.shape(np.asarray(x)), eager),
        )
        compiled = jax.jit(fun)
        self.assertAllClose(compiled(*args), eager, **kw)
        self.assertAllClose(compiled(*args), eager, **kw)
        args = args_maker()
        self.assertAllClose(compiled(*args), fun(*args), **kw)

    def _CheckAgainstNumpy(
        self, numpy_reference_op: Callable, lax_op: Callable, args_maker: Callable,
        check_dtypes: bool = True, tol: Any = None, atol: Any = None, rtol: Any = None,
        canonicalize_dtypes: bool = True,
    ) -> None:  # fmt: skip
        """``lax_op`` agrees with a NumPy reference on the same arguments."""
        args = args_maker()
        ours = lax_op(*args)
        ref = numpy_reference_op(*args)
        self.assertAllClose(
            ours, ref, check_dtypes=check_dtypes, atol=atol or tol, rtol=rtol or tol,
            canonicalize_dtypes=canonicalize_dtypes,
        )  # fmt: skip


class BufferDonationTestCase(JaxTestCase):
    def assertDeleted(self, x: Any) -> None:
        self.assertTrue(x.is_deleted())

    def assertNotDeleted(self, x: Any) -> None:
        self.assertFalse(x.is_deleted())


JaxTestLoader = absltest.TestLoader


def __getattr__(name: str) -> Any:
    """The helpers of JAX's ``jtu`` not written here measure JAX's own machinery
    (compile and lowering counters, device-put counts, meshes): a test using one is
    out of scope, and is listed so."""
    if name.startswith("__"):
        raise AttributeError(name)
    from tools.conformance.shims.swap import Missing

    why = f"JAX's compile/dispatch counters and meshes (jtu.{name})"
    return Missing(f"jax._src.test_util.{name}", "scope", why)
