"""The recorded graph's shape as PyTorch's: which gradients are ``None`` (structurally
zero), which hooks run for a node that is captured but not executed, ``Node`` as a
virtual base class, a leaf's gradient accumulator after ``set_``. Each scenario runs on
compat and on real PyTorch and the records must agree."""

from __future__ import annotations

import gc
import importlib
import warnings
import weakref

from torch_oracle import check as _check
from torch_oracle import error_of as _err


def test_structurally_zero_gradient_of_a_recorded_backward_is_none():
    def scenario(torch, rec):
        x = torch.tensor(0.5, requires_grad=True)
        a = torch.tensor(1.0, requires_grad=True)
        (dydx,) = torch.autograd.grad(x * a, x, create_graph=True)
        rec(torch.autograd.grad(dydx, x, create_graph=True, allow_unused=True))
        (z,) = torch.autograd.grad(dydx, x, create_graph=True, materialize_grads=True)
        rec(z, z.requires_grad, torch.autograd.grad(z, x, materialize_grads=True))
        rec(torch.autograd.grad(dydx, a, allow_unused=True))

    _check(scenario)


def test_unreached_output_of_a_multi_output_node_gives_none():
    def scenario(torch, rec):
        x = torch.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
        v, m = torch.var_mean(x, dim=0)
        rec(torch.autograd.grad(m.sum(), x, retain_graph=True))
        rec(torch.autograd.grad(v.sum() + m.sum(), x))

    _check(scenario)


def test_prehooks_of_a_captured_node_run_after_the_tensor_hooks():
    def scenario(torch, rec):
        def hook1(g):
            rec(1)
            return g * 3

        def hook2(gs):
            rec(2)
            return tuple(g * 2 for g in gs)

        a = torch.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(hook2)
        b.register_hook(hook1)
        b.grad_fn.register_prehook(hook2)
        b.sum().backward(inputs=(b,))
        rec(b.grad, a.grad)
        rec(torch.autograd.grad((b * 2).sum(), b))

    _check(scenario)


def test_node_is_a_virtual_base_class():
    def scenario(torch, rec):
        Node = torch.autograd.graph.Node
        a = torch.rand(3, requires_grad=True)
        b = a.exp()
        rec(isinstance(b.grad_fn, Node), issubclass(type(b.grad_fn), Node))
        rec(Node in type(b.grad_fn).mro(), isinstance(b.grad_fn.next_functions[0][0], Node))
        rec(isinstance(None, Node), isinstance(1, Node), isinstance(Node, Node))
        rec(issubclass(Node, Node), issubclass(int, Node))
        rec(issubclass(torch.autograd.function.BackwardCFunction, Node))

    _check(scenario)


def test_set_gives_a_leaf_a_new_gradient_accumulator():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        edge = torch.autograd.graph.get_gradient_edge(x)
        out = x.clone()
        with torch.no_grad():
            x.set_(torch.tensor([3.0, 4.0]))
        rec(_err(lambda: torch.autograd.grad(out.sum(), x, retain_graph=True)))
        rec(torch.autograd.grad(out.sum(), edge))

    _check(scenario)


def test_deep_reentrant_backward():
    """A custom ``Function`` whose backward runs a backward, 400 levels deep (past one
    thread's recursion limit: nested levels move to new threads, as PyTorch's do)."""

    def scenario(torch, rec):
        class Deep(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with torch.enable_grad():
                    ctx.x = x.detach().requires_grad_() - 1
                return ctx.x.detach()

            @staticmethod
            def backward(ctx, g):
                if ctx.x < 0:
                    return g
                with torch.enable_grad():
                    Deep.apply(ctx.x).sum().backward()
                return g * 2

        v = torch.tensor(400.0, requires_grad=True)
        Deep.apply(v).sum().backward()
        rec(v.grad, torch.is_grad_enabled())

        class DeepFail(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with torch.enable_grad():
                    ctx.x = x.detach().requires_grad_() - 1
                return ctx.x.detach()

            @staticmethod
            def backward(ctx, g):
                if ctx.x < 0:
                    raise ValueError("deep failure")
                with torch.enable_grad():
                    DeepFail.apply(ctx.x).sum().backward()
                return g

        rec(_err(lambda: DeepFail.apply(torch.tensor(40.0, requires_grad=True)).backward()))

    _check(scenario)


def test_resize_function_and_gradient_edges():
    def scenario(torch, rec):
        resize = importlib.import_module(torch.__name__ + ".autograd._functions").Resize
        x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = resize.apply(x, (4,))
        rec(y, type(y.grad_fn).__name__)
        ref = torch.autograd.grad((y * y).sum(), x, retain_graph=True)
        new = torch.autograd.grad((y * y).sum(), torch.autograd.graph.get_gradient_edge(x))
        rec(ref, new)
        rec(_err(lambda: resize.apply(x, (3,)))[0])
        rec(_err(lambda: torch.autograd.SavedTensor()))

    _check(scenario)


def test_anomaly_parent_does_not_keep_nodes_alive():
    """In anomaly mode a ``create_graph`` backward's nodes name the node that recorded them
    (``metadata["parent_"]``); nothing else keeps that node alive."""

    def scenario(torch, rec):
        def make():
            x = torch.tensor([0.5, 1.0], requires_grad=True)
            t = x.exp()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with torch.autograd.detect_anomaly():
                    torch.autograd.grad(t, x, torch.ones_like(t), create_graph=True)

            class Foo:
                pass

            obj = Foo()
            t.grad_fn.metadata[0] = obj
            return t, weakref.ref(obj)

        gc.disable()
        try:
            t, ref = make()
            rec(ref() is not None)
            del t
            rec(ref() is None)
        finally:
            gc.enable()

    _check(scenario)


def test_anomaly_warning_as_error_goes_to_stderr(capsys):
    def scenario(torch, rec):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                with torch.autograd.detect_anomaly():
                    pass
            except UserWarning:
                pass
            torch.autograd.set_detect_anomaly(True)
            try:
                a = torch.tensor([1.0, 2.0], requires_grad=True)
                d1 = a + 1
                d2 = d1**2
                d1 += 1
                rec(_err(lambda: torch.autograd.grad(d2.sum(), a))[0])
            finally:
                torch.autograd.set_detect_anomaly(False)
        rec("Error detected in PowBackward0" in capsys.readouterr().err)

    _check(scenario)


def test_full_backward_hook_not_called_by_a_double_backward():
    def scenario(torch, rec):
        x = torch.tensor([0.25, 0.5], requires_grad=True)
        y = torch.tensor([1.0, -1.0])
        func = torch.nn.MSELoss()
        func.register_full_backward_hook(lambda m, gi, go: rec("hook", gi, go))
        f = func(x, y)
        (gx,) = torch.autograd.grad(f, x, create_graph=True)
        rec(torch.autograd.grad(gx.sum(), x))
        func(x, y).backward()
        rec(x.grad)

    _check(scenario)
