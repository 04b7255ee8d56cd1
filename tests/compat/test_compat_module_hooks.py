"""``nn.Module`` hooks and module API, each scenario run on compat and real PyTorch.

Forward (pre-)hooks (order, ``prepend``, ``with_kwargs``, ``always_call``,
replacement), full backward (pre-)hooks (``grad_input``/``grad_output`` values,
replacement, call order), global module hooks, and the module API
(``named_modules``, ``apply``, dtype casts, ``zero_grad``, ``get_*``,
non-persistent buffers, ``load_state_dict(strict=False)``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compat.torch as ctorch


def both(real_torch, scenario):
    """Run ``scenario(lib)`` on real torch and compat; return both results."""
    return scenario(real_torch), scenario(ctorch)


def rounded(t):
    return None if t is None else np.round(t.detach().numpy().astype(np.float64), 5).tolist()


def load_same(lib, module, seed=0):
    """Deterministic weights (the two libraries' generators differ)."""
    g = np.random.default_rng(seed)
    with lib.no_grad():
        for _, p in module.named_parameters():
            p.copy_(lib.tensor(g.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return module


# ---------------------------------------------------------------- forward hooks
def test_forward_hook_order_prepend_kwargs(real_torch):
    def scenario(lib):
        log = []

        class M(lib.nn.Module):
            def forward(self, x, scale=1.0):
                log.append(("forward", float(x.sum()), scale))
                return x * scale

        m = M()
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre1", len(args))))
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre0", len(args))), prepend=True)

        def pre_kw(mod, args, kwargs):
            log.append(("pre_kw", sorted(kwargs)))
            return (args[0] + 1,), {"scale": kwargs.get("scale", 1.0) * 2}

        m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("fwd1", float(out.sum()))))
        m.register_forward_hook(
            lambda mod, args, kwargs, out: log.append(("fwd_kw", dict(kwargs))) or out + 10,
            with_kwargs=True,
        )
        h = m.register_forward_hook(lambda mod, args, out: log.append(("first",)), prepend=True)
        out = m(lib.ones(2), scale=3.0)
        log.append(("out", rounded(out)))
        h.remove()
        m(lib.ones(2))
        return log

    a, b = both(real_torch, scenario)
    assert a == b


def test_forward_pre_hook_replaces_args_and_output(real_torch):
    def scenario(lib):
        m = load_same(lib, lib.nn.Linear(3, 2))
        m.register_forward_pre_hook(lambda mod, args: args[0] * 2)  # non-tuple: wrapped
        m.register_forward_hook(lambda mod, args, out: out.sum(-1))
        return rounded(m(lib.ones(4, 3)))

    a, b = both(real_torch, scenario)
    assert a == b


def test_always_call_hook_runs_on_error(real_torch):
    def scenario(lib):
        log = []

        class Bad(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Bad()
        m.register_forward_hook(lambda *a: log.append("normal"))
        m.register_forward_hook(
            lambda mod, args, out: log.append(("always", out)), always_call=True
        )
        with pytest.raises(ValueError):
            m(lib.ones(1))
        return log

    a, b = both(real_torch, scenario)
    assert a == b == [("always", None)]


def test_global_forward_hooks(real_torch):
    def scenario(lib):
        log = []
        mm = lib.nn.modules.module
        h1 = mm.register_module_forward_pre_hook(
            lambda mod, args: log.append(("gpre", type(mod).__name__))
        )
        h2 = mm.register_module_forward_hook(
            lambda mod, args, out: log.append(("gfwd", type(mod).__name__))
        )
        try:
            seq = lib.nn.Sequential(lib.nn.Identity(), lib.nn.ReLU())
            seq[1].register_forward_hook(lambda *a: log.append(("own", "ReLU")))
            seq(lib.ones(1))
        finally:
            h1.remove()
            h2.remove()
        seq(lib.ones(1))
        return log

    a, b = both(real_torch, scenario)
    assert a == b


# ---------------------------------------------------------------- backward hooks
def test_full_backward_hooks_sequential(real_torch):
    def scenario(lib):
        log = []
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
        load_same(lib, m)
        for i, sub in enumerate(m):
            sub.register_full_backward_pre_hook(
                lambda mod, go, i=i: log.append(("pre", i, [rounded(g) for g in go]))
            )
            sub.register_full_backward_hook(
                lambda mod, gi, go, i=i: log.append(
                    ("bw", i, [rounded(g) for g in gi], [rounded(g) for g in go])
                )
            )
        m[1].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
        m[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * -1.0,), prepend=True)
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float32, requires_grad=True)
        m(x).pow(2).sum().backward()
        log.append(("x.grad", rounded(x.grad)))
        log.append(("w0.grad", rounded(m[0].weight.grad)))
        return log

    a, b = both(real_torch, scenario)
    assert [e[0] for e in a] == [e[0] for e in b]
    for ea, eb in zip(a, b, strict=True):
        assert _approx(ea, eb), (ea, eb)


