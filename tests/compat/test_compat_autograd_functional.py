"""``torch.autograd.functional`` (vjp, jvp, jacobian, hessian, vhp, hvp) on compat against
real PyTorch: values, return structures (tuple/list nesting), ``requires_grad`` of the
results, ``create_graph`` double derivatives, ``vectorize=True``, forward-mode jacobian,
``strict`` errors and argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

G = np.random.default_rng(3)
X = G.standard_normal(3)
Y = G.standard_normal(3)


def ones(lib, n):
    return lib.ones(n, dtype=lib.float64)


def rec(v):
    """Comparable form: containers by type, tensors by dtype/shape/values/requires_grad."""
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, [rec(e) for e in v])
    return ("T", str(v.dtype).split(".")[-1], v.detach().numpy(), v.requires_grad)


def same(a, b):
    if a[0] == "T":
        assert b[0] == "T" and a[1] == b[1] and a[3] == b[3], (a, b)
        assert a[2].shape == b[2].shape, (a, b)
        np.testing.assert_allclose(a[2], b[2], rtol=1e-10, atol=1e-12)
        return
    assert a[0] == b[0] and len(a[1]) == len(b[1]), (a, b)
    for p, q in zip(a[1], b[1]):
        same(p, q)


def both(real, case):
    """Run ``case(lib)`` on compat and real torch; the records must agree."""
    same(rec(case(ctorch)), rec(case(real)))


def f1(lib):
    return lambda x: x.sin() * x.sum()


def f2(lib):
    return lambda x, y: (x * y.exp(), (x**2).sum() * y)


def s1(lib):
    return lambda x: (x**3).sum() + x.prod()


def s2(lib):
    return lambda x, y: (x**3 * y).sum() + (x * y.sin()).sum()


def ins(lib, two, grad=False):
    x = lib.tensor(X, requires_grad=grad)
    return (x, lib.tensor(Y)) if two else x


@pytest.mark.parametrize("two", [False, True])
@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_jvp(real_torch, name, two):
    def case(lib):
        F = getattr(lib.autograd.functional, name)
        f = f2(lib) if two else f1(lib)
        inputs = ins(lib, two)
        if name == "vjp":
            v = (ones(lib, 3), lib.tensor(Y)) if two else lib.tensor(Y)
        else:
            v = (lib.tensor(Y), ones(lib, 3)) if two else lib.tensor(Y)
        return F(f, inputs, v)

    both(real_torch, case)


@pytest.mark.parametrize("two", [False, True])
@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_vhp_hvp(real_torch, name, two):
    def case(lib):
        F = getattr(lib.autograd.functional, name)
        v = (lib.tensor(Y), ones(lib, 3)) if two else lib.tensor(Y)
        return F(s2(lib) if two else s1(lib), ins(lib, two), v)

    both(real_torch, case)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("two", [False, True])
def test_jacobian_structures(real_torch, two, vectorize):
    def case(lib):
        J = lib.autograd.functional.jacobian
        f = f2(lib) if two else f1(lib)
        # one input / two outputs and two inputs / one output as well
        g = (lambda x: (x.exp(), x.sum())) if not two else (lambda x, y: x * y)
        return (
            J(f, ins(lib, two), vectorize=vectorize),
            J(g, ins(lib, two), vectorize=vectorize),
        )

    both(real_torch, case)


# real torch's forward-mode path goes through vmap internals that warn about torch.jit.script
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("two", [False, True])
def test_jacobian_forward_mode(real_torch, two):
    def case(lib):
        J = lib.autograd.functional.jacobian
        f = f2(lib) if two else f1(lib)
        return J(f, ins(lib, two, grad=True), vectorize=True, strategy="forward-mode")

    both(real_torch, case)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("two", [False, True])
def test_hessian(real_torch, two, vectorize):
    def case(lib):
        return lib.autograd.functional.hessian(
            s2(lib) if two else s1(lib), ins(lib, two), vectorize=vectorize
        )

    both(real_torch, case)


def test_unused_input_gives_zeros_and_matrix_shapes(real_torch):
    def case(lib):
        Fn = lib.autograd.functional
        x, y = lib.tensor(X.reshape(3, 1)), lib.tensor(Y[:2])
        return (
            Fn.jacobian(lambda a, b: a * 2, (x, y)),
            Fn.vjp(lambda a, b: a.sum(), (x, y)),
            Fn.hessian(lambda a, b: (a**2).sum(), (x, y), vectorize=True),
        )

    both(real_torch, case)


@pytest.mark.parametrize(
    "name", ["vjp", "jvp", "vhp", "hvp", "jacobian", "hessian", "jacobian-vec", "hessian-vec"]
)
def test_create_graph_second_derivative(real_torch, name):
    """Results stay differentiable: their gradient w.r.t. the original input agrees."""

    def case(lib):
        Fn = lib.autograd.functional
        vec = name.endswith("-vec")
        name_ = name.removesuffix("-vec")
        x = lib.tensor(X, requires_grad=True)
        v = lib.tensor(Y)
        if name in ("vjp", "jvp"):
            out = getattr(Fn, name)(f1(lib), x, v, create_graph=True)[1]
        elif name in ("vhp", "hvp"):
            out = getattr(Fn, name)(s1(lib), x, v, create_graph=True)[1]
        else:
            f = s1(lib) if name_ == "hessian" else f1(lib)
            out = getattr(Fn, name_)(f, x, create_graph=True, vectorize=vec)
        (g,) = lib.autograd.grad((out * out).sum(), x)
        return out, g

    both(real_torch, case)


def test_outputs_detached_without_create_graph(real_torch):
    def case(lib):
        x = lib.tensor(X, requires_grad=True)
        out, res = lib.autograd.functional.vjp(f1(lib), x, lib.tensor(Y))
        return out, res, [lib.tensor(float(out.grad_fn is None))]

    both(real_torch, case)


def errors(real, case):
    """``case(lib)`` raises the same exception type and message on both."""
    got = []
    for lib in (ctorch, real):
        with pytest.raises(Exception) as info:
            case(lib)
        got.append(info.value)
    assert type(got[0]) is type(got[1]), got
    assert str(got[0]) == str(got[1]).replace("torch.", "compat.torch.") or str(got[0]) == str(
        got[1]
    ), got


def _independent(lib):
    return lambda x, y: x * 2


def _constant(lib):
    return lambda x: ones(lib, 3)


ERROR_CASES = {
    "vjp strict unused": lambda lib: lib.autograd.functional.vjp(
        _independent(lib), ins(lib, True), ones(lib, 3), strict=True
    ),
    "vjp strict constant": lambda lib: lib.autograd.functional.vjp(
        _constant(lib), ins(lib, False), ones(lib, 3), strict=True
    ),
    "jvp strict unused": lambda lib: lib.autograd.functional.jvp(
        _independent(lib), ins(lib, True), (ones(lib, 3), ones(lib, 3)), strict=True
    ),
    "jacobian strict unused": lambda lib: lib.autograd.functional.jacobian(
        _independent(lib), ins(lib, True), strict=True
    ),
    "jacobian strict vectorize": lambda lib: lib.autograd.functional.jacobian(
        f1(lib), ins(lib, False), strict=True, vectorize=True
    ),
    "jacobian strict create_graph linear": lambda lib: lib.autograd.functional.jacobian(
        lambda x: x * 2, ins(lib, False), strict=True, create_graph=True
    ),
    "hessian strict linear": lambda lib: lib.autograd.functional.hessian(
        lambda x: x.sum(), ins(lib, False), strict=True
    ),
    "hessian not scalar": lambda lib: lib.autograd.functional.hessian(f1(lib), ins(lib, False)),
    "hessian tuple out": lambda lib: lib.autograd.functional.hessian(
        lambda x: (x.sum(),), ins(lib, False)
    ),
    "vhp not scalar": lambda lib: lib.autograd.functional.vhp(
        f1(lib), ins(lib, False), ones(lib, 3)
    ),
    "hvp strict linear": lambda lib: lib.autograd.functional.hvp(
        lambda x: x.sum(), ins(lib, False), ones(lib, 3), strict=True
    ),
    "vhp strict quadratic create_graph": lambda lib: lib.autograd.functional.vhp(
        lambda x: (x * x).sum(), ins(lib, False), ones(lib, 3), strict=True, create_graph=True
    ),
    "hvp strict quadratic create_graph": lambda lib: lib.autograd.functional.hvp(
        lambda x: (x * x).sum(), ins(lib, False), ones(lib, 3), strict=True, create_graph=True
    ),
    "hessian strict quadratic create_graph": lambda lib: lib.autograd.functional.hessian(
        lambda x: (x * x).sum(), ins(lib, False), strict=True, create_graph=True
    ),
    "v wrong size": lambda lib: lib.autograd.functional.vjp(f1(lib), ins(lib, False), ones(lib, 2)),
    "v wrong size tuple": lambda lib: lib.autograd.functional.jvp(
        f2(lib), ins(lib, True), (ones(lib, 3), ones(lib, 4))
    ),
    "v wrong length": lambda lib: lib.autograd.functional.vjp(
        f2(lib), ins(lib, True), (ones(lib, 3),)
    ),
    "v tuple for single": lambda lib: lib.autograd.functional.vjp(
        f1(lib), ins(lib, False), (ones(lib, 3), ones(lib, 3))
    ),
    "v None vector out": lambda lib: lib.autograd.functional.vjp(f1(lib), ins(lib, False)),
    "v None vector in": lambda lib: lib.autograd.functional.hvp(s1(lib), ins(lib, False)),
    "input not tensor": lambda lib: lib.autograd.functional.vjp(f1(lib), [1.0, 2.0]),
    "input tuple entry": lambda lib: lib.autograd.functional.jacobian(f2(lib), (ones(lib, 3), 2.0)),
    "output not tensor": lambda lib: lib.autograd.functional.jacobian(
        lambda x: x.sum().item(), ins(lib, False)
    ),
    "bad strategy": lambda lib: lib.autograd.functional.jacobian(
        f1(lib), ins(lib, False), strategy="sideways"
    ),
    "forward needs vectorize": lambda lib: lib.autograd.functional.jacobian(
        f1(lib), ins(lib, False), strategy="forward-mode"
    ),
    "forward strict": lambda lib: lib.autograd.functional.jacobian(
        f1(lib), ins(lib, False), strategy="forward-mode", strict=True, vectorize=True
    ),
    "forward create_graph": lambda lib: lib.autograd.functional.jacobian(
        f1(lib), ins(lib, False), strategy="forward-mode", create_graph=True, vectorize=True
    ),
    "hessian bad strategy": lambda lib: lib.autograd.functional.hessian(
        s1(lib), ins(lib, False), outer_jacobian_strategy="x"
    ),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors(real_torch, name):
    errors(real_torch, ERROR_CASES[name])


def test_forward_over_reverse_hessian_is_refused():
    """compat cannot run autograd.grad inside forward mode: a clear error, not zeros."""
    with pytest.raises(NotImplementedError, match="forward-over-reverse"):
        ctorch.autograd.functional.hessian(
            s1(ctorch), ins(ctorch, False), vectorize=True, outer_jacobian_strategy="forward-mode"
        )
