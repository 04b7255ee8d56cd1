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
import importlib.util
import inspect
import io
import random
import sys
import tempfile
import types
import unittest
import unittest.mock  # PyTorch's common_utils imports it: test files use it unimported
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import torch  # swapped: the library under test
from torch.testing import make_tensor  # noqa: F401  (common_utils re-exports it)

from tools.conformance.shims.swap import Missing

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform == "darwin"
IS_LINUX = sys.platform.startswith("linux")
TEST_WITH_ROCM = TEST_WITH_ASAN = TEST_WITH_TSAN = TEST_WITH_UBSAN = False
TEST_WITH_TORCHDYNAMO = TEST_WITH_TORCHINDUCTOR = TEST_WITH_CROSSREF = False
TEST_CUDA = TEST_MPS = TEST_XPU = TEST_MULTIGPU = TEST_CUDNN = False
TEST_MKL = TEST_NUMPY = True
IS_FBCODE = IS_SANDCASTLE = IS_REMOTE_GPU = IS_JETSON = IS_ARM64 = False
GRADCHECK_NONDET_TOL = 1e-12
SEED = 1234  # PyTorch's common_utils.SEED


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


def _is_storage(x: Any) -> bool:
    """A ``TypedStorage``/``UntypedStorage`` (compat's or PyTorch's)."""
    return type(x).__name__.endswith("Storage") and hasattr(x, "data_ptr")


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


def _sequences() -> tuple[type, ...]:
    """What PyTorch's ``assertEqual`` compares element by element (not strings)."""
    nn = torch.nn
    return (list, tuple, torch.Size, nn.Sequential, nn.ModuleList, nn.ParameterList)


def _mappings() -> tuple[type, ...]:
    """What PyTorch's ``assertEqual`` compares key by key."""
    return (Mapping, torch.nn.ModuleDict, torch.nn.ParameterDict)


