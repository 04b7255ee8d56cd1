"""Autograd hooks: every scenario runs on compat and on real PyTorch, and the two record
the same calls, arguments, values and exceptions (type and message).

Tensor hooks, ``retain_grad``, node pre/post hooks (also on ``AccumulateGrad``),
post-accumulate-grad hooks, multi-grad hooks, ``increment_version``, saved-tensor
hooks, calling a ``grad_fn`` directly and ``autograd.grad``/``backward`` argument checks.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from torch_oracle import check as _check
from torch_oracle import error_of as _err
from torch_oracle import square

from compat._core import engine

# --------------------------------------------------------------------------- order


def test_order_tensor_hook_retain_grad_node_prehook_node_hook():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        node = y.grad_fn
        y.register_hook(lambda g: rec("tensor", g) or g * 10)
        y.retain_grad()
        node.register_prehook(lambda gout: rec("pre", gout, y.grad) or None)
        node.register_hook(lambda gin, gout: rec("post", gin, gout))
        y.register_hook(lambda g: rec("tensor2", g))
        (y * y).sum().backward()
        rec(x.grad, y.grad)

    _check(scenario)


def test_accumulate_grad_node_hooks_observe_the_tensor_hooks():
    def scenario(torch, rec):
        a = torch.tensor(1.0, requires_grad=True)
        b = a.clone()
        acc = b.grad_fn.next_functions[0][0]
        rec(acc.name(), acc.next_functions)
        acc.register_hook(lambda gin, gout: rec("acc post", gin, gout, a.grad))
        acc.register_prehook(lambda gout: rec("acc pre", gout, a.grad))
        a.register_hook(lambda g: rec("tensor", g) or g * 2)
        a.register_post_accumulate_grad_hook(lambda t: rec("post acc", t.grad))
        b.backward()
        b = a * 3
        b.backward()
        rec(a.grad)

    _check(scenario)


def test_accumulate_grad_prehook_replaces_the_gradient():
    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
        acc = y.grad_fn.next_functions[0][0]
        h = acc.register_prehook(lambda gout: (gout[0] + 100,))
        y.sum().backward(retain_graph=True)
        rec(a.grad)
        h.remove()
        y.sum().backward()
        rec(a.grad)

    _check(scenario)


def test_accumulate_grad_hooks_in_autograd_grad():
    """``autograd.grad`` does not run a leaf's ``AccumulateGrad``: its node hooks stay
    silent while the leaf's tensor hooks still run."""

    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda gout: rec("acc pre", gout))
        acc.register_hook(lambda gin, gout: rec("acc post", gin, gout))
        a.register_hook(lambda g: rec("tensor", g))
        rec(torch.autograd.grad(y.sum(), a))
        rec(a.grad)

    _check(scenario)


def test_post_accumulate_grad_hook_rules():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        h = x.register_post_accumulate_grad_hook(lambda t: rec("acc", t is x, t.grad))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        h.remove()
        (x * 3).sum().backward()
        rec(x.grad)
        x.register_post_accumulate_grad_hook(lambda t: t * 2)
        rec(_err(lambda: (x * 2).sum().backward()))
        rec(x.grad)
        y = torch.tensor([1.0], requires_grad=True)
        y.register_post_accumulate_grad_hook(lambda t: 5)
        rec(_err(lambda: (y * 2).sum().backward()))
        rec(_err(lambda: (x * 2).register_post_accumulate_grad_hook(print)))
        rec(_err(lambda: torch.ones(1).register_post_accumulate_grad_hook(print)))

    _check(scenario)


def test_post_accumulate_grad_hook_can_step_an_optimizer_in_backward():
    def scenario(torch, rec):
        w = torch.tensor([1.0, -2.0], requires_grad=True)

        def step(p):
            with torch.no_grad():
                p.sub_(0.5 * p.grad)
            p.grad = None

        w.register_post_accumulate_grad_hook(step)
        for _ in range(3):
            (w * w).sum().backward()
            rec(w, w.grad)

    _check(scenario)


