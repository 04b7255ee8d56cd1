"""compat's global module hooks beyond the forward/full-backward ones: the deprecated
global backward hook (``register_module_backward_hook``, not mixing with full ones), the
buffer/parameter/submodule registration hooks, ``RemovableHandle.hooks_dict_ref`` and the
registries living in ``nn.modules.module`` (rebinding one there takes effect), against
real PyTorch 2.13: the same scenario runs on both libraries and what the hooks saw is
compared."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch


@pytest.fixture
def fresh(real_torch):
    """Both libraries' global backward-hook kind reset (PyTorch never resets it itself)."""
    for lib in (torch, real_torch):
        lib.nn.modules.module._global_is_full_backward_hook = None
    yield
    for lib in (torch, real_torch):
        lib.nn.modules.module._global_is_full_backward_hook = None


def _global_backward(lib):
    seen = []

    def hook(m, grad_input, grad_output):
        seen.append((type(m).__name__, len(grad_input), len(grad_output)))
        seen.append([None if g is None else npv(g) for g in grad_input])

    handle = lib.nn.modules.module.register_module_backward_hook(hook)
    try:
        with pytest.raises(RuntimeError) as err:
            lib.nn.modules.module.register_module_full_backward_hook(lambda *a: None)
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Sigmoid())
        x = lib.randn(4, 3, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m(x).sum().backward()
    finally:
        handle.remove()
    return str(err.value), seen, npv(x.grad)


def test_global_non_full_backward_hook(real_torch, fresh):
    ours, ref = _global_backward(torch), _global_backward(real_torch)
    assert ours[0] == ref[0]
    assert [s for s in ours[1] if isinstance(s, tuple)] == [
        s for s in ref[1] if isinstance(s, tuple)
    ]
    # the gradients a legacy hook sees are those of the output's last node: compared for
    # the element-wise Sigmoid (a Linear's node orders its inputs as the library builds it)
    for i, (a, b) in enumerate(zip(ours[1], ref[1], strict=True)):
        if isinstance(a, list) and ours[1][i - 1][0] == "Sigmoid":
            assert len(a) == len(b)
            for x, y in zip(a, b, strict=True):
                assert (x is None) == (y is None)
                if x is not None:
                    np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[2], ref[2], rtol=1e-5, atol=1e-6)


def test_full_then_non_full_global_hook_refused(real_torch, fresh):
    msgs = []
    for lib in (torch, real_torch):
        h = lib.nn.modules.module.register_module_full_backward_hook(lambda *a: None)
        h.remove()  # the kind stays set after the removal, as in PyTorch
        with pytest.raises(RuntimeError) as err:
            lib.nn.modules.module.register_module_backward_hook(lambda *a: None)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]


def _registrations(lib, replace):
    seen = []
    marker = {}

    def hook(kind):
        def h(module, name, value):
            seen.append((kind, type(module).__name__, name, type(value).__name__))
            if replace and kind == "buffer" and value is not None:
                out = value * 0 + 7
                marker[name] = True
                return out
            return None

        return h

    mm = lib.nn.modules.module
    handles = [
        mm.register_module_buffer_registration_hook(hook("buffer")),
        mm.register_module_parameter_registration_hook(hook("param")),
        mm.register_module_module_registration_hook(hook("module")),
    ]
    try:
        net = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.BatchNorm1d(2))
        net.extra = lib.nn.ReLU()
        net[1].running_mean = lib.ones(2)
        net[1].register_buffer("spare", None)
        net[0].register_parameter("bias", None)
        net.extra = None
    finally:
        for h in handles:
            h.remove()
    lib.nn.Linear(1, 1)  # after removal: no more calls
    return seen, npv(net[1].running_mean), npv(net[1].running_var)


@pytest.mark.parametrize("replace", [False, True])
def test_registration_hooks(real_torch, replace):
    ours, ref = _registrations(torch, replace), _registrations(real_torch, replace)
    assert ours[0] == ref[0]
    np.testing.assert_array_equal(ours[1], ref[1])
    np.testing.assert_array_equal(ours[2], ref[2])


def test_handle_hooks_dict_ref_and_rebinding(real_torch):
    counts = []
    for lib in (torch, real_torch):
        mm = lib.nn.modules.module
        saved = mm._global_forward_hooks
        calls = []
        h = mm.register_module_forward_hook(lambda m, a, o: calls.append(1))
        reg = h.hooks_dict_ref()
        n_before = len(reg)
        mm._global_forward_hooks = OrderedDict()  # a test's tear-down: the hook is gone
        try:
            lib.nn.ReLU()(lib.ones(2))
        finally:
            mm._global_forward_hooks = saved
        lib.nn.ReLU()(lib.ones(2))  # the old registry back: the hook runs again
        h.remove()
        counts.append((n_before >= 1, len(calls), len(reg) == n_before - 1))
    assert counts[0] == counts[1]
