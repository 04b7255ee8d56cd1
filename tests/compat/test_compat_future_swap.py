"""``torch.__future__``'s switches for module conversion and state-dict loading,
``torch.utils.swap_tensors``, ``Tensor.module_load`` and ``torch.backends.mkldnn``'s
flags, against real PyTorch 2.13: the same scenario runs on both libraries and what the
module's parameters and gradients became (identity, dtype, values, class) is compared."""

from __future__ import annotations

import importlib
import warnings
import weakref

import numpy as np
import pytest
from torch_oracle import npv

import compat.torch as torch

MODES = ("default", "overwrite", "swap")


def _future(lib):
    return importlib.import_module(lib.__name__ + ".__future__")


@pytest.fixture
def flags_reset(real_torch):
    yield
    for lib in (torch, real_torch):
        _future(lib).set_overwrite_module_params_on_conversion(False)
        _future(lib).set_swap_module_params_on_conversion(False)


def _set_mode(lib, mode):
    f = _future(lib)
    f.set_overwrite_module_params_on_conversion(mode == "overwrite")
    f.set_swap_module_params_on_conversion(mode == "swap")


def _convert(lib, mode, how):
    _set_mode(lib, mode)
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.arange(6.0).reshape(2, 3))
    m.weight.grad = lib.ones(2, 3)
    w, g = m.weight, m.weight.grad
    if how == "double":
        m.double()
    elif how == "inplace":
        m._apply(lambda t: t.add_(1.0))
    else:
        m._apply(lambda t: t * 2)
    return (
        m.weight is w,
        m.weight.grad is g,
        str(w.dtype),
        str(g.dtype),
        str(m.weight.dtype),
        str(m.weight.grad.dtype),
        type(m.weight).__name__,
        m.weight.requires_grad,
        npv(m.weight).tolist(),
        npv(m.weight.grad).tolist(),
        npv(w).tolist(),
    )


@pytest.mark.parametrize("how", ["double", "inplace", "outofplace"])
@pytest.mark.parametrize("mode", MODES)
def test_module_conversion_as_pytorch(real_torch, flags_reset, mode, how):
    mine = _convert(torch, mode, how)
    theirs = _convert(real_torch, mode, how)
    assert mine == tuple(x.replace("compat.", "") if isinstance(x, str) else x for x in theirs)


def _load(lib, mode, assign):
    _set_mode(lib, mode)
    m = lib.nn.Linear(3, 2)
    w = m.weight
    sd = {"weight": lib.full((2, 3), 2.0, dtype=lib.float64), "bias": lib.zeros(2)}
    m.load_state_dict(sd, assign=assign)
    return (
        m.weight is w,
        str(m.weight.dtype),
        type(m.weight).__name__,
        m.weight.requires_grad,
        npv(m.weight).tolist(),
        npv(sd["weight"]).tolist(),
    )