# --------------------------------------------------------------------------- tensor hooks


def test_tensor_hook_return_value_rules():
    def scenario(torch, rec):
        for bad in (lambda g: 3, lambda g: torch.ones(3), lambda g: g.double()):
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            y = x * 2
            y.register_hook(bad)
            rec(_err(lambda y=y: y.sum().backward()))
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            x.register_hook(bad)
            rec(_err(lambda x=x: (x * 2).sum().backward()))
        rec(_err(lambda: torch.ones(2).register_hook(print)))

    _check(scenario)


def test_tensor_hooks_in_place_attach_to_the_version_they_were_registered_on():
    def scenario(torch, rec):
        a = torch.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.register_hook(lambda g: rec("first", g) or g * 2)
        b.mul_(2)
        b.register_hook(lambda g: rec("second", g) or g * 2)
        b.retain_grad()
        b.sum().backward()
        rec(a.grad, b.grad)

    _check(scenario)


def test_tensor_hooks_in_place_on_a_leaf_output_of_multi_output_op():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        p, q = x.split(2)
        p.register_hook(lambda g: rec("p", g) or g * 3)
        q.register_hook(lambda g: rec("q", g))
        q.retain_grad()
        p.sum().backward()
        rec(x.grad, q.grad)

    _check(scenario)


def test_hook_on_an_output_of_a_multi_output_function_that_gets_no_gradient():
    def scenario(torch, rec):
        class Two(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                rec("bwd", ga, gb)
                return ga * 2 + (0 if gb is None else gb * 3)

        ctx_x = torch.tensor([1.0, 2.0], requires_grad=True)
        a, b = Two.apply(ctx_x)
        b.register_hook(lambda g: rec("b hook", g))
        a.register_hook(lambda g: rec("a hook", g))
        a.sum().backward()
        rec(ctx_x.grad)

    _check(scenario)


def test_hook_handles_remove_and_context_manager():
    def scenario(torch, rec):
        x = torch.tensor([1.0], requires_grad=True)
        y = x * 2
        with y.register_hook(lambda g: g * 100):
            pass
        h1 = y.grad_fn.register_prehook(lambda gout: (gout[0] * 5,))
        h2 = y.grad_fn.register_hook(lambda gin, gout: (gin[0] + 1, None))
        y.sum().backward(retain_graph=True)
        rec(x.grad)
        h1.remove()
        h1.remove()
        y.sum().backward(retain_graph=True)
        rec(x.grad)
        h2.remove()
        y.sum().backward()
        rec(x.grad)

    _check(scenario)


def test_node_hook_arguments_on_a_two_input_node():
    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0])
        y = a * b
        y.grad_fn.register_hook(lambda gin, gout: rec(len(gin), gin, gout))
        y.grad_fn.register_prehook(lambda gout: rec(type(gout).__name__, gout))
        y.sum().backward()
        rec(a.grad)

    _check(scenario)


# --------------------------------------------------------------------------- grad_fn calls


def test_calling_a_grad_fn_returns_its_input_gradients():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        rec(x.sin().grad_fn(torch.ones(2)))
        rec((x * 3).grad_fn(torch.ones(2)))
        r = (x * x).grad_fn(torch.ones(2))
        rec(r, [t.requires_grad for t in r])
        y = x * x
        with torch.no_grad():
            r = y.grad_fn(torch.ones(2))
        rec([t.requires_grad for t in r])
        y = x.exp()
        rec(_err(lambda: y.grad_fn(torch.ones(2), torch.ones(2))))
        rec(_err(lambda: y.grad_fn()))
        rec(x.grad)

    _check(scenario)


# --------------------------------------------------------------------------- grad / backward args


def test_grad_and_backward_argument_lengths():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        one = torch.tensor(1.0)
        rec(_err(lambda: torch.autograd.backward([(x * 2).sum(), (x * 3).sum()], [one])))
        rec(_err(lambda: torch.autograd.grad([(x * 2).sum(), (x * 3).sum()], [x], [one])))
        rec(torch.autograd.grad([(x * 2).sum()], [x], [one, one]))

    _check(scenario)


