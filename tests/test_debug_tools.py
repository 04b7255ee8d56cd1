"""funcgrad.debug.explain_recompiles, saved_residuals, cost and jit's AOT objects
(Lowered / Compiled). XLA's numbers are compared with those JAX reports for the
equivalent JAX function."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

F32 = np.float32
#: 2.0 with the dtype a Python float gets, but not weakly typed
STRONG_TWO = np.asarray(2.0, dtype=fnp.asarray(2.0).dtype)


def _recompile_messages(calls):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with fg.debug.explain_recompiles():
            calls()
    return [str(w.message) for w in rec if issubclass(w.category, fg.debug.RecompileWarning)]


def test_recompile_warning_is_a_user_warning():
    assert issubclass(fg.debug.RecompileWarning, UserWarning)


def test_recompile_names_shape_dtype_weak_type_and_pytree_changes():
    @fg.jit
    def g(a, b):
        return a["u"] * b

    def calls():
        g({"u": np.ones(3, F32)}, 2.0)
        g({"u": np.ones(3, F32)}, 2.0)  # cache hit: no warning
        g({"u": np.ones(4, F32)}, 2.0)
        g({"u": np.ones(4, np.int32)}, 2.0)
        g({"u": np.ones(4, np.int32)}, STRONG_TWO)
        g({"u": np.ones(4, np.int32), "v": 1}, STRONG_TWO)

    msgs = _recompile_messages(calls)
    assert len(msgs) == 4, msgs
    assert "argument 'a'['u']: shape changed: was f32[3], now f32[4]" in msgs[0]
    assert "argument 'a'['u']: dtype changed: was f32[4], now i32[4]" in msgs[1]
    assert "argument 'b': weak type changed" in msgs[2]
    assert "pytree structure of argument 'a'" in msgs[3] and "'v'" in msgs[3]
    assert all("'g'" in m for m in msgs)
    assert [f"it will have {n} entries" in m for n, m in zip(range(2, 6), msgs)] == [True] * 4


def test_recompile_names_static_argument_and_call_site():
    h = fg.jit(lambda x, n: x * n, static_argnums=1)

    def calls():
        h(np.ones(3, F32), 2)
        h(np.ones(3, F32), 3)  # the line named in the message

    msgs = _recompile_messages(calls)
    assert len(msgs) == 1
    assert "static argument 'n': was 2, now 3" in msgs[0]
    line = calls.__code__.co_firstlineno + 2
    assert f"test_debug_tools.py:{line}" in msgs[0]


def test_recompile_static_argname_and_keyword_arguments():
    k = fg.jit(lambda x, *, mode: x * (2 if mode == "a" else 3), static_argnames="mode")

    msgs = _recompile_messages(lambda: (k(np.ones(2, F32), mode="a"), k(np.ones(2, F32), mode="b")))
    assert len(msgs) == 1 and "static argument 'mode': was 'a', now 'b'" in msgs[0]


def test_recompiles_silent_when_off_and_config_flag():
    g = fg.jit(lambda x: x + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g(np.ones(2, F32))
        g(np.ones(3, F32))  # no warning: not enabled
    fg.config.update("debug_recompiles", True)
    try:
        with pytest.warns(fg.debug.RecompileWarning, match="shape changed"):
            g(np.ones(4, F32))
    finally:
        fg.config.update("debug_recompiles", False)


def mlp(w, x):
    h = fnp.tanh(x @ w)
    h = fnp.tanh(h @ w.T)
    return fnp.sum(fnp.sin(h))


W = np.linspace(-1, 1, 12, dtype=F32).reshape(3, 4)
X = np.linspace(0, 1, 15, dtype=F32).reshape(5, 3)


def test_saved_residuals_rows_and_total():
    res = fg.debug.saved_residuals(mlp, W, X)
    assert res.total_bytes == sum(r.nbytes for r in res)
    assert all(r.nbytes == int(np.prod(r.shape)) * np.dtype(r.dtype).itemsize for r in res)
    origins = [r.origin for r in res]
    assert "tanh" in origins and "argument 'x'" in origins
    tanh_rows = [r for r in res if r.origin == "tanh"]
    assert all(r.source and r.source[0].endswith("test_debug_tools.py") for r in tanh_rows)
    text = str(res)
    assert "tanh" in text and f"total: {res.total_bytes} bytes" in text


def test_saved_residuals_fall_with_checkpoint_and_follow_policies():
    plain = fg.debug.saved_residuals(mlp, W, X).total_bytes
    remat = fg.debug.saved_residuals(fg.checkpoint(mlp), W, X)
    assert remat.total_bytes < plain
    # nothing saved but the inputs: the differentiated argument and the fixed one
    assert sorted(r.origin for r in remat) == ["argument 'w'", "argument 'x'"]
    everything = fg.checkpoint(mlp, policy=fg.checkpoint_policies.everything_saveable)
    assert fg.debug.saved_residuals(everything, W, X).total_bytes >= remat.total_bytes
    dots = fg.checkpoint(mlp, policy=fg.checkpoint_policies.dots_saveable)
    dots_rows = fg.debug.saved_residuals(dots, W, X)
    assert remat.total_bytes < dots_rows.total_bytes


def test_saved_residuals_argnums_tuple():
    res = fg.debug.saved_residuals(mlp, W, X, argnums=(0, 1))
    assert res.total_bytes == sum(r.nbytes for r in res) > 0


def jmlp(w, x):
    h = jnp.tanh(x @ w)
    h = jnp.tanh(h @ w.T)
    return jnp.sum(jnp.sin(h))


def test_cost_matches_jax_analysis():
    c = fg.debug.cost(mlp, W, X)
    jc = jax.jit(jmlp).lower(W, X).compile()
    ja = jc.cost_analysis()
    ja = ja[0] if isinstance(ja, list) else ja
    assert c.flops == pytest.approx(ja["flops"], rel=0.05)
    assert c.bytes_accessed == pytest.approx(ja["bytes accessed"], rel=0.25)
    jm = jc.memory_analysis()
    assert c.argument_bytes == jm.argument_size_in_bytes == W.nbytes + X.nbytes
    assert c.output_bytes == jm.output_size_in_bytes == 4
    assert c.peak_bytes >= c.argument_bytes + c.output_bytes
    assert "flops" in str(c)


def test_cost_of_a_grad_is_larger():
    assert fg.debug.cost(fg.grad(mlp), W, X).flops > fg.debug.cost(mlp, W, X).flops


def test_lower_returns_lowered_text_and_compiles():
    f = fg.jit(mlp)
    lowered = f.lower(W, X)
    assert isinstance(lowered, str) and "stablehlo" in lowered
    assert lowered.as_text() == str(lowered)
    compiled = lowered.compile()
    np.testing.assert_allclose(compiled(W, X), f(W, X), rtol=1e-6)
    assert compiled.cost_analysis()["flops"] > 0
    assert compiled.memory_analysis().argument_size_in_bytes == W.nbytes + X.nbytes
    assert "HloModule" in compiled.as_text()


def test_lowered_compiler_ir_in_both_dialects():
    """``Lowered.compiler_ir`` gives the module XLA takes, as JAX's: StableHLO (MLIR) by
    default, HLO with ``dialect="hlo"``; the same operations as JAX's lowering."""

    def e(np_, x):
        return np_.sin(np_.cos(x))

    ours = fg.jit(lambda x: e(fnp, x)).lower(2.0)
    theirs = jax.jit(lambda x: e(jnp, x)).lower(2.0)
    for lowered in (ours, theirs):
        hlo = lowered.compiler_ir(dialect="hlo").as_hlo_text()
        assert " cosine" in hlo and " sine" in hlo
        for ir in (lowered.compiler_ir(dialect="stablehlo"), lowered.compiler_ir()):
            assert "stablehlo.cosine" in str(ir) and "stablehlo.sine" in str(ir)
    assert type(ours.compiler_ir()) is type(theirs.compiler_ir())