@pytest.mark.parametrize("assign", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_load_state_dict_as_pytorch(real_torch, flags_reset, mode, assign):
    assert _load(torch, mode, assign) == _load(real_torch, mode, assign)


def _backward_after_swap(lib):
    _set_mode(lib, "swap")
    m = lib.nn.Linear(3, 2)
    out = m(lib.ones(1, 3)).sum()
    m.double()
    with pytest.raises(RuntimeError) as err:
        out.backward()
    return str(err.value)


def test_backward_through_a_swapped_parameter_is_refused(real_torch, flags_reset):
    text = _backward_after_swap(torch)
    assert text == _backward_after_swap(real_torch)
    assert "poisoned by swap_tensors" in text


def _swap(lib):
    a = lib.arange(3.0)
    b = lib.ones(2, 2, dtype=lib.int32)
    b.tag = "b"
    ids = id(a), id(b)
    holder = [a]
    lib.utils.swap_tensors(a, b)
    out = [
        (id(a), id(b)) == ids,
        holder[0] is a,
        a.tag,
        hasattr(b, "tag"),
        str(a.dtype),
        npv(a).tolist(),
        npv(b).tolist(),
        id(a.fill_(5)) == id(a),
    ]
    p = lib.nn.Parameter(lib.ones(2))
    q = lib.zeros(2)
    lib.utils.swap_tensors(p, q)
    out += [type(p).__name__, type(q).__name__, p.requires_grad, q.requires_grad]
    ref = weakref.ref(a)
    with pytest.raises(RuntimeError) as err:
        lib.utils.swap_tensors(a, b)
    out.append(str(err.value))
    del ref
    return out


def test_swap_tensors_as_pytorch(real_torch):
    assert _swap(torch) == _swap(real_torch)


def test_swap_tensors_slots_must_agree(real_torch):
    def run(lib):
        class Slotted(lib.Tensor):
            __slots__ = ("extra",)

        t = lib.Tensor._make_subclass(Slotted, lib.ones(2))
        with pytest.raises(RuntimeError) as err:
            lib.utils.swap_tensors(lib.ones(2), t)
        return str(err.value)

    assert run(torch) == run(real_torch) == "Cannot swap t1 and t2 if they have different slots"


def test_module_load_as_pytorch(real_torch):
    def run(lib):
        t = lib.zeros(3)
        o = lib.arange(3.0)
        copied = t.module_load(o)
        assigned = t.module_load(o, assign=True)
        return [
            npv(t).tolist(),
            npv(copied).tolist(),
            copied is t,
            assigned is o,
            assigned.requires_grad,
            npv(assigned).tolist(),
        ]

    assert run(torch) == run(real_torch)


def test_module_load_returning_an_input_is_refused(real_torch, flags_reset):
    def run(lib):
        class Lazy(lib.Tensor):
            def module_load(self, other, assign=False):
                return other

        _set_mode(lib, "swap")
        m = lib.nn.Module()
        m.register_buffer("b", lib.Tensor._make_subclass(Lazy, lib.zeros(2)))
        with pytest.raises(RuntimeError) as err:
            m.load_state_dict({"b": lib.ones(2)})
        return str(err.value).split("an exception occurred : ")[-1]

    mine, theirs = run(torch), run(real_torch)
    assert "module_load returned one of self or other" in mine
    assert mine == theirs


def test_mkldnn_flags_as_pytorch(real_torch):
    def run(lib):
        m = lib.backends.mkldnn
        with warnings.catch_warnings():  # (PyTorch's: oneDNN's TF32 needs an Intel GPU)
            warnings.simplefilter("ignore")
            return _mkldnn_flags(m)

    def _mkldnn_flags(m):
        seen = [m.enabled, m.deterministic, m.fp32_precision]
        with m.flags(enabled=False, deterministic=True, allow_tf32=False):
            seen += [m.enabled, m.deterministic]
        seen += [m.enabled, m.deterministic, m.set_flags(_enabled=None)[:2]]
        with m.verbose(m.VERBOSE_OFF):
            seen.append((m.VERBOSE_OFF, m.VERBOSE_ON, m.VERBOSE_ON_CREATION))
        return seen

    assert run(torch) == run(real_torch)
    assert torch.backends.mkldnn.is_available() is False


def test_overwrite_keeps_views_on_the_old_storage():
    """With the overwrite switch, a view of a parameter keeps writing into the old
    parameter (PyTorch's test_overwrite_module_params_on_conversion)."""
    _future(torch).set_overwrite_module_params_on_conversion(True)
    try:
        m = torch.nn.Linear(4, 3)
        view = m.weight[:]
        old = m.weight
        m.double()
        with torch.no_grad():
            view[0][0] = 5
        assert old[0][0].item() == 5 and m.weight.dtype == torch.float64
        np.testing.assert_array_equal(npv(view), npv(old))
    finally:
        _future(torch).set_overwrite_module_params_on_conversion(False)
