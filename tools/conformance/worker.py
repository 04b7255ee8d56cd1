"""One conformance run in its own process: load a test file, run a sample, write JSON.

    python -m tools.conformance.worker --lib jax --mode swapped \\
        --file /tmp/jax-src/tests/api_test.py --sample 2 --out results.json

``--mode upstream`` imports the file as it is (the real library and its own test
helpers: the baseline); ``--mode swapped`` first installs the import swap of
:mod:`tools.conformance.shims` (``jax`` -> ``funcgrad``, ``torch`` -> ``compat.torch``).
Both modes collect the same test ids, pick the same sample (:func:`sample_ids`) and
record, per test, the outcome, the exception's type and message, and the swap's
record of names the test looked up that the library lacks.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import pathlib
import signal
import sys
import time
import traceback
import unittest
import zlib
from collections import defaultdict
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: ``assertRaises`` contexts that saw an exception of another type than expected
_WRONG_RAISES: list[tuple[str, str]] = []


def _watch_assert_raises() -> None:
    """Note when an ``assertRaises`` block sees another exception type (it then
    propagates unchanged): the runner calls that failure a wrong error."""
    ctx = unittest.case._AssertRaisesContext  # type: ignore[attr-defined]
    orig = ctx.__exit__

    def __exit__(self: Any, exc_type: Any, exc_value: Any, tb: Any) -> Any:
        expected = self.expected if isinstance(self.expected, tuple) else (self.expected,)
        if exc_type is not None and not issubclass(exc_type, expected):
            _WRONG_RAISES.append((str(expected), exc_type.__name__))
        return orig(self, exc_type, exc_value, tb)

    ctx.__exit__ = __exit__


def _iter_tests(suite: unittest.TestSuite) -> list[unittest.TestCase]:
    out: list[unittest.TestCase] = []
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            out.extend(_iter_tests(t))
        else:
            out.append(t)
    return out


def base_name(test: unittest.TestCase) -> str:
    """``Class.method`` of the function a (possibly parameterized) test runs."""
    method = getattr(test, test._testMethodName, None)
    fn = getattr(method, "__func__", method)
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    name = getattr(fn, "__name__", test._testMethodName)
    return f"{type(test).__name__}.{name}"


def test_id(test: unittest.TestCase) -> str:
    return f"{type(test).__name__}.{test._testMethodName}"


def sample_ids(
    tests: list[unittest.TestCase], per_method: int, limit: int = 0
) -> list[unittest.TestCase]:
    """At most ``per_method`` cases of each test method, then at most ``limit`` tests
    in all, picked by a hash of the ids (the same in both runs, whatever the order
    of collection); ``0`` keeps all."""
    if per_method > 0:
        tests = _per_method(tests, per_method)
    if limit > 0:
        tests = sorted(tests, key=lambda t: (zlib.crc32(test_id(t).encode()), test_id(t)))
        tests = tests[:limit]
    return tests


def _per_method(tests: list[unittest.TestCase], per_method: int) -> list[unittest.TestCase]:
    groups: dict[str, list[unittest.TestCase]] = defaultdict(list)
    for t in tests:
        groups[base_name(t)].append(t)
    keep = []
    for _, ts in sorted(groups.items()):
        ts.sort(key=lambda t: (zlib.crc32(test_id(t).encode()), test_id(t)))
        keep.extend(ts[:per_method])
    return keep


class _Timeout(BaseException):
    """Raised in a test that runs past the time limit."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


class _Result(unittest.TestResult):
    def __init__(self) -> None:
        super().__init__()
        self.outcome = "pass"
        self.exc: BaseException | None = None
        self.tb = ""
        self.reason = ""

    def addError(self, test: Any, err: Any) -> None:
        self._note("error", err)

    def addFailure(self, test: Any, err: Any) -> None:
        self._note("fail", err)

    def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
        if err is not None:
            self._note("fail" if issubclass(err[0], AssertionError) else "error", err)

    def addSkip(self, test: Any, reason: str) -> None:
        self.outcome, self.reason = "skip", reason

    def addExpectedFailure(self, test: Any, err: Any) -> None:
        self.outcome = "pass"

    def addUnexpectedSuccess(self, test: Any) -> None:
        self.outcome, self.reason = "fail", "unexpected success"

    def _note(self, kind: str, err: Any) -> None:
        if self.outcome in ("fail", "error"):
            return
        self.outcome, self.exc = kind, err[1]
        self.tb = "".join(traceback.format_exception(*err, limit=-4))[-3000:]