class TestCase(unittest.TestCase):
    """PyTorch's test case: ``assertEqual`` compares tensors, numbers and sequences."""

    precision = 0.0  # raised per dtype by @precisionOverride/@toleranceOverride
    rel_tol = 0.0
    _default_dtype_check_enabled = False

    def setUp(self) -> None:
        """Seed ``torch``, ``random`` and NumPy with PyTorch's ``SEED`` (1234), as its
        ``set_rng_seed`` does: tests drawing sizes with ``random`` draw the same ones
        in both runs."""
        super().setUp()
        torch.manual_seed(SEED)
        random.seed(SEED)
        np.random.seed(SEED)

    def assertEqualTypeString(self, x: Any, y: Any) -> None:
        """PyTorch's stand-in for the deprecated ``x.type() == y.type()``: same device,
        dtype and sparsity."""
        self.assertEqual(x.device, y.device)
        self.assertEqual(x.dtype, y.dtype)
        self.assertEqual(x.is_sparse, y.is_sparse)

    def assertEqual(  # type: ignore[override]
        self, x: Any, y: Any, msg: Any = None, *, atol: float | None = None,
        rtol: float | None = None, equal_nan: bool = True, exact_dtype: bool = True,
        exact_device: bool = False, **kwargs: Any,
    ) -> None:  # fmt: skip
        """Equal up to the default tolerance of the dtypes (tensors, arrays, numbers)."""
        if x is None or y is None or isinstance(x, (str, bytes)) or isinstance(y, (str, bytes)):
            super().assertEqual(x, y, msg)
            return
        if _is_storage(x) and _is_storage(y):
            # PyTorch compares storages' contents, in their dtypes
            super().assertEqual(getattr(x, "dtype", None), getattr(y, "dtype", None), msg)
            self.assertEqual(x.tolist(), y.tolist(), msg, atol=atol, rtol=rtol)
            return
        if isinstance(x, _mappings()) and isinstance(y, _mappings()):
            super().assertEqual(set(x.keys()), set(y.keys()), msg)
            for k in x.keys():  # noqa: SIM118  (ModuleDict, ParameterDict too)
                self.assertEqual(x[k], y[k], msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype)
            return
        seqs = _sequences()
        if isinstance(x, seqs) and isinstance(y, seqs) and not (_is_tensor(x) or _is_tensor(y)):
            super().assertEqual(len(x), len(y), msg)
            for a, b in zip(x, y):
                self.assertEqual(a, b, msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype)
            return
        numpy_types = (np.ndarray, np.generic)
        if not (_is_tensor(x) or _is_tensor(y) or isinstance(x, numpy_types)) and not (
            isinstance(y, numpy_types) and isinstance(x, (int, float, complex, bool))
        ):
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
        if _is_tensor(x) and _is_tensor(y) and (x.is_sparse or y.is_sparse):
            # PyTorch's comparison of sparse COO tensors: the same layout and size, then
            # the coalesced indices and values
            super().assertEqual((x.is_sparse, tuple(x.shape)), (y.is_sparse, tuple(y.shape)), msg)
            x, y = x.detach().coalesce(), y.detach().coalesce()
            self.assertEqual(x._indices(), y._indices(), msg)
            self.assertEqual(
                x._values(), y._values(), msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype
            )
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
        # PyTorch's overrides only ever loosen the tolerance in use
        rtol, atol = max(rtol, self.rel_tol), max(atol, self.precision)
        try:
            a, b = np.broadcast_arrays(a, b)
            if a.dtype.kind in "biu" and b.dtype.kind in "biu":
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        except (AssertionError, ValueError) as e:
            raise self.failureException(f"{e}\n{msg or ''}") from None

    def compare_with_numpy(
        self, torch_fn: Callable, np_fn: Callable, tensor_like: Any, device: Any = None,
        dtype: Any = None, **kwargs: Any,
    ) -> None:  # fmt: skip
        """``torch_fn`` of a tensor equals ``np_fn`` of the same values as a NumPy array."""
        if _is_tensor(tensor_like):
            t, a = tensor_like, _to_numpy(tensor_like)
        else:
            a = np.array(tensor_like, dtype=torch_to_numpy_dtype_dict[dtype])
            t = torch.tensor(tensor_like, device=device, dtype=dtype)
        expected = np_fn(a)
        if isinstance(expected, np.ndarray):
            expected = torch.from_numpy(expected)
        self.assertEqual(expected, torch_fn(t).cpu(), **kwargs)

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
        """PyTorch's: a once-per-process warning warns every time inside (its
        ``set_warn_always(True)``), and must be given."""
        with set_warn_always_context(True), self.assertWarnsRegex(category, regex):
            yield

    def assertNotWarn(self, callable: Callable[[], Any], msg: str = "") -> None:
        """PyTorch's: calling ``callable`` emits no warning."""
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            callable()
        self.assertTrue(len(ws) == 0, msg)

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
# ROCm, inductor and s390x markers: none of them applies to a CPU run (test_torch.py)
skipIfRocmArch = skipRocmIfTorchInductor = lambda *a, **k: lambda fn: fn
xfailIfS390X = _marker
MI300_ARCH = ("gfx942",)
# ROCm/MIOpen markers and platform flags of torch.nn's test files (none applies to a CPU run)
skipIfNotMiopenSuggestNHWC = _marker
skipIfRocmVersionLessThan = lambda *a, **k: lambda fn: fn
MACOS_VERSION = -1.0  # PyTorch's value off macOS
IS_CI = False
NO_MULTIPROCESSING_SPAWN = False
NOTEST_CPU = False
TEST_FAIRSEQ = importlib.util.find_spec("fairseq") is not None


def slowTestIf(condition: bool) -> Callable:
    """Skipped as a slow test where ``condition`` holds (as PyTorch's run here does)."""
    return slowTest if condition else (lambda fn: fn)


@contextlib.contextmanager
def TemporaryFileName(*args: Any, **kwargs: Any) -> Iterator[str]:
    """The name of a temporary file, deleted after the block."""
    with tempfile.NamedTemporaryFile(*args, **kwargs) as f:
        yield f.name


@contextlib.contextmanager
def TemporaryDirectoryName(suffix: str | None = None) -> Iterator[str]:
    """The name of a temporary directory, removed after the block."""
    with tempfile.TemporaryDirectory(suffix=suffix) as d:
        yield d


class BytesIOContext(io.BytesIO):
    """A ``BytesIO`` usable as a ``with`` block (the serialization tests' file)."""

    def __enter__(self) -> BytesIOContext:
        return self

    def __exit__(self, *args: Any) -> None:
        return None


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
            decorators: list[Any] = []
            name = None
            if isinstance(value, subtest):
                value, name, decorators = value.arg_values, value.name, list(value.decorators)
            name = name or self._case_name(idx, value)
            vals = value if len(self.names) > 1 else (value,)
            for case in cases:
                new.append({**case, **dict(zip(self.names, vals)),
                            "__name__": [name, *case.get("__name__", [])],
                            "__decorators__": [*decorators, *case.get("__decorators__", [])]})  # fmt: skip
        fn._parametrize_cases = new
        return fn


class swap(parametrize):
    """``@swap([True, False])``: one test per value, named ``test_f_swap_True``, run with
    ``torch.__future__``'s swap-on-conversion flag set to it and restored after, as
    PyTorch's ``SwapTensorsGuard`` does (``None`` only restores)."""

    def __init__(self, swap_values: Sequence[Any]) -> None:
        super().__init__("__swap", [subtest(v, name=f"swap_{v}", decorators=[_swap_guard(v)])
                                    for v in swap_values])  # fmt: skip


