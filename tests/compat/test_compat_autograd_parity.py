"""Autograd corners against real PyTorch: views whose memory changed in place after they
were made (PyTorch's errors and ``grad_fn=<Invalid>``), in-place ops on views of views
and on multi-output views, integer outputs of differentiable ops, hook order, ``setitem``
with an ellipsis or a mask, ``materialize_grads``, and inference tensors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import check, error_of


def _node(t):
    try:
        return None if t.grad_fn is None else t.grad_fn.name()
    except RuntimeError as e:
        return ("error", str(e))


def _no_grad_view(torch, x):
    with torch.no_grad():
        return x[0]


def _inference_view(torch, x):
    with torch.inference_mode():
        return x[0]


def _unbind_view(torch, x):
    return x.unbind(0)[1]


def _no_grad_unbind_view(torch, x):
    with torch.no_grad():
        return x.split(1)[0]


def _custom_view(torch, x):
    class View(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.view_as(t)

        @staticmethod
        def backward(ctx, g):
            return g

    return View.apply(x)


@pytest.mark.parametrize(
    "make", [_no_grad_view, _inference_view, _unbind_view, _no_grad_unbind_view, _custom_view]
)
@pytest.mark.parametrize("write", ["base", "base_no_grad", "none"])
def test_view_used_after_its_memory_changed(make, write):
    def scenario(torch, rec):
        x = torch.ones(2, 3, requires_grad=True).clone()
        v = make(torch, x)
        if write == "base":
            x.mul_(2)
        elif write == "base_no_grad":
            with torch.no_grad():
                x.add_(1)
        rec(_node(v), repr(v), v.requires_grad)
        rec(error_of(lambda: (v * 2).sum().backward()))

    check(scenario)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 3), st.integers(1, 4), st.integers(0, 2), st.sampled_from(["mul", "add"]))
def test_inplace_on_views_of_views_gradients(start, length, col, op):
    def scenario(torch, rec):
        x = torch.tensor(np.linspace(-1, 1, 20, dtype=np.float64), requires_grad=True)
        b = x * 1
        v = b.view(5, 4)[start : start + length]
        w = v[:, col : col + 2].t()
        y = torch.tensor(np.arange(1.0, 5.0)[: w.shape[1]]).expand_as(w) * x[0]
        getattr(w, op + "_")(y)
        rec(b, v, w, _node(w), _node(b))
        (b * torch.arange(20.0)).sum().backward()
        rec(x.grad)

    check(scenario)


@pytest.mark.parametrize("fn", ["unbind", "split", "chunk", "split_with_sizes"])
def test_inplace_on_multi_output_views(fn):
    def scenario(torch, rec):
        x = torch.arange(8.0, requires_grad=True)
        b = x.reshape(4, 2) * 1
        call = {
            "unbind": lambda: b.unbind(0),
            "split": lambda: b.split(2),
            "chunk": lambda: b.chunk(2),
            "split_with_sizes": lambda: b.split_with_sizes([1, 3]),
        }[fn]
        outs = call()
        rec(error_of(lambda: outs[1].mul_(2)))
        rec(error_of(lambda: outs[0][0:1].add_(1)))  # a view of a multi-output view
        with torch.no_grad():
            outs[0].mul_(3)  # allowed without grad, and b sees it
        rec(b)
        d = call()[1].clone()  # the allowed way: clone first
        d.mul_(2)
        (d.sum() + b.sum()).backward()
        rec(x.grad)

    check(scenario)


def test_integer_outputs_do_not_require_grad():
    def scenario(torch, rec):
        a = torch.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
        for out in (a.max(1), a.min(0), a.sort(1), a.topk(2), a.kthvalue(1, 1), a.cummax(1)):
            rec([(o.requires_grad, o.grad_fn is None, str(o.dtype)) for o in out])
        ints = (a.argmax(), a.argsort(), a > 0, a.long(), a.nonzero(), a.bool(), a.isnan())
        rec([o.requires_grad for o in ints])
        u, inv, cnt = torch.unique(a, return_inverse=True, return_counts=True)
        rec(_node(u), u.requires_grad, inv.requires_grad, cnt.requires_grad)
        rec(_node(torch.unique_consecutive(a)), _node(torch.unique(a, dim=0)))
        rec(error_of(lambda: torch.unique(a).sum().backward()))

        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x.long(), x > 0

            @staticmethod
            def backward(ctx, g, gi, gb):
                return g * 2

        y, i, m = F.apply(a)
        rec(y.requires_grad, i.requires_grad, m.requires_grad, i.grad_fn is None)
        y.sum().backward()
        rec(a.grad)

    check(scenario)


def test_hook_order_and_values():
    def scenario(torch, rec):
        order = []
        a = torch.ones(2, requires_grad=True)
        a.register_hook(lambda g: order.append(("a1", g.sum().item())) or g * 2)
        a.register_post_accumulate_grad_hook(lambda t: order.append(("post", t.grad.sum().item())))
        a.register_hook(lambda g: order.append(("a2", g.sum().item())))
        acc = (a * 1).grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: order.append(("accpre", go[0].sum().item())))
        acc.register_hook(lambda gi, go: order.append(("accpost", go[0].sum().item())))
        b = a * 3
        b.grad_fn.register_prehook(lambda go: order.append(("pre", go[0].sum().item())))
        b.register_hook(lambda g: order.append(("b", g.sum().item())))
        b.retain_grad()
        b.register_hook(lambda g: order.append(("b2", g.sum().item())) or g + 1)
        b.grad_fn.register_hook(lambda gi, go: order.append(("node", gi[0].sum().item())))
        b.sum().backward()
        rec(order, a.grad, b.grad)

    check(scenario)


def test_setitem_with_ellipsis_and_masks_under_autograd():
    def scenario(torch, rec):
        x = torch.arange(6.0, requires_grad=True)
        a0 = x.reshape(2, 3)
        a = a0.clone()
        a[..., 1] = a0[:, 0] * 2
        a[a > 3] = 0.0
        a[..., None, 0] = 7.0
        m = torch.tensor([True, False])
        a[m] = a0[1] * 3
        a[..., torch.tensor([False, True, True])] *= 5
        a[m, ..., 2:] = a0[:1, :1] ** 2
        rec(a, _node(a))
        (a * torch.arange(6.0).reshape(2, 3)).sum().backward()
        rec(x.grad)

    check(scenario)


def test_materialize_grads():
    def scenario(torch, rec):
        a = torch.ones(2, requires_grad=True)
        b = torch.ones(2, requires_grad=True)
        c = torch.ones(2)
        g = torch.autograd.grad((a * a).sum(), [a, b], materialize_grads=True)
        rec(g, [t.requires_grad for t in g])
        g = torch.autograd.grad((a * a).sum(), [a, b], materialize_grads=True, create_graph=True)
        rec(g, [t.requires_grad for t in g])
        rec(error_of(lambda: torch.autograd.grad(c.sum(), a, materialize_grads=True)))
        rec(
            error_of(
                lambda: torch.autograd.grad(
                    [a.sum(), c.sum()], [a, b], materialize_grads=True, allow_unused=True
                )
            )
        )
        rec(
            error_of(
                lambda: torch.autograd.grad(
                    a.sum(), [a, b], materialize_grads=True, allow_unused=False
                )
            )
        )

    check(scenario)


def test_inference_tensors_and_views():
    def scenario(torch, rec):
        with torch.inference_mode():
            i = torch.ones(2, 3)
            iv = i[0]
            j = torch.ones(2, 3)
            rec(i.is_inference(), iv.is_inference())
        rec(error_of(lambda: i.add_(1)), error_of(lambda: iv.mul_(2)))
        rec(error_of(lambda: i.view(6).add_(1)), error_of(lambda: j.t_()))
        rec(i.view(6).is_inference(), (i * 2).is_inference())
        w = torch.ones(3, requires_grad=True)
        rec(error_of(lambda: (w * i).sum().backward()))
        rec(error_of(lambda: i._version))
        n = torch.ones(2, 3)
        with torch.inference_mode():
            nv = n[0]
            nv.mul_(2)  # allowed inside: n sees it
            rec(nv.is_inference(), n.is_inference())
        nv.add_(1)  # a view of a normal tensor made inside: allowed outside
        rec(n, nv)

    check(scenario)


@pytest.mark.parametrize("modify", ["self", "view", "base", "twice"])
def test_allow_mutation_on_saved_tensors(modify):
    def scenario(torch, rec):
        allow = torch.autograd.graph.allow_mutation_on_saved_tensors

        def fn(a):
            b = a.clone()
            c = b[:1] if modify == "view" else b
            out = (c**2).sum() if modify != "base" else (b[:] ** 3).sum()
            b.sin_() if modify != "view" else c.mul_(10)
            if modify == "twice":
                b.exp_()
            out.backward()
            return a.grad

        a = torch.tensor(np.linspace(0.1, 1, 6).reshape(2, 3), requires_grad=True)
        rec(error_of(lambda: fn(a))[0])
        a.grad = None
        with allow() as ctx:
            rec(fn(a), len(ctx.cloned))
            da = torch.autograd.grad((a.clone() ** 3).sum(), a, create_graph=True)[0]
            b = a.clone()
            out = (b**2).sum()
            b.mul_(3)
            rec(torch.autograd.grad(da.sum() + out, a))
            rec(error_of(lambda: allow().__enter__()))
            late = (a.clone() ** 2).sum()
        rec(error_of(lambda: late.backward()))

    check(scenario)


def test_list_indices_type_conversions_and_warn_always():
    def scenario(torch, rec):
        x = torch.arange(16.0, requires_grad=True)
        y = x.reshape(4, 4) * 1
        for idx in (
            [[1, 2], [3, 0]],
            [[2, 3], slice(None)],
            [torch.tensor([0, 1]), torch.tensor([2, 2])],
            [1, 2],
        ):
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                rec(y[idx])
                z = y.clone()
                z[idx] = 0.0
                rec(z)
            rec([str(w.message)[:60] for w in ws])
        leaf = torch.ones(3, requires_grad=True)
        out = leaf.gather(0, torch.tensor([0, 0, 2]), sparse_grad=False)
        out.sum().backward()
        rec(leaf.grad)
        for t in (torch.DoubleTensor, torch.IntTensor, "torch.FloatTensor"):
            r = y.type(t)
            rec(str(r.dtype), r.type())
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            torch.set_warn_always(True)
            try:
                for _ in range(2):
                    b = torch.ones(2, requires_grad=True)
                    (b * b).sum().backward(create_graph=True)
            finally:
                torch.set_warn_always(False)
        rec(sum("create_graph=True" in str(w.message) for w in ws))

    check(scenario)


def test_views_made_without_grad_and_custom_function_views():
    def scenario(torch, rec):
        for mode in (torch.no_grad, torch.inference_mode):
            x = torch.zeros(2)
            with mode():
                y = x.view(2)
            y.requires_grad_(True)
            z = y.view(2)
            rec(error_of(lambda: z.div_(2)), error_of(lambda: y.mul_(2)))
            b = torch.ones(2, requires_grad=True)
            with mode():
                w = torch.zeros(2)[:]
            rec(error_of(lambda: w.add_(b)))

        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.view_as(inp)

            @staticmethod
            def backward(ctx, grad):
                return grad

        a = torch.rand(1, 2)
        b = torch.rand(1, requires_grad=True)
        v = MyFn.apply(a)
        rec(error_of(lambda: v.add_(b)), error_of(lambda: v.copy_(b)))
        v.mul_(2)  # nothing requires grad: allowed
        a.add_(1)
        rec(v.requires_grad, torch.equal(v, a))

    check(scenario)


def test_views_of_a_base_changed_in_place_retain_grad_and_hooks():
    def scenario(torch, rec):
        base = torch.tensor([1.0], requires_grad=True).clone()
        view, view2 = base[:], base[:]
        view.retain_grad()
        view2.retain_grad()
        calls = []
        view.register_hook(lambda g: calls.append("old"))
        view.mul_(2)
        view2.grad_fn  # noqa: B018  (regenerates view2's node)
        view2.register_hook(lambda g: calls.append(("new", g.item())))
        (view + view2).sum().backward()
        rec(view.grad, view2.grad, calls)
        a = torch.randn(2, 3)
        b = a[:]
        a.requires_grad = True
        rec(b.requires_grad, error_of(lambda: a.add_(5)), error_of(lambda: b.add_(5)))

    check(scenario)


def test_engine_callbacks_and_version_counter_preservation():
    def scenario(torch, rec):
        calls = []
        engine = torch.autograd.Variable._execution_engine

        class Fn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                calls.append(("backward", x.grad is None))

                def first():
                    calls.append(("first", x.grad is None))
                    engine.queue_callback(lambda: calls.append(("second", x.grad is None)))

                engine.queue_callback(first)
                return g * 2

        x = torch.ones(3, requires_grad=True)
        Fn.apply(x).sum().backward()
        rec(calls, x.grad)
        rec(error_of(lambda: engine.queue_callback(lambda: None)))
        y = torch.ones(2, requires_grad=True).clone()
        y.add_(1)
        with torch.autograd._unsafe_preserve_version_counter(y):
            y.mul_(2)
        z = torch.ones(2)
        with torch.autograd._unsafe_preserve_version_counter((y, z)):
            y.mul_(2)
            z.add_(1)
        rec(y._version, z._version, y)
        with torch.autograd.grad_mode.no_grad():
            rec(torch.is_grad_enabled())

    check(scenario)
