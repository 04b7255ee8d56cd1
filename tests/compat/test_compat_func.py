"""``torch.func`` on compat against real ``torch.func``: same functions, same inputs.

grad (argnums, has_aux, nesting), grad_and_value, vjp, jvp, jacrev, jacfwd,
hessian, vmap (in_dims, out_dims, nesting with grad, randomness), functional_call
(tied weights, strict, several dicts) and stack_module_state + vmap over an
ensemble of models.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from torch_oracle import assert_close_tree

import compat.torch as ctorch

G = np.random.default_rng(0)
X = G.standard_normal(3)
Y = G.standard_normal(3)
B = G.standard_normal((4, 3))
CT = G.standard_normal((3, 2))


TOL = 1e-10  # the default tolerance of this file's comparisons


def t(lib, a):
    return lib.tensor(a)  # float64 arrays stay float64 in both


def scalar_f(lib):
    return lambda x, y: (lib.sin(x) * y).sum() + (x**3).sum()


def vec_f(lib):
    return lambda x: lib.stack([x.sin() * x[0], x.exp()]).T


def run_both(real_torch, fn):
    return fn(real_torch), fn(ctorch)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), -1])
def test_grad_argnums(real_torch, argnums):
    a, b = run_both(
        real_torch,
        lambda lib: lib.func.grad(scalar_f(lib), argnums=argnums)(t(lib, X), t(lib, Y)),
    )
    assert_close_tree(b, a, TOL)


def test_grad_has_aux_and_value(real_torch):
    def f(lib):
        def fn(x, y):
            loss = (x * y).pow(2).sum()
            return loss, {"double": x * 2}

        g, (v, aux) = lib.func.grad_and_value(fn, has_aux=True)(t(lib, X), t(lib, Y))
        g2, aux2 = lib.func.grad(fn, has_aux=True)(t(lib, X), t(lib, Y))
        return g, v, aux["double"], g2, aux2["double"]

    a, b = run_both(real_torch, f)
    assert_close_tree(b, a, TOL)
    assert not b[0].requires_grad and not b[1].requires_grad


@pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")  # real torch
def test_grad_of_grad_and_pytree_input(real_torch):
    def f(lib):
        inner = lib.func.grad(lambda z: (z.sin() * z).sum())
        gg = lib.func.grad(lambda x: inner(x).pow(2).sum())(t(lib, X))
        tree = {"a": t(lib, X), "b": (t(lib, Y),)}
        gt = lib.func.grad(lambda p: (p["a"] * p["b"][0].exp()).sum())(tree)

        # a closure over the outer input, inside vjp and jvp
        def closure(x):
            out, fn = lib.func.vjp(lambda y: y * x.sin(), lib.ones(3, dtype=lib.float64))
            _, tan = lib.func.jvp(lambda y: y * x, (lib.ones(3, dtype=lib.float64),), (t(lib, Y),))
            return fn(t(lib, Y))[0].sum() + tan.pow(2).sum() + out.exp().sum()

        gc = lib.func.grad(closure)(t(lib, X))
        return gg, gt["a"], gt["b"][0], gc

    a, b = run_both(real_torch, f)
    assert_close_tree(b, a, TOL)


def test_grad_errors(lib):
    with pytest.raises(RuntimeError):
        lib.func.grad(lambda x: x * 2)(lib.ones(2))
    with pytest.raises(RuntimeError):
        lib.func.grad(lambda x: x.sum(), argnums=3)(lib.ones(2))


@pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")  # real torch
def test_vjp_and_jvp(real_torch):
    def f(lib):
        out, fn = lib.func.vjp(vec_f(lib), t(lib, X))
        (g,) = fn(t(lib, CT))
        out2, fn2, aux = lib.func.vjp(
            lambda x, y: (x * y, x.sum()), t(lib, X), t(lib, Y), has_aux=True
        )
        gx, gy = fn2(lib.ones(3, dtype=lib.float64))
        p, tan = lib.func.jvp(vec_f(lib), (t(lib, X),), (t(lib, Y),))
        p2, tan2 = lib.func.jvp(scalar_f(lib), (t(lib, X), t(lib, Y)), (t(lib, Y), t(lib, X)))
        return out, g, out2, aux, gx, gy, p, tan, p2, tan2

    a, b = run_both(real_torch, f)
    assert_close_tree(b, a, TOL)


@pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")  # real torch
def test_jacobians_and_hessian(real_torch):
    def f(lib):
        jr = lib.func.jacrev(vec_f(lib))(t(lib, X))
        jf = lib.func.jacfwd(vec_f(lib))(t(lib, X))
        j2 = lib.func.jacrev(scalar_f(lib), argnums=(0, 1))(t(lib, X), t(lib, Y))
        h = lib.func.hessian(scalar_f(lib))(t(lib, X), t(lib, Y))
        hj = lib.func.jacfwd(lib.func.jacrev(scalar_f(lib), argnums=1), argnums=0)(
            t(lib, X), t(lib, Y)
        )
        jaux, aux = lib.func.jacrev(lambda x: (x.exp(), x.sum()), has_aux=True)(t(lib, X))
        return jr, jf, j2, h, hj, jaux, aux

    a, b = run_both(real_torch, f)
    assert_close_tree(b, a, TOL)


def test_vmap_in_out_dims_and_grad(real_torch):
    def f(lib):
        v0 = lib.func.vmap(vec_f(lib))(t(lib, B))
        v1 = lib.func.vmap(vec_f(lib), in_dims=1, out_dims=1)(t(lib, B.T.copy()))
        vg = lib.func.vmap(lib.func.grad(scalar_f(lib)), in_dims=(0, None))(t(lib, B), t(lib, Y))
        # per-example gradients of a dot product, batched over both arguments
        vd = lib.func.vmap(lambda x, y: lib.dot(x, y), in_dims=(0, 0))(t(lib, B), t(lib, B))
        nested = lib.func.vmap(lib.func.vmap(lambda x: x * 2 + 1))(t(lib, B))
        tup = lib.func.vmap(lambda x: (x.sum(), x * 3), out_dims=(0, 1))(t(lib, B))
        pairs = lib.func.vmap(lambda p: p[0] * p[1], in_dims=((0, None),))((t(lib, B), t(lib, Y)))
        return v0, v1, vg, vd, nested, tup, pairs

    a, b = run_both(real_torch, f)
    assert_close_tree(b, a, TOL)


def test_vmap_errors_and_randomness(lib):
    with pytest.raises(ValueError):
        lib.func.vmap(lambda x, y: x + y)(lib.ones(2, 3), lib.ones(3, 3))
    with pytest.raises(RuntimeError):
        lib.func.vmap(lambda x: lib.rand(3) + x)(lib.ones(2, 3))
    with pytest.raises(ValueError):
        lib.func.vmap(lambda x: x, in_dims=(0, 0))(lib.ones(2))
    assert lib.vmap is lib.func.vmap
    same = lib.func.vmap(lambda x: lib.rand(2) + x, randomness="same")(lib.zeros(3, 2))
    diff = lib.func.vmap(lambda x: lib.rand(2) + x, randomness="different")(lib.zeros(3, 2))
    assert np.allclose(same.numpy(), same.numpy()[0])
    assert not np.allclose(diff.numpy(), diff.numpy()[0])


def _mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))


def _weights(lib, model, seed):
    g = np.random.default_rng(seed)
    return {n: lib.tensor(g.standard_normal(tuple(p.shape))) for n, p in model.named_parameters()}


def test_functional_call(real_torch):
    def f(lib):
        m = _mlp(lib).double()
        w = _weights(lib, m, 1)
        x = t(lib, B)
        out = lib.func.functional_call(m, w, (x,))
        same_after = [tuple(p.shape) for p in m.parameters()]
        # several dicts, grad through the supplied weights
        first = {k: v for k, v in w.items() if k.startswith("0.")}
        rest = {k: v for k, v in w.items() if not k.startswith("0.")}
        g = lib.func.grad(lambda p: lib.func.functional_call(m, (p, rest), x).pow(2).sum())(first)
        return out, g, same_after

    a, b = run_both(real_torch, f)
    assert_close_tree(b[:2], a[:2], TOL)
    assert a[2] == b[2]


def test_functional_call_restores_and_checks(lib):
    m = lib.nn.Linear(2, 2)
    w0 = m.weight
    with pytest.raises(RuntimeError):
        lib.func.functional_call(m, {"weight": lib.ones(2, 2)}, (lib.ones(2),), strict=True)
    with pytest.raises(ValueError):
        lib.func.functional_call(
            m, ({"weight": lib.ones(2, 2)}, {"weight": lib.ones(2, 2)}), (lib.ones(2),)
        )
    out = lib.func.functional_call(m, {"weight": lib.ones(2, 2), "bias": lib.zeros(2)}, lib.ones(2))
    assert np.allclose(out.detach().numpy(), 2.0)
    assert m.weight is w0


def test_functional_call_tied_weights(real_torch):
    def f(lib):
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2, bias=False)
                self.b = lib.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))

        m = Tied()
        w = lib.tensor(np.arange(4.0).reshape(2, 2))
        x = lib.tensor(np.ones((1, 2)))
        tied = lib.func.functional_call(m.double(), {"a.weight": w}, (x,))
        untied = lib.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
        return tied, untied - untied + 0  # the untied result uses m's own b.weight: shape only

    a, b = run_both(real_torch, f)
    assert_close_tree(b[0], a[0], TOL)
    assert tuple(b[1].shape) == tuple(a[1].shape)


def test_stack_module_state_vmap_ensemble(real_torch):
    """The torch.func ensembling recipe: stacked states, vmap over functional_call."""

    def f(lib):
        models = [_mlp(lib).double() for _ in range(3)]
        for i, m in enumerate(models):
            m.load_state_dict(_weights(lib, m, 10 + i))
        params, buffers = lib.func.stack_module_state(models)
        base = copy.deepcopy(models[0])

        def fmodel(p, b, x):
            return lib.func.functional_call(base, (p, b), (x,))

        x = t(lib, B)
        same_x = lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
        per_x = lib.func.vmap(fmodel)(params, buffers, lib.stack([x, x * 2, x - 1]))
        # per-model gradients of a loss, vmapped
        loss_grads = lib.func.vmap(
            lib.func.grad(lambda p, b, x: fmodel(p, b, x).pow(2).mean()), in_dims=(0, 0, None)
        )(params, buffers, x)
        meta = [(k, tuple(v.shape), v.requires_grad) for k, v in params.items()]
        return same_x, per_x, loss_grads, meta

    a, b = run_both(real_torch, f)
    assert_close_tree(b[:3], a[:3], TOL)
    assert a[3] == b[3]
