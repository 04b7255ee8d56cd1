"""Stand-in for ``torch.testing._internal.common_device_type``, CPU only.

``instantiate_device_type_tests(TestX, globals())`` puts ``TestXCPU`` in the module
in place of ``TestX``; each test method becomes one test per ``@parametrize`` case
and ``@dtypes`` entry, named as PyTorch names them
(``test_f_<case>_cpu_<dtype>``; an entry of several dtypes gives ``_cpu_<a>_<b>``
and a ``dtypes=`` argument), and is called with ``device="cpu"`` (a list of
devices for ``@deviceCountAtLeast``). The decorators for other device types skip or
do nothing, as they do on a CPU-only build; ``@precisionOverride`` and
``@toleranceOverride`` set ``self.precision``/``self.rel_tol`` for the case's dtype,
which the shim's ``assertEqual`` then uses as PyTorch's does.
"""

from __future__ import annotations

import enum
import functools
import inspect
import unittest
from collections import namedtuple
from collections.abc import Callable, Iterator
from typing import Any

# ``TEST_WITH_ROCM``: common_device_type re-exports it (nn/test_pooling.py, test_embedding.py)
from tools.conformance.shims.torch_test_util import TEST_WITH_ROCM, case_params, decorate  # noqa: F401

tol = namedtuple("tol", ["atol", "rtol"])


def _marker(*args: Any, **kwargs: Any) -> Any:
    """A decorator that may be used bare or with arguments and does nothing."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def _skip_marker(reason: str) -> Callable:
    """A decorator (bare or called with arguments) skipping the test: ``reason``."""

    def deco(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return unittest.skip(reason)(args[0])
        return unittest.skip(reason)

    return deco


def _dtype_name(dt: Any) -> str:
    return str(dt).removeprefix("torch.")


def _device_cases(name: str, fn: Any) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(test name, keyword arguments, case)`` for each case of a generic test method."""
    if getattr(fn, "_opinfo_ops", None) is not None:
        return  # an ``@ops`` test over PyTorch's OpInfo database: no cases (see ``ops``)
    cases = getattr(fn, "_parametrize_cases", [{}])
    dts = getattr(fn, "_dtypes", None)
    for case in cases:
        base = "_".join([name, *case.get("__name__", [])])
        params = case_params(case)
        if dts is None:
            # a parametrized ``dtype`` is named after the device too, as PyTorch names it
            dt = params.get("dtypes", params.get("dtype"))
            named = dt if isinstance(dt, (list, tuple)) else [dt] if dt is not None else []
            suffix = "".join(f"_{_dtype_name(d)}" for d in named)
            yield f"{base}_cpu{suffix}", params, case
            continue
        for dt in dts:
            if isinstance(dt, (list, tuple)):
                suffix = "".join(f"_{_dtype_name(d)}" for d in dt)
                yield f"{base}_cpu{suffix}", {**params, "dtypes": dt}, case
            else:
                yield f"{base}_cpu_{_dtype_name(dt)}", {**params, "dtype": dt}, case


def _instantiate(fn: Callable, params: dict[str, Any]) -> Callable:
    @functools.wraps(fn)
    def test(self: Any) -> Any:
        if getattr(fn, "_only_other_device", None):
            raise unittest.SkipTest(f"Only runs on {fn._only_other_device}")
        dt = params.get("dtype", params.get("dtypes"))
        key = dt if not isinstance(dt, (list, tuple)) else None
        over = getattr(fn, "_precision_overrides", {})
        tols = getattr(fn, "_tolerance_overrides", {})
        if key in over:
            self.precision = over[key]
        if key in tols:
            self.precision, self.rel_tol = tols[key].atol, tols[key].rtol
        # the device as a keyword, where the test takes one (as PyTorch's instantiation)
        takes = inspect.signature(fn).parameters
        device: Any = ["cpu"] if getattr(fn, "_device_list", False) else "cpu"
        if "device" in takes:
            return fn(self, device=device, **params)
        if "devices" in takes:
            return fn(self, devices=device, **params)
        return fn(self, **params)

    return test


