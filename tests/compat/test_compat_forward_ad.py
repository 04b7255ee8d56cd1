"""``torch.autograd.forward_ad`` (dual tensors), custom ``Function.jvp`` and
``gradcheck(check_forward_ad=True)`` against real PyTorch: the same tangents, the same
in-place/view propagation, the same errors."""

from __future__ import annotations

import numpy as np
import pytest
from torch_oracle import error_of, npv

# real PyTorch's make_dual calls a scripted function (torch.jit.script deprecation)
pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")

X = np.array([0.3, -1.2, 0.7], np.float64)
T = np.array([1.0, 0.5, -2.0], np.float64)
W = np.array([[0.2, -0.4, 1.1], [0.9, 0.3, -0.6]], np.float64)


def _tangent(lib, fn):
    """``fn``'s output tangent for the dual (X, T)."""
    fwad = lib.autograd.forward_ad
    with fwad.dual_level():
        d = fwad.make_dual(lib.tensor(X), lib.tensor(T))
        out = fn(lib, d)
        outs = out if isinstance(out, tuple) else (out,)
        return [(npv(fwad.unpack_dual(o).primal), npv(fwad.unpack_dual(o).tangent)) for o in outs]


FNS = {
    "elementwise": lambda lib, d: d.sin() * d.exp() + 2 * d,
    "matmul": lambda lib, d: lib.tensor(W) @ d.tanh(),
    "reduction": lambda lib, d: (d * d).sum(),
    "softmax": lambda lib, d: lib.softmax(d, 0),
    "views": lambda lib, d: d[1:].reshape(2, 1).t() * 3,
    "cat_stack": lambda lib, d: lib.cat([d, lib.stack([d, d]).sum(0)]),
    "multi_output": lambda lib, d: d.reshape(3, 1).max(0),
    "with_constant": lambda lib, d: d + lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64),
}


@pytest.mark.parametrize("name", sorted(FNS))
def test_tangents_match_pytorch(torch, real_torch, name):
    got, want = _tangent(torch, FNS[name]), _tangent(real_torch, FNS[name])
    assert len(got) == len(want)
    for (gp, gt), (wp, wt) in zip(got, want):
        np.testing.assert_allclose(gp, wp, rtol=1e-12)
        assert (gt is None) == (wt is None)
        if wt is not None:
            np.testing.assert_allclose(gt, wt, rtol=1e-12, atol=1e-14)


_rng = np.random.default_rng(0)
X4 = _rng.standard_normal((2, 3, 4, 4))
T4 = _rng.standard_normal(X4.shape)
K4 = _rng.standard_normal((5, 3, 3, 3))


def _setitem(lib, d):
    z = lib.zeros(2, 3, 4, 4, dtype=lib.float64)
    z[:, 1] = d[:, 0] * 3
    return z


NN_FNS = {
    "conv2d": lambda lib, d: lib.nn.functional.conv2d(d, lib.tensor(K4)),
    "layer_norm": lambda lib, d: lib.nn.functional.layer_norm(d, (4,)),
    "cross_entropy": lambda lib, d: lib.nn.functional.cross_entropy(
        d.reshape(2, -1)[:, :6], lib.tensor([1, 4])
    ),
    "max_pool_gelu": lambda lib, d: lib.nn.functional.gelu(lib.nn.functional.max_pool2d(d, 2)),
    "batch_norm": lambda lib, d: lib.nn.functional.batch_norm(d, None, None, training=True),
    "sort_topk": lambda lib, d: d.reshape(-1).sort()[0][:5] + d.reshape(-1).topk(3)[0].sum(),
    "inplace_chain": lambda lib, d: d.clone().mul_(2).add_(d.exp()).relu_(),
    "setitem": _setitem,
}


@pytest.mark.parametrize("name", sorted(NN_FNS))
def test_nn_tangents_match_pytorch(torch, real_torch, name):
    def run(lib):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            out = NN_FNS[name](lib, fwad.make_dual(lib.tensor(X4), lib.tensor(T4)))
            return npv(fwad.unpack_dual(out).tangent)

    np.testing.assert_allclose(run(torch), run(real_torch), rtol=1e-9, atol=1e-12)


