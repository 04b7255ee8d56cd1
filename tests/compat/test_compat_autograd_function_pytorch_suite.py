"""``torch.autograd.Function``: scenarios after PyTorch's ``test/test_autograd.py`` (our own
versions), each run on compat and on real PyTorch and compared."""

from __future__ import annotations

import warnings

from torch_oracle import check as _check
from torch_oracle import error_of as _err
from torch_oracle import square as _square

# --------------------------------------------------------------------------- test_autograd.py themes


def test_function_with_create_graph_seed_requiring_grad():
    def scenario(torch, rec):
        for once in (False, True):

            class MyFunction(torch.autograd.Function):
                @staticmethod
                def forward(ctx, t1, pyscalar, t2):
                    ctx.pyscalar = pyscalar
                    ctx.save_for_backward(t1, t2)
                    return t1 + pyscalar * t2 + t1 * t2

                def _backward(ctx, g):
                    v1, v2 = ctx.saved_tensors
                    return g + g * v2, None, g * ctx.pyscalar + g * v1

                backward = staticmethod(
                    torch.autograd.function.once_differentiable(_backward) if once else _backward
                )

            x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
            y = torch.tensor([[1.5, 0.5], [-0.5, 3.0]], requires_grad=True)
            go = torch.ones((), requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                MyFunction.apply(x, 2, y).sum().backward(go, create_graph=True)
            rec(x.grad, y.grad, x.grad.requires_grad, y.grad.grad_fn is not None)
            rec(_err(lambda: rec(torch.autograd.grad(x.grad.sum(), go, retain_graph=True))))
            if once:
                rec(_err(lambda: x.grad.sum().backward()))
            else:
                (gy,) = torch.autograd.grad(x.grad.sum(), y)
                rec(gy)

    _check(scenario)


def test_non_tensor_inputs_and_outputs():
    def scenario(torch, rec):
        class MyFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t1, t2, scale, t3):
                t4 = t1 + t2 * t3
                t5 = t1 * t2 + t3
                t4 *= scale
                t5 *= scale
                ctx.scale = scale
                ctx.save_for_backward(t1, t2, t3)
                return scale, t4, None, True, t5, "bar", t1

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, *grads):
                rec(len(grads), [g is None for g in grads])
                s = ctx.scale
                v1, v2, v3 = ctx.saved_tensors
                return (
                    grads[1] * s + grads[4] * v2 * s + grads[6],
                    grads[1] * v3 * s + grads[4] * v1 * s,
                    None,
                    grads[1] * v2 * s + grads[4] * s,
                )

        t1 = torch.tensor([0.1, 0.2, 0.3], dtype=torch.double, requires_grad=True)
        t2 = torch.tensor([1.0, -1.0, 2.0], dtype=torch.double, requires_grad=True)
        t3 = torch.tensor([3.0, 0.5, -2.0], dtype=torch.double)
        res = MyFunction.apply(t1, t2, 4, t3)
        rec(res[0], res[1], res[2], res[3], res[4], res[5], res[6], res[6] is t1)
        torch.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
        rec(t1.grad, t2.grad, t3.grad is None)

        class NoTensors(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, scale, c):
                return scale, (a + b * c) * scale, None, True, (a * b + c) * scale, "bar", a

        rec(NoTensors.apply(0.5, 0.25, 3, 2.0))

    _check(scenario)


def test_exception_in_backward_propagates():
    def scenario(torch, rec):
        class Boom(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, g):
                raise ValueError("Simulate error on backward pass")

        t1 = torch.ones(2, 2, requires_grad=True)
        rec(_err(lambda: Boom.apply((t1 + t1) * t1).sum().backward()))
        rec(t1.grad is None)

    _check(scenario)


def test_setup_context_multi_output_and_multi_input():
    def scenario(torch, rec):
        class MySquare(torch.autograd.Function):
            @staticmethod
            def forward(x):
                return x**2, x.item() * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.two_x = output[1]

            @staticmethod
            @torch.autograd.function.once_differentiable
            def backward(ctx, g, _):
                return g * ctx.two_x

        class MyReshape(torch.autograd.Function):
            @staticmethod
            def forward(x, shape, scale_forward, scale_backward):
                return x.reshape(shape) * scale_forward

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, _, _, ctx.scale_backward = inputs
                ctx.x_shape = x.shape

            @staticmethod
            def backward(ctx, g):
                return g.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

        x = torch.tensor(1.5, requires_grad=True)
        y, two_x = MySquare.apply(x)
        rec(y, two_x, torch.autograd.grad(y, x))
        x = torch.arange(6.0).requires_grad_()
        y = MyReshape.apply(x, (2, 3), 7, 11)
        rec(y, torch.autograd.grad(y.sum(), x))
        rec(MySquare.generate_vmap_rule, hasattr(MySquare, "vmap"))
        rec(_err(lambda: torch.autograd.Function.vmap(None, None)))

    _check(scenario)