def test_materialize_grads_with_create_graph():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.ones(2, requires_grad=True)
        gx, gw = torch.autograd.grad((x * x).sum(), [x, w], materialize_grads=True)
        rec(gx, gw, gx.requires_grad, gw.requires_grad)
        gx, gw = torch.autograd.grad(
            (x * x).sum(), [x, w], materialize_grads=True, create_graph=True
        )
        rec(gx, gw, gx.requires_grad, gw.requires_grad, gw.is_leaf, gw.grad_fn is None)
        gx, gw = torch.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
        rec(gx, gw, gx.requires_grad)

    _check(scenario)


def test_gradient_edge_output_with_another_dtype_gradient():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        for dt in (torch.int64, torch.float64, torch.bool):
            ge = torch.autograd.graph.get_gradient_edge(x * 2)
            rec(torch.autograd.grad(ge, [x], torch.ones(2, dtype=dt)))
        for dt in (torch.int64, torch.float64):
            rec(torch.autograd.grad(x * 2, [x], torch.ones(2, dtype=dt)))
        ge = torch.autograd.graph.get_gradient_edge(x * 2)
        rec(_err(lambda: torch.autograd.grad(ge, [x], torch.ones(2, dtype=torch.complex64))))
        rec(_err(lambda: torch.autograd.grad(ge, [x], torch.ones(3))))
        rec(_err(lambda: torch.autograd.grad(ge, [x])))
        ge = torch.autograd.graph.get_gradient_edge(x)
        rec(torch.autograd.grad(ge, [x], torch.ones(2, dtype=torch.int64)))

    _check(scenario)


# --------------------------------------------------------------------------- graph module


def test_multi_grad_hook_all():
    def scenario(torch, rec):
        a = torch.tensor(1.0, requires_grad=True)
        b = torch.tensor(2.0, requires_grad=True)
        c = torch.tensor(3.0, requires_grad=True)
        h = torch.autograd.graph.register_multi_grad_hook(
            (a, b, c), lambda gs: rec("all", type(gs).__name__, gs)
        )
        (a * 2 + b * 3).backward()
        (a * c).backward()
        rec(_err(lambda: torch.autograd.grad(a * 2 + b * 3 + c, [a])))
        h.remove()
        (a * 2 + b * 3).backward()
        rec(a.grad, b.grad, c.grad)
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y, z = x * 2, x * 3
        torch.autograd.graph.register_multi_grad_hook((y, z), lambda gs: rec("yz", gs))
        rec(torch.autograd.grad((y * z).sum(), x, retain_graph=True))
        rec(torch.autograd.grad(y.sum(), x))
        rec(_err(lambda: torch.autograd.graph.register_multi_grad_hook((a,), print, mode="x")))

    _check(scenario)


def test_multi_grad_hook_any():
    def scenario(torch, rec):
        a = torch.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 3
        h = torch.autograd.graph.register_multi_grad_hook(
            (a, b), lambda g: rec("any", g), mode="any"
        )
        c.backward(retain_graph=True)
        c.backward(retain_graph=True)
        rec(torch.autograd.grad(c, a, retain_graph=True))
        h.remove()
        c.backward()
        rec(a.grad)

    _check(scenario)


def test_increment_version():
    def scenario(torch, rec):
        t = torch.ones(2)
        rec(t._version)
        torch.autograd.graph.increment_version(t)
        rec(t._version)
        torch.autograd.graph.increment_version([t, t])
        rec(t._version)
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        z = y.sin()
        torch.autograd.graph.increment_version(y)
        rec(_err(lambda: z.sum().backward()))

    _check(scenario)


def test_saved_tensors_hooks_pack_and_unpack_calls():
    def scenario(torch, rec):
        def pack(t):
            rec("pack", t.shape, t.requires_grad)
            return t.detach()

        def unpack(t):
            rec("unpack", t.shape)
            return t

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x * x
            z = y.exp()
            w = z * 3
            v = x + 1
        rec("forward done")
        z.sum().backward()
        rec(x.grad, w.requires_grad, v.requires_grad)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
            y = x.sin()
        rec(_err(lambda: y.sum().backward()))

    _check(scenario)


