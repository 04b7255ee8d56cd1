"""``torch.func.linearize``/``functionalize``/``rearrange``/``replace_all_batch_norm_modules_``
and ``torch.autograd``'s engine switches (``set_multithreading_enabled``,
``enforce_grad_layout_policy``) against PyTorch 2.13."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch

X = np.arange(2 * 3 * 4 * 6.0).reshape(2, 3, 4, 6)

PATTERNS = [
    ("a b c d -> d (a b) c", {}),
    ("a b c (d1 d2) -> a d2 b c d1", {"d1": 2}),
    ("a b c (d1 d2) -> (a d1) b c d2", {"d2": 3}),
    ("... d -> d ...", {}),
    ("a ... -> (a ...)", {}),
    ("a b ... -> b (... a)", {}),
    ("a b c d -> a 1 b () c d", {}),
    ("a b c d -> (d c) (b a)", {}),
    ("a b c d -> a b c d", {}),
]


@pytest.mark.parametrize(("pattern", "lengths"), PATTERNS)
def test_rearrange(pattern, lengths, real_torch):
    a = ctorch.func.rearrange(ctorch.tensor(X), pattern, **lengths).numpy()
    b = real_torch.func.rearrange(real_torch.tensor(X), pattern, **lengths).numpy()
    assert a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def test_rearrange_lists_units_and_grad(real_torch):
    results = []
    for lib in (real_torch, ctorch):
        parts = [lib.tensor(X[0], requires_grad=True), lib.tensor(X[1], requires_grad=True)]
        y = lib.func.rearrange(parts, "n b c d -> b (n c) d")
        (g,) = lib.autograd.grad(
            (y * lib.arange(float(y.numel())).reshape(y.shape)).sum(), parts[1]
        )
        u = lib.func.rearrange(lib.ones(1, 3, 1), "1 b () -> b")
        results.append((y.detach().numpy(), g.numpy(), tuple(u.shape)))
    (yt, gt, ut), (yc, gc, uc) = results
    np.testing.assert_array_equal(yc, yt)
    np.testing.assert_array_equal(gc, gt)
    assert uc == ut


@pytest.mark.parametrize(
    ("pattern", "lengths", "match"),
    [
        ("a b -> a b", {}, "Number of dimensions in pattern"),
        ("a b c d -> a b d", {}, "Identifiers only on one side"),
        ("a a c d -> a c d", {}, "duplicate dimension 'a'"),
        ("a b c (d1 d2) -> a b c d1 d2", {"d1": 5}, "does not evenly fit"),
    ],
)
def test_rearrange_errors(pattern, lengths, match, real_torch):
    for lib in (real_torch, ctorch):
        with pytest.raises(Exception, match=match):
            lib.func.rearrange(lib.tensor(X), pattern, **lengths)


def _f(a, b):
    return {"p": a.sin() * b, "q": (a * b).sum()}


# PyTorch's linearize traces with make_fx, which warns (torch.jit.script, get_attr nodes)
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
def test_linearize(real_torch):
    a0, b0 = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -2.0])
    results = []
    for lib in (real_torch, ctorch):
        a = lib.tensor(a0, requires_grad=True)
        out, jfn = lib.func.linearize(_f, a, lib.tensor(b0))
        j1 = jfn(lib.ones(3, dtype=lib.float64), lib.zeros(3, dtype=lib.float64))
        j2 = jfn(lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64), lib.ones(3, dtype=lib.float64))
        (g,) = lib.autograd.grad(out["p"].sum(), a)
        results.append([out["p"].detach().numpy(), out["q"].item(), g.numpy()])
        results[-1] += [j[k].detach().numpy() for j in (j1, j2) for k in ("p", "q")]
    for c, t in zip(results[1], results[0]):
        np.testing.assert_allclose(c, t, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
def test_linearize_errors(real_torch):
    for lib in (real_torch, ctorch):
        _, jfn = lib.func.linearize(lambda a: a.exp(), lib.ones(2))
        with pytest.raises(RuntimeError, match=r"with shape .* doesn't match the shape"):
            jfn(lib.ones(3))
        with pytest.raises(RuntimeError, match=r"with dtype .* doesn't match the dtype"):
            jfn(lib.ones(2, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="to have the same argspec as the primals"):
            jfn(lib.ones(2), lib.ones(2))


def _mutating(a, b):
    a.add_(b)
    v = a.view(2, 2)
    v.mul_(2)
    return a.sum() * b[0], a.view(4)


@pytest.mark.parametrize("remove", ["mutations", "mutations_and_views"])
def test_functionalize(remove, real_torch):
    results = []
    for lib in (real_torch, ctorch):
        a = lib.zeros(4)
        s, v = lib.func.functionalize(_mutating, remove=remove)(a, lib.tensor([1.0, 2.0, 3.0, 4.0]))
        if remove == "mutations_and_views":
            v.add_(100)  # an output aliases no input
        results.append((s.item(), a.numpy().copy(), v.numpy()))
    (st, at, vt), (sc, ac, vc) = results
    assert sc == st
    np.testing.assert_array_equal(ac, at)
    np.testing.assert_array_equal(vc, vt)
    for lib in (real_torch, ctorch):
        with pytest.raises(RuntimeError, match="received invalid argument for remove=views"):
            lib.func.functionalize(_mutating, remove="views")


def test_replace_all_batch_norm_modules(real_torch):
    results = []
    for lib in (real_torch, ctorch):
        lib.manual_seed(0)
        m = lib.nn.Sequential(
            lib.nn.Linear(3, 4),
            lib.nn.BatchNorm1d(4),
            lib.nn.Sequential(lib.nn.BatchNorm1d(4, affine=False)),
        )
        assert lib.func.replace_all_batch_norm_modules_(m) is m
        bns = [m[1], m[2][0]]
        results.append(
            [
                (b.running_mean, b.running_var, b.num_batches_tracked, b.track_running_stats)
                for b in bns
            ]
        )
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=lib.float32)
        y = m[2](m[1].eval()(x))  # eval without running statistics: batch statistics
        results[-1].append(y.detach().numpy())
    assert results[0][:2] == results[1][:2] == [(None, None, None, False)] * 2
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-5, atol=1e-6)
    with pytest.raises(AttributeError):
        ctorch.func.replace_all_batch_norm_modules_(3)


@pytest.mark.parametrize(
    ("switch", "query"),
    [
        ("set_multithreading_enabled", "is_multithreading_enabled"),
        ("enforce_grad_layout_policy", None),
    ],
)
def test_engine_switches(switch, query, real_torch):
    after = []
    for lib in (real_torch, ctorch):
        cm = getattr(lib.autograd, switch)
        q = getattr(lib.autograd, query) if query else None
        with cm(False):
            assert q is None or q() is False
            x = lib.ones(2, requires_grad=True)
            (x * 3).sum().backward()
            assert x.grad.tolist() == [3.0, 3.0]
        assert q is None or q() is True
        cm(False)
        assert q is None or q() is False
        cm(True)

        @cm(False)
        def inside():
            return q() if q else None

        # PyTorch's multithreading switch stays set by the decorator (it has no
        # ``__call__`` restoring the previous mode; the layout policy's has)
        after.append((inside(), q() if q else None))
        cm(True)
        with pytest.raises(TypeError, match="must be bool, not int"):
            cm(1)
    assert after[0] == after[1]


def test_autograd_variable_function_raises(real_torch):
    for lib in (real_torch, ctorch):
        with pytest.raises(RuntimeError, match=r"torch.autograd.variable\(...\) is deprecated"):
            lib.autograd.variable(lib.ones(2))
        assert lib.autograd.Variable(lib.ones(2), requires_grad=True).requires_grad
