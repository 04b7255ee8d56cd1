"""Helpers of the ``autograd.Function`` tests: a scenario runs on compat and on real
PyTorch, and the two must record the same values, flags, names and exceptions."""

from __future__ import annotations

import importlib
import os

import pytest
from compat_helpers import check_scenario

import compat.torch as ctorch


def real():
    """Real PyTorch, the oracle (``COMPAT_REQUIRE_TORCH=1`` makes its absence a failure)."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        if os.environ.get("COMPAT_REQUIRE_TORCH") == "1":
            pytest.fail("COMPAT_REQUIRE_TORCH=1 but PyTorch is not importable")
        pytest.skip("PyTorch is not installed: the compat half ran, the comparison is skipped")


def check(scenario):
    """Run ``scenario(torch, log)`` on both libraries; their logs must agree."""
    return check_scenario(scenario, ctorch, real)


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
