"""A node's saved tensors under PyTorch's names (``grad_fn._saved_self``, ``_saved_other``,
``_saved_result``, ``_raw_saved_*`` with ``register_hooks``, ``_input_metadata``): every
scenario runs on compat and on real PyTorch and the two record the same values, identities
and errors."""

from __future__ import annotations

from torch_oracle import check as _check
from torch_oracle import error_of as _err


def test_saved_inputs_are_the_tensors_and_outputs_new_tensors():
    def scenario(torch, rec):
        a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        b = a * a
        c = a * b
        d = torch.exp(a)
        rec(b.grad_fn._saved_self is a, b.grad_fn._saved_other is a)
        rec(c.grad_fn._saved_self is a, c.grad_fn._saved_other is b)
        r = d.grad_fn._saved_result
        rec(r, r is d, r.grad_fn is d.grad_fn, r.requires_grad, r.is_leaf, r._version)
        rec(hasattr(d.grad_fn, "_saved_self"), _err(lambda: d.grad_fn._saved_self)[0])
        rec(_err(lambda: b.grad_fn._saved_nothing))
        c.sum().backward()
        rec(_err(lambda: c.grad_fn._saved_self))
        rec(_err(lambda: c.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)))

    _check(scenario)


def test_fields_a_node_does_not_need_read_none():
    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0])
        y = a * b
        rec(y.grad_fn._saved_self, y.grad_fn._saved_other is b)
        y = a * 2
        rec(y.grad_fn._saved_self, y.grad_fn._saved_other)
        rec((a**3).grad_fn._saved_self is a, (a**b).grad_fn._saved_exponent is b)

    _check(scenario)


def test_saved_output_shares_storage_and_version():
    def scenario(torch, rec):
        a = torch.tensor([0.5, 1.5], requires_grad=True)
        b = torch.exp(a)
        u = b.grad_fn._saved_result
        with torch.no_grad():
            b += 1
        rec(u, b._version == u._version)
        rec(_err(lambda: b.grad_fn._saved_result))

    _check(scenario)


def test_modified_saved_input_raises_on_read():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True) * 1
        y = x.sin()
        x.add_(1)
        rec(_err(lambda: y.grad_fn._saved_self))

    _check(scenario)


def test_register_hooks_on_one_saved_tensor():
    def scenario(torch, rec):
        for get in (
            lambda: torch.tensor([1.0, -1.0, 2.0], requires_grad=True),
            lambda: 1 + torch.tensor([1.0, -1.0, 2.0], requires_grad=True),
        ):
            a = get()
            y = a * a
            y.grad_fn._raw_saved_self.register_hooks(lambda x: 2 * x, lambda x: x)
            s = y.grad_fn._saved_self
            rec(s, s is a, s.grad_fn is a.grad_fn, s.requires_grad)
            rec(_err(lambda: y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)))
            y.sum().backward()
            rec(a.grad if a.is_leaf else None)
            y = a * a
            y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: 1)
            rec(_err(lambda: y.grad_fn._saved_self))

            def inplace_double(x):
                x *= 2
                return x

            t = a * a
            rec(_err(lambda: t.grad_fn._raw_saved_self.register_hooks(inplace_double, len)))
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.exp(a)
        y.grad_fn._raw_saved_result.register_hooks(lambda x: x * 3, lambda x: x)
        r = y.grad_fn._saved_result
        rec(r, r.grad_fn is y.grad_fn)
        y.sum().backward()
        rec(a.grad)

    _check(scenario)


def test_default_hooks_and_fields():
    def scenario(torch, rec):
        with torch.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
            a = torch.tensor([1.0, 3.0], requires_grad=True)
            y = a * a
            rec(y.grad_fn._saved_self, y.grad_fn._saved_other)
            rec(_err(lambda: y.grad_fn._raw_saved_self.register_hooks(lambda x: x, len)))
            y.sum().backward()
            rec(a.grad)

    _check(scenario)


