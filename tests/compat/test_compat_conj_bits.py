"""Conjugate and negative bits (``conj()``, ``_neg_view()``, ``is_conj``/``is_neg``,
``resolve_*``), ``Tensor.storage()``, dual tensors whose tangent has other bits than the
primal, and ops PyTorch has no forward derivative for, against real PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import check, error_of

pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")


def _v(t):
    """``t``'s values (PyTorch's ``numpy()`` refuses tensors with a bit set)."""
    return t.resolve_conj().resolve_neg()


Z = (np.arange(6) - 2.5).reshape(2, 3) + 1j * np.arange(6).reshape(2, 3)


def test_bits_of_views_and_copies():
    def scenario(lib, rec):
        x = lib.tensor(Z)
        c = x.conj()
        rec(c.is_conj(), c._is_view(), c._base is x, c.clone().is_conj(), (c + 0).is_conj())
        rec(c[1:].is_conj(), c.transpose(0, 1).is_conj(), c.conj().is_conj())
        rec(lib.is_conj(c), c.resolve_conj().is_conj(), lib.resolve_conj(c))
        rec(c.imag.is_neg(), c.real.is_neg(), _v(c.imag), c.real, _v(c))
        n = x._neg_view()
        rec(n.is_neg(), n._is_view(), n.clone().is_neg(), lib.resolve_neg(n).is_neg(), _v(n))
        r = lib.tensor([1.0, 2.0])
        rec(r.conj() is r, r.conj().is_conj(), r.conj_physical() is r)
        rec(lib.conj_physical(c).is_conj(), lib.conj_physical(c))

    check(scenario)


def test_writes_through_conj_and_neg_views():
    def scenario(lib, rec):
        y = lib.tensor(Z)
        c = y.conj()
        c.mul_(2)
        c[0, 0] = 1 + 1j
        rec(y)
        n = y._neg_view()
        n.add_(1)
        rec(y, _v(n))

    check(scenario)


def test_conj_views_gradients():
    def scenario(lib, rec):
        x = lib.tensor(Z, requires_grad=True)
        c = x.conj()
        rec(c.grad_fn.name(), x._neg_view().grad_fn.name())
        out = (c * lib.tensor(Z)).real.sum() + (x._neg_view().imag * 3).sum()
        out.backward()
        rec(x.grad)

    check(scenario)


def test_view_as_real_of_a_conjugate_raises():
    def scenario(lib, rec):
        rec(error_of(lambda: lib.view_as_real(lib.tensor(Z).conj())))
        rec(lib.view_as_real(lib.tensor(Z).conj().resolve_conj()))

    check(scenario)


def test_complex_number_times_double_tensor_is_complex128():
    def scenario(lib, rec):
        x = lib.tensor([0.5, 2.0], dtype=lib.float64)
        rec(x * 1j, 1j * x, lib.mul(x, 1j), lib.tensor([1.0]) * 1j)
        rec(str(lib.result_type(lib.tensor([1.0], dtype=lib.float32), 2j)))

    check(scenario)


def test_storage_counts_elements_of_the_dtype():
    def scenario(lib, rec):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0])[:4]
            b = lib.tensor(Z).conj().imag
            rec(len(a.storage()), a.storage().dtype == lib.float32, len(b.storage()))
            rec(a.storage().data_ptr() == a.untyped_storage().data_ptr())

    check(scenario)


def test_make_dual_copies_a_tangent_with_other_bits():
    def scenario(lib, rec):
        fwad = lib.autograd.forward_ad
        keys = {
            "plain": lambda x: x,
            "conj": lambda x: x.conj(),
            "neg": lambda x: x._neg_view(),
        }
        for pk, pf in keys.items():
            for tk, tf in keys.items():
                x, t = pf(lib.tensor(Z)), tf(lib.tensor(Z * 2 - 1))
                with fwad.dual_level():
                    dual = fwad.make_dual(x, t)
                    tan = fwad.unpack_dual(dual).tangent
                    rec(pk, tk, tan is t, tan.is_conj(), tan.is_neg(), _v(tan))
                    rec(_v(fwad.unpack_dual(lib.real(dual)).tangent))
                    rec(_v(fwad.unpack_dual(lib.imag(dual)).tangent))

    check(scenario)


def test_forward_ad_of_igamma_raises_as_pytorch():
    def scenario(lib, rec):
        fwad = lib.autograd.forward_ad
        x = lib.tensor([0.5, 1.0, 2.0])
        with fwad.dual_level():
            d = fwad.make_dual(x, lib.ones(3))
            rec(error_of(lambda: lib.igamma(d, d)), error_of(lambda: lib.igammac(x, d)))
            rec(fwad.unpack_dual(lib.igamma(x, x)).tangent is None)

    check(scenario)
