"""``torch.autograd.Function``: every scenario runs on compat and on real PyTorch, and
the two record the same values, flags, node names and exceptions (type and message)."""

from __future__ import annotations

import warnings

from torch_oracle import check as _check
from torch_oracle import error_of as _err
from torch_oracle import square as _square

from compat._core import engine

# --------------------------------------------------------------------------- basics


def test_function_forward_backward_with_non_tensor_args_and_ctx_attributes():
    def scenario(torch, rec):
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y, flag=True):
                rec(torch.is_grad_enabled(), ctx.needs_input_grad, type(ctx).__name__)
                ctx.k = k
                ctx.save_for_backward(x, y)
                return x * k + y * y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                rec(torch.is_grad_enabled(), ctx.k, g, x)
                return g * ctx.k, None, 2 * g * y

        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        out = Scale.apply(x, 3.0, y)
        rec(out, out.requires_grad, out.grad_fn.name(), type(out.grad_fn).__name__)
        rec(out.grad_fn.k, out.is_leaf, len(out.grad_fn.next_functions))
        rec([type(n).__name__ for n, _ in out.grad_fn.next_functions])
        rec(repr(out).split("grad_fn=")[1])
        out.sum().backward()
        rec(x.grad, y.grad)

    _check(scenario)


def test_setup_context_style_binds_keywords_and_defaults():
    def scenario(torch, rec):
        class Mul(torch.autograd.Function):
            @staticmethod
            def forward(x, k=2.0):
                rec(torch.is_grad_enabled())
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                rec(len(inputs), inputs[1], output, ctx.needs_input_grad)
                ctx.k = inputs[1]

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = torch.ones(3, requires_grad=True)
        Mul.apply(x).sum().backward()
        rec(x.grad)
        Mul.apply(x, k=5.0).sum().backward()
        rec(x.grad)
        rec(_err(lambda: Mul.apply(x, 1.0, 2.0)))

    _check(scenario)


def test_old_style_keywords_bind_to_positions():
    def scenario(torch, rec):
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y=2.0):
                rec(ctx.needs_input_grad)
                return x * k * y

            @staticmethod
            def backward(ctx, g):
                return g, None

        x = torch.ones(2, requires_grad=True)
        rec(F.apply(x, k=3.0), F.apply(x=x, k=3.0))
        F.apply(x, k=3.0).sum().backward()
        rec(x.grad)

    _check(scenario)


def test_multiple_outputs_non_tensor_outputs_and_integer_outputs():
    def scenario(torch, rec):
        class Mixed(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, n):
                return x * n, n, (x > 0).long(), x.exp()

            @staticmethod
            def backward(ctx, ga, gn, gi, ge):
                rec(ga, gn, gi, ge)
                return ga * 2 + ge, None

        x = torch.tensor([1.0, -2.0], requires_grad=True)
        a, n, i, e = Mixed.apply(x, 3)
        rec(n, i.requires_grad, i.grad_fn is None, a.output_nr, e.output_nr)
        rec(a.grad_fn is e.grad_fn, len(a.grad_fn.next_functions))
        (a.sum() + 0 * e.sum()).backward()
        rec(x.grad)

    _check(scenario)