def test_custom_function_raw_saved_tensors():
    def scenario(torch, rec):
        class MyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                (x, _) = ctx.saved_tensors
                return g * x

        a = torch.tensor([2.0, 3.0], requires_grad=True)
        y = MyFn.apply(a)
        saved = y.grad_fn._raw_saved_tensors
        rec(len(saved), _err(lambda: saved[1].register_hooks(lambda x: x, lambda x: x)))
        saved[0].register_hooks(lambda x: x * 2, lambda x: x)
        rec(_err(lambda: saved[0].register_hooks(lambda x: x, lambda x: x)))
        y.sum().backward()
        rec(a.grad, _err(lambda: y.grad_fn._raw_saved_tensors))

    _check(scenario)


def test_input_metadata():
    def scenario(torch, rec):
        x = torch.ones(2, 3, requires_grad=True, dtype=torch.float64)
        (m,) = (x * 2).grad_fn._input_metadata
        rec(tuple(m.shape), str(m.dtype), str(m.device))
        var, mean = torch.var_mean(x, dim=0)
        rec(var.grad_fn is mean.grad_fn, var.grad_fn.name())
        rec([tuple(m.shape) for m in var.grad_fn._input_metadata])
        (var.sum() + 2 * mean.sum()).backward()
        rec(x.grad)

    _check(scenario)


def test_default_hooks_reach_double_backward():
    """``pack``/``unpack`` around the forward, the ``create_graph`` backward, or both: the
    recorded backward's saved tensors are packed too (PyTorch: 6, 12, 24, 48 times a)."""

    def scenario(torch, rec):
        hooks = torch.autograd.graph.saved_tensors_hooks
        for fwd, bwd in ((False, False), (True, False), (False, True), (True, True)):
            a = torch.tensor([1.0, -0.5, 2.0], requires_grad=True)
            with hooks(lambda x: 2 * x, lambda x: x) if fwd else hooks(lambda x: x, lambda x: x):
                s = (a**3).sum()
            with hooks(lambda x: 2 * x, lambda x: x) if bwd else hooks(lambda x: x, lambda x: x):
                (g,) = torch.autograd.grad(s, (a,), create_graph=True)
                g.sum().backward()
            rec(a.grad)

    _check(scenario)


def test_hooks_entered_or_left_during_backward_end_with_it():
    def scenario(torch, rec):
        hooks = torch.autograd.graph.saved_tensors_hooks
        inner = hooks(lambda x: x, lambda x: x)

        def unpack(x):
            inner.__enter__()  # left on the stack by the hook: gone after the backward
            return x

        with hooks(lambda x: x, unpack):
            torch.tensor([1.0, 2.0], requires_grad=True).sin().sum().backward()
        y = torch.tensor(1.0, requires_grad=True).exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)  # none set
        rec(y)

    _check(scenario)


def test_allow_mutation_bookkeeping():
    """``allow_mutation_on_saved_tensors``: one handle per saved (tensor, version), counted
    as cloned once its tensor changes in place, gone with the nodes that saved it."""

    def scenario(torch, rec):
        with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:

            def counts():
                rec(len(ctx.tid_to_weakhandle), len(ctx.cloned))

            a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True).clone()
            out = (a**2).sum()
            counts()
            out.backward()
            a.sin_()
            counts()
            b = a**2
            c = a**2
            a.sin_()
            counts()
            d = a**2
            a.sin_()
            counts()
            del b, c
            counts()
            d.sum().backward()
            counts()
            x = torch.tensor([1.0], requires_grad=True)
            y = torch.tensor([1.0])
            out = x * y
            torch.sin(torch.tensor([2.0]), out=y)
            counts()
            out.backward()
            rec(x.grad)
            counts()
        counts()

    _check(scenario)


def test_pack_sees_a_copy_of_the_tensor_an_inplace_op_overwrites():
    def scenario(torch, rec):
        a = torch.tensor([0.5, 1.0], requires_grad=True).clone()

        def pack(t):
            rec(t is a, t._version, t.requires_grad, t)
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            a.sin_()
        a.sum().backward()

    _check(scenario)


def test_version_errors_name_the_node_of_a_saved_output_only():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.ones(2)
        b = x * w
        w.add_(1)
        rec(_err(lambda: b.sum().backward()))
        y = x.exp()
        with torch.no_grad():
            y.add_(1)
        rec(_err(lambda: y.sum().backward()))

    _check(scenario)