def test_saved_tensors_hooks_nesting_and_disable():
    def scenario(torch, rec):
        graph = torch.autograd.graph
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        with graph.saved_tensors_hooks(lambda t: rec("outer") or t, lambda t: t):
            with graph.saved_tensors_hooks(lambda t: rec("inner") or t, lambda t: t):
                y = x.sin()
            z = x.cos()
        (y + z).sum().backward()
        rec(x.grad)
        with graph.disable_saved_tensors_hooks("no hooks here"):
            rec(_err(lambda: graph.save_on_cpu().__enter__()))
            rec(_err(lambda: graph.saved_tensors_hooks(print, print).__enter__()))
        x.grad = None
        with graph.save_on_cpu():
            y = x.sin() * x
        y.sum().backward()
        rec(x.grad)

    _check(scenario)


def test_autograd_grad_captures_before_the_hooks_of_a_node_that_also_runs():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g * 10)
        rec(torch.autograd.grad((y * 3).sum(), [y, x], retain_graph=True))
        rec(torch.autograd.grad((y * 3).sum(), [y]))
        x.register_hook(lambda g: g + 1)
        rec(torch.autograd.grad((x * 3).sum(), [x]))

    _check(scenario)


def test_hooks_counted_and_removed_on_leaf_and_non_leaf():
    def scenario(torch, rec):
        x = torch.ones(2, 2, requires_grad=True)
        y = torch.ones(2, 2) * 4
        z = x * y + x
        counter = [0]

        def bw_hook(inc, grad):
            rec(type(grad).__name__ if grad is None else grad)
            counter[0] += inc

        z.register_hook(lambda g: bw_hook(1, g))
        z.backward(torch.ones(2, 2), retain_graph=True)
        rec(counter[0])
        h2 = z.register_hook(lambda g: bw_hook(2, g))
        z.backward(torch.ones(2, 2), retain_graph=True)
        rec(counter[0])
        h2.remove()
        z.backward(torch.ones(2, 2), retain_graph=True)
        rec(counter[0])

        def bw_hook_modify(grad):
            return grad.mul(2)

        z.register_hook(bw_hook_modify)
        with torch.no_grad():
            y.grad = None if y.grad is None else y.grad.zero_()
        z.backward(torch.ones(2, 2), retain_graph=True)
        rec(x.grad)
        rec(_err(lambda: y.register_hook(lambda g: g)))

    _check(scenario)


def test_grad_fn_prehooks_on_a_multi_output_node():
    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        p, q = a.split(2)
        node = p.grad_fn
        rec(node is q.grad_fn, node.name())
        node.register_prehook(lambda gout: rec("pre", gout) or (gout[0] * 2, gout[1]))
        node.register_hook(lambda gin, gout: rec("post", gin, gout))
        (p.sum() + 3 * q.sum()).backward(retain_graph=True)
        rec(a.grad)
        a.grad = None
        p.sum().backward()
        rec(a.grad)

    _check(scenario)


def test_prehook_and_tensor_hook_on_the_same_output():
    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a.exp()
        b.grad_fn.register_prehook(lambda gout: rec("node pre", gout) or (gout[0] + 1,))
        b.register_hook(lambda g: rec("tensor", g) or g * 3)
        b.retain_grad()
        (b * 2).sum().backward()
        rec(b.grad, a.grad)

    _check(scenario)