def test_forward_returning_non_tuple_values():
    def scenario(torch, rec):
        class Three(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 3

        class AsList(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return [x.clone(), x.clone()]

        x = torch.ones(2, requires_grad=True)
        rec(Three.apply(x), type(AsList.apply(x)).__name__)

    _check(scenario)


def test_function_returns_input():
    def scenario(torch, rec):
        class Id(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                return ga * 2, gb

        a = torch.ones(2, requires_grad=True)
        b = torch.ones(2)
        oa, ob = Id.apply(a, b)
        rec(oa is a, ob is b, oa.requires_grad, ob.requires_grad, oa.is_leaf, oa._version)
        rec(oa.grad_fn is ob.grad_fn, oa.grad_fn.name())
        b.add_(1)
        rec(ob, ob._version)  # an alias: same storage and version counter
        oa.sum().backward()
        rec(a.grad)
        with torch.no_grad():
            oa, ob = Id.apply(a, b)
        rec(oa is a, oa.requires_grad, oa.grad_fn is None, ob is b)

    _check(scenario)


# --------------------------------------------------------------------------- ctx


def test_mark_non_differentiable():
    def scenario(torch, rec):
        class Sort(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                v, i = x.sort()
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(x, i)
                return v, i

            @staticmethod
            def backward(ctx, gv, gi):
                rec(gi)
                x, i = ctx.saved_tensors
                return torch.zeros_like(x).scatter(0, i, gv)

        x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
        v, i = Sort.apply(x)
        rec(v.requires_grad, i.requires_grad, i.grad_fn is None)
        (v * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
        rec(x.grad)

    _check(scenario)


def test_mark_non_differentiable_mixed_float_outputs():
    def scenario(torch, rec):
        class ND(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                a, b = x * 2, x * 3
                ctx.mark_non_differentiable(b)
                return a, b

            @staticmethod
            def backward(ctx, ga, gb):
                rec(gb)
                return ga * 2

        x = torch.ones(2, requires_grad=True)
        a, b = ND.apply(x)
        rec(a.requires_grad, b.requires_grad, b.is_leaf)
        a.sum().backward()
        rec(x.grad, _err(lambda: b.sum().backward()))

    _check(scenario)


def test_set_materialize_grads():
    def scenario(torch, rec):
        def make(materialize):
            class M(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    if not materialize:
                        ctx.set_materialize_grads(False)
                    return x.clone(), x.clone()

                @staticmethod
                def backward(ctx, g1, g2):
                    rec(g1, g2, [str(g.device) for g in (g1, g2) if g is not None])
                    return g2 if g1 is None else g1 + g2

            return M

        for materialize in (True, False):
            x = torch.ones(2, requires_grad=True)
            _, o2 = make(materialize).apply(x)
            (3 * o2).sum().backward()
            rec(x.grad)

    _check(scenario)


def test_backward_returning_none_leaves_grad_undefined():
    def scenario(torch, rec):
        class NoGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return None

        x = torch.ones(2, requires_grad=True)
        w = torch.ones(2, requires_grad=True)
        (NoGrad.apply(x) + w).sum().backward()
        rec(x.grad is None, w.grad)
        rec(_err(lambda: torch.autograd.grad(NoGrad.apply(x).sum(), x)))
        rec(torch.autograd.grad(NoGrad.apply(x).sum(), x, allow_unused=True))
        rec(torch.autograd.grad(NoGrad.apply(x).sum(), x, materialize_grads=True))

    _check(scenario)


def test_save_none_for_backward_and_nothing_saved():
    def scenario(torch, rec):
        class SaveNone(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(None, x, None)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                a, b, c = ctx.saved_tensors
                rec(a is None, b, c is None)
                return g * 2

        class Nothing(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                rec(ctx.saved_tensors)
                return g * 2

        x = torch.ones(2, requires_grad=True)
        SaveNone.apply(x).sum().backward()
        Nothing.apply(x).sum().backward()
        rec(x.grad)

    _check(scenario)


def test_saved_tensors_are_freed_after_backward():
    def scenario(torch, rec):
        Square = _square(torch)
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = Square.apply(x)
        y.sum().backward(retain_graph=True)
        rec(len(y.grad_fn.saved_tensors))
        y.sum().backward()
        rec(x.grad)
        rec(_err(lambda: y.grad_fn.saved_tensors))
        rec(_err(lambda: y.sum().backward()))

        class NoSave(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        z = NoSave.apply(x)
        z.sum().backward()
        z.sum().backward()  # nothing saved: a second backward works
        rec(x.grad, _err(lambda: z.grad_fn.saved_tensors))

    _check(scenario)


def test_saved_tensors_inside_forward_and_without_graph():
    def scenario(torch, rec):
        class S(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                rec(len(ctx.saved_tensors))
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        class BadSave(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x

        x = torch.ones(2, requires_grad=True)
        y = S.apply(x)
        rec(y.grad_fn.to_save, len(y.grad_fn.saved_tensors), y.grad_fn.needs_input_grad)
        rec(_err(lambda: BadSave.apply(x)))
        rec(_err(lambda: BadSave.apply(torch.ones(2))))  # no graph: nothing checked

    _check(scenario)


def test_saved_tensor_modified_in_place():
    def scenario(torch, rec):
        Square = _square(torch)

        class Exp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                r = x.exp()
                ctx.save_for_backward(r)
                return r

            @staticmethod
            def backward(ctx, g):
                (r,) = ctx.saved_tensors
                return g * r

        x = torch.ones(2, requires_grad=True)
        h = x * 1
        y = Square.apply(h)
        h.add_(1)
        rec(_err(lambda: y.sum().backward()))
        y = Exp.apply(x)
        y.mul_(2)
        rec(_err(lambda: y.sum().backward()))

    _check(scenario)


# --------------------------------------------------------------------------- errors


def test_wrong_number_of_gradients_and_wrong_kinds():
    def scenario(torch, rec):
        def make(result, n_extra=0):
            class F(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x, *rest):
                    return x.clone()

                @staticmethod
                def backward(ctx, g):
                    return result(g)

            F.__name__ = F.__qualname__ = "F"
            return F

        x = torch.ones(3, requires_grad=True)
        rec(_err(lambda: make(lambda g: (g, g)).apply(x).sum().backward()))
        rec(_err(lambda: make(lambda g: (g, g)).apply(x, 1).sum().backward()))
        rec(_err(lambda: make(lambda g: ()).apply(x, 1).sum().backward()))
        rec(_err(lambda: make(lambda g: 1.0).apply(x).sum().backward()))
        rec(_err(lambda: make(lambda g: (g, None, None)).apply(x, 1).sum().backward()))
        rec(_err(lambda: make(lambda g: (g, None, g)).apply(x, 1).sum().backward()))
        rec(x.grad)

    _check(scenario)


def test_gradient_shape_and_dtype_checks():
    def scenario(torch, rec):
        def make(result):
            class G(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x, n, y):
                    return x * n + y

                @staticmethod
                def backward(ctx, g):
                    return result(g)

            return G

        x = torch.ones(3, requires_grad=True)
        y = torch.ones(1, 3, requires_grad=True)
        rec(_err(lambda: make(lambda g: (g, None, torch.ones(5))).apply(x, 2, y).sum().backward()))
        rec(
            _err(
                lambda: (
                    make(lambda g: (torch.ones(2, 4), None, None)).apply(x, 2, y).sum().backward()
                )
            )
        )
        make(lambda g: (torch.ones(2, 3), None, torch.ones(4, 1, 3))).apply(
            x, 2, y
        ).sum().backward()
        rec(x.grad, y.grad)
        x.grad = None
        make(lambda g: (g.double(), None, None)).apply(x, 2, y).sum().backward()
        rec(x.grad)
        z = torch.ones(3)  # no gradient wanted: whatever comes back is dropped
        make(lambda g: (g, None, torch.ones(7))).apply(x, 2, z).sum().backward()
        rec(x.grad, z.grad)

    _check(scenario)


def test_legacy_and_unimplemented_methods():
    def scenario(torch, rec):
        Function = torch.autograd.Function

        class G(Function):
            @staticmethod
            def forward(ctx, x):
                return x

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            inst = G()
        rec([c.category.__name__ for c in w], "should not be instantiated" in str(w[0].message))
        rec(_err(lambda: inst(torch.ones(1))))
        rec(_err(lambda: Function.forward(None)), _err(lambda: Function.backward(None)))
        rec(_err(lambda: Function.jvp(None)), Function.vjp is Function.backward)
        rec(_err(lambda: G.apply(torch.ones(1, requires_grad=True)).sum().backward()))

        class Both(Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g

        rec(_err(lambda: Both.apply(torch.ones(1, requires_grad=True)).sum().backward()))

        class ViaVjp(Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def vjp(ctx, g):
                return 5 * g

        x = torch.ones(1, requires_grad=True)
        ViaVjp.apply(x).sum().backward()
        rec(x.grad)

    _check(scenario)


# --------------------------------------------------------------------------- mark_dirty


def test_mark_dirty():
    def scenario(torch, rec):
        class Inc(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                t.add_(1)
                ctx.mark_dirty(t)
                return t

            @staticmethod
            def backward(ctx, g):
                return 3 * g

        class NotReturned(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                t.add_(1)
                ctx.mark_dirty(t)
                return t.clone()

        leaf = torch.ones(2, requires_grad=True)
        rec(_err(lambda: Inc.apply(leaf)), leaf._version)
        m = leaf * 2
        o = Inc.apply(m)
        rec(o is m, m.grad_fn.name(), m._version, m)
        (m * m).sum().backward()
        rec(leaf.grad)
        rec(_err(lambda: NotReturned.apply(leaf * 2)))
        t = torch.ones(2)
        rec(Inc.apply(t) is t, t._version, t.requires_grad)
        with torch.no_grad():
            o = Inc.apply(leaf)
        rec(o is leaf, o.requires_grad, leaf._version, leaf)

    _check(scenario)


def test_mark_dirty_with_saved_input():
    def scenario(torch, rec):
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                ctx.save_for_backward(t.clone())
                t.mul_(2)
                ctx.mark_dirty(t)
                return t

            @staticmethod
            def backward(ctx, g):
                (orig,) = ctx.saved_tensors
                return g * 2 + 0 * orig

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x + 0
        h.retain_grad()
        Double.apply(h)
        rec(h.retains_grad, h.grad_fn.name())
        h.sum().backward()
        rec(x.grad, h.grad)

    _check(scenario)


# --------------------------------------------------------------------------- higher order


def test_double_backward_through_differentiable_backward():
    def scenario(torch, rec):
        Square = _square(torch)

        class Exp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                r = x.exp()
                ctx.save_for_backward(r)
                return r

            @staticmethod
            def backward(ctx, g):
                (r,) = ctx.saved_tensors
                rec(torch.is_grad_enabled(), r.grad_fn.name())
                return g * r

        x = torch.tensor([0.5, -1.0], requires_grad=True)
        for F in (Square, Exp):
            y = F.apply(x)
            (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
            rec(g, g.requires_grad)
            (gg,) = torch.autograd.grad(g.sum(), x)
            rec(gg)
        x.grad = None
        Square.apply(Square.apply(x)).sum().backward(create_graph=True)
        g = x.grad
        x.grad = None
        g.sum().backward()
        rec(g, x.grad)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_graph=True with backward(): a cycle warning
        _check(scenario)


def test_once_differentiable():
    def scenario(torch, rec):
        from_fn = torch.autograd.function

        class SqO(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @from_fn.once_differentiable
            def backward(ctx, g):
                rec(torch.is_grad_enabled())
                (x,) = ctx.saved_tensors
                return 2 * g * x

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = SqO.apply(x)
        (g,) = torch.autograd.grad(y.sum(), x)
        rec(g, g.requires_grad)
        (g,) = torch.autograd.grad(SqO.apply(x).sum(), x, create_graph=True)
        rec(g, g.requires_grad)  # the seed does not require grad: plain result
        y = SqO.apply(x)
        (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
        rec(g, g.requires_grad, g.grad_fn.name(), type(g.grad_fn).__name__, repr(g.grad_fn)[:12])
        rec(_err(lambda: g.sum().backward()))
        rec(_err(lambda: torch.autograd.grad(g.sum(), x)))

    _check(scenario)


# --------------------------------------------------------------------------- grad mode, modules


def test_no_grad_and_inputs_without_grad_record_nothing():
    def scenario(torch, rec):
        class S(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, i):
                rec(ctx.needs_input_grad)
                ctx.save_for_backward(x)
                ctx.note = "kept"
                return x * i

            @staticmethod
            def backward(ctx, g):
                return g, None

        x = torch.ones(2, requires_grad=True)
        with torch.no_grad():
            y = S.apply(x, torch.tensor([1, 2]))
        rec(y, y.requires_grad, y.grad_fn is None)
        y = S.apply(torch.ones(2), torch.tensor([1.0, 2.0]))
        rec(y.requires_grad, y.grad_fn is None)
        y = S.apply(x, torch.tensor([1, 2]))
        rec(y.requires_grad, y.grad_fn.note)

        @torch.no_grad()
        def inference(t):
            return S.apply(t, 3.0)

        rec(inference(x).requires_grad)

    _check(scenario)


def test_function_inside_a_module_trains():
    def scenario(torch, rec):
        class ClampGrad(torch.autograd.Function):
            """Identity forward; clips the gradient in backward."""

            @staticmethod
            def forward(ctx, x, bound):
                ctx.bound = bound
                return x.view_as(x)

            @staticmethod
            def backward(ctx, g):
                return g.clamp(-ctx.bound, ctx.bound), None

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 2)

            def forward(self, x):
                return ClampGrad.apply(self.lin(x), 0.1).pow(2).sum()

        torch.manual_seed(0)
        net = Net()
        with torch.no_grad():
            net.lin.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
            net.lin.bias.copy_(torch.tensor([0.05, -0.05]))
        opt = torch.optim.SGD(net.parameters(), lr=0.5)
        x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
        for _ in range(3):
            opt.zero_grad()
            loss = net(x)
            loss.backward()
            opt.step()
            rec(loss, net.lin.weight.grad, net.lin.bias)

    _check(scenario)


def test_repeated_backward_with_assembled_policy(monkeypatch):
    monkeypatch.setattr(engine.policy, "assemble", "always")

    def scenario(torch, rec):
        Square = _square(torch)
        w = torch.tensor([0.5, 1.5], requires_grad=True)
        for step in range(3):
            loss = (Square.apply(w * (step + 1)) + w).sum()
            loss.backward()
            rec(w.grad)

    _check(scenario)


def test_hooks_on_function_nodes_and_outputs():
    def scenario(torch, rec):
        class PH(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, n):
                return x * n

            @staticmethod
            def backward(ctx, g):
                return g * 2, None

        x = torch.ones(3, requires_grad=True)
        y = PH.apply(x, 2)
        y.retain_grad()
        y.register_hook(lambda g: g * 10)
        y.grad_fn.register_prehook(lambda go: rec("pre", go))
        y.grad_fn.register_hook(lambda gi, go: rec("post", gi, go))
        y.sum().backward()
        rec(x.grad, y.grad)

    _check(scenario)


def test_chained_functions_and_grad_of_intermediate():
    def scenario(torch, rec):
        Square = _square(torch)
        x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
        a = Square.apply(x)
        b = Square.apply(a.sin())
        (ga, gx) = torch.autograd.grad(b.sum(), (a, x))
        rec(ga, gx)
        rec(
            b.grad_fn.next_functions[0][0].name(),
            b.grad_fn.next_functions[0][0].next_functions[0][0] is a.grad_fn,
        )

    _check(scenario)


def test_is_grads_batched():
    def scenario(torch, rec):
        Square = _square(torch)
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = Square.apply(x)
        rec(torch.autograd.grad(y, x, torch.eye(2), is_grads_batched=True))

    _check(scenario)


def test_func_transform_needs_setup_context():
    def scenario(torch, rec):
        Square = _square(torch)
        x = torch.tensor([1.0, 2.0])
        rec(_err(lambda: torch.func.grad(lambda t: Square.apply(t).sum())(x)))

    _check(scenario)


def test_function_ctx_standalone():
    def scenario(torch, rec):
        ctx = torch.autograd.function.FunctionCtx()
        x = torch.ones(2)
        ctx.save_for_backward(x)
        ctx.mark_non_differentiable(x)
        ctx.set_materialize_grads(False)
        rec(len(ctx.to_save), len(ctx.non_differentiable), ctx.materialize_grads)
        rec(issubclass(torch.autograd.Function, torch.autograd.function.FunctionCtx))

    _check(scenario)
