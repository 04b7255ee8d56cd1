"""Grad modes, inference mode and ``autograd.Variable``, each run on compat.torch and on
real PyTorch (``lib`` fixture): the same scenario, the same observations."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from torch_oracle import npv

_SAVED = "Inference tensors cannot be saved for backward"
_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"


# ------------------------------------------------------------------ grad-mode decorators


def test_no_grad_and_enable_grad_decorate_without_parentheses(lib):
    @lib.no_grad
    def off():
        return lib.is_grad_enabled()

    @lib.enable_grad
    def on():
        return lib.is_grad_enabled()

    assert off() is False and lib.is_grad_enabled()
    with lib.no_grad():
        assert on() is True
        assert not lib.is_grad_enabled()
    assert off.__name__ == "off"


def test_no_grad_called_with_a_function_returns_the_wrapped_function(lib):
    x = lib.ones(2, requires_grad=True)
    f = lib.no_grad(lambda t: t * 2)
    assert f(x).requires_grad is False
    g = lib.enable_grad(lambda t: t * 2)
    with lib.no_grad():
        assert g(x).requires_grad is True


def test_decorating_a_class_warns_and_wraps_its_constructor(lib):
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):

        @lib.no_grad()
        class A:
            def __init__(self):
                self.mode = lib.is_grad_enabled()

    assert A().mode is False
    assert lib.is_grad_enabled()
    with pytest.warns(FutureWarning, match="directly decorate the `__init__` method"):

        @lib.enable_grad
        class B:
            def __init__(self):
                self.mode = lib.is_grad_enabled()

    with lib.no_grad():
        assert B().mode is True


def test_generator_keeps_the_mode_per_step_only(lib):
    @lib.no_grad()
    def gen():
        for _ in range(3):
            yield lib.is_grad_enabled()

    seen = [(v, lib.is_grad_enabled()) for v in gen()]
    assert seen == [(False, True)] * 3

    @lib.inference_mode()
    def gen_inf():
        yield lib.is_inference_mode_enabled()
        yield lib.is_inference_mode_enabled()

    assert [(v, lib.is_inference_mode_enabled()) for v in gen_inf()] == [(True, False)] * 2


def test_generator_send_throw_and_return_value(lib):
    @lib.no_grad()
    def gen():
        got = yield lib.is_grad_enabled()
        try:
            yield (got, lib.is_grad_enabled())
        except ValueError as e:
            yield ("caught", str(e), lib.is_grad_enabled())
        return "done"

    g = gen()
    assert next(g) is False
    assert g.send(5) == (5, False)
    assert g.throw(ValueError("boom")) == ("caught", "boom", False)
    with pytest.raises(StopIteration) as info:
        next(g)
    assert info.value.value == "done"
    assert lib.is_grad_enabled()


def test_set_grad_enabled_as_function_context_and_decorator(lib):
    x = lib.ones(2, requires_grad=True)
    lib.set_grad_enabled(False)
    try:
        assert (x * 2).requires_grad is False
    finally:
        lib.set_grad_enabled(True)
    with lib.set_grad_enabled(False):
        assert not lib.is_grad_enabled()
    assert lib.is_grad_enabled()

    @lib.set_grad_enabled(False)
    def f():
        return lib.is_grad_enabled()

    assert lib.is_grad_enabled() and f() is False
    assert repr(lib.set_grad_enabled(True)) == (
        "torch.autograd.grad_mode.set_grad_enabled(mode=True)"
    )


@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_set_grad_enabled_needs_a_bool(lib, bad):
    with pytest.raises(
        TypeError,
        match=r"set_grad_enabled\(\): argument 'enabled' \(position 1\) "
        rf"must be bool, not {type(bad).__name__}",
    ):
        lib.set_grad_enabled(bad)
    assert lib.is_grad_enabled()


def test_grad_mode_restored_after_exception(lib):
    with pytest.raises(ZeroDivisionError), lib.no_grad():
        _ = 1 / 0
    assert lib.is_grad_enabled()

    @lib.inference_mode()
    def boom():
        raise KeyError("k")

    with pytest.raises(KeyError):
        boom()
    assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()


def test_reentrant_no_grad_object_overwrites_its_saved_mode(lib):
    # one no_grad object entered twice: the inner enter saves False, so the outer exit
    # restores False (PyTorch's behaviour, reproduced)
    ng = lib.no_grad()
    try:
        with ng:
            with ng:
                pass
            assert not lib.is_grad_enabled()
        assert not lib.is_grad_enabled()
    finally:
        lib.set_grad_enabled(True)


def test_grad_mode_is_thread_local(lib):
    seen = []
    with lib.no_grad():
        t = threading.Thread(target=lambda: seen.append(lib.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


# ------------------------------------------------------------------ inference mode


def test_inference_mode_flags_and_results(lib):
    x = lib.ones(2, requires_grad=True)
    assert lib.is_inference_mode_enabled() is False
    with lib.inference_mode():
        assert lib.is_inference_mode_enabled() is True
        assert lib.is_grad_enabled() is False
        y = x * 2
        z = lib.ones(2)
        assert y.requires_grad is False and y.grad_fn is None
        assert y.is_inference() and z.is_inference() and not x.is_inference()
        # factories still honour requires_grad=True inside
        assert lib.ones(2, requires_grad=True).requires_grad
    assert lib.is_inference_mode_enabled() is False and lib.is_grad_enabled()
    assert lib.is_inference(y) and not lib.is_inference(x)
    assert not (z * 2).is_inference() and not z.clone().is_inference()
    assert z.detach().is_inference() and z.data.is_inference()


def test_inference_mode_decorator_forms(lib):
    @lib.inference_mode
    def bare():
        return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

    @lib.inference_mode()
    def called():
        return lib.is_inference_mode_enabled()

    @lib.inference_mode(False)
    def off():
        return lib.is_inference_mode_enabled(), lib.is_grad_enabled()

    assert bare() == (True, False) and called() is True
    with lib.inference_mode():
        assert off() == (False, True)
    with lib.no_grad():
        assert off() == (False, True)  # inference_mode(False) turns grad mode on
        assert not lib.is_grad_enabled()


def test_inference_mode_false_inside_makes_normal_tensors(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        with lib.inference_mode(False):
            assert not lib.is_inference_mode_enabled() and lib.is_grad_enabled()
            a = lib.ones(2)
            b = x * 2
        assert lib.is_inference_mode_enabled()
    assert not a.is_inference() and b.requires_grad and not b.is_inference()


def test_enable_grad_inside_inference_mode_still_records_nothing(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode(), lib.enable_grad():
        assert lib.is_grad_enabled() and lib.is_inference_mode_enabled()
        c = x * 2
    assert c.requires_grad is False and c.is_inference()


def test_inference_tensor_cannot_be_saved_for_backward(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.inference_mode():
        z = lib.full((2,), 3.0)
    with pytest.raises(RuntimeError, match=_SAVED):
        x * z
    with pytest.raises(RuntimeError, match=_SAVED):
        lib.mul(z, x)
    # add saves neither input: allowed, and the gradient flows
    y = (x + z).sum()
    y.backward()
    assert npv(x.grad).tolist() == [1.0, 1.0]
    # outside grad recording an inference tensor is an ordinary input
    with lib.no_grad():
        assert npv(x * z).tolist() == [3.0, 3.0]
    assert npv(z * 2).tolist() == [6.0, 6.0]


def test_inplace_on_inference_tensor_outside_inference_mode(lib):
    with lib.inference_mode():
        z = lib.ones(2)
        z.add_(1)  # allowed inside
    with pytest.raises(RuntimeError, match=_INPLACE):
        z.add_(1)
    with pytest.raises(RuntimeError, match=_INPLACE):
        z.mul_(2)
    with lib.no_grad(), pytest.raises(RuntimeError, match=_INPLACE):
        z.zero_()
    with pytest.raises(RuntimeError, match=_INPLACE):
        z.exp_()
    # (PyTorch writes the value before it raises; compat raises first: values not compared)
    c = z.clone()
    assert not c.is_inference()
    c.fill_(2.0)
    c.add_(1)
    assert npv(c).tolist() == [3.0, 3.0]


def test_inplace_on_normal_tensors_inside_inference_mode(lib):
    x = lib.ones(2, requires_grad=True)
    n = lib.ones(2)
    with lib.inference_mode():
        n.add_(1)
        x.add_(1)  # a leaf requiring grad: no autograd check in inference mode
    assert npv(n).tolist() == [2.0, 2.0] and not n.is_inference()
    assert npv(x).tolist() == [2.0, 2.0] and x.is_leaf and x.requires_grad


def test_inference_tensor_requires_grad_and_version(lib):
    with lib.inference_mode():
        z = lib.ones(2)
        z.requires_grad_()  # allowed inside
        w = lib.ones(2)
        with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
            _ = w._version
    assert z.requires_grad
    msg = "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed"
    with pytest.raises(RuntimeError, match=msg):
        w.requires_grad_()
    with pytest.raises(RuntimeError, match=msg):
        w.requires_grad = True
    w.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        _ = w._version


def test_is_inference_needs_a_tensor(lib):
    with pytest.raises(
        TypeError,
        match=r"is_inference\(\): argument 'input' \(position 1\) must be Tensor, not int",
    ):
        lib.is_inference(3)


def test_module_forward_in_inference_mode(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    x = lib.ones(4, 3)
    with lib.inference_mode():
        out = m(x)
    assert out.is_inference() and not out.requires_grad
    np.testing.assert_allclose(npv(out), npv(m(x)), rtol=1e-6)


# ------------------------------------------------------------------ Variable


def test_variable_honours_requires_grad_and_shares_storage(lib):
    a = lib.ones(2)
    v = lib.autograd.Variable(a, requires_grad=True)
    assert v.requires_grad and v.is_leaf and type(v) is lib.Tensor
    a.add_(1)
    assert npv(v).tolist() == [2.0, 2.0]
    assert lib.autograd.Variable(a, True, False).requires_grad
    assert not lib.autograd.Variable(a).requires_grad
    assert lib.autograd.Variable(data=a).shape == (2,)
    assert isinstance(a, lib.autograd.Variable)
    assert tuple(lib.autograd.Variable().shape) == (0,)
    x = lib.ones(2, requires_grad=True)
    d = lib.autograd.Variable(x * 2)
    assert d.is_leaf and not d.requires_grad


def test_variable_volatile_warns_and_bad_arguments(lib):
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        v = lib.autograd.Variable(lib.ones(2), volatile=True)
    assert not v.requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lib.autograd.Variable(lib.ones(2), volatile=False)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        lib.autograd.Variable([1.0, 2.0])
    with pytest.raises(TypeError, match="'foo' is an invalid keyword argument"):
        lib.autograd.Variable(lib.ones(2), foo=1)
    with pytest.raises(
        RuntimeError, match="Only Tensors of floating point and complex dtype can require"
    ):
        lib.autograd.Variable(lib.ones(2, dtype=lib.long), requires_grad=True)


def test_inplace_in_inference_mode_on_a_tensor_of_an_existing_graph(lib):
    s = lib.ones(1, 2, 3, requires_grad=True)
    a = s.clone()
    out = a * a
    with lib.inference_mode():
        a.add_(2)  # a normal tensor: its version counter still counts
    assert a.requires_grad and a.grad_fn is not None and not a.is_inference()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward(lib.ones_like(out))


def test_leaf_requiring_grad_made_in_inference_mode(lib):
    with lib.inference_mode():
        c = lib.ones(1, 2, 3, requires_grad=True)
        c.add_(1)
        d = c * 2
    assert c.requires_grad and c.is_inference()
    assert not d.requires_grad and d.is_inference()
    with pytest.raises(RuntimeError, match=_SAVED):
        c * lib.ones(1, 2, 3, requires_grad=True)


def test_views_and_inference_mode(lib):
    with lib.inference_mode():
        z = lib.ones(2, 3)
    n = lib.ones(2, 3)
    with lib.inference_mode():
        vn = n.view(6)  # a view of a normal tensor stays normal
        vz = z[0]
    assert z.view(6).is_inference() and z[0].is_inference() and z.t().is_inference()
    assert not vn.is_inference() and vz.is_inference()
    vn.add_(1)
    assert npv(n).tolist() == [[2.0] * 3] * 2
    with pytest.raises(RuntimeError, match=_INPLACE):
        z.view(6).add_(1)
