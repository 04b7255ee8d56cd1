"""``torch.utils.checkpoint`` on compat against real PyTorch: gradients (inputs and
parameters, with dropout: the recomputation draws the same mask) equal to the
un-checkpointed function's and to PyTorch's, recomputation in backward (call counts),
``grad_fn`` of the result, both ``use_reentrant`` variants, ``checkpoint_sequential`` on
an ``nn.Sequential``, the missing-``use_reentrant`` warning and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

G = np.random.default_rng(7)
X = G.standard_normal((4, 3))
W1, B1 = G.standard_normal((5, 3)), G.standard_normal(5)
W2, B2 = G.standard_normal((2, 5)), G.standard_normal(2)
REENTRANT = [True, False]


def linear(lib, w, b):
    m = lib.nn.Linear(w.shape[1], w.shape[0]).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(w))
        m.bias.copy_(lib.tensor(b))
    return m


def model(lib):
    return lib.nn.Sequential(
        linear(lib, W1, B1),
        lib.nn.Tanh(),
        lib.nn.Dropout(0.5),
        linear(lib, W2, B2),
        lib.nn.Sigmoid(),
    )


def grads(lib, run, x_grad=True):
    """Seeded run of ``run(model, x)``: (output, x.grad, parameter grads) as arrays."""
    m = model(lib)
    lib.manual_seed(0)
    x = lib.tensor(X, requires_grad=x_grad)
    out = run(lib, m, x)
    (out * out).sum().backward()
    pg = [None if p.grad is None else p.grad.numpy() for p in m.parameters()]
    return out.detach().numpy(), None if x.grad is None else x.grad.numpy(), pg


def close(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for p, q in zip(a, b):
            close(p, q)
    elif a is None or b is None:
        assert a is None and b is None, (a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def plain(lib, m, x):
    return m(x)


def ckpt(reentrant):
    def run(lib, m, x):
        return lib.utils.checkpoint.checkpoint(m, x, use_reentrant=reentrant)

    return run


def ckpt_seq(reentrant, segments):
    def run(lib, m, x):
        return lib.utils.checkpoint.checkpoint_sequential(m, segments, x, use_reentrant=reentrant)

    return run


@pytest.mark.parametrize("reentrant", REENTRANT)
def test_checkpoint_gradients_with_dropout(real_torch, reentrant):
    ours = grads(ctorch, ckpt(reentrant))
    close(ours, grads(ctorch, plain))
    close(ours, grads(real_torch, ckpt(reentrant)))


@pytest.mark.parametrize("segments", [1, 2, 3])
@pytest.mark.parametrize("reentrant", REENTRANT)
def test_checkpoint_sequential(real_torch, reentrant, segments):
    ours = grads(ctorch, ckpt_seq(reentrant, segments))
    close(ours, grads(ctorch, plain))
    close(ours, grads(real_torch, ckpt_seq(reentrant, segments)))


def _counting(lib, log):
    def f(a, b):
        log.append(lib.is_grad_enabled())
        return (a * b).sin() * a

    return f


@pytest.mark.parametrize("reentrant", REENTRANT)
def test_recomputes_in_backward(real_torch, reentrant):
    def case(lib):
        log: list = []
        a = lib.tensor(X[0], requires_grad=True)
        b = lib.tensor(X[1], requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(_counting(lib, log), a, b, use_reentrant=reentrant)
        before = list(log)
        out.sum().backward()
        return before, log, out.grad_fn.name(), a.grad.numpy(), b.grad.numpy()

    ours, theirs = case(ctorch), case(real_torch)
    assert ours[:3] == theirs[:3]
    close(list(ours[3:]), list(theirs[3:]))


def test_non_reentrant_grad_kwargs_and_no_grad_inputs(real_torch):
    def case(lib):
        lin = linear(lib, W1, B1)
        x = lib.tensor(X)  # does not require grad: the parameters still get gradients
        out = lib.utils.checkpoint.checkpoint(
            lambda a, scale: lin(a) * scale, x, use_reentrant=False, scale=2.0
        )
        return lib.autograd.grad(out.pow(2).sum(), list(lin.parameters()))

    close([g.numpy() for g in case(ctorch)], [g.numpy() for g in case(real_torch)])


def test_reentrant_without_grad_inputs_warns(real_torch):
    for lib in (ctorch, real_torch):
        lin = linear(lib, W1, B1)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            out = lib.utils.checkpoint.checkpoint(lin, lib.tensor(X), use_reentrant=True)
        assert not out.requires_grad


@pytest.mark.parametrize("which", ["checkpoint", "checkpoint_sequential"])
def test_missing_use_reentrant_warns(real_torch, which):
    for lib in (ctorch, real_torch):
        m = model(lib).eval()
        x = lib.tensor(X, requires_grad=True)
        with pytest.warns(
            UserWarning, match=f"torch.utils.checkpoint.*{which[10:]}.*use_reentrant"
        ):
            if which == "checkpoint":
                out = lib.utils.checkpoint.checkpoint(m, x)
            else:
                out = lib.utils.checkpoint.checkpoint_sequential(m, 2, x)
        out.sum().backward()  # the reentrant variant is the default
        assert x.grad is not None


def _fresh_x(lib):
    return lib.tensor(X, requires_grad=True)


def _grad_through_reentrant(lib):
    x = _fresh_x(lib)
    out = lib.utils.checkpoint.checkpoint(lambda a: a.sin(), x, use_reentrant=True)
    lib.autograd.grad(out.sum(), x)


def _backward_inputs_reentrant(lib):
    x = _fresh_x(lib)
    out = lib.utils.checkpoint.checkpoint(lambda a: a.sin(), x, use_reentrant=True)
    out.sum().backward(inputs=[x])


def _saves(lib, first, later, **kw):
    """Checkpoint a function that runs ``first`` on its first call, ``later`` after."""
    calls = []

    def f(a):
        calls.append(1)
        return (first if len(calls) == 1 else later)(a)

    x = _fresh_x(lib)
    lib.utils.checkpoint.checkpoint(f, x, use_reentrant=False, **kw).sum().backward()
    return x.grad.numpy()


def _fewer_saves(lib):
    _saves(lib, lambda a: a.sin().sin(), lambda a: a.sin())


def _more_saves_no_early_stop(lib):
    with lib.utils.checkpoint.set_checkpoint_early_stop(False):
        _saves(lib, lambda a: a.sin(), lambda a: a.sin().sin())


def _other_shape_saved(lib):
    _saves(lib, lambda a: a.sin(), lambda a: a[:2].sin())


def test_more_saves_stop_early(real_torch):
    """Early stop: the recomputation ends once every saved tensor is back."""
    ours = _saves(ctorch, lambda a: a.sin(), lambda a: a.sin().sin())
    close(ours, _saves(real_torch, lambda a: a.sin(), lambda a: a.sin().sin()))
    close(ours, np.cos(X))


ERRORS = {
    "grad reentrant": _grad_through_reentrant,
    "backward inputs reentrant": _backward_inputs_reentrant,
    "fewer saves": _fewer_saves,
    "more saves without early stop": _more_saves_no_early_stop,
    "other shape saved": _other_shape_saved,
    "kwargs reentrant": lambda lib: lib.utils.checkpoint.checkpoint(
        lambda a, k: a, _fresh_x(lib), use_reentrant=True, k=1
    ),
    "context_fn reentrant": lambda lib: lib.utils.checkpoint.checkpoint(
        lambda a: a, _fresh_x(lib), use_reentrant=True, context_fn=lambda: (None, None)
    ),
    "bad determinism_check": lambda lib: lib.utils.checkpoint.checkpoint(
        lambda a: a, _fresh_x(lib), use_reentrant=False, determinism_check="strict"
    ),
    "sequential kwargs": lambda lib: lib.utils.checkpoint.checkpoint_sequential(
        [lambda a: a], 1, _fresh_x(lib), use_reentrant=False, k=1
    ),
    "detach_variable list": lambda lib: lib.utils.checkpoint.detach_variable([_fresh_x(lib)]),
    "no output requires grad": lambda lib: (
        lib.utils.checkpoint.checkpoint(lambda a: a.detach(), _fresh_x(lib), use_reentrant=True)
        .sum()
        .backward()
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(real_torch, name):
    got = []
    for lib in (ctorch, real_torch):
        with pytest.raises(Exception) as info:
            ERRORS[name](lib)
        got.append(info.value)
    assert type(got[0]).__name__ == type(got[1]).__name__, got
    first = lambda e: str(e).splitlines()[0]
    assert first(got[0]) == first(got[1]), got


def test_detach_variable_keeps_requires_grad(real_torch):
    for lib in (ctorch, real_torch):
        x, y = lib.tensor(X, requires_grad=True), lib.tensor(X)
        dx, dy, k = lib.utils.checkpoint.detach_variable((x, y, 3))
        assert dx.requires_grad and not dy.requires_grad and dx.grad_fn is None and k == 3


def test_backward_uses_recomputed_tensors(real_torch):
    """A function that computes something else on its second call: the backward sees the
    recomputed saved tensors (here exp's saved result), as in PyTorch."""

    def case(lib):
        calls = []

        def f(a):
            calls.append(1)
            return (a * (len(calls) + 1.0)).exp()

        x = lib.tensor(X[0], requires_grad=True)
        lib.utils.checkpoint.checkpoint(f, x, use_reentrant=False).sum().backward()
        return x.grad.numpy()

    ours = case(ctorch)
    close(ours, case(real_torch))
    close(ours, 2.0 * np.exp(3.0 * X[0]))


@pytest.mark.parametrize("reentrant", REENTRANT)
def test_tuple_outputs_non_tensor_args_and_two_backwards(real_torch, reentrant):
    def case(lib):
        lin = linear(lib, W1, B1)

        def f(a, k):
            return lin(a).tanh() * k, a.sum()

        x = lib.tensor(X, requires_grad=True)
        y, s = lib.utils.checkpoint.checkpoint(f, x, 3, use_reentrant=reentrant)
        (y.sum() + s).backward(retain_graph=True)
        first = x.grad.numpy().copy()
        y.sum().backward()
        return first, x.grad.numpy(), lin.weight.grad.numpy()

    close(list(case(ctorch)), list(case(real_torch)))