def run_one(test: unittest.TestCase, timeout: float, touched: list | None) -> dict[str, Any]:
    """Run one test; its outcome, exception and the names it missed."""
    if touched is not None:
        touched.clear()
    _WRONG_RAISES.clear()
    result = _Result()
    start = time.perf_counter()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        test.run(result)
    except _Timeout:
        result.outcome, result.reason = "timeout", f"ran past {timeout:g} s"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    exc = result.exc
    if isinstance(exc, _Timeout):
        result.outcome, result.reason, exc = "timeout", f"ran past {timeout:g} s", None
    rec: dict[str, Any] = {
        "id": test_id(test),
        "base": base_name(test),
        "outcome": result.outcome,
        "seconds": round(time.perf_counter() - start, 3),
    }
    if result.reason:
        rec["reason"] = result.reason[:300]
    if exc is not None:
        rec["exc_type"] = type(exc).__name__
        rec["message"] = str(exc)[:600]
        rec["traceback"] = result.tb
    if _WRONG_RAISES:
        rec["wrong_raises"] = list(_WRONG_RAISES)
    if touched:
        rec["touched"] = list(touched)
    return rec


def _install_swap(lib: str, module_name: str) -> list:
    if lib == "jax":
        from tools.conformance.shims import jax_swap as swap_mod
    else:
        from tools.conformance.shims import torch_swap as swap_mod
    swap = swap_mod.make_swap()
    swap.add_importer(module_name)
    swap.install()
    from tools.conformance.shims.swap import TOUCHED

    return TOUCHED


def _importing_flag(mode: str) -> list[bool]:
    if mode != "swapped":
        return [False]
    from tools.conformance.shims.swap import IMPORTING

    return IMPORTING


def _failing_setup(error: Exception) -> Any:
    def setUp(self: Any) -> None:
        raise error

    return setUp


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lib", choices=["jax", "torch"], required=True)
    p.add_argument("--mode", choices=["upstream", "swapped"], required=True)
    p.add_argument("--file", required=True, help="the upstream test file")
    p.add_argument("--sample", type=int, default=2)
    p.add_argument("--limit", type=int, default=0, help="tests per file at most (0: all)")
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--out", required=True)
    p.add_argument("--ids", default=None, help="a file of test ids: run only these")
    args = p.parse_args(argv)

    path = pathlib.Path(args.file).resolve()
    module_name = path.stem
    sys.path.insert(0, str(path.parent))
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    touched = _install_swap(args.lib, module_name) if args.mode == "swapped" else None
    _watch_assert_raises()
    records: list[dict[str, Any]] = []
    start = time.perf_counter()
    try:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        importing = _importing_flag(args.mode)
        importing[0] = True
        try:
            spec.loader.exec_module(module)
        finally:
            importing[0] = False
        tests = _iter_tests(unittest.defaultTestLoader.loadTestsFromModule(module))
    except Exception as e:
        records.append(
            {
                "id": f"{module_name}.<import>",
                "base": f"{module_name}.<import>",
                "outcome": "error",
                "exc_type": type(e).__name__,
                "message": str(e)[:600],
                "traceback": traceback.format_exc(limit=-6)[-3000:],
                "touched": list(touched or []),
            }
        )
        tests = []
    chosen = sample_ids(tests, args.sample, args.limit)
    if args.ids:
        wanted = set(pathlib.Path(args.ids).read_text().split())
        chosen = [t for t in chosen if test_id(t) in wanted]
    ready: set[type] = set()
    for t in chosen:
        cls = type(t)
        if cls not in ready:
            ready.add(cls)
            try:
                cls.setUpClass()
            except Exception as e:
                cls.setUp = _failing_setup(e)  # type: ignore[method-assign]
        records.append(run_one(t, args.timeout, touched))
    for cls in ready:
        with contextlib.suppress(Exception):
            cls.tearDownClass()
    out = {
        "file": str(path),
        "mode": args.mode,
        "collected": len(tests),
        "seconds": round(time.perf_counter() - start, 1),
        "records": records,
    }
    pathlib.Path(args.out).write_text(json.dumps(out, default=str))
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown (XLA threads, atexit hooks of the tests)


if __name__ == "__main__":
    sys.exit(main())