def test_saved_tensors_hooks_for_function_and_double_backward():
    def scenario(torch, rec):
        class Sq(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                rec("saved", x)
                return 2 * g * x

        x = torch.tensor([1.0, 3.0], requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(
            lambda t: rec("pack", t) or t * 10, lambda t: rec("unpack", t) or t
        ):
            y = Sq.apply(x)
        y.sum().backward()
        rec(x.grad)
        x.grad = None
        with torch.autograd.graph.saved_tensors_hooks(
            lambda t: rec("pack2") or t, lambda t: rec("unpack2") or t
        ):
            y = x.pow(3)
        (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        rec(g)
        g.sum().backward()
        rec(x.grad)

    _check(scenario)


def test_pack_hook_modifying_its_input_in_place_raises():
    def scenario(torch, rec):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1

        def pack(t):
            t.add_(1)
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            rec(_err(lambda: y.sin()))

    _check(scenario)


def test_leaf_hook_order_tensor_hook_acc_prehook_post_accumulate_acc_posthook():
    def scenario(torch, rec):
        t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        acc = (t * 1).grad_fn.next_functions[0][0]
        t.register_hook(lambda g: g.sub(2.0))
        acc.register_prehook(lambda gout: (gout[0].div(5.0),))

        def post_acc(x):
            x.grad.add_(0.5)

        t.register_post_accumulate_grad_hook(post_acc)

        def post(gin, gout):
            t.grad = gout[0].mul(10)

        acc.register_hook(post)
        t.sum().backward()
        rec(t.grad)

    _check(scenario)


def test_post_accumulate_grad_hooks_on_several_tensors_and_several_hooks():
    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0], requires_grad=True)
        a.register_post_accumulate_grad_hook(lambda t: rec("a1", t.grad))
        a.register_post_accumulate_grad_hook(lambda t: rec("a2", t.grad))
        b.register_post_accumulate_grad_hook(lambda t: rec("b", t.grad))
        (a.sum() * b).sum().backward()
        rec(a.grad, b.grad)

    _check(scenario)


def test_post_accumulate_grad_hook_is_released_with_its_tensor():
    def scenario(torch, rec):
        def make():
            thing = torch.ones(3)

            def hook(t):
                with torch.no_grad():
                    t.sub_(t.grad)
                    t.add_(thing)

            t = torch.zeros(3, requires_grad=True)
            t.register_post_accumulate_grad_hook(hook)
            t.sum().backward()
            return t, weakref.ref(thing)

        t, ref = make()
        gc.collect()
        rec(ref() is not None, t)
        del t
        gc.collect()
        rec(ref() is None)

    _check(scenario)


def test_in_place_on_one_output_of_a_two_output_function():
    def scenario(torch, rec):
        class Two(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                rec("bwd", g1, g2)
                return g1 * 2 + g2 * 3

        a = torch.tensor(1.0, requires_grad=True)
        b, c = Two.apply(a)
        b.register_hook(lambda g: rec("b old", g) or g * 2)
        b.mul_(2)
        b.register_hook(lambda g: rec("b new", g) or g * 2)
        c.register_hook(lambda g: rec("c", g))
        (b + c).backward()
        rec(a.grad)

    _check(scenario)


def test_node_prehook_removed_inside_backward_and_two_prehooks():
    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        handles = {}

        def first(gout):
            rec("first", gout)
            handles["second"].remove()
            return (gout[0] * 3,)

        def second(gout):
            rec("second", gout)
            return (gout[0] * 5,)

        b.grad_fn.register_prehook(first)
        handles["second"] = b.grad_fn.register_prehook(second)
        b.sum().backward(retain_graph=True)
        rec(a.grad)
        b.sum().backward()
        rec(a.grad)

    _check(scenario)


def test_calling_function_nodes_freed_nodes_and_accumulate_grad():
    def scenario(torch, rec):
        Sq = square(torch)

        x = torch.tensor([1.0, 3.0], requires_grad=True)
        y = Sq.apply(x)
        rec(_err(lambda: y.grad_fn(torch.ones(2))), y.grad_fn.apply(torch.ones(2)))
        z = x.exp()
        z.sum().backward()
        rec(_err(lambda: z.grad_fn(torch.ones(2))))
        acc = z.grad_fn.next_functions[0][0]
        r = acc(torch.ones(2))
        rec(type(r).__name__, len(r), x.grad)
        two = x.split(1)
        rec(_err(lambda: two[0].grad_fn(torch.ones(1))))
        rec(two[0].grad_fn(torch.ones(1), None))

    _check(scenario)


def test_unpacked_saved_tensors_are_what_the_backward_uses():
    def scenario(torch, rec):
        x = torch.tensor([0.5, 2.0], requires_grad=True)
        w = torch.tensor([3.0, -1.0], requires_grad=True)
        hooks = torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t * 10)
        with hooks:
            a = x.sin()
            b = x * w
            c = x.exp()
        a.sum().backward()
        rec(x.grad)
        x.grad = None
        b.sum().backward(retain_graph=True)
        rec(x.grad, w.grad)
        b.sum().backward()
        rec(x.grad, w.grad)
        x.grad = None
        c.sum().backward()
        rec(x.grad)

    _check(scenario)


@pytest.mark.parametrize("assemble", ["never", "always"])
def test_leaf_node_hooks_on_both_engine_paths(assemble, monkeypatch):
    monkeypatch.setattr(engine.policy, "assemble", assemble)

    def scenario(torch, rec):
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0], requires_grad=True)
        # (the order between the two independent leaves is not compared: see the docs)
        # (values are copied when logged: PyTorch's AccumulateGrad steals a first gradient
        # nothing else refers to, so a kept reference would change what .grad is)
        logs = {"a": [], "b": []}

        def vals(ts):
            return [t.tolist() for t in ts]

        for t, log in ((a, logs["a"]), (b, logs["b"])):
            acc = (t * 1).grad_fn.next_functions[0][0]
            acc.register_prehook(lambda gout, log=log: log.append(("pre", vals(gout))))
            acc.register_hook(
                lambda gin, gout, log=log: log.append(("post", vals(gin), vals(gout)))
            )
            t.register_hook(lambda g, log=log: log.append(("tensor", g.tolist())) or g * 2)
        for _ in range(3):
            (a * b).sum().backward()
        rec(a.grad, b.grad, logs["a"], logs["b"])
        rec(torch.autograd.grad((a * b).sum(), [a]), logs["a"][-1])

    engine.clear_cache()
    _check(scenario)