def _approx(a, b):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_approx(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return abs(a - b) <= 1e-4 * (1 + abs(a))
    return a == b


def test_full_backward_hook_multi_io(real_torch):
    """Tensor and non-tensor inputs, a tuple output, an input without grad, an unused output."""

    def scenario(lib):
        log = []

        class Two(lib.nn.Module):
            def forward(self, a, k, b, c):
                return a * b * k, (a + c).sum(), b.exp()

        m = Two()
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append(([rounded(g) for g in gi], [rounded(g) for g in go]))
        )
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, -1.0], requires_grad=True)
        c = lib.tensor([0.5, 0.5])
        p, q, _ = m(a, 2.0, b, c)
        (p.sum() + 3 * q).backward()
        log.append((rounded(a.grad), rounded(b.grad)))
        return log

    a, b = both(real_torch, scenario)
    assert _approx(a, b), (a, b)


def test_backward_hook_no_input_requires_grad_warns(real_torch):
    def scenario(lib):
        log = []
        m = load_same(lib, lib.nn.Linear(2, 1))
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append((gi, [rounded(g) for g in go]))
        )
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(lib.ones(3, 2)).sum().backward()
        log.append(any(issubclass(x.category, UserWarning) for x in w))
        log.append(rounded(m.weight.grad))
        return log

    a, b = both(real_torch, scenario)
    assert a == b


def test_backward_hook_wrong_length_raises(lib):
    m = lib.nn.Linear(2, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = lib.ones(1, 2, requires_grad=True)
    with pytest.raises(RuntimeError):
        m(x).sum().backward()


# ---------------------------------------------------------------- module API
def test_named_modules_and_apply(real_torch):
    def scenario(lib):
        shared = lib.nn.Linear(2, 2)
        m = lib.nn.Sequential(shared, lib.nn.ReLU(), shared)
        names = [n for n, _ in m.named_modules()]
        names_dup = [n for n, _ in m.named_modules(remove_duplicate=False, prefix="net")]
        seen = []
        m.apply(lambda mod: seen.append(type(mod).__name__))
        return names, names_dup, seen, [n for n, _ in m.named_parameters()]

    a, b = both(real_torch, scenario)
    assert a == b


def test_dtype_casts_and_grad_state(real_torch):
    def scenario(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
        out = []
        for cast in ("double", "half", "float"):
            getattr(m, cast)()
            out.append([str(t.dtype) for t in m.state_dict().values()])
        m.to(lib.float64)
        out.append(str(m[0].weight.dtype))
        m.to(dtype=lib.float32)
        m(lib.ones(3, 2)).sum().backward()
        m.zero_grad(set_to_none=False)
        out.append(rounded(m[0].weight.grad))
        m.zero_grad()
        out.append(m[0].weight.grad is None)
        m.requires_grad_(False)
        out.append([p.requires_grad for p in m.parameters()])
        out.append((m.eval().training, m[1].training, m.train().training, m[0].training))
        with pytest.raises(TypeError):
            m.to(lib.int64)
        return out

    a, b = both(real_torch, scenario)
    assert a == b


def test_get_submodule_parameter_buffer(real_torch):
    def scenario(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        out = [
            type(m.get_submodule("1")).__name__,
            tuple(m.get_parameter("0.weight").shape),
            tuple(m.get_buffer("1.running_mean").shape),
        ]
        for fn, arg in (
            (m.get_submodule, "2"),
            (m.get_parameter, "0.nope"),
            (m.get_parameter, "1.running_mean"),
            (m.get_buffer, "0.weight"),
        ):
            with pytest.raises(AttributeError):
                fn(arg)
        return out

    a, b = both(real_torch, scenario)
    assert a == b


def test_buffers_and_load_state_dict_non_strict(real_torch):
    def scenario(lib):
        m = lib.nn.Linear(2, 2)
        m.register_buffer("persist", lib.zeros(2))
        m.register_buffer("scratch", lib.ones(2), persistent=False)
        keys = list(m.state_dict())
        bufs = [n for n, _ in m.named_buffers()]
        sd = {"weight": np.ones((2, 2), np.float32), "extra": np.zeros(1, np.float32)}
        sd = {k: lib.tensor(v) for k, v in sd.items()}
        res = m.load_state_dict(sd, strict=False)
        with pytest.raises(RuntimeError):
            m.load_state_dict(sd)
        return keys, bufs, sorted(res.missing_keys), res.unexpected_keys, rounded(m.weight)

    a, b = both(real_torch, scenario)
    assert a == b


def test_global_backward_hooks(real_torch):
    def scenario(lib):
        log = []
        mm = lib.nn.modules.module
        h1 = mm.register_module_full_backward_pre_hook(
            lambda mod, go: log.append(("gpre", type(mod).__name__, rounded(go[0])))
        )
        h2 = mm.register_module_full_backward_hook(
            lambda mod, gi, go: log.append(("gbw", type(mod).__name__, rounded(gi[0])))
        )
        try:
            m = lib.nn.Tanh()
            m.register_full_backward_hook(lambda mod, gi, go: log.append(("own",)))
            x = lib.tensor([0.5, -1.0], requires_grad=True)
            (m(x) * 3).sum().backward()
        finally:
            h1.remove()
            h2.remove()
        (m(x) * 3).sum().backward()
        return log

    a, b = both(real_torch, scenario)
    assert _approx(a, b), (a, b)
