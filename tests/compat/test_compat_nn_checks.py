"""Errors PyTorch 2.13 raises in ``nn`` that compat now raises too (same type, same
message), and the values on the way: empty batches in ``BatchNorm``/``GroupNorm``,
negative amounts of the reflect/replicate/circular ``pad`` modes, ``Module.to`` a
complex dtype."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]


def _error(fn: Callable[[Any], Any]) -> list[tuple[str, str]]:
    """The exception (type name, message) ``fn(lib)`` raises in each library."""
    out = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            fn(lib)
        out.append((type(info.value).__name__, str(info.value).split("\n")[0]))
    return out


CASES = {
    "rnn_seq_len_0": lambda lib: lib.nn.GRU(5, 6)(lib.ones(0, 10, 5)),
    "rnn_seq_len_0_batch_first": lambda lib: lib.nn.LSTM(5, 6, batch_first=True)(lib.ones(2, 0, 5)),
    "rnn_unbatched_0": lambda lib: lib.nn.RNN(5, 6)(lib.ones(0, 5)),
    "group_norm_one_value": lambda lib: lib.nn.GroupNorm(10, 10)(lib.rand(10)[None, :, None]),
    "reflect_1d_empty": lambda lib: lib.nn.ReflectionPad1d(2)(lib.randn(3, 0, 10)),
    "reflect_2d_empty": lambda lib: lib.nn.ReflectionPad2d(2)(lib.randn(3, 0, 10, 10)),
    "replicate_3d_empty": lambda lib: lib.nn.ReplicationPad3d(1)(lib.randn(3, 0, 4, 4, 4)),
    "replicate_unbatched_empty": lambda lib: lib.nn.functional.pad(lib.randn(0, 4), (1, 1), mode="replicate"),
    "circular_negative_size": lambda lib: lib.nn.functional.pad(lib.randn(1, 1, 4), (-3, -2), mode="circular"),
    "reflect_1d_too_small": lambda lib: lib.nn.functional.pad(lib.randn(1, 1, 4), (-2, -2), mode="reflect"),
    "ce_index_weight_size": lambda lib: lib.nn.functional.cross_entropy(lib.randn(4, 3), lib.zeros(4, dtype=lib.long), weight=lib.ones(2)),
    "nll_2d_target": lambda lib: lib.nn.functional.nll_loss(lib.randn(10, 3), lib.zeros(10, 2, dtype=lib.long)),
    "nll_weight_size": lambda lib: lib.nn.functional.nll_loss(lib.randn(10, 3), lib.zeros(10, dtype=lib.long), weight=lib.ones(4)),
    "nll_weight_2d": lambda lib: lib.nn.functional.nll_loss(lib.randn(10, 3), lib.zeros(10, dtype=lib.long), weight=lib.ones(1, 3)),
    "ce_weight_size": lambda lib: lib.nn.functional.cross_entropy(lib.randn(4, 3), lib.randn(4, 3), weight=lib.ones(2)),
    "label_smoothing": lambda lib: lib.nn.CrossEntropyLoss(label_smoothing=1.2)(lib.randn(3, 4), lib.arange(3)),
    "ctc_float_lengths": lambda lib: lib.nn.functional.ctc_loss(
        lib.randn(5, 2, 4).log_softmax(2), lib.ones(2, 2, dtype=lib.int), lib.tensor([5.0, 5.0]), lib.tensor([2, 2])
    ),
    "module_to_device_bool": lambda lib: lib.nn.Linear(2, 2).to(lib.device("cpu"), True),
    "module_to_none_bool": lambda lib: lib.nn.Linear(2, 2).to(None, True),
    "module_to_copy": lambda lib: lib.nn.Linear(2, 2).to("cpu", copy=True),
    "module_to_long": lambda lib: lib.nn.Linear(2, 2).to(lib.long),
    "tensor_to_device_bool": lambda lib: lib.ones(2).to(lib.device("cpu"), True),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_same_error(name: str) -> None:
    ours, theirs = _error(CASES[name])
    assert ours[0] == theirs[0]
    if "invalid combination" in theirs[1]:  # PyTorch lists its signatures after this
        assert ours[1].startswith("to() received an invalid combination of arguments - got")
    else:
        assert ours[1] == theirs[1]


INPLACE = {
    "elu_": lambda lib, t: lib.nn.functional.elu_(t, alpha=-2),
    "celu_": lambda lib, t: lib.nn.functional.celu_(t, alpha=-2),
    "leaky_relu_": lambda lib, t: lib.nn.functional.leaky_relu_(t, -2),
    "rrelu_": lambda lib, t: lib.nn.functional.rrelu_(t, -5.0, 1.0),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_negative_slope_refuses_backward(name: str) -> None:
    msgs = []
    for lib in LIBS:
        a = lib.tensor([-1.0, 1.0], requires_grad=True)
        out = INPLACE[name](lib, a.clone())  # the forward pass is allowed
        with pytest.raises(RuntimeError) as info:
            out.backward(lib.ones(2))
        msgs.append(str(info.value))
        with lib.no_grad():  # no graph: nothing to refuse
            INPLACE[name](lib, lib.tensor([-1.0, 1.0]))
    assert msgs[0] == msgs[1]
    assert "please call out-of-place version instead" in msgs[0]


def test_positive_slopes_still_differentiate() -> None:
    grads = []
    for lib in LIBS:
        a = lib.tensor([-1.0, 2.0], requires_grad=True)
        lib.nn.functional.leaky_relu_(a.clone(), 0.2).sum().backward()
        grads.append(a.grad.numpy().copy())
    np.testing.assert_allclose(grads[0], grads[1])


@pytest.mark.parametrize("module", ["BatchNorm2d", "GroupNorm"])
def test_empty_batch(module: str) -> None:
    rng = np.random.default_rng(0)
    results = []
    for lib in LIBS:
        mod = lib.nn.BatchNorm2d(4) if module == "BatchNorm2d" else lib.nn.GroupNorm(2, 4)
        x = lib.randn(0, 4, 2, 2, requires_grad=True)
        out = mod(x)
        out.backward(lib.tensor(rng.standard_normal((0, 4, 2, 2)), dtype=lib.float32))
        res = [tuple(out.shape), x.grad.numpy(), mod.weight.grad.numpy(), mod.bias.grad.numpy()]
        if module == "BatchNorm2d":  # an empty batch leaves the running statistics
            res += [mod.running_mean.numpy(), mod.running_var.numpy()]
        results.append(res)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize(
    "pads", [(1, -1), (-2, 1), (-1, -1, 2, -3), (0, 0, -1, -1), (3, -1, -2, 2), (1, -2)]
)
def test_negative_padding_modes(mode: str, pads: tuple) -> None:
    shape = (2, 3, 5, 4) if len(pads) == 4 else (3, 5, 4)
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    w = np.random.default_rng(1).standard_normal(200)
    results = []
    for lib in LIBS:
        t = lib.tensor(x, requires_grad=True)
        out = lib.nn.functional.pad(t, pads, mode=mode)
        g = lib.tensor(w[: out.numel()].reshape(out.shape))
        out.backward(g)
        results.append((out.detach().numpy(), t.grad.numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    # the gradient: each output's cotangent added to the input it reads (found by padding
    # the inputs' indices with PyTorch); PyTorch's own circular backward leaves entries
    # uninitialised when one side crops and the other wraps
    source = torch.nn.functional.pad(
        torch.arange(x.size, dtype=torch.float64).reshape(shape), pads, mode=mode
    )
    expected = np.zeros(x.size)
    np.add.at(expected, source.numpy().astype(np.int64).ravel(), w[: source.numel()])
    np.testing.assert_allclose(results[0][1], expected.reshape(shape), rtol=1e-13, atol=1e-14)


def test_module_to_complex() -> None:
    dtypes = []
    for lib in LIBS:
        m = lib.nn.Linear(3, 2)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            m.to(lib.cfloat)
            assert any("Complex modules are a new feature" in str(w.message) for w in ws)
            dtypes.append(str(m.weight.dtype))
            m.to(lib.cdouble)
            dtypes.append(str(m.bias.dtype))
            m.to(lib.float)
        dtypes.append(str(m.weight.dtype))
        assert isinstance(m.weight, lib.nn.Parameter)
    assert dtypes[:3] == dtypes[3:] == ["torch.complex64", "torch.complex128", "torch.float32"]


def test_module_dict_update_from_module_dict() -> None:
    keys = []
    for lib in LIBS:
        d = lib.nn.ModuleDict({"a": lib.nn.ReLU()})
        d.update(lib.nn.ModuleDict([("b", lib.nn.Tanh()), ("a", lib.nn.Sigmoid())]))
        keys.append([(k, type(v).__name__) for k, v in d.items()])
    assert keys[0] == keys[1] == [("a", "Sigmoid"), ("b", "Tanh")]


@pytest.mark.parametrize("target_lengths", [[0, 0], [0, 2], [3, 1]])
def test_ctc_loss_empty_targets(target_lengths: list) -> None:
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((6, 2, 5))
    targets = rng.integers(1, 5, (2, 3))
    results = []
    for lib in LIBS:
        x = lib.tensor(logits, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(
            x.log_softmax(2), lib.tensor(targets), [6, 5], target_lengths, reduction="none"
        )
        loss.sum().backward()
        results.append((loss.detach().numpy(), x.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [0, -math.inf, -1.0, math.inf, 2.0])
def test_clip_grad_norm_orders(p: float) -> None:
    grads = [np.array([1.0, 0.0, -3.0]), np.array([[0.0, 2.0], [0.0, 0.0]])]
    results = []
    for lib in LIBS:
        params = [lib.nn.Parameter(lib.zeros(g.shape, dtype=lib.float64)) for g in grads]
        for param, g in zip(params, grads):
            param.grad = lib.tensor(g)
        total = lib.nn.utils.clip_grad_norm_(params, 1.0, norm_type=p)
        results.append([total.numpy()] + [param.grad.numpy() for param in params])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


OUT_FORMS = {
    "logsigmoid": lambda lib, x, out: lib.nn.functional.logsigmoid(x, out=out),
    "softplus": lambda lib, x, out: lib.nn.functional.softplus(x, 2.0, 5.0, out=out),
    "softshrink": lambda lib, x, out: lib.nn.functional.softshrink(x, 0.3, out=out),
}


@pytest.mark.parametrize("name", list(OUT_FORMS))
def test_activation_out(name: str) -> None:
    x = np.random.default_rng(4).standard_normal((2, 3))
    results, errors = [], []
    for lib in LIBS:
        t = lib.tensor(x, dtype=lib.float32).t()
        for out in (lib.randn(0), lib.randn(2, 3).t()):
            r = OUT_FORMS[name](lib, t, out)
            assert r is out
            results.append(r.numpy())
        overlapping = lib.randn(1, 6).expand(6, 6)
        with pytest.raises(RuntimeError) as info:
            OUT_FORMS[name](lib, overlapping, overlapping)
        errors.append(str(info.value))
    for ours, theirs in zip(results[:2], results[2:]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert errors[0] == errors[1]


def test_module_apply_runs_without_recording() -> None:
    """``Module._apply`` with an in-place function: allowed on the leaf parameters, their
    versions bump (so a graph saved before refuses backward) and their gradients get
    the function too."""
    for lib in LIBS:
        m = lib.nn.Linear(3, 2)
        m.weight.grad = lib.ones(2, 3)
        saved = m.weight.mul(m.weight)
        version, grad_version = m.weight._version, m.weight.grad._version
        m._apply(lambda t: t.add_(1.0))
        assert m.weight._version > version and m.weight.grad._version > grad_version
        np.testing.assert_array_equal(m.weight.grad.numpy(), np.full((2, 3), 2.0))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            saved.backward(lib.ones(2, 3))