def instantiate_device_type_tests(
    cls: type, scope: dict[str, Any], except_for: Any = None, only_for: Any = None, **kw: Any
) -> None:
    """Add ``<Name>CPU`` to ``scope`` in place of ``<Name>``."""

    def listed(x: Any) -> list[str]:
        return [x] if isinstance(x, str) else list(x or [])

    if only_for and "cpu" not in listed(only_for):
        return
    if "cpu" in listed(except_for):
        return
    members: dict[str, Any] = {}
    for name, fn in list(vars(cls).items()):
        if not (name.startswith("test") and callable(fn)):
            if not name.startswith("__") or name == "__doc__":
                members[name] = fn
            continue
        for pname, params, case in _device_cases(name, fn):
            members[pname] = decorate(_instantiate(fn, params), case)
    name = cls.__name__ + "CPU"
    new = type(name, tuple(cls.__bases__), members)
    new.__module__ = cls.__module__
    new.device_type = "cpu"  # type: ignore[attr-defined]
    scope[name] = new
    scope.pop(cls.__name__, None)


class dtypes:
    """``@dtypes(torch.float, torch.double)``: one test per entry; an entry may be a
    list or tuple of dtypes (``@dtypes(*product(...))``), given as ``dtypes=``."""

    def __init__(self, *args: Any, device_type: str = "all") -> None:
        self.args = list(args)
        self.device_type = device_type

    def __call__(self, fn: Any) -> Any:
        table = dict(getattr(fn, "_dtypes_by_device", {}))
        table[self.device_type] = self.args
        fn._dtypes_by_device = table
        fn._dtypes = table.get("cpu", table.get("all"))
        return fn


def dtypesIfCPU(*args: Any) -> dtypes:
    return dtypes(*args, device_type="cpu")


def _ignored_dtypes(*args: Any, **kwargs: Any) -> Callable:
    """``@dtypesIfCUDA(...)`` and the like: dtypes for a device that is not here."""
    return lambda fn: fn


dtypesIfCUDA = dtypesIfMPS = dtypesIfXPU = dtypesIfHPU = dtypesIfPRIVATEUSE1 = _ignored_dtypes


def _only(device: str) -> Callable:
    def deco(fn: Any) -> Any:
        fn._only_other_device = device
        return fn

    return deco


onlyCUDA = _only("cuda")
onlyMPS = _only("mps")
onlyXPU = _only("xpu")
onlyPRIVATEUSE1 = _only("privateuse1")


def onlyOn(device_type: Any) -> Callable:
    kinds = [device_type] if isinstance(device_type, str) else list(device_type)
    return _marker if "cpu" in kinds else _only(kinds[0])


onlyCPU = onlyNativeDeviceTypes = onlyNativeDeviceTypesAnd = _marker
skipMeta = skipLazy = skipXLA = skipMPS = skipHPU = skipXPU = _marker
expectedFailureMeta = expectedFailureXLA = expectedFailureMPS = expectedFailureLazy = _marker
skipCUDAIfRocm = skipCUDAIfNotRocm = skipCUDAIfNoMagma = skipCUDAIfNoCusolver = _marker
skipCUDAIfNoMagmaAndNoCusolver = skipCUDAIfNoCudnn = skipCUDAIfCudnnVersionLessThan = _marker
skipCUDAIfRocmVersionLessThan = skipCUDAIfNotMiopenSuggestNHWC = _marker
skipCUDAIfNoMagmaAndNoLinalgsolver = skipCUDAVersionIn = skipCUDAIfNoFP8 = _marker
skipCPUIfNoLapack = skipCPUIfNoFFT = skipCPUIfNoMkl = skipCPUIfNoMklSparse = _marker
skipCUDAMemoryLeakCheckIf = _marker
# cuDNN, MIOpen and MKL-DNN switches of the convolution tests: a CPU run of compat has none
disablecuDNN = disableMkldnn = skipCPUIfNoMkldnn = skipCUDAIfMiopen = skipCUDAIfNoMiopen = _marker
skipPRIVATEUSE1 = _skip_marker("PrivateUse1 backend")