def _swap_guard(value: Any) -> Callable:
    def deco(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            future = torch.__future__
            saved = future.get_swap_module_params_on_conversion()
            if value is not None:
                future.set_swap_module_params_on_conversion(value)
            try:
                return fn(*args, **kwargs)
            finally:
                future.set_swap_module_params_on_conversion(saved)

        return run

    return deco


class subtest:
    """One ``@parametrize`` case with its own name and decorators."""

    def __init__(self, arg_values: Any, name: str | None = None, decorators: Any = None) -> None:
        self.arg_values = arg_values
        self.name = name
        self.decorators = decorators or []


def case_params(case: dict[str, Any]) -> dict[str, Any]:
    """A parametrized case's keyword arguments (without its name and decorators)."""
    # (``__name__``, ``__decorators__`` and ``@swap``'s ``__swap`` are no arguments)
    return {k: v for k, v in case.items() if not k.startswith("__")}


def decorate(fn: Callable, case: dict[str, Any]) -> Callable:
    """``fn`` under the case's ``subtest`` decorators."""
    for d in reversed(case.get("__decorators__", [])):
        fn = d(fn)
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
            params = case_params(case)
            test_name = "_".join([name, *case["__name__"]])

            def make(f: Callable = fn, p: dict[str, Any] = params) -> Callable:
                @functools.wraps(f)
                def test(self: Any) -> Any:
                    return f(self, **p)

                return test

            setattr(cls, test_name, decorate(make(), case))
    return cls


def mask_not_all_zeros(shape: Sequence[int]) -> Any:
    """A random boolean mask with at least one ``True``."""
    assert len(shape) > 0
    while True:
        result = torch.randn(shape).gt(0)
        if result.sum() > 0:
            return result


# -- more of common_utils / common_cuda (test_nn, test_view_ops, test_type_promotion) --
TEST_NUMPY = True
TEST_SCIPY = importlib.util.find_spec("scipy") is not None
IS_PPC = False
IS_FILESYSTEM_UTF8_ENCODING = sys.getfilesystemencoding() == "utf-8"
TEST_CUDNN_VERSION = 0
PLATFORM_SUPPORTS_FLASH_ATTENTION = False
custom_device_mod = None
gcIfJetson = _marker

#: NumPy scalar type -> dtype, for the dtypes compat has
numpy_to_torch_dtype_dict: dict[Any, Any] = {
    np_t: getattr(torch, name)
    for np_t, name in [
        (np.bool_, "bool"), (np.uint8, "uint8"), (np.uint16, "uint16"), (np.uint32, "uint32"),
        (np.uint64, "uint64"), (np.int8, "int8"), (np.int16, "int16"), (np.int32, "int32"),
        (np.int64, "int64"), (np.float16, "float16"), (np.float32, "float32"),
        (np.float64, "float64"), (np.complex64, "complex64"), (np.complex128, "complex128"),
    ]
    if hasattr(torch, name)
}  # fmt: skip
torch_to_numpy_dtype_dict: dict[Any, Any] = {v: k for k, v in numpy_to_torch_dtype_dict.items()}
torch_to_numpy_dtype_dict[torch.bfloat16] = np.float32

#: the loose per-dtype precisions some of PyTorch's older tests use
dtype2prec_DONTUSE = {torch.float32: 1e-5, torch.float64: 1e-5, torch.float16: 1e-2,
                      torch.bfloat16: 1e-1}  # fmt: skip


@contextlib.contextmanager
def set_default_dtype(dtype: Any) -> Iterator[None]:
    """The default dtype set to ``dtype`` inside the block."""
    saved = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)


@contextlib.contextmanager
def freeze_rng_state() -> Iterator[None]:
    """The random state restored after the block."""
    state = torch.get_rng_state()
    try:
        yield
    finally:
        torch.set_rng_state(state)


def wrapper_set_seed(op: Callable, *args: Any, **kwargs: Any) -> Any:
    """``op(*args, **kwargs)`` run with the random seed 42, the caller's random state
    kept (``common_methods_invocations``' helper for comparing random ops)."""
    with freeze_rng_state():
        torch.manual_seed(42)
        return op(*args, **kwargs)


def download_file(url: str, *, binary: bool = True) -> str:
    raise unittest.SkipTest(f"would download {url}")


def get_function_arglist(func: Callable) -> list[str]:
    return inspect.getfullargspec(func).args


