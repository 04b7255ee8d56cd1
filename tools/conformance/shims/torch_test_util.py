"""A small stand-in for ``torch.testing._internal`` (``common_utils`` and friends).

Imported by the swapped conformance run in place of PyTorch's own helpers; its
``torch`` is whatever the swap gives (``compat.torch``). It provides what
``test/test_autograd.py`` imports: ``TestCase`` (with PyTorch's ``assertEqual``
semantics: tensors compared by value with the per-dtype default tolerances,
sequences element-wise), ``run_tests``, ``parametrize`` and
``instantiate_parametrized_tests`` (cases named ``test_x_name_value`` as PyTorch
names them), ``instantiate_device_type_tests`` (a ``...CPU`` class with
``device="cpu"``), the skip decorators and platform flags of a CPU build, and
``gradcheck``/``gradgradcheck`` of the library under test.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import sys
import types
import unittest
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch  # swapped: the library under test

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform == "darwin"
IS_LINUX = sys.platform.startswith("linux")
TEST_WITH_ROCM = TEST_WITH_ASAN = TEST_WITH_TSAN = TEST_WITH_UBSAN = False
TEST_WITH_TORCHDYNAMO = TEST_WITH_TORCHINDUCTOR = TEST_WITH_CROSSREF = False
TEST_CUDA = TEST_MPS = TEST_XPU = TEST_MULTIGPU = TEST_CUDNN = False
TEST_MKL = TEST_NUMPY = True
IS_FBCODE = IS_SANDCASTLE = IS_REMOTE_GPU = IS_JETSON = IS_ARM64 = False
GRADCHECK_NONDET_TOL = 1e-12


# -- comparison ----------------------------------------------------------------
_TOL = {  # (rtol, atol) per dtype name, PyTorch's defaults for assertEqual
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _is_tensor(x: Any) -> bool:
    return isinstance(x, torch.Tensor)


def _to_numpy(x: Any) -> np.ndarray:
    if _is_tensor(x):
        x = x.detach()
        if str(x.dtype).endswith("bfloat16"):
            x = x.float()
        return np.asarray(x.cpu().numpy())
    return np.asarray(x)


def _dtype_name(x: Any) -> str:
    if _is_tensor(x):
        return str(x.dtype).replace("torch.", "")
    return np.asarray(x).dtype.name


def _numbers(x: complex, y: complex) -> tuple[np.ndarray, np.ndarray]:
    """Two Python numbers, not both integers, as arrays of one kind (an int past int64
    compares as a float, as in PyTorch's ``assertEqual``, not as an object array)."""
    cast = complex if isinstance(x, complex) or isinstance(y, complex) else float
    return np.asarray(cast(x)), np.asarray(cast(y))


class TestCase(unittest.TestCase):
    """PyTorch's test case: ``assertEqual`` compares tensors, numbers and sequences."""

    precision = 1e-5
    rel_tol = 0.0
    _default_dtype_check_enabled = False

    def setUp(self) -> None:
        super().setUp()
        torch.manual_seed(0)
        np.random.seed(0)

    def assertEqual(  # type: ignore[override]
        self, x: Any, y: Any, msg: Any = None, *, atol: float | None = None,
        rtol: float | None = None, equal_nan: bool = True, exact_dtype: bool = True,
        exact_device: bool = False, **kwargs: Any,
    ) -> None:  # fmt: skip
        """Equal up to the default tolerance of the dtypes (tensors, arrays, numbers)."""
        if x is None or y is None or isinstance(x, (str, bytes)) or isinstance(y, (str, bytes)):
            super().assertEqual(x, y, msg)
            return
        if isinstance(x, dict) and isinstance(y, dict):
            super().assertEqual(set(x), set(y), msg)
            for k in x:
                self.assertEqual(x[k], y[k], msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype)
            return
        seqs = (list, tuple, torch.Size) if hasattr(torch, "Size") else (list, tuple)
        if isinstance(x, seqs) and isinstance(y, seqs) and not (_is_tensor(x) or _is_tensor(y)):
            super().assertEqual(len(x), len(y), msg)
            for a, b in zip(x, y):
                self.assertEqual(a, b, msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype)
            return
        if not (_is_tensor(x) or _is_tensor(y) or isinstance(x, (np.ndarray, np.generic))):
            if isinstance(x, (int, float, complex, bool)) and isinstance(
                y, (int, float, complex, bool)
            ):
                if isinstance(x, int) and isinstance(y, int):
                    super().assertEqual(x, y, msg)  # exact, whatever their size
                else:
                    self._close(*_numbers(x, y), atol, rtol, equal_nan, msg)
                return
            super().assertEqual(x, y, msg)
            return
        if exact_dtype and _is_tensor(x) and _is_tensor(y):
            super().assertEqual(x.dtype, y.dtype, msg)
        a, b = _to_numpy(x), _to_numpy(y)
        if _is_tensor(x) and _is_tensor(y):
            super().assertEqual(a.shape, b.shape, msg)
        self._close(a, b, atol, rtol, equal_nan, msg, _dtype_name(x), _dtype_name(y))

    def _close(
        self, a: np.ndarray, b: np.ndarray, atol: float | None, rtol: float | None,
        equal_nan: bool, msg: Any, da: str = "", db: str = "",
    ) -> None:  # fmt: skip
        if atol is None or rtol is None:
            ra, aa = _TOL.get(da or a.dtype.name, (0.0, 0.0))
            rb, ab = _TOL.get(db or b.dtype.name, (0.0, 0.0))
            rtol = max(ra, rb) if rtol is None else rtol
            atol = max(aa, ab) if atol is None else atol
        try:
            a, b = np.broadcast_arrays(a, b)
            if a.dtype.kind in "biu" and b.dtype.kind in "biu":
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        except (AssertionError, ValueError) as e:
            raise self.failureException(f"{e}\n{msg or ''}") from None

    def assertNotEqual(self, x: Any, y: Any, msg: Any = None, **kw: Any) -> None:  # type: ignore[override]
        try:
            self.assertEqual(x, y, msg, **kw)
        except AssertionError:
            return
        raise self.failureException(msg or f"{x!r} == {y!r}")

    def assertExpected(self, s: str, subname: str | None = None) -> None:
        """PyTorch compares with a stored ``.expect`` file: none exists here."""
        raise unittest.SkipTest("expect files are not part of the single-file checkout")

    def assertExpectedInline(self, actual: str, expect: str, skip: int = 0) -> None:
        self.assertEqual(str(actual).strip(), str(expect).strip())

    @contextlib.contextmanager
    def assertWarnsOnceRegex(self, category: type[Warning], regex: str) -> Iterator[None]:
        with self.assertWarnsRegex(category, regex):
            yield

    @contextlib.contextmanager
    def assertNotWarn(self, msg: str = "") -> Iterator[None]:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            yield
        self.assertEqual(len(ws), 0, msg)

    def assertLeaksNoCudaTensors(self) -> Any:
        return contextlib.nullcontext()

    def runWithPytorchAPIUsageStderr(self, code: str) -> str:
        raise unittest.SkipTest("runs a PyTorch subprocess")


def run_tests(argv: Sequence[str] | None = None) -> None:
    unittest.main(argv=list(argv) if argv else None)


def load_tests(loader: Any, standard_tests: Any, pattern: Any) -> Any:
    return standard_tests


# -- decorators and helpers ----------------------------------------------------
def _skip_if(condition: bool, reason: str) -> Callable:
    def decorator(fn: Any) -> Any:
        return unittest.skip(reason)(fn) if condition else fn

    return decorator


def _marker(*args: Any, **kwargs: Any) -> Any:
    """A decorator that may be used bare or with arguments and does nothing."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


skipIfTorchDynamo = skipIfTorchInductor = skipIfCrossRef = skipIfXpu = xfailIfTorchDynamo = _marker
skipIfMPS = skipIfSlowGradcheckEnv = skipIfRocm = skipIfNoLapack = _marker
skipIfWindows = skipIfNoSciPy = suppress_warnings = serialTest = _marker
slowTest = unittest.skip("slow test")
skipCUDANonDefaultStreamIf = skipIfNotRegistered = lambda *a, **k: lambda fn: fn


@contextlib.contextmanager
def disable_gc() -> Iterator[None]:
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextlib.contextmanager
def set_warn_always_context(new_val: bool) -> Iterator[None]:
    old = torch.is_warn_always_enabled()
    torch.set_warn_always(new_val)
    try:
        yield
    finally:
        torch.set_warn_always(old)


def scoped_load_inline(fn: Callable) -> Callable:
    """Tests building C++ extensions: they fail when run (no C++ extensions)."""

    @functools.wraps(fn)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise unittest.SkipTest("builds a C++ extension")

    return wrapped


def gradcheck(fn: Callable, inputs: Any, **kwargs: Any) -> bool:
    """``torch.autograd.gradcheck`` of the library under test (raising on failure)."""
    kwargs.setdefault("raise_exception", True)
    return torch.autograd.gradcheck(fn, inputs, **kwargs)


def gradgradcheck(fn: Callable, inputs: Any, grad_outputs: Any = None, **kwargs: Any) -> bool:
    """``torch.autograd.gradgradcheck`` of the library under test."""
    kwargs.setdefault("raise_exception", True)
    return torch.autograd.gradgradcheck(fn, inputs, grad_outputs, **kwargs)


# -- parametrization -----------------------------------------------------------
class parametrize:
    """``@parametrize("x", [1, 2])``: one test per value, named ``test_f_x_1`` as PyTorch
    names them: numbers and strings by value, dtypes and devices by name, other values by
    position (``test_f_x0``); with stacked decorators the outermost's part comes first."""

    def __init__(self, arg_str: str, arg_values: Sequence[Any], name_fn: Any = None) -> None:
        self.names = [n.strip() for n in arg_str.split(",")]
        self.values = list(arg_values)
        self.name_fn = name_fn

    def _case_name(self, idx: int, value: Any) -> str:
        if self.name_fn is not None:
            return str(self.name_fn(*value) if len(self.names) > 1 else self.name_fn(value))
        vals = value if len(self.names) > 1 else (value,)
        return "_".join(_value_name(idx, n, v) for n, v in zip(self.names, vals))

    def __call__(self, fn: Any) -> Any:
        cases = getattr(fn, "_parametrize_cases", [{}])
        new = []
        for idx, value in enumerate(self.values):
            for case in cases:
                vals = value if len(self.names) > 1 else (value,)
                new.append({**case, **dict(zip(self.names, vals)), "__name__": [
                    self._case_name(idx, value), *case.get("__name__", [])]})  # fmt: skip
        fn._parametrize_cases = new
        return fn


def _value_name(idx: int, name: str, v: Any) -> str:
    kind = type(v).__name__
    if kind == "dtype" and type(v).__module__.startswith("compat"):
        return str(v).removeprefix("torch.")
    if kind == "device" and type(v).__module__.startswith("compat"):
        return str(v)
    if isinstance(v, (int, float, str)):
        return f"{name}_{str(v).replace('.', '_')}"
    return f"{name}{idx}"


def instantiate_parametrized_tests(cls: type) -> type:
    """Replace each ``@parametrize``d method by one method per case."""
    for name, fn in list(vars(cls).items()):
        cases = getattr(fn, "_parametrize_cases", None)
        if not cases or not name.startswith("test"):
            continue
        delattr(cls, name)
        for case in cases:
            params = {k: v for k, v in case.items() if k != "__name__"}
            test_name = "_".join([name, *case["__name__"]])

            def make(f: Callable = fn, p: dict[str, Any] = params) -> Callable:
                @functools.wraps(f)
                def test(self: Any) -> Any:
                    return f(self, **p)

                return test

            setattr(cls, test_name, make())
    return cls


# -- device-type tests ---------------------------------------------------------
def instantiate_device_type_tests(
    cls: type, scope: dict[str, Any], except_for: Any = None, only_for: Any = None, **kw: Any
) -> None:
    """Add ``<Name>CPU`` to ``scope``: each test called with ``device="cpu"`` (and
    ``dtype`` per ``@dtypes`` entry)."""
    if only_for and "cpu" not in (only_for if isinstance(only_for, (list, tuple)) else [only_for]):
        return
    members: dict[str, Any] = {}
    for name, fn in list(vars(cls).items()):
        if not (name.startswith("test") and callable(fn)):
            if not name.startswith("__"):
                members[name] = fn
            continue
        for pname, params in _device_cases(name, fn):

            def make(f: Callable = fn, p: dict[str, Any] = params) -> Callable:
                @functools.wraps(f)
                def test(self: Any) -> Any:
                    if getattr(f, "_only_cuda", False):
                        raise unittest.SkipTest("CUDA only")
                    return f(self, ["cpu"] if getattr(f, "_device_list", False) else "cpu", **p)

                return test

            members[pname] = make()
    name = cls.__name__ + "CPU"
    new = type(name, tuple(b for b in cls.__bases__), members)
    new.__module__ = cls.__module__
    new.device_type = "cpu"
    scope[name] = new
    scope.pop(cls.__name__, None)


def _device_cases(name: str, fn: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    cases = getattr(fn, "_parametrize_cases", [{}])
    dts = getattr(fn, "_dtypes", None)
    for case in cases:
        base = "_".join([name, *case.get("__name__", [])])
        params = {k: v for k, v in case.items() if k != "__name__"}
        if dts:
            for dt in dts:
                yield f"{base}_cpu_{str(dt).replace('torch.', '')}", {**params, "dtype": dt}
        else:
            yield f"{base}_cpu", params


class dtypes:
    """``@dtypes(torch.float, torch.double)``: one test per dtype."""

    def __init__(self, *args: Any, device_type: str = "all") -> None:
        self.args = list(itertools.chain.from_iterable(
            a if isinstance(a, (list, tuple)) else [a] for a in args))  # fmt: skip
        self.device_type = device_type

    def __call__(self, fn: Any) -> Any:
        if self.device_type in ("all", "cpu"):
            fn._dtypes = self.args
        return fn


def dtypesIfCUDA(*args: Any) -> Callable:
    return lambda fn: fn


dtypesIfMPS = dtypesIfCUDA


def onlyCUDA(fn: Any) -> Any:
    fn._only_cuda = True
    return fn


onlyCPU = skipMeta = expectedFailureMPS = skipCUDAIfRocm = onlyNativeDeviceTypes = _marker


def deviceCountAtLeast(n: int) -> Callable:
    """PyTorch's tests so marked take a list of devices (``["cpu"]`` here) for ``device``."""

    def mark(fn: Callable) -> Callable:
        if n > 1:
            return unittest.skip("several devices")(fn)
        fn._device_list = True  # type: ignore[attr-defined]
        return fn

    return mark


def floating_types_and(*extra: Any) -> tuple[Any, ...]:
    return (torch.float32, torch.float64, *extra)


def floating_types() -> tuple[Any, ...]:
    return (torch.float32, torch.float64)


def mask_not_all_zeros(shape: Sequence[int]) -> Any:
    """A random boolean mask with at least one ``True``."""
    assert len(shape) > 0
    while True:
        result = torch.randn(shape).gt(0)
        if result.sum() > 0:
            return result


def submodule(name: str, names: Sequence[str]) -> types.ModuleType:
    """A module called ``name`` with the listed names of this one."""
    mod = types.ModuleType(name)
    for n in names:
        setattr(mod, n, globals()[n])
    return mod


COMMON_DEVICE_TYPE = [
    "instantiate_device_type_tests", "dtypes", "dtypesIfCUDA", "dtypesIfMPS", "onlyCUDA",
    "onlyCPU", "skipMeta", "expectedFailureMPS", "deviceCountAtLeast", "skipCUDAIfRocm",
    "onlyNativeDeviceTypes",
]  # fmt: skip
COMMON_DTYPE = ["floating_types_and", "floating_types"]
COMMON_CUDA = ["TEST_CUDA", "TEST_MULTIGPU", "TEST_CUDNN"]
COMMON_METHODS = ["mask_not_all_zeros"]