def largeTensorTest(size: Any, device: Any = None, **kw: Any) -> Callable:
    """A test needing ``size`` bytes: skipped (PyTorch's own run skips these on a machine
    of this size; run here they would take the memory other work needs)."""
    return unittest.skip("large-tensor test: not run by the shim")


def skipCUDAIf(condition: Any, reason: str) -> Callable:
    return lambda fn: fn


skipMPSIf = skipXLAIf = skipMetaIf = skipLazyIf = skipXPUIf = skipCUDAIf


def skipCPUIf(condition: Any, reason: str) -> Callable:
    return unittest.skip(reason) if condition else (lambda fn: fn)


class skipIf:
    """``@skipIf(dep, reason, device_type=None)``: skip on the named device type (every
    type when ``None``) when ``dep`` holds: a bool, or the name of an attribute of the
    test case read when the test runs (true when absent), as PyTorch's."""

    def __init__(self, dep: Any, reason: str, device_type: Any = None) -> None:
        self.dep, self.reason, self.device_type = dep, reason, device_type

    def __call__(self, fn: Callable) -> Callable:
        if self.device_type not in (None, "cpu"):
            return fn

        @functools.wraps(fn)
        def test(slf: Any, *args: Any, **kwargs: Any) -> Any:
            dep = getattr(slf, self.dep, True) if isinstance(self.dep, str) else self.dep
            if isinstance(dep, bool) and dep:
                raise unittest.SkipTest(self.reason)
            return fn(slf, *args, **kwargs)

        return test


class OpDTypes(enum.Enum):
    """Which dtypes an ``@ops`` test runs its OpInfos with (PyTorch's names)."""

    supported = 0
    unsupported = 1
    supported_backward = 2
    unsupported_backward = 3
    any_one = 4
    none = 5
    any_common_cpu_cuda_one = 6


def ops(op_list: Any, dtypes: Any = OpDTypes.supported, **kw: Any) -> Callable:
    """``@ops(op_list, ...)``: one test per OpInfo of PyTorch's database
    (``common_methods_invocations``), which the shims do not stand in for: its entries
    are the swap's placeholders for an upstream internal, and iterating them while the
    file is imported gives nothing, so such a method generates no cases (the runner
    reads these tests as out of scope). Real OpInfo objects are refused."""
    ops_ = list(op_list)
    if ops_:
        raise TypeError(f"ops(): the shim has no OpInfo database to run {ops_[:3]} with")

    def mark(fn: Any) -> Any:
        fn._opinfo_ops = ops_
        return fn

    return mark


def deviceCountAtLeast(n: int) -> Callable:
    """Tests so marked take a list of devices (``["cpu"]`` here) for ``device``."""

    def mark(fn: Callable) -> Callable:
        if n > 1:
            return unittest.skip(f"fewer than {n} devices")(fn)
        fn._device_list = True  # type: ignore[attr-defined]
        return fn

    return mark


class precisionOverride:
    """``@precisionOverride({torch.float: 1e-4})``: ``self.precision`` for that dtype."""

    def __init__(self, d: dict[Any, float]) -> None:
        self.d = d

    def __call__(self, fn: Any) -> Any:
        fn._precision_overrides = self.d
        return fn


class toleranceOverride:
    """``@toleranceOverride({torch.float: tol(atol, rtol)})``."""

    def __init__(self, d: dict[Any, Any]) -> None:
        self.d = d

    def __call__(self, fn: Any) -> Any:
        fn._tolerance_overrides = self.d
        return fn


def get_all_device_types() -> list[str]:
    return ["cpu"]


PYTORCH_CUDA_MEMCHECK = False
NATIVE_DEVICES = ("cpu", "cuda", "xpu", "meta", "mps", "mtia", "privateuse1")