def _assertGradAndGradgradChecks(
    test_case: Any, apply_fn: Callable, inputs: Any, check_batched_grad: bool = True
) -> None:
    """``gradcheck`` and ``gradgradcheck`` of ``apply_fn`` at ``inputs`` both pass."""
    test_case.assertTrue(gradcheck(apply_fn, inputs, check_batched_grad=check_batched_grad))
    test_case.assertTrue(gradgradcheck(apply_fn, inputs, check_batched_grad=check_batched_grad))


def tf32_on_and_off(tf32_precision: float = 1e-5, **kw: Any) -> Callable:
    """No TF32 on a CPU: the test runs once, as it is."""
    return lambda fn: fn


def tf32_off() -> Any:
    return contextlib.nullcontext()


def tf32_on(self: Any, tf32_precision: float = 1e-5) -> Any:
    return contextlib.nullcontext()


def _create_scaling_models_optimizers(
    device: str = "cuda", optimizer_ctor: Any = None, optimizer_kwargs: Any = None
) -> tuple[Any, Any, Any, Any]:
    """``common_cuda``'s fixture of the ``GradScaler`` tests: two identical models (two
    8-by-8 ``Linear`` layers), one to train without scaling, one with, and an optimizer
    of each (``lr=1.0`` unless ``optimizer_kwargs`` says otherwise; SGD by default)."""
    ctor = torch.optim.SGD if optimizer_ctor is None else optimizer_ctor
    nn = torch.nn
    control = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8)).to(device=device)
    scaling = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8)).to(device=device)
    with torch.no_grad():
        for c, s in zip(control.parameters(), scaling.parameters()):
            s.copy_(c)
    kwargs = {"lr": 1.0, **(optimizer_kwargs or {})}
    return (
        control,
        scaling,
        ctor(control.parameters(), **kwargs),
        ctor(scaling.parameters(), **kwargs),
    )


def _create_scaling_case(
    device: str = "cuda",
    dtype: Any = None,
    optimizer_ctor: Any = None,
    optimizer_kwargs: Any = None,
) -> tuple[Any, ...]:
    """The models and optimizers above, four random (input, target) pairs of 8-by-8, an
    ``MSELoss`` and the iteration whose step the tests make non-finite (2)."""
    dtype = torch.float if dtype is None else dtype
    data = [
        (
            torch.randn((8, 8), dtype=dtype, device=device),
            torch.randn((8, 8), dtype=dtype, device=device),
        )
        for _ in range(4)
    ]
    models = _create_scaling_models_optimizers(device, optimizer_ctor, optimizer_kwargs)
    return (*models, data, torch.nn.MSELoss().to(device), 2)


def __getattr__(name: str) -> Any:
    """Other helpers of ``torch.testing._internal``: the swap's placeholder for an
    upstream internal (a test that uses one is out of scope)."""
    if name.startswith("__"):
        raise AttributeError(name)
    return Missing(f"torch.testing._internal.common_utils.{name}", "internal")


def _dynamo_disable(fn: Any = None, recursive: bool = True, *, reason: Any = None) -> Any:
    """``torch._dynamo.disable``: it keeps a function out of ``torch.compile``'s graphs;
    run eagerly, the function is unchanged (``@disable(recursive=False)`` too)."""
    return (lambda f: f) if fn is None else fn


_DYNAMO: list[types.ModuleType] = []


def dynamo_module() -> types.ModuleType:
    """``torch._dynamo`` for the swapped run: ``disable`` (test files decorate their
    helpers with it), every other name an upstream internal."""
    if not _DYNAMO:
        mod = types.ModuleType("torch._dynamo")
        mod.disable = _dynamo_disable  # type: ignore[attr-defined]
        mod.__getattr__ = lambda n: Missing(f"torch._dynamo.{n}", "internal")  # type: ignore[method-assign]
        _DYNAMO.append(mod)
    return _DYNAMO[0]


def submodule(name: str, names: Sequence[str]) -> types.ModuleType:
    """A module called ``name`` with the listed names of this one."""
    mod = types.ModuleType(name)
    for n in names:
        setattr(mod, n, globals()[n])
    # other names: upstream internals (a test that uses one is out of scope)
    mod.__getattr__ = lambda n: Missing(f"{name}.{n}", "internal")  # type: ignore[method-assign]
    return mod


COMMON_CUDA = [
    "TEST_CUDA", "TEST_MULTIGPU", "TEST_CUDNN", "TEST_CUDNN_VERSION",
    "PLATFORM_SUPPORTS_FLASH_ATTENTION", "tf32_on_and_off", "tf32_off", "tf32_on",
    "_create_scaling_case", "_create_scaling_models_optimizers",
]  # fmt: skip
COMMON_METHODS = ["mask_not_all_zeros", "wrapper_set_seed"]