def _inplace_views(lib):
    fwad = lib.autograd.forward_ad
    foo, bar = lib.tensor(X), lib.tensor(T)
    with fwad.dual_level():
        dual = fwad.make_dual(foo, bar)
        dual *= 2  # the tangent is updated in place: ``bar`` itself
        view = dual.narrow(0, 0, 2)
        view.mul_(3)  # a differentiable view: the base's tangent follows
        baz = lib.zeros(3, dtype=lib.float64)
        baz[1] = dual[2]  # a tensor without tangent gets one (zeros elsewhere)
        det = dual.detach()
        return [
            npv(bar),
            npv(foo),
            fwad.unpack_dual(foo).tangent,
            npv(fwad.unpack_dual(dual).tangent),
            npv(fwad.unpack_dual(baz).tangent),
            fwad.unpack_dual(det).tangent,
            fwad.unpack_dual(dual).tangent is bar,
        ]


def test_inplace_and_views_match_pytorch(torch, real_torch):
    got, want = _inplace_views(torch), _inplace_views(real_torch)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w)
        else:
            assert g == w


def test_level_lifetime_and_errors(torch, real_torch):
    for lib in (torch, real_torch):
        fwad = lib.autograd.forward_ad
        x = lib.tensor(X)
        with fwad.dual_level() as level:
            assert level == 0
            assert fwad._current_level == 0
            d = fwad.make_dual(x, lib.tensor(T))
            assert "tangent=" in str(d) and "tangent=" not in str(x)
            e = error_of(fwad.enter_dual_level)
            assert e[0] == "RuntimeError" and "Nested forward mode AD" in e[1]
            e = error_of(lambda: fwad.make_dual(x, lib.ones(2)))
            assert e[0] == "RuntimeError" and "different size" in e[1]
            e = error_of(lambda: fwad.make_dual(lib.ones(2, dtype=lib.long), lib.ones(2)))
            assert e[0] == "ValueError" and "primal to be floating" in e[1]
        assert fwad._current_level == -1
        assert fwad.unpack_dual(d).tangent is None


def test_reverse_over_forward_matches_pytorch(torch, real_torch):
    def run(lib):
        fwad = lib.autograd.forward_ad
        a = lib.tensor(X, requires_grad=True)
        ta = lib.tensor(T, requires_grad=True)
        with fwad.dual_level():
            out = (fwad.make_dual(a, ta).exp() * a).sum()
            t = fwad.unpack_dual(out).tangent
            return [npv(g) for g in lib.autograd.grad(t, (a, ta))]

    for g, w in zip(run(torch), run(real_torch)):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def _custom(lib, wrong):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_forward(x)
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

        @staticmethod
        def jvp(ctx, t, _):
            (x,) = ctx.saved_tensors
            return t * (ctx.k + (1.0 if wrong else 0.0)) + 0 * x

    return Scale


@pytest.mark.parametrize("wrong", [False, True])
def test_custom_function_jvp_and_gradcheck(torch, real_torch, wrong):
    verdicts = []
    for lib in (torch, real_torch):
        fwad = lib.autograd.forward_ad
        F = _custom(lib, wrong)
        with fwad.dual_level():
            out = F.apply(fwad.make_dual(lib.tensor(X), lib.tensor(T)), 3.0)
            tangent = npv(fwad.unpack_dual(out).tangent)
        x = lib.tensor(X, requires_grad=True)
        e = error_of(
            lambda: lib.autograd.gradcheck(
                F.apply, (x, 3.0), check_forward_ad=True, check_backward_ad=False
            )
        )
        verdicts.append((tangent, "forward mode mismatch" in e[1] if e != "no error" else None))
    np.testing.assert_allclose(verdicts[0][0], verdicts[1][0])
    assert verdicts[0][1] == verdicts[1][1]


def test_custom_function_without_jvp_errors(torch, real_torch):
    for lib in (torch, real_torch):

        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            d = fwad.make_dual(lib.tensor(X), lib.tensor(T))
            e = error_of(lambda: NoJvp.apply(d))
        assert e[0] == "NotImplementedError" and "must implement the jvp function" in e[1]


def test_out_variant_with_dual_errors(torch, real_torch):
    for lib in (torch, real_torch):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            dual = fwad.make_dual(lib.tensor(X), lib.tensor(T))
            plain = lib.tensor(X)
            for call in (
                lambda: lib.add(plain, plain, out=dual),
                lambda: lib.add(dual, plain, out=plain),
            ):
                e = error_of(call)
                assert e == (
                    "NotImplementedError",
                    "Trying to use forward AD with add_out that does not support it because it "
                    "is an out= function",
                )