def test_compiled_takes_dynamic_arguments_only():
    h = fg.jit(lambda x, n: x * n, static_argnums=1)
    c = h.lower(np.ones(3, F32), 3).compile()
    np.testing.assert_array_equal(c(np.ones(3, F32)), np.full(3, 3, F32))
    jc = jax.jit(lambda x, n: x * n, static_argnums=1).lower(jnp.ones(3), 3).compile()
    np.testing.assert_array_equal(jc(jnp.ones(3)), c(np.ones(3, F32)))


def test_lower_with_large_closed_over_constant():
    big = np.ones((600, 600), F32)  # above jit's embedding limit: funcgrad's dispatch
    f = fg.jit(lambda x: fnp.sum(big * x))
    lowered = f.lower(F32(2.0))
    assert "600x600" in lowered
    c = lowered.compile()
    assert float(c(F32(2.0))) == pytest.approx(2.0 * 600 * 600)
    assert c.memory_analysis().argument_size_in_bytes >= big.nbytes


def test_cost_matches_jax_for_a_gradient_and_memory_falls_with_checkpoint():
    g = fg.debug.cost(fg.grad(mlp), W, X)
    jg = jax.jit(jax.grad(jmlp)).lower(W, X).compile()
    ja = jg.cost_analysis()
    ja = ja[0] if isinstance(ja, list) else ja
    assert g.flops == pytest.approx(ja["flops"], rel=0.1)
    assert g.output_bytes == jg.memory_analysis().output_size_in_bytes == W.nbytes
