"""The dispatch hot path's caches keep PyTorch's behaviour: ``apply`` finds a repeated
op by its signature in one lookup (``funcgrad._compat_contract.op_cache``), reads the
requires-grad pattern of its arguments while collecting them, and the forward of a
node whose residuals are all inputs returns its outputs as they are. The same op is
run many times with changing grad modes, requires-grad patterns, dtypes and Python
numbers, and after the caches are cleared; compared with PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import import_real_torch, npv

import compat.torch as ctorch
import funcgrad
from funcgrad import _compat_contract

real = import_real_torch()

LIBS = (ctorch, real)


def _state(t) -> tuple:
    """What a result looks like from outside: values, dtype, grad flags, node name."""
    fn = t.grad_fn
    return (
        npv(t).tolist(),
        str(t.dtype).removeprefix("torch."),
        t.requires_grad,
        t.is_leaf,
        None if fn is None else fn.name(),
    )


def _pattern_run(lib) -> list:
    """One op signature (``a * b``, two float32 vectors) under every requires-grad
    pattern and grad mode, repeated: each call must see its own pattern."""
    out = []
    for _ in range(2):
        for ra in (False, True):
            for rb in (False, True):
                for grad_on in (True, False):
                    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=ra)
                    b = lib.tensor([0.5, -1.0, 4.0], requires_grad=rb)
                    with lib.set_grad_enabled(grad_on):
                        y = a * b
                    out.append(_state(y))
                    if y.requires_grad:
                        y.sum().backward()
                        out.append(
                            tuple(None if t.grad is None else npv(t.grad).tolist() for t in (a, b))
                        )
    return out


def test_one_signature_under_every_requires_grad_pattern_and_grad_mode():
    c, r = (_pattern_run(lib) for lib in LIBS)
    assert c == r


@pytest.mark.parametrize(
    "dtype", ["float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8", "bool"]
)
@pytest.mark.parametrize("other", [2, 2.5, True])
def test_python_number_promotion_on_the_fast_dtype_path(dtype, other):
    got = {}
    for lib in LIBS:
        x = lib.tensor([1, 0, 3]).to(getattr(lib, dtype))
        res = []
        for op in (
            lambda x: x * other,
            lambda x: other * x,
            lambda x: x + other,
            lambda x: x - other,
        ):
            try:
                y = op(x)
            except RuntimeError as e:  # subtracting a bool: an error in both
                res.append(str(e))
            else:
                res.append((str(y.dtype).removeprefix("torch."), npv(y.float()).tolist()))
        got[lib.__name__] = res
    assert got["compat.torch"] == got["torch"]


def test_a_python_number_a_zero_dim_tensor_and_an_int_are_different_signatures():
    got = {}
    for lib in LIBS:
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        ys = [x * 2, x * 2.0, x * lib.tensor(2.0), x * lib.tensor(2), x * lib.tensor(2.0).double()]
        got[lib.__name__] = [_state(y) for y in ys]
    assert got["compat.torch"] == got["torch"]


@pytest.mark.parametrize(
    "op",
    [
        lambda a, b: a * b,  # residuals: both inputs
        lambda a, b: a * 3.0 + b,  # residual: the Python number (recomputed in the backward)
        lambda a, b: (a.sin() * b.exp()).sum(),  # residuals computed by the forward
        lambda a, b: a / b,
    ],
)
def test_residuals_from_inputs_give_torch_gradients_and_free_after_backward(op):
    got = {}
    for lib in LIBS:
        a = lib.tensor([0.5, 1.5, -2.0], requires_grad=True)
        b = lib.tensor([1.0, 2.0, 0.25], requires_grad=True)
        y = op(a, b).sum()
        y.backward()
        grads = (npv(a.grad).tolist(), npv(b.grad).tolist())
        try:
            y.backward()
            second = "ok"
        except RuntimeError as e:
            second = "second time" in str(e)
        got[lib.__name__] = (npv(y).tolist(), grads, second)
    c, r = got["compat.torch"], got["torch"]
    np.testing.assert_allclose(c[0], r[0], rtol=1e-6)
    np.testing.assert_allclose(c[1], r[1], rtol=1e-6)
    assert c[2] == r[2]


def test_cleared_caches_trace_again_and_agree_with_torch():
    a = ctorch.tensor([1.0, 2.0], requires_grad=True)
    (a * 1.25).sum().backward()
    assert _compat_contract.op_cache  # the op was cached by its signature
    funcgrad.clear_caches()
    assert not _compat_contract.op_cache
    got = {}
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * 1.25).sum()
        y.backward()
        got[lib.__name__] = (_state(y), npv(x.grad).tolist())
    assert got["compat.torch"] == got["torch"]
    assert _compat_contract.op_cache


def test_the_signature_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(_compat_contract, "MAX_CACHED_SIGNATURES", 4)
    x = ctorch.tensor([1.0, 2.0, 3.0])
    tx = real.tensor([1.0, 2.0, 3.0])
    for n in range(1, 10):  # a new signature each time: (n,) shapes
        assert npv(x[:n] * 2.0).tolist() == npv(tx[:n] * 2.0).tolist()
        assert len(_compat_contract.op_cache) <= 4


def test_inference_tensors_still_refuse_to_be_saved_on_a_cached_signature():
    msgs = {}
    for lib in LIBS:
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        ok = w * w  # the signature is cached now
        with lib.inference_mode():
            t = lib.tensor([3.0, 4.0])
        with pytest.raises(RuntimeError) as e:
            w * t
        msgs[lib.__name__] = (
            "Inference tensors cannot be saved for backward" in str(e.value),
            _state(ok),
        )
    assert msgs["compat.torch"] == msgs["torch"]


@pytest.mark.parametrize(
    "expr",
    ["f - True", "b - 2", "b - b", "1 - b", "True - f", "f - b", "i - True", "b - 2.5"],
)
def test_subtracting_bools_is_refused_as_in_torch(expr):
    msgs = {}
    for lib in LIBS:
        env = {
            "f": lib.tensor([1.0, 2.0]),
            "b": lib.tensor([True, False]),
            "i": lib.tensor([1, 2]),
        }
        with pytest.raises(RuntimeError) as e:
            eval(expr, env)
        msgs[lib.__name__] = str(e.value)
    assert msgs["compat.torch"] == msgs["torch"]


@pytest.mark.parametrize("form", ["function", "alpha", "inplace", "method"])
def test_subtracting_a_bool_tensor_in_every_form_is_refused_as_in_torch(form):
    msgs = {}
    for lib in LIBS:
        f, b = lib.tensor([1.0, 2.0]), lib.tensor([True, False])
        call = {
            "function": lambda: lib.sub(f, b),
            "alpha": lambda: lib.sub(f, b, alpha=2),
            "inplace": lambda: f.sub_(b),
            "method": lambda: b.subtract(b),
        }[form]
        with pytest.raises(RuntimeError) as e:
            call()
        msgs[lib.__name__] = str(e.value)
    assert msgs["compat.torch"] == msgs["torch"]


def test_reflected_operators_and_rsub_name_their_nodes_as_pytorch():
    """``2 - t`` is PyTorch's rsub of a number (``RsubBackward1``), ``torch.rsub`` of two
    tensors ``RsubBackward0``, ``2 ** t`` ``PowBackward2``; values and gradients too."""

    def run(lib):
        out = []
        for _ in range(2):  # the second time through the cached signatures
            t = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
            u = lib.tensor([0.5, -1.0, 4.0], requires_grad=True)
            results = [
                2 - t,
                2.5 - t,
                lib.rsub(t, 2),
                lib.rsub(t, u),
                lib.rsub(t, u, alpha=3),
                lib.rsub(t, 1.5, alpha=0.5),
                2**t,
                lib.pow(2, t),
                t**u,
                t**2,
            ]
            for r in results:
                (gt, gu) = lib.autograd.grad(r.sum(), (t, u), allow_unused=True)
                out.append((_state(r), npv(gt).tolist(), None if gu is None else npv(gu).tolist()))
        return out

    assert run(ctorch) == run(real)