def test_return_duplicate_outputs():
    def scenario(torch, rec):
        class DoubleDuplicate(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x * 2
                return out, out

            @staticmethod
            def backward(ctx, g1, g2):
                rec(g1, g2)
                return g1 * 2 + g2 * 2

        class DoubleInplace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 * 2 + g2 * 2

        x = torch.tensor([1.0, -2.0], requires_grad=True)
        a, b = DoubleDuplicate.apply(x)
        rec(a is b, a.output_nr)
        rec(torch.autograd.grad((a + b).sum(), x))
        c = x.clone()
        a, b = DoubleInplace.apply(c)
        rec(a is b, a is c, c._version, a.output_nr)
        rec(torch.autograd.grad((a + b).sum(), x))
        rec(_err(lambda: DoubleInplace.apply(x)))

    _check(scenario)


def test_return_leaf_and_return_leaf_inplace():
    def scenario(torch, rec):
        class Identity(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a, a + b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga + gb, gb

        class Inplace(torch.autograd.function.InplaceFunction):
            @staticmethod
            def forward(ctx, a, b):
                ctx.mark_dirty(a)
                return a.add_(b), b + 2

            @staticmethod
            def backward(ctx, ga, gb):
                return ga, ga + gb

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.tensor([3.0, 4.0], requires_grad=True)
        q, p = Identity.apply(x, y)
        q.register_hook(lambda g: rec("hook", g))
        (q + p + x).sum().backward()
        rec(x.grad, y.grad)
        x = torch.tensor([1.0, 2.0])
        y.grad = None
        q, p = Inplace.apply(x, y)
        rec(q is x, q.grad_fn.__class__ is Inplace._backward_cls, q.requires_grad, x._version)
        q.sum().backward()
        rec(y.grad)

    _check(scenario)


def test_dependency_on_non_differentiable_output():
    def scenario(torch, rec):
        class F1(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = torch.full(x.shape, 3.0)
                ctx.mark_non_differentiable(out)
                return x, out

            @staticmethod
            def backward(ctx, g, ignored):
                return g

        class F2(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, ignored):
                return x

            @staticmethod
            def backward(ctx, g):
                return g, None

        class Mask(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x > 0
                ctx.mark_non_differentiable(out)
                return out

        class NonDiffNone(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out = x.clone()
                ctx.mark_non_differentiable(out)
                return out

            @staticmethod
            def backward(ctx, g):
                return None

        x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        a, b = F1.apply(x)
        b = b + 1
        rec(a.requires_grad, b.requires_grad)
        c = F2.apply(a, b)
        c.backward(torch.ones(c.size()))
        rec(x.grad)
        mask = Mask.apply(x)
        rec(mask, mask.requires_grad)
        x.grad = None
        x.masked_fill(mask, 0).sum().backward()
        rec(x.grad)
        x.grad = None
        (NonDiffNone.apply(x * x) * x).sum().backward()
        rec(x.grad)

    _check(scenario)


def test_reentrant_backward_inside_backward():
    def scenario(torch, rec):
        y_data = torch.tensor([[1.0, 2.0], [3.0, 4.0]])

        class Reenter(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with torch.enable_grad():
                    ctx.x = x.detach().requires_grad_()
                    ctx.y = y_data.clone().requires_grad_()
                    ctx.output_var = ctx.x * ctx.y
                return ctx.output_var.detach()

            @staticmethod
            def backward(ctx, g):
                with torch.enable_grad():
                    ctx.output_var.sum().backward()
                return ctx.x.grad * g

        x = torch.ones(2, 2, requires_grad=True)
        out = Reenter.apply(x)
        rec(out.requires_grad)
        out.sum().backward()
        rec(x.grad)

    _check(scenario)


def test_repeated_double_backward_and_no_early_free():
    def scenario(torch, rec):
        class Mult(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.prod(dim=-1).prod(dim=-1)
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return (g * y)[:, None, None] / x

        x = (torch.arange(1.0, 9.0).reshape(2, 2, 2) / 4).requires_grad_()
        y = Mult.apply(x)
        for _ in range(2):
            (gy,) = torch.autograd.grad(y[0], x, create_graph=True)
            (ggy,) = torch.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
            rec(gy, ggy)

        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x**2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * 2 * y / x

        x = torch.tensor(2.0, dtype=torch.double, requires_grad=True)
        y = Double.apply(x)
        rec(torch.autograd.grad(y, x, create_graph=True))
        rec(torch.autograd.grad(y, x))
        rec(_err(lambda: torch.autograd.grad(y, x)))

    _check(scenario)


def test_gradient_edge_of_a_function_output():
    def scenario(torch, rec):
        class Clone(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g.clone() * 3

        leaf = torch.tensor([2.0], requires_grad=True)
        inp = leaf.clone()
        out = Clone.apply(inp)
        edge = torch.autograd.graph.get_gradient_edge(out)
        rec(edge.node is out.grad_fn, edge.output_nr)
        torch.autograd.backward(edge)
        del out
        torch.autograd.backward(edge)
        rec(leaf.grad)
        rec(
            torch.autograd.grad(Clone.apply(inp).sum(), torch.autograd.graph.get_gradient_edge(inp))
        )

    _check(scenario)


def test_stashed_ctx_after_graph_is_freed():
    def scenario(torch, rec):
        saved_ctx = []

        class Id(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, g):
                saved_ctx.append(ctx)
                return ctx.saved_tensors

        p = torch.zeros(1, requires_grad=True)
        loss = Id.apply(p)
        loss.backward(retain_graph=True)
        rec(p.grad, len(saved_ctx[0].saved_tensors))
        loss.backward()
        del loss
        rec(p.grad, _err(lambda: saved_ctx[0].saved_tensors))

    _check(scenario)


def test_setup_context_function_under_torch_func_uses_its_backward():
    def scenario(torch, rec):
        class Sq(torch.autograd.Function):
            """Forward x**2 * k, backward deliberately 3 * x * k (so its use is visible)."""

            @staticmethod
            def forward(x, k=1.0):
                return x * x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * g * x * ctx.k, None

        class Split(torch.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2, x.sum().item(), x * 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, ga, _, gb):
                return ga * 20 + gb * 30

        func = torch.func
        x = torch.tensor([1.0, 2.0])
        rec(func.grad(lambda t: Sq.apply(t).sum())(x))
        rec(func.grad(lambda t: Sq.apply(t, k=2.0).sum())(x))
        rec(func.grad(lambda t: func.grad(lambda u: Sq.apply(u).sum())(t).sum())(x))
        out, vjp_fn = func.vjp(Sq.apply, x)
        rec(out, vjp_fn(torch.tensor([1.0, -1.0])))
        rec(func.jacrev(Sq.apply)(x))
        rec(func.grad(lambda t: Split.apply(t)[2].sum() + Split.apply(t)[0].sum())(x))
        xr = torch.tensor([1.0, 2.0], requires_grad=True)
        g = func.grad(lambda t: Sq.apply(t).sum())(xr)
        rec(g, g.requires_grad)
        g.sum().backward()
        rec(xr.grad)

    _check(scenario)


def test_materialize_non_differentiable_grads_switch():
    def scenario(torch, rec):
        def make(materialize, non_diff):
            class Func(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    out0, out1, out2 = x.clone(), x.clone(), (x > 0).long()
                    ctx.mark_non_differentiable(out1)
                    ctx.set_materialize_grads(materialize)
                    ctx._materialize_non_diff_grads = non_diff
                    return out0, out1, out2

                @staticmethod
                def backward(ctx, g0, g1, g2):
                    rec(g0, g1, g2)
                    return g0

            return Func

        for materialize in (True, False):
            for non_diff in (True, False):
                a = torch.tensor([1.0, -1.0], requires_grad=True)
                make(materialize, non_diff).apply(a)[0].sum().backward()
                rec(a.grad)

    _check(scenario)


def test_inference_mode_and_inference_tensors():
    def scenario(torch, rec):
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(x)
                return x * 2, y

            @staticmethod
            def backward(ctx, g, gy):
                (x,) = ctx.saved_tensors
                return g * x * 2, gy

        x = torch.ones(2, requires_grad=True)
        y = torch.ones(2)
        with torch.inference_mode():
            a, b = F.apply(x, y)
        rec(a.is_inference(), b.is_inference(), b is y, a.requires_grad, a.grad_fn is None)
        with torch.inference_mode():
            xi = torch.ones(2)
        rec(_err(lambda: F.apply(xi, x)))
        a, b = F.apply(x, xi)  # an inference tensor that is not saved is fine
        rec(b.is_inference(), b.requires_grad)
        a.sum().backward()
        rec(x.grad)

    _check(scenario)


def test_saved_tensors_hooks_pack_and_unpack_function_saves():
    def scenario(torch, rec):
        def pack(t):
            rec("pack", list(t.shape))
            return ("packed", t.clone())

        def unpack(p):
            rec("unpack")
            return p[1] * 10

        class Sq(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None)
                return x * x

            @staticmethod
            def backward(ctx, g):
                x, n = ctx.saved_tensors
                rec("got", x, n is None)
                return 2 * g * x

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = Sq.apply(x)
        rec("forward done")
        y.sum().backward()
        rec(x.grad)
        h = x * 1
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = Sq.apply(h)
        h.add_(1)  # what pack returned is used: no version check
        y.sum().backward()
        rec(x.grad)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda p: 3):
            y = Sq.apply(x)
        rec(_err(lambda: y.sum().backward()))

    _check(scenario)


def test_saved_variables_is_a_deprecated_alias():
    def scenario(torch, rec):
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    (x,) = ctx.saved_variables
                rec([(c.category.__name__, str(c.message)) for c in w], x)
                return g * x

        x = torch.tensor([1.0, 3.0], requires_grad=True)
        F.apply(x).sum().backward()
        rec(x.grad)

    _check(scenario)


def test_function_outputs_as_grad_and_backward_inputs():
    def scenario(torch, rec):
        Square = _square(torch)

        class Two(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                return ga * 2 + gb * 3

        x = torch.tensor([1.0, -2.0], requires_grad=True)
        a, b = Two.apply(x)
        loss = (Square.apply(a) * b).sum()
        edge_b = torch.autograd.graph.get_gradient_edge(b)
        rec(torch.autograd.grad(loss, (a, edge_b, x), retain_graph=True))
        torch.autograd.backward(loss, inputs=[a, x])
        rec(a.grad, x.grad, a.retains_grad, b.retains_grad)

    _check(scenario)


def test_keywords_that_do_not_bind_to_positions_raise():
    def scenario(torch, rec):
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, *, scale=1.0, **kw):
                rec(scale, kw)
                return x * scale

            @staticmethod
            def backward(ctx, g):
                return g

        class G(torch.autograd.Function):
            @staticmethod
            def forward(x, *, scale=1.0):  # PyTorch passes the default as a keyword: error
                return x * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                rec(len(inputs))

            @staticmethod
            def backward(ctx, g):
                return g

        x = torch.ones(2, requires_grad=True)
        rec(_err(lambda: F.apply(x, scale=2.0)), _err(lambda: F.apply(x, other=1)))
        rec(F.apply(x), _err(lambda: G.apply(x, scale=2.0)), _err(lambda: G.apply(x)))

    _check(scenario)


def test_vmap_of_a_function_needs_a_vmap_rule():
    def scenario(torch, rec):
        class Sq(torch.autograd.Function):
            @staticmethod
            def forward(x, scale):
                return x * x * scale

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(None, inputs[0])
                ctx.scale = inputs[1]

            @staticmethod
            def backward(ctx, g):
                _, x = ctx.saved_tensors
                return 3 * g * x * ctx.scale, None

        class SqG(Sq):
            generate_vmap_rule = True

        func = torch.func
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        for F in (Sq, SqG):
            rec(_err(lambda F=F: rec(func.vmap(lambda t: F.apply(t, 2.0))(x))))
            rec(_err(lambda F=F: rec(func.vmap(func.grad(lambda t: F.apply(t, 2.0).sum()))(x))))
            mapped = func.vmap(lambda t, F=F: F.apply(t, 2.0))
            rec(_err(lambda: rec(func.grad(lambda t: mapped(t).sum())(x))))
            rec(func.jacrev(lambda t: F.apply(t, 2.0))(x[0]))

    _check(scenario)


def test_view_outputs_and_returned_inputs_are_views_not_writable():
    def scenario(torch, rec):
        class Id(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class View(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view(-1)

            @staticmethod
            def backward(ctx, g):
                return g.view(2, 2) * 2

        class Pair(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga, gb

        x = torch.ones(2, 2, requires_grad=True)
        h = x * 1
        y = Id.apply(h)
        rec(y is h, y._base is h, y._version)
        rec(_err(lambda: y.add_(1)))
        y = View.apply(h)
        rec(y._base is h, _err(lambda: y.add_(1)))
        y.sum().backward()
        rec(x.grad)
        a = torch.ones(2, requires_grad=True)
        b = torch.ones(2)
        oa, ob = Pair.apply(a, b)
        rec(oa._base is a, ob._base is b, ob.requires_grad, _err(lambda: ob.add_(1)))
        with torch.no_grad():
            oa, ob = Pair.apply(a, b)
        rec(oa._base is a, ob._base is b, oa.requires_grad)

    _check(scenario)
