"""``torch.ops.aten`` overloads, ``TorchDispatchMode`` and selective activation
checkpointing (``create_selective_checkpoint_contexts``) against real PyTorch."""

from __future__ import annotations

import contextlib
import functools
import importlib

import numpy as np
import pytest
from torch_oracle import check, error_of

pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")

X = np.array([0.3, -1.2, 0.7])


def _modes(lib):
    return importlib.import_module(lib.__name__ + ".utils._python_dispatch").TorchDispatchMode


def _recorder(lib):
    class Recorder(_modes(lib)):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func.__name__)
            return func(*args, **(kwargs or {}))

    return Recorder()


def test_aten_overloads_name_and_call_ops():
    def scenario(lib, rec):
        aten = lib.ops.aten
        x = lib.tensor(X, requires_grad=True)
        rec(str(aten.sin.default), aten.sin.default.__name__, aten.var_mean.correction.__name__)
        rec(aten.sin.default(x), aten.sin(x), aten.exp.default(x).grad_fn.name())
        rec(aten.sin.default == aten.sin.default, aten.sin.default == aten.cos.default)
        rec(error_of(lambda: aten.sin.nonexistent)[0])

    check(scenario)


def test_a_dispatch_mode_sees_each_op():
    def scenario(lib, rec):
        x = lib.tensor(X)
        with _recorder(lib) as m:
            y = x.exp().sin()
            lib.var_mean(x)
        rec(m.ops, y)
        x.requires_grad_()
        with _recorder(lib) as m:
            y = x.sin()
        y.sum().backward()
        rec(m.ops[:1], x.grad)

    check(scenario)


def test_a_mode_as_checkpoint_context_fn():
    def scenario(lib, rec):
        cp = lib.utils.checkpoint
        x = lib.tensor(1.0, requires_grad=True)
        m = _recorder(lib)
        cp.checkpoint(
            lambda t: t.exp(),
            x,
            use_reentrant=False,
            context_fn=lambda: (m, contextlib.nullcontext()),
        )
        rec(m.ops)
        m.ops = []
        out = cp.checkpoint(
            lambda t: t.exp(),
            x,
            use_reentrant=False,
            context_fn=lambda: (contextlib.nullcontext(), m),
        )
        out.backward()
        rec(m.ops, x.grad)

    check(scenario)


def _sac(lib, policy, fn, x, **kw):
    cp = lib.utils.checkpoint
    ctx = functools.partial(cp.create_selective_checkpoint_contexts, policy, **kw)
    return cp.checkpoint(fn, x, use_reentrant=False, context_fn=ctx)


def test_selective_checkpoint_policy_calls_and_gradients():
    def scenario(lib, rec):
        cp = lib.utils.checkpoint
        seen = []

        def policy(ctx, op, *args, **kwargs):
            seen.append((op.__name__, ctx.is_recompute))
            if op == lib.ops.aten.sin.default:
                return cp.CheckpointPolicy.MUST_SAVE
            return cp.CheckpointPolicy.PREFER_RECOMPUTE

        x = lib.tensor(X, requires_grad=True)
        out = _sac(lib, policy, lambda t: t.sin().cos().exp(), x)
        out.sum().backward(retain_graph=True)
        rec(seen, x.grad)
        rec(error_of(lambda: out.sum().backward(retain_graph=True)))
        x2 = lib.tensor(X, requires_grad=True)
        out = _sac(lib, [lib.ops.aten.var_mean.correction], lambda t: lib.mul(*lib.var_mean(t)), x2)
        rec(lib.autograd.grad(out, (x2,)))

    check(scenario)


def test_selective_checkpoint_errors():
    def scenario(lib, rec):
        cp = lib.utils.checkpoint
        make = cp.create_selective_checkpoint_contexts
        rec(error_of(lambda: make([2]))[0], error_of(lambda: make([lib.ops.aten.sin]))[0])
        rec(error_of(lambda: make(2)))
        policy = [lib.ops.aten.sin.default]
        x = lib.tensor(X, requires_grad=True)
        out = _sac(lib, policy, lambda t: t.sin().mul_(2).cos(), x)
        rec(error_of(lambda: out.sum().backward()))
        # allowed: no error (PyTorch then differentiates with the mutated value, compat
        # with the recomputed one)
        out = _sac(lib, policy, lambda t: t.sin().mul_(2).cos(), x, allow_cache_entry_mutation=True)
        rec(error_of(lambda: out.sum().backward()))

    check(scenario)


@pytest.mark.parametrize("dual", [False, True])
def test_no_mode_no_overhead_path_unchanged(torch, dual):
    """Leaving a mode restores the dispatch slot (also under a dual level)."""
    from compat._core import tensor as _t

    fwad = torch.autograd.forward_ad
    with contextlib.ExitStack() as stack:
        if dual:
            stack.enter_context(fwad.dual_level())
        before = _t.FORWARD
        with _recorder(torch):
            torch.tensor(X).sin()
        assert _t.FORWARD is before


def test_checkpoint_keeps_a_saved_input_not_requiring_grad_as_is():
    def scenario(lib, rec):
        got = []

        class Test(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(y)
                return x

            @staticmethod
            def backward(ctx, g):
                got.append(ctx.saved_tensors[0])
                return g, None

        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(1.0)
        lib.utils.checkpoint.checkpoint(Test.apply, a, b, use_reentrant=False).backward()
        rec(got[0] is b)

    check(scenario)


def test_checkpoint_saved_tensors_unpacked_twice_in_one_backward():
    def scenario(lib, rec):
        errs = []

        class MyFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, x * 2)
                return x * 3

            @staticmethod
            def backward(ctx, g):
                ctx.saved_tensors  # noqa: B018  (first unpack)
                errs.append(error_of(lambda: ctx.saved_tensors))
                return g * 3

        x = lib.tensor(2.0, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: MyFunc.apply(t * 1), x, use_reentrant=False)
        out.backward(retain_graph=True)
        out.backward()  # a new backward call recomputes again
        rec(errs, x.grad)

    check(scenario)


def test_aten_convolution_backward_and_its_tangent():
    rng = np.random.default_rng(0)
    g, x, w = (
        rng.standard_normal((1, 2, 3, 3)),
        rng.standard_normal((1, 1, 5, 5)),
        rng.standard_normal((2, 1, 3, 3)),
    )

    def scenario(lib, rec):
        T = functools.partial(lib.tensor, dtype=lib.float64)
        args = ((0,), (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
        gi, gw, gb = lib.ops.aten.convolution_backward(T(g), T(x), T(w), *args, (True, True, True))
        rec(gi, gw, gb)
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            dw = fwad.make_dual(T(w), lib.ones_like(T(w)))
            gi, gw, gb = lib.ops.aten.convolution_backward(
                T(g), T(x), dw, *args, (True, False, False)
            )
            rec(gw is None, gb is None, fwad.unpack_dual(gi).tangent)

    check(scenario)


def test_a_dual_level_entered_inside_a_mode():
    def scenario(lib, rec):
        fwad = lib.autograd.forward_ad
        m = _recorder(lib)
        with m:
            with fwad.dual_level():
                d = fwad.make_dual(lib.tensor(X), lib.ones(3))
                y = d.sin()
                rec(fwad.unpack_dual(y).tangent)
            lib.tensor(X).exp()
        rec("sin.default" in m.ops, m.ops[-1])

    check(scenario)
