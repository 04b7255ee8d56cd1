"""Arguments PyTorch refuses that compat took (silently using a wrong value or doing
something else), against real PyTorch 2.13: ``manual_seed`` outside the int64/uint64
ranges (compat wrapped it), ``Generator`` of a device without generators or of an invalid
name, ``masked_fill`` with a non-bool mask or a value tensor of 1+ dims (compat filled, and
broadcast the value), thread counts out of range; and the once-per-process warnings of
``from_numpy`` (a read-only array) and ``float()`` (a tensor that requires grad) repeat
under ``set_warn_always(True)``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import compat.torch as ctorch

MAX_U64 = 2**64 - 1
MIN_I64 = -(2**63)


def test_manual_seed_range_as_torch(real_torch):
    for lib in (ctorch, real_torch):
        state = lib.get_rng_state()
        try:
            for seed, initial in ((MAX_U64, MAX_U64), (-1, MAX_U64), (MIN_I64, 2**63), (0, 0)):
                lib.manual_seed(seed)
                assert lib.initial_seed() == initial
            for bad in (MIN_I64 - 1, MAX_U64 + 1):
                with pytest.raises(ValueError, match="Overflow when unpacking long long"):
                    lib.manual_seed(bad)
                with pytest.raises(ValueError, match="Overflow when unpacking long long"):
                    lib.Generator().manual_seed(bad)
        finally:
            lib.set_rng_state(state)


@pytest.mark.parametrize("device", ["opengl", "meta", "xyz", "cpu"])
def test_generator_device_as_torch(real_torch, device):
    outcomes = []
    for lib in (ctorch, real_torch):
        try:
            outcomes.append(repr(lib.Generator(device).device))
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize(
    "expr",
    [
        "x.masked_fill(T.tensor([1, 0, 1], dtype=T.uint8), 0)",
        "x.masked_fill_(T.tensor([1, 0, 1], dtype=T.uint8), 0)",
        "x.masked_fill(T.tensor([1, 0, 1]), 0)",
        "x.masked_fill(T.tensor([1.0, 0.0, 1.0]), 0)",
        "x.masked_fill(T.tensor([True, False, True]), T.tensor([1.0, 2.0, 3.0]))",
        "T.masked_fill(x, T.tensor([True, False, True]), T.tensor([[5.0]]))",
    ],
)
def test_masked_fill_checks_as_torch(real_torch, expr):
    messages = []
    for lib in (ctorch, real_torch):
        with pytest.raises(RuntimeError) as info:
            eval(expr, {"T": lib, "x": lib.ones(3)})
        messages.append(str(info.value).split("\n  (in your code at")[0])
    assert messages[0] == messages[1]


def test_masked_fill_accepted_as_torch(real_torch):
    results = []
    for lib in (ctorch, real_torch):
        x = lib.ones(3, dtype=lib.int32)
        m = lib.tensor([True, False, True])
        results.append(
            [x.masked_fill(m, 1.5).tolist(), x.float().masked_fill(m, lib.tensor(2.0)).tolist()]
        )
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "expr",
    [
        "T.set_num_threads(-1)",
        "T.set_num_threads(0)",
        "T.set_num_threads(2**31)",
        "T.set_num_threads(2**65)",
        "T.set_num_threads(1.5)",
        "T.set_num_interop_threads(-1)",
        "T.set_num_interop_threads(2**63)",
        "T.set_num_interop_threads(1.5)",
    ],
)
def test_thread_count_checks_as_torch(real_torch, expr):
    outcomes = []
    for lib in (ctorch, real_torch):
        with pytest.raises((RuntimeError, ValueError)) as info:
            eval(expr, {"T": lib})
        outcomes.append((info.type, str(info.value)))
    assert outcomes[0] == outcomes[1]


def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


def test_once_per_process_warnings_repeat_under_warn_always(real_torch):
    """``from_numpy`` of a read-only array and ``float()`` of a tensor that requires grad
    warn once per process, every time under ``set_warn_always(True)``, as PyTorch's."""
    a = np.arange(4)
    a.flags.writeable = False
    got = []
    for lib in (ctorch, real_torch):
        lib.set_warn_always(True)
        try:
            x = lib.tensor(2.0, requires_grad=True)
            got.append(
                [_warnings(lambda: lib.from_numpy(a)) for _ in range(2)]
                + [_warnings(lambda: math.pow(x, 3)) for _ in range(2)]
            )
        finally:
            lib.set_warn_always(False)
    assert got[0] == got[1]
    assert all(len(w) == 1 for w in got[0])
    assert "is not writable" in got[0][0][0] and "requires_grad=True" in got[0][2][0]


@pytest.mark.parametrize(
    "stmt",
    [
        "r[0.0:2.0] = 1",
        "r[0.0:2.0]",
        "r[1:2.5]",
        "r[T.tensor(0):T.tensor(2)] = 1",
        "r[np.int64(0):2]",
        "r[:2, 1:] = 2",
        "r[::2]",
        "T.LongTensor((6, 0), 1, 1, 0)",
        "T.FloatTensor([1, 2], 3)",
        "T.FloatTensor(2, 3)",
    ],
)
def test_slice_bounds_and_legacy_constructor_as_torch(real_torch, stmt):
    """A float slice bound is Python's ``TypeError`` (compat truncated it); a legacy
    constructor given a size or data followed by more arguments is PyTorch's ``TypeError``
    (compat's message was its size parser's)."""
    outcomes = []
    for lib in (ctorch, real_torch):
        env = {"T": lib, "np": np, "r": lib.zeros(3, 3, 3)}
        try:
            exec(stmt, env)
            outcomes.append(("ok", env["r"].sum().item()))
        except TypeError as e:
            outcomes.append(("TypeError", str(e).split(", but expected")[0]))
    assert outcomes[0] == outcomes[1]


def test_tensor_without_data_as_torch(real_torch):
    messages = []
    for lib in (ctorch, real_torch):
        with pytest.raises(TypeError) as info:
            lib.tensor()
        messages.append(str(info.value))
    assert messages[0] == messages[1]
