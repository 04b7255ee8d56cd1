"""``torch._vmap_internals._vmap`` over dual tensors (batched tangents) and the tangent
identities ``make_dual`` and in-place ops on views give, against real PyTorch."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from torch_oracle import check

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")


def _vmap(lib):
    return importlib.import_module(lib.__name__ + "._vmap_internals")._vmap


def test_vmap_of_make_dual_identities():
    def scenario(lib, rec):
        fwad = lib.autograd.forward_ad
        tangent = lib.tensor(np.arange(8.0).reshape(2, 2, 2), dtype=lib.float32)
        cases = {
            "not_same_layout": lib.zeros([2, 2]).transpose(0, 1),
            "same_layout": lib.zeros([2, 2]),
        }
        for name, primal in cases.items():

            def jvp(t, primal=primal):
                with fwad.dual_level():
                    return fwad.unpack_dual(fwad.make_dual(primal, t))[1]

            out = _vmap(lib)(jvp, 0, 0)(tangent)
            rec(name, out is tangent, out)

    check(scenario)


def test_vmap_of_inplace_copy_into_views():
    def scenario(lib, rec):
        fwad = lib.autograd.forward_ad
        input_ = lib.zeros([2, 2])
        tangent = lib.tensor(np.arange(8.0).reshape(2, 2, 2), dtype=lib.float32)
        base = lib.zeros([2, 2])
        for view in (base.view_as(base), lib.zeros([2, 2]).transpose(0, 1)):

            def jvp(t, view=view):
                with fwad.dual_level():
                    x = fwad.make_dual(input_, t)
                    view.copy_(x)
                    return (
                        fwad.unpack_dual(x)[1],
                        fwad.unpack_dual(view)[1],
                        fwad.unpack_dual(view._base)[1],
                    )

            xt, vt, bt = _vmap(lib)(jvp, 0, 0)(tangent)
            rec(xt is tangent, vt is bt, vt._base is bt, vt._is_view(), vt, bt)

    check(scenario)


def test_vmap_stacks_along_out_dims():
    def scenario(lib, rec):
        x = lib.tensor(np.arange(6.0).reshape(2, 3))
        y = lib.tensor([1.0, 2.0, 3.0])
        rec(_vmap(lib)(lambda a, b: (a * b, a.sum()), (1, 0), (0, 0))(x, y))
        rec(_vmap(lib)(lambda a: a.exp(), 0, 1)(x))

    check(scenario)


def test_gradcheck_batched_forward_grad():
    def scenario(lib, rec):
        from_ = lib.autograd.gradcheck
        x = lib.tensor([0.5, -1.5], dtype=lib.float64, requires_grad=True)
        opts = dict(check_forward_ad=True, check_backward_ad=False, check_batched_grad=False)
        opts.update(check_undefined_grad=False, check_batched_forward_grad=True)
        rec(from_(lambda a, b: (a.sin(), a * b), (x, 2), **opts))
        rec(from_(lambda a, c: a.exp(), (x, x.detach().clone()), **opts))

        class Fn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, g):
                lib.randn_like(g)
                return g * 2

        try:
            from_(Fn.apply, (x,), check_forward_ad=True, check_batched_forward_grad=True)
            rec("no error")
        except RuntimeError as e:  # (PyTorch's is a GradcheckError, a RuntimeError)
            rec("random operations inside of vmap" in str(e))

    check(scenario)