def test_multi_grad_hook_argument_errors_and_handle():
    def scenario(torch, rec):
        a = torch.tensor(1.0, requires_grad=True)
        graph = torch.autograd.graph
        rec(_err(lambda: graph.register_multi_grad_hook((a, torch.ones(1)), print)))
        calls = []
        h = graph.register_multi_grad_hook((a, torch.ones(1)), calls.append, mode="any")
        (a * 2).backward()
        rec(calls, type(h).__name__)
        h.remove()
        (a * 2).backward()
        rec(len(calls))

    _check(scenario)


def test_hooks_of_nodes_no_gradient_reaches_are_called_with_none():
    def scenario(torch, rec):
        class NoneForY(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x.clone(), y.clone()

            @staticmethod
            def backward(ctx, gx, gy):
                rec("bwd", gx, gy)
                return gx, None

        # (the order between the independent branches is not compared: see the docs)
        logs = {"x": [], "y": []}
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0], requires_grad=True)
        y = w * 2
        x.register_hook(lambda g: logs["x"].append(("x hook", g)))
        y.register_hook(lambda g: logs["y"].append(("y hook", g)))
        y.grad_fn.register_prehook(lambda gout: logs["y"].append(("y pre", gout)))
        y.grad_fn.register_hook(lambda gin, gout: logs["y"].append(("y post", gin, gout)))
        w.register_hook(lambda g: logs["y"].append(("w hook", g)))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda gout: logs["y"].append(("w acc pre", gout)))
        acc.register_hook(lambda gin, gout: logs["y"].append(("w acc post", gin, gout)))
        rx, ry = NoneForY.apply(x, y)
        rx.register_hook(lambda g: rec("rx hook", g))
        ry.register_hook(lambda g: rec("ry hook", g))
        (rx + ry).sum().backward()
        rec(logs["x"], logs["y"], x.grad, w.grad)

    _check(scenario)
