"""Edge cases of single ops found by PyTorch's ``test_torch.py``, compared with real
PyTorch: ``torch.return_types`` printing, the deprecated positional ``value`` of
``addcmul``/``addcdiv``, ``cummax``/``cummin`` of bool and 0-d tensors, ``take`` and
``logcumsumexp`` of 0-d tensors, the scatter family with an empty index, ``index_add``'s
errors and ``isclose`` with 0-d tensor tolerances."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch
from tests.compat.torch_oracle import npv


def _outcome(lib, f):
    """``("ok", values...)`` of ``f(lib)`` or ``(error type name, message)``."""
    try:
        out = f(lib)
    except Exception as e:  # (the oracle's error is the expected value)
        return type(e).__name__, str(e)
    outs = out if isinstance(out, tuple) else (out,)
    return ("ok", *[npv(o).tolist() for o in outs])


def _same_outcome(real_torch, f):
    got, want = _outcome(ctorch, f), _outcome(real_torch, f)
    assert got == want


@pytest.mark.parametrize(
    "f",
    [
        lambda t: t.max(t.tensor([[1.0, 3.0], [2.0, 0.0]]), 0),
        lambda t: t.min(t.tensor([[1.0, 3.0], [2.0, 0.0]]), 1, keepdim=True),
        lambda t: t.sort(t.tensor([3, 1, 2])),
        lambda t: t.topk(t.tensor([3.0, 1.0, 2.0]), 2),
        lambda t: t.kthvalue(t.tensor([3.0, 1.0, 2.0]), 2),
        lambda t: t.median(t.tensor([[3.0, 1.0, 2.0]]), 1),
        lambda t: t.mode(t.tensor([1, 1, 2])),
        lambda t: t.cummax(t.tensor([1.0, 3.0, 2.0]), 0),
        lambda t: t.aminmax(t.tensor([1, 2])),
        lambda t: t.linalg.slogdet(2 * t.eye(2)),
        lambda t: t.linalg.eigh(2 * t.eye(2, dtype=t.float64)),
    ],
)
def test_return_types_repr(real_torch, f):
    assert repr(f(ctorch)) == repr(f(real_torch))


_ADDC = [
    (lambda t, o: t.addcmul(o, 0.5, o * 2, o * 3), "addcmul"),
    (lambda t, o: t.addcdiv(o, 0.5, o * 2, o * 4), "addcdiv"),
    (lambda t, o: o.addcmul(0.5, o * 2, o * 3), "addcmul"),
    (lambda t, o: o.clone().addcmul_(0.5, o * 2, o * 3), "addcmul_"),
    (lambda t, o: o.clone().addcdiv_(0.5, o * 2, o * 4), "addcdiv_"),
]


@pytest.mark.parametrize(("f", "name"), _ADDC)
def test_addc_deprecated_value_overload(real_torch, f, name):
    results = []
    for lib in (ctorch, real_torch):
        lib.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                out = f(lib, lib.ones(2, dtype=lib.float64))
        finally:
            lib.set_warn_always(False)
        msgs = [str(x.message) for x in w if "deprecated" in str(x.message)]
        assert len(msgs) == 1 and msgs[0].startswith(f"This overload of {name} is deprecated")
        results.append((npv(out).tolist(), msgs[0].split("\n")[0]))
    assert results[0] == results[1]


def test_addc_value_twice_refused():
    o = ctorch.ones(2)
    with pytest.raises(TypeError):
        ctorch.addcmul(o, 0.5, o, o, value=2)


@pytest.mark.parametrize(
    "f",
    [
        lambda t: t.cummax(t.tensor([False, True, False, True]), 0),
        lambda t: t.cummin(t.tensor([[True, False], [True, True]]), 1),
        lambda t: t.cummax(t.tensor(3.0), 0),
        lambda t: t.cummin(t.tensor(True), -1),
        lambda t: t.take(t.tensor(3.0), t.tensor(0)),
        lambda t: t.take(t.tensor(3.0), t.tensor([[0, -1]])),
        lambda t: t.take(t.tensor(3.0), t.tensor([1])),
        lambda t: t.take(t.zeros(3), t.tensor([-4])),
        lambda t: t.logcumsumexp(t.tensor(3.0), 0),
        lambda t: t.logcumsumexp(t.tensor(3.0), -1),
        lambda t: t.logcumsumexp(t.tensor(3.0), 1),
        lambda t: t.logcumsumexp(t.tensor([1, 2]), 0),
    ],
)
def test_zero_d_and_bool_ops(real_torch, f):
    _same_outcome(real_torch, f)


def test_zero_d_gradients(real_torch):
    for f in (lambda t, x: t.logcumsumexp(x, 0), lambda t, x: t.take(x, t.tensor([0, 0])).sum()):
        grads = []
        for lib in (ctorch, real_torch):
            x = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
            f(lib, x).backward()
            grads.append(npv(x.grad))
        np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize(
    "f",
    [
        lambda t: t.zeros(3, 2).scatter(1, t.empty(0, dtype=t.long), t.ones(2, 3)),
        lambda t: t.zeros(3, 2).scatter(1, t.empty(0, 0, dtype=t.long), 1.0),
        lambda t: t.zeros(3, 2).scatter_add(0, t.empty(0, dtype=t.long), t.ones(2, 3)),
        lambda t: t.zeros(3, 2).scatter_reduce(1, t.empty(0, dtype=t.long), t.ones(1), "sum"),
        lambda t: t.zeros(3, 2).scatter(1, t.empty(0, dtype=t.int32), t.ones(2, 3)),
        lambda t: t.zeros(3).scatter_(0, t.empty(0, dtype=t.long), 2.0),
    ],
)
def test_scatter_empty_index(real_torch, f):
    _same_outcome(real_torch, f)


def _x(t):
    return t.zeros(3, 2)


@pytest.mark.parametrize(
    "f",
    [
        lambda t: _x(t).index_add(0, t.tensor([0, 5]), t.ones(2, 2)),
        lambda t: _x(t).index_add(0, t.tensor([0, -1]), t.ones(2, 2)),
        lambda t: _x(t).index_add(0, t.tensor([0, 1]), t.ones(3, 2)),
        lambda t: _x(t).index_add(0, t.tensor([0, 1]), t.ones(2, 3)),
        lambda t: _x(t).index_add(0, t.tensor([[0, 1]]), t.ones(2, 2)),
        lambda t: _x(t).index_add(0, t.tensor([0.0, 1.0]), t.ones(2, 2)),
        lambda t: _x(t).index_add(0, t.tensor([0, 1]), t.ones(2, 2, dtype=t.float64)),
        lambda t: _x(t).index_add(0, t.tensor([0, 1]), t.ones(2)),
        lambda t: _x(t).index_add(1, t.tensor([1, 1], dtype=t.int32), t.ones(3, 2)),
        lambda t: t.zeros(3).index_add(0, t.tensor(1), t.tensor(2.0)),
        lambda t: t.tensor(1.0).index_add(0, t.tensor([0]), t.tensor([2.0])),
        lambda t: t.tensor(1.0).index_add(0, t.tensor([0]), t.tensor(2.0)),
        lambda t: _x(t).index_add(0, t.tensor([0, 0]), t.ones(2, 2), alpha=2.5),
    ],
)
def test_index_add_errors(real_torch, f):
    _same_outcome(real_torch, f)


@pytest.mark.parametrize(
    "kw",
    [
        {"rtol": 0.2},
        {"rtol": ("t", 0.2)},
        {"atol": ("t", 0.2)},
        {"rtol": ("t", 1)},
        {"rtol": ("t", 1j)},
    ],
)
def test_isclose_tensor_tolerances(real_torch, kw):
    def f(t):
        k = {n: (t.tensor(v[1]) if isinstance(v, tuple) else v) for n, v in kw.items()}
        return t.isclose(t.tensor([1.0, 2.0]), t.tensor([1.1, 2.0]), **k)

    _same_outcome(real_torch, f)


@pytest.mark.parametrize(
    "rtol", [lambda t: t.tensor([0.2]), lambda t: t.tensor(0.2, requires_grad=True)]
)
def test_isclose_refuses_other_tensor_tolerances(real_torch, rtol):
    for lib in (ctorch, real_torch):
        with pytest.raises(TypeError, match=r"argument 'rtol'.* must be float, not Tensor"):
            lib.isclose(lib.ones(2), lib.ones(2), rtol=rtol(lib))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_eigh_keeps_dtype(real_torch, dtype):
    """``linalg.eigh`` of a float32 matrix gave float64 results (a float64 identity)."""
    outs = []
    for lib in (ctorch, real_torch):
        a = lib.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=getattr(lib, dtype))
        w, v = lib.linalg.eigh(a)
        outs.append((str(w.dtype), str(v.dtype), npv(w)))
    assert outs[0][:2] == outs[1][:2]
    np.testing.assert_allclose(outs[0][2], outs[1][2], rtol=1e-5)
