"""Helpers of the ``autograd.Function`` tests: a scenario runs on compat and on real
PyTorch, and the two must record the same values, flags, names and exceptions."""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

import compat.torch as ctorch


def real():
    """Real PyTorch, the oracle (``COMPAT_REQUIRE_TORCH=1`` makes its absence a failure)."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        if os.environ.get("COMPAT_REQUIRE_TORCH") == "1":
            pytest.fail("COMPAT_REQUIRE_TORCH=1 but PyTorch is not importable")
        pytest.skip("PyTorch is not installed: the compat half ran, the comparison is skipped")


def _norm(v):
    """A comparable form of what a scenario records."""
    if isinstance(v, (list, tuple)):
        return type(v).__name__, [_norm(x) for x in v]
    if hasattr(v, "detach") and hasattr(v, "requires_grad"):
        return ("tensor", str(v.dtype).replace("torch.", ""), np.array(v.detach().numpy()))
    return v


def check(scenario):
    """Run ``scenario(torch, log)`` on both libraries; their logs must agree."""
    logs = {}
    for name in ("compat", "torch"):
        lib = ctorch if name == "compat" else real()  # compat runs even without torch
        log = []

        def rec(*vals, log=log):
            log.extend(_norm(v) for v in vals)

        scenario(lib, rec)
        logs[name] = log
    a, b = logs["compat"], logs["torch"]
    assert len(a) == len(b), (a, b)
    for x, y in zip(a, b):
        _assert_same(x, y)
    return a


def _assert_same(x, y):
    if isinstance(x, tuple) and x and x[0] == "tensor":
        assert isinstance(y, tuple) and y[0] == "tensor", (x, y)
        assert x[1] == y[1], (x, y)
        np.testing.assert_allclose(x[2], y[2], rtol=1e-6, atol=1e-6)
    elif isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], list):
        assert isinstance(y, tuple) and x[0] == y[0] and len(x[1]) == len(y[1]), (x, y)
        for p, q in zip(x[1], y[1]):
            _assert_same(p, q)
    else:
        assert x == y, (x, y)


def err(fn):
    """``(exception type name, message)`` of ``fn()``, or ``"no error"``."""
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return "no error"


def square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    return Square
