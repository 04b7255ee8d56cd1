"""The one compile cache (funcgrad.core.compile_cache) and its public calls,
funcgrad.clear_caches() and funcgrad.cache_info(). Values are checked against NumPy."""

from __future__ import annotations

import gc
import subprocess
import sys
import warnings

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import passes
from funcgrad.core import compile_cache
from funcgrad.primitives import linalg

X = np.linspace(-1.0, 1.0, 6).astype(np.float32)


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch):
    # funcgrad's store only. ``fg.clear_caches()`` also empties JAX's caches, which took
    # 20 s per call in a full xdist worker and made every later test in that worker compile
    # its primitives again; here it only records the call to JAX (``jax_cleared``), and
    # test_clear_caches_empties_jax_caches_too checks the real call in a fresh process
    compile_cache.clear()
    calls = []
    monkeypatch.setattr(jax, "clear_caches", lambda: calls.append(1))
    yield calls
    compile_cache.clear()


def test_clear_caches_empties_jax_caches_too():
    code = (
        "import jax, numpy as np, funcgrad as fg\n"
        "f = jax.jit(lambda x: x * 2)\n"
        "f(np.ones(3)); assert f._cache_size() == 1\n"
        "g = fg.jit(lambda x: x + 1); g(np.ones(3)); n = g.trace_count\n"
        "fg.clear_caches()\n"
        "assert f._cache_size() == 0, f._cache_size()\n"
        "assert fg.cache_info().entries == 0\n"
        "np.testing.assert_array_equal(np.asarray(g(np.ones(3))), 2.0)\n"
        "assert g.trace_count == n + 1\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


def _sin_times(c):
    """A new function object closing over ``c`` (identical code every time)."""
    return lambda x: fnp.sin(x) * c + 1.0


def _program(fn, *args):
    return fg.make_ir(fn)(*args)


def test_identical_programs_share_one_executable():
    c = np.float32(3.0) * np.ones(6, np.float32)
    p1, p2 = _program(_sin_times(c), X), _program(_sin_times(c), X)
    assert p1 is not p2 and p1.key() == p2.key()
    f1 = compile_cache.compiled(p1)
    f2 = compile_cache.compiled(p2)
    assert f1 is f2
    info = fg.cache_info()
    assert (info.entries, info.compiles, info.hits, info.misses) == (1, 1, 1, 1)
    assert info.kinds["program"] == 1
    (out,) = f2(*p2.consts, X)
    np.testing.assert_allclose(out, np.sin(X) * 3.0 + 1.0, rtol=1e-6)


@pytest.mark.parametrize("literal", [np.float32(0.0), 0.0])
def test_signed_zero_literals_are_different_programs(literal):
    # x * 0.0 and x * -0.0 differ in sign: neither the executable cache nor CSE may
    # take one literal for the other (their keys once compared the literals with ==)
    pos, neg = literal, -literal
    p_pos = _program(lambda x: x * pos, X)
    p_neg = _program(lambda x: x * neg, X)
    assert p_pos.key() != p_neg.key()
    both = _program(lambda x: (x * pos, x * neg), X)
    assert len(passes.simplify(both).eqns) == len(both.eqns)
    z = np.ones(6, np.float32)
    out_pos = compile_cache.compiled(p_pos)(*p_pos.consts, z)[0]
    out_neg = compile_cache.compiled(p_neg)(*p_neg.consts, z)[0]
    assert not np.signbit(out_pos).any() and np.signbit(out_neg).all()
    assert fg.cache_info().compiles == 2


def test_consts_are_arguments_not_baked_in():
    c1 = np.arange(6, dtype=np.float32)
    c2 = np.full(6, -2.5, np.float32)
    p1, p2 = _program(_sin_times(c1), X), _program(_sin_times(c2), X)
    fn = compile_cache.compiled(p1)
    assert compile_cache.compiled(p2) is fn  # same structure, different constants
    assert fg.cache_info().compiles == 1
    (o1,) = fn(*p1.consts, X)
    (o2,) = fn(*p2.consts, X)
    np.testing.assert_allclose(o1, np.sin(X) * c1 + 1.0, rtol=1e-6)
    np.testing.assert_allclose(o2, np.sin(X) * c2 + 1.0, rtol=1e-6)


def test_static_arguments_are_part_of_the_key():
    p = _program(_sin_times(np.float32(2.0)), X)
    plain = compile_cache.compiled(p)
    donated = compile_cache.compiled(p, donate_argnums=(0,))
    assert plain is not donated
    assert compile_cache.compiled(p, donate_argnums=[0]) is not donated  # list != tuple
    assert compile_cache.compiled(p, donate_argnums=(0,)) is donated
    assert compile_cache.compiled(p, name="another_name") is plain  # a label, not a key
    with pytest.raises(TypeError, match="not hashable"):
        compile_cache.compiled(p, donate_argnums=[np.ones(2)])


def test_jit_functions_closing_over_large_arrays_share_one_executable():
    # more than 1 MiB of constants: funcgrad's own dispatch, constants as arguments
    n = 300_000
    c1 = np.linspace(0.0, 1.0, n).astype(np.float32)
    c2 = np.linspace(2.0, -1.0, n).astype(np.float32)
    x = np.linspace(-3.0, 3.0, n).astype(np.float32)
    f1, f2 = fg.jit(_sin_times(c1)), fg.jit(_sin_times(c2))
    np.testing.assert_allclose(f1(x), np.sin(x) * c1 + 1.0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f2(x), np.sin(x) * c2 + 1.0, rtol=1e-5, atol=1e-6)
    info = fg.cache_info()
    assert info.kinds["program"] == 1 and info.compiles == 1
    assert info.kinds["jit_traces"] == 2  # one trace per function, one executable


def test_lru_bound_and_evictions(monkeypatch):
    monkeypatch.setattr(compile_cache.POLICY, "max_entries", 2)
    progs = [_program(_sin_times(np.float32(2.0)), np.ones(k, np.float32)) for k in (1, 2, 3)]
    compile_cache.compiled(progs[0])
    compile_cache.compiled(progs[1])
    compile_cache.compiled(progs[0])  # refreshed: progs[1] is now least recently used
    compile_cache.compiled(progs[2])
    info = fg.cache_info()
    assert (info.entries, info.evictions, info.compiles) == (2, 1, 3)
    compile_cache.compiled(progs[0])  # still there
    assert fg.cache_info().compiles == 3
    compile_cache.compiled(progs[1])  # was evicted: compiled again, evicting progs[2]
    info = fg.cache_info()
    assert (info.entries, info.evictions, info.compiles) == (2, 2, 4)


def test_run_compiles_on_the_policys_sighting(monkeypatch):
    assert compile_cache.POLICY.compile_after == 4  # the default
    monkeypatch.setattr(compile_cache.POLICY, "compile_cold", 0)  # count sightings only
    c = np.arange(6, dtype=np.float32)
    want = np.sin(X) * c + 1.0
    p = _program(_sin_times(c), X)
    for n in range(1, 4):
        (out,) = compile_cache.run(p, X)  # first three sightings: op by op
        np.testing.assert_allclose(out, want, rtol=1e-6)
        info = fg.cache_info()
        assert (info.entries, info.compiles, info.seen, info.misses) == (0, 0, 1, n)
    (out,) = compile_cache.run(_program(_sin_times(c), X), X)  # same structure again
    np.testing.assert_allclose(out, want, rtol=1e-6)
    info = fg.cache_info()
    assert (info.entries, info.compiles, info.seen) == (1, 1, 0)
    (out,) = compile_cache.run(p, X)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    assert fg.cache_info().hits == 1
    # the executable run() made is the one compiled() returns for an eager program
    assert compile_cache.compiled(p, eager=True) is not None and fg.cache_info().compiles == 1


@pytest.mark.parametrize("after", [1, 3])
def test_run_policy_compile_after(monkeypatch, after):
    monkeypatch.setattr(compile_cache.POLICY, "compile_after", after)
    monkeypatch.setattr(compile_cache.POLICY, "compile_cold", 0)
    p = _program(_sin_times(np.float32(0.5)), X)
    counts = []
    for _ in range(3):
        (out,) = compile_cache.run(p, X)
        np.testing.assert_allclose(out, np.sin(X) * 0.5 + 1.0, rtol=1e-6)
        counts.append(fg.cache_info().compiles)
    assert counts == ([1, 1, 1] if after == 1 else [0, 0, 1])


def test_run_compiles_at_once_what_op_by_op_would_compile_op_by_op(monkeypatch):
    assert compile_cache.POLICY.compile_cold == 3  # the default
    x = np.linspace(0.1, 0.9, 7)  # a shape no other test here uses
    p = _program(_sin_times(np.float64(2.0)), x)  # sin, mul, add: three cold equations
    assert len(p.eqns) == 3
    (out,) = compile_cache.run(p, x)
    np.testing.assert_allclose(out, np.sin(x) * 2.0 + 1.0)
    info = fg.cache_info()
    assert (info.compiles, info.seen) == (1, 0)  # compiled at its first sighting
    # a program whose equations all ran op by op before runs op by op
    compile_cache.clear()
    monkeypatch.setattr(compile_cache.POLICY, "compile_cold", 4)
    compile_cache.run(p, x)  # three cold equations < 4: op by op, now warm
    assert fg.cache_info().compiles == 0
    monkeypatch.setattr(compile_cache.POLICY, "compile_cold", 1)
    q = _program(lambda x: fnp.sin(x) * np.float64(3.0) + 1.0, x)  # same ops, new consts
    (out,) = compile_cache.run(q, x)
    np.testing.assert_allclose(out, np.sin(x) * 3.0 + 1.0)
    info = fg.cache_info()
    assert (info.compiles, info.seen) == (0, 2)  # no cold equation: op by op (p, q seen)
    r = _program(lambda x: fnp.cos(x) * np.float64(3.0), x)  # cos is cold
    compile_cache.run(r, x)
    assert fg.cache_info().compiles == 1
    # the memory of warm signatures is bounded
    monkeypatch.setattr(compile_cache.POLICY, "compile_cold", 0)
    monkeypatch.setattr(compile_cache.POLICY, "max_warm", 2)
    compile_cache.run(p, x)
    assert len(compile_cache._warm) == 2


def test_seen_structures_are_bounded(monkeypatch):
    monkeypatch.setattr(compile_cache.POLICY, "max_seen", 2)
    monkeypatch.setattr(compile_cache.POLICY, "compile_cold", 0)
    for k in (1, 2, 3):
        x = np.ones(k, np.float32)
        compile_cache.run(_program(_sin_times(np.float32(2.0)), x), x)
    info = fg.cache_info()
    assert (info.seen, info.entries) == (2, 0)


def test_cached_values_share_the_store():
    made = []

    def make():
        made.append(1)
        return object()

    v = compile_cache.cached(("k", 1), make, kind="test_kind")
    assert compile_cache.cached(("k", 1), make, kind="test_kind") is v
    assert compile_cache.cached(("k", 1), make, kind="other_kind") is not v  # kinds are namespaces
    assert len(made) == 2
    info = fg.cache_info()
    assert info.kinds["test_kind"] == 1 and info.kinds["other_kind"] == 1
    assert (info.hits, info.misses, info.entries) == (1, 2, 2)


def test_eager_control_flow_uses_the_cache():
    def loop(x):
        return fg.lax.scan(lambda c, y: (c + y, c * y), 0.0, x)

    xs = np.arange(5, dtype=np.float32)
    with fg.eager_tier("compiled"):  # (the host tier runs an eager loop in Python)
        for _ in range(2):
            carry, ys = loop(xs)
            np.testing.assert_allclose(carry, xs.sum())
            np.testing.assert_allclose(ys, np.concatenate([[0.0], np.cumsum(xs)[:-1]]) * xs)
    info = fg.cache_info()
    assert info.kinds["control_flow"] == 1 and info.hits >= 1


def test_clear_caches_empties_and_cache_info_counts(_fresh_cache):
    fun = lambda x: fnp.cos(x) * 2.0
    f = fg.jit(fun)
    g = fg.grad(lambda x: fnp.sum(fnp.sin(x) ** 2))
    with fg.eager_tier("compiled"):  # (the host tier compiles no eager program)
        for _ in range(compile_cache.POLICY.compile_after + 1):
            np.testing.assert_allclose(f(X), np.cos(X) * 2.0, rtol=1e-6)
            np.testing.assert_allclose(g(X), 2 * np.sin(X) * np.cos(X), rtol=1e-5, atol=1e-7)
    info = fg.cache_info()
    assert info.kinds["program"] >= 1 and info.hits >= 1 and info.misses >= 1
    assert info.kinds["jit_traces"] == 1 and info.traces >= 1
    gc.collect()
    fg.clear_caches()
    assert _fresh_cache == [1]  # JAX's caches were asked to clear too
    info = fg.cache_info()
    # entries, hits, misses, compiles, evictions, seen
    assert info[:6] == (0, 0, 0, 0, 0, 0)
    # every per-function cache is empty, except that "jit_dispatch" (JAX's own count of
    # the live jax.jit dispatchers' executables) kept one entry of a dispatcher made by an
    # earlier test in the same xdist worker in CI (not reproduced alone): this test's own
    # dispatcher must be empty
    assert {k: n for k, n in info.kinds.items() if k != "jit_dispatch"} == dict.fromkeys(
        (k for k in info.kinds if k != "jit_dispatch"), 0
    ), info.kinds
    for shared in sys.modules["funcgrad.jit"]._shared_by_fun[fun].values():
        assert shared.dispatch is None or shared.dispatch._cache_size() == 0


def test_jit_recompiles_after_clear_with_correct_values():
    f = fg.jit(lambda x, y: fnp.tanh(x) * y)
    y = np.float32(1.5)
    np.testing.assert_allclose(f(X, y), np.tanh(X) * y, rtol=1e-6)
    traces = f.trace_count
    fg.clear_caches()
    np.testing.assert_allclose(f(X, y), np.tanh(X) * y, rtol=1e-6)
    assert f.trace_count == traces + 1  # traced again: its trace cache was cleared
    # funcgrad's own dispatch (constants over 1 MiB) compiles again through the cache
    big = np.linspace(-1.0, 1.0, 300_000).astype(np.float32)
    h = fg.jit(lambda x: x * big)
    x = np.full(big.shape, 2.0, np.float32)
    np.testing.assert_allclose(h(x), 2.0 * big, rtol=1e-6)
    fg.clear_caches()
    np.testing.assert_allclose(h(x), 2.0 * big, rtol=1e-6)
    assert fg.cache_info().compiles == 1


def test_checkpoint_traces_are_registered():
    f = fg.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    gx = fg.grad(lambda x: fnp.sum(f(x)))(X)
    np.testing.assert_allclose(gx, np.cos(np.sin(X)) * np.cos(X), rtol=1e-5)
    assert fg.cache_info().kinds["checkpoint_traces"] == 1
    fg.clear_caches()
    assert fg.cache_info().kinds["checkpoint_traces"] == 0


def test_unhashable_params_are_keyed_by_a_held_object():
    import gc
    import weakref

    from funcgrad.core.ir import _hashable_param

    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

    a, b = Unhashable(), Unhashable()
    ka = _hashable_param({"p": a})
    assert ka == _hashable_param({"p": a}) and ka != _hashable_param({"p": b})
    hash(ka)
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is not None  # the key holds the object: its id cannot be reused meanwhile
    del ka
    gc.collect()
    assert ref() is None


def test_interop_derived_functions_live_in_the_cache():
    import jax.numpy as jnp

    from funcgrad.interop import from_jax

    softplus = from_jax(lambda x: jnp.logaddexp(x, 0.0))
    g = fg.grad(lambda x: fnp.sum(softplus(x)))(X)
    np.testing.assert_allclose(g, 1.0 / (1.0 + np.exp(-X)), rtol=1e-5)
    assert fg.cache_info().kinds["interop"] >= 1
    fg.clear_caches()
    assert "interop" not in fg.cache_info().kinds
    np.testing.assert_allclose(
        fg.grad(lambda x: fnp.sum(softplus(x)))(X), 1.0 / (1.0 + np.exp(-X)), rtol=1e-5
    )


def _options_of_entries() -> list:
    """The ``compiler_options`` in each program entry's key (``None``: XLA's defaults)."""
    out = []
    for key in list(compile_cache._store):
        if key[0] == "program":
            opts = dict(key[2]).get("compiler_options")
            out.append(dict(opts[1]) if opts is not None else None)
    return out


def test_eager_programs_compile_with_the_policys_options_jit_with_xlas_defaults():
    assert compile_cache.POLICY.eager_compiler_options == {"xla_cpu_use_fusion_emitters": False}
    p = _program(_sin_times(np.float32(2.0)), X)
    eager = compile_cache.compiled(p, eager=True)
    plain = compile_cache.compiled(p)
    assert eager is not plain  # compiled differently, so keyed apart
    assert compile_cache.compiled(p, eager=True) is eager
    assert sorted(_options_of_entries(), key=str) == [
        None,
        {"xla_cpu_use_fusion_emitters": False},
    ]
    for fn in (eager, plain):
        np.testing.assert_allclose(fn(*p.consts, X)[0], np.sin(X) * 2.0 + 1.0, rtol=1e-6)


def test_compat_ops_and_run_use_the_eager_options(monkeypatch):
    import compat.torch as torch

    monkeypatch.setattr(compile_cache.POLICY, "compile_after", 1)
    t = torch.tensor(X) * 3.5 - 1.0  # compat's op executables
    np.testing.assert_allclose(t.numpy(), X * 3.5 - 1.0, rtol=1e-6)
    c = np.arange(6, dtype=np.float32)
    (out,) = compile_cache.run(_program(_sin_times(c), X), X)
    np.testing.assert_allclose(out, np.sin(X) * c + 1.0, rtol=1e-6)
    opts = _options_of_entries()
    assert opts and all(o == {"xla_cpu_use_fusion_emitters": False} for o in opts), opts


def test_eager_options_this_xla_rejects_are_dropped_with_a_warning(monkeypatch):
    monkeypatch.setattr(
        compile_cache.POLICY, "eager_compiler_options", {"xla_no_such_option_here": True}
    )
    p = _program(_sin_times(np.float32(2.0)), X)
    with pytest.warns(RuntimeWarning, match="xla_no_such_option_here"):
        fn = compile_cache.compiled(p, eager=True)
    assert fn is compile_cache.compiled(p)  # XLA's defaults: the plain entry
    np.testing.assert_allclose(fn(*p.consts, X)[0], np.sin(X) * 2.0 + 1.0, rtol=1e-6)
    monkeypatch.setattr(compile_cache.POLICY, "eager_compiler_options", None)
    assert compile_cache.compiled(p, eager=True) is fn


def test_the_default_cpu_options_stay_off_other_backends_and_retired_xlas(monkeypatch):
    """The default options are a CPU flag: not passed where the backend is another, and
    dropped without a warning by an XLA that no longer knows them (the user set nothing);
    options the user set still warn (above)."""
    p = _program(_sin_times(np.float32(2.0)), X)
    monkeypatch.setattr(compile_cache, "_accepted", {})
    monkeypatch.setattr(compile_cache.jax, "default_backend", lambda: "gpu")
    monkeypatch.setattr(
        compile_cache.POLICY, "eager_compiler_options", dict(compile_cache.CLASSIC_CPU_EMITTERS)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compile_cache.compiled(p, eager=True) is compile_cache.compiled(p)
    monkeypatch.undo()
    retired = {"xla_no_such_option_here": True}
    monkeypatch.setattr(compile_cache, "_accepted", {})
    monkeypatch.setattr(compile_cache, "CLASSIC_CPU_EMITTERS", retired)
    monkeypatch.setattr(compile_cache.POLICY, "eager_compiler_options", dict(retired))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn = compile_cache.compiled(p, eager=True)
    assert fn is compile_cache.compiled(p)
    np.testing.assert_allclose(fn(*p.consts, X)[0], np.sin(X) * 2.0 + 1.0, rtol=1e-6)


def test_host_dot_layouts_are_registered():
    """dot_general's host rule keeps a layout per dimension numbers and shapes: one of the
    store's kinds, counted by cache_info and emptied by clear_caches."""
    fg.clear_caches()
    assert fg.cache_info().kinds.get("host_dot_layouts", 0) == 0
    linalg._dot_general_host(
        np.ones((3, 4), np.float32),
        np.ones((4, 2), np.float32),
        dimension_numbers=(((1,), (0,)), ((), ())),
    )
    assert fg.cache_info().kinds["host_dot_layouts"] == 1
    fg.clear_caches()
    assert fg.cache_info().kinds.get("host_dot_layouts", 0) == 0
