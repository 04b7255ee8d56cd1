"""Smoke tests of the shape and indexing primitives: forward vs NumPy, rules vs JAX, batching."""

from __future__ import annotations

import itertools

import jax
import jax_oracle as jo
import numpy as np
import pytest
from cases import family_cases, family_example, sample
from jax import lax

import funcgrad as fg
from funcgrad.core.primitive import REGISTRY
from funcgrad.core.zeros import Zero
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import shape as sh

jax.config.update("jax_enable_x64", True)

FAMILIES = ("shape", "indexing")  # funcgrad.primitives.shape and .indexing
PRIMS = [p for p in REGISTRY.values() if p.family in FAMILIES]
CASES = family_cases(FAMILIES)


def _variant(a, rng):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return rng.normal(size=a.shape)
    if a.dtype.kind in "iu":  # move indices around, in and out of range
        return (a + rng.integers(-2, 3, size=a.shape)).astype(a.dtype)
    return rng.random(a.shape) < 0.5


@pytest.mark.parametrize(
    "p,i", sample(CASES, salt="test_rules_against_jax", group=lambda c: c.values[0].name)
)
def test_rules_against_jax(p, i):
    """fg.jvp / fg.vjp agree with JAX's own derivatives of the lowering."""
    ex = family_example(p, i)
    if not p.differentiable:
        pytest.skip("not differentiable")
    nums = ex.diff_argnums or tuple(range(len(ex.args)))
    rng = np.random.default_rng(1)

    def f(*d):
        args = list(ex.args)
        for j, v in zip(nums, d):
            args[j] = v
        return p.bind(*args, **ex.params)

    def f_jax(*d):
        args = list(ex.args)
        for j, v in zip(nums, d):
            args[j] = v
        return p.lower(*args, **ex.params)

    xs = [np.asarray(ex.args[j]) for j in nums]
    ts = [rng.normal(size=x.shape) for x in xs]
    _, t = fg.jvp(f, xs, ts)
    _, t_ref = jo.jvp(f_jax, xs, ts)
    many = p.multiple_results  # (split: a list of outputs)
    for a, b in zip(*((t, t_ref) if many else ([t], [t_ref]))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
    out, pb = fg.vjp(f, *xs)
    shapes = [np.shape(o) for o in out] if many else np.shape(out)
    ct = [rng.normal(size=s) for s in shapes] if many else rng.normal(size=shapes)
    for g, g_ref in zip(pb(ct), jo.vjp(f_jax, xs, ct)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "p,i",
    sample(CASES, salt="test_batch_rule_every_subset_and_axis", group=lambda c: c.values[0].name),
)
def test_batch_rule_every_subset_and_axis(p, i):
    """The batch rule vs a loop, for every subset of batched operands and batch positions,
    with index operands that differ per example (and go out of range)."""
    ex = family_example(p, i)
    if not ex.args:
        pytest.skip("no operands")
    rng = np.random.default_rng(2)
    B = 3
    n = len(ex.args)
    for r in range(1, n + 1):
        for subset in itertools.combinations(range(n), r):
            stacks = {j: np.stack([_variant(ex.args[j], rng) for _ in range(B)]) for j in subset}
            for dims in itertools.product(*[range(np.ndim(ex.args[j]) + 1) for j in subset]):
                args, ds = list(ex.args), [None] * n
                for j, d in zip(subset, dims):
                    args[j], ds[j] = np.moveaxis(stacks[j], 0, d), d
                out, od = p.batch(args, ds, **ex.params)
                outs, ods = (out, od) if p.multiple_results else ([out], [od])
                for b in range(B):
                    one = [stacks[j][b] if j in subset else a for j, a in enumerate(ex.args)]
                    want = p.bind(*one, **ex.params)
                    wants = want if p.multiple_results else [want]
                    for o, d, w in zip(outs, ods, wants, strict=True):
                        got = np.take(np.asarray(o), b, axis=d)
                        np.testing.assert_array_equal(got, np.asarray(w))


def test_params_hashable():
    for p in PRIMS:
        for ex in p.examples(np.random.default_rng(0)):
            hash(tuple(sorted(ex.params.items())))


# --------------------------------------------------------------------------- forward


def test_wrappers_forward():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(sh.reshape(x, (4, -1)), x.reshape(4, -1))
    np.testing.assert_array_equal(sh.transpose(x, (2, 0, 1)), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(sh.expand_dims(x, (0, -1)).shape, (1, 2, 3, 4, 1))
    np.testing.assert_array_equal(sh.squeeze(np.ones((1, 3, 1)), (0, 2)), np.ones(3))
    np.testing.assert_array_equal(sh.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)), x[:, 1:3, ::3])
    np.testing.assert_array_equal(sh.rev(x, (0, 2)), x[::-1, :, ::-1])
    np.testing.assert_array_equal(
        sh.broadcast_in_dim(np.arange(3.0), (2, 3, 4), (1,)),
        np.broadcast_to(np.arange(3.0)[:, None], (2, 3, 4)),
    )
    y = sh.full((2, 2), 1.5, np.float32)
    assert y.dtype == np.float32 and np.all(np.asarray(y) == 1.5)
    np.testing.assert_array_equal(
        sh.iota(np.int32, (2, 3), 1), np.broadcast_to(np.arange(3), (2, 3))
    )
    np.testing.assert_array_equal(
        sh.concatenate(x, x[:, :1], dimension=1), np.concatenate([x, x[:, :1]], 1)
    )


def test_pad_forward_matches_lax():
    x = np.arange(12.0).reshape(3, 4)
    cfg = ((-1, 2, 1), (1, -2, 0))
    np.testing.assert_array_equal(sh.pad(x, -1.0, cfg), lax.pad(x, -1.0, cfg))


def test_gather_scatter_forward_clamp():
    x = np.arange(15.0).reshape(3, 5)
    idx = np.array([[0, 4], [7, -3]])
    np.testing.assert_array_equal(ix.gather(x, idx, axis=1), np.take(x, np.clip(idx, 0, 4), 1))
    u = np.ones((3, 2, 2))
    want = x.copy()
    np.add.at(want, (slice(None), np.clip(idx, 0, 4)), u)
    np.testing.assert_array_equal(ix.scatter_add(x, idx, u, axis=1), want)


def test_dynamic_slice_clamps_without_wrapping():
    x = np.arange(20.0).reshape(4, 5)
    out = ix.dynamic_slice(x, np.int32(-2), np.int64(4), slice_sizes=(2, 3))
    np.testing.assert_array_equal(out, x[0:2, 2:5])  # -2 clamps to 0 (no wrap), 4 clamps to 2
    upd = -np.ones((2, 2))
    want = x.copy()
    want[2:4, 0:2] = upd
    np.testing.assert_array_equal(ix.dynamic_update_slice(x, upd, 9, np.int8(-5)), want)


# --------------------------------------------------------------------------- batching structure


def _prims_in(prog):
    return [e.prim.name for e in prog.eqns]


def test_vmap_gather_both_batched_is_one_gather():
    x = np.random.default_rng(0).normal(size=(4, 5, 3))
    idx = np.array([[0, 4], [1, 1], [3, 2], [4, 0]])
    f = fg.vmap(lambda a, i: ix.gather(a, i, axis=0))
    names = _prims_in(fg.make_ir(f)(x, idx))
    # (one general gather whose batch dimensions are batching dimensions)
    assert names.count("gather") + names.count("gather_general") == 1
    got = f(x, idx)
    for b in range(4):
        np.testing.assert_array_equal(got[b], x[b][idx[b]])


def test_vmap_dynamic_slice_table_lookup_does_not_broadcast_table():
    table = np.arange(50.0).reshape(10, 5)
    starts = np.array([0, 3, 9, -1], np.int32)
    f = fg.vmap(lambda s: ix.dynamic_slice(table, s, np.int32(1), slice_sizes=(2, 3)))
    prog = fg.make_ir(f)(starts)
    assert "broadcast_in_dim" not in [
        e.prim.name for e in prog.eqns if any(a.aval.shape == table.shape for a in e.inputs)
    ]
    assert _prims_in(prog).count("gather") == 1
    got = f(starts)
    for b, s in enumerate(starts):
        s = min(max(int(s), 0), 8)
        np.testing.assert_array_equal(got[b], table[s : s + 2, 1:4])


def test_vmap_dynamic_update_slice_batched_starts():
    rng = np.random.default_rng(0)
    x, u = rng.normal(size=(3, 6, 4)), rng.normal(size=(3, 2, 4))
    s = np.array([0, 5, 2], np.int32)
    got = fg.vmap(lambda a, b, i: ix.dynamic_update_slice(a, b, i, np.int32(0)))(x, u, s)
    for b in range(3):
        np.testing.assert_array_equal(got[b], lax.dynamic_update_slice(x[b], u[b], (int(s[b]), 0)))


def test_gather_vjp_is_exact_transpose_for_all_indices():
    x = np.random.default_rng(0).normal(size=(4,))
    idx = np.array([-3, 0, 3, 9, 3])
    ct = np.arange(5.0)
    (g,) = fg.vjp(lambda a: ix.gather(a, idx, axis=0), x)[1](ct)
    want = np.zeros(4)
    np.add.at(want, np.clip(idx, 0, 3), ct)
    np.testing.assert_array_equal(g, want)


def test_jvp_rule_accepts_symbolic_zero_operands():
    x, u = np.ones((4,)), np.arange(2.0)
    _, t = ix.dynamic_update_slice_p.jvp(
        [x, u, np.int32(1)], [Zero(fg.Aval((4,), np.float64)), u, Zero(None)]
    )
    np.testing.assert_array_equal(t, [0.0, 0.0, 1.0, 0.0])
    _, t = sh.pad_p.jvp([x, 0.0], [x, Zero(fg.Aval((), np.float64))], padding_config=((1, 1, 0),))
    np.testing.assert_array_equal(t, [0, 1, 1, 1, 1, 0])


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call,prefix,mentions",
    [
        (lambda: sh.broadcast_in_dim(np.ones(3), (2, 4), (1,)), "broadcast_in_dim", "f64[3]"),
        (lambda: sh.reshape(np.ones((2, 3)), (4, 2)), "reshape", "f64[2,3]"),
        (lambda: sh.transpose(np.ones((2, 3)), (0, 0)), "transpose", "f64[2,3]"),
        (
            lambda: sh.concatenate(np.ones((2, 3)), np.ones((3, 2)), dimension=0),
            "concatenate",
            "f64[3,2]",
        ),
        (lambda: ix.gather(np.ones(3), np.ones(2), axis=0), "gather", "f64[2]"),
        (
            lambda: ix.dynamic_slice(np.ones((3, 3)), 0, slice_sizes=(1, 1)),
            "dynamic_slice",
            "f64[3,3]",
        ),
        (lambda: sh.pad(np.ones(3), np.float32(0), ((1, 1, 0),)), "pad", "f32[]"),
        (lambda: sh.slice(np.ones(3), (2,), (1,)), "slice", "f64[3]"),
    ],
)
def test_errors_name_primitive_and_operands(call, prefix, mentions):
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    msg = str(info.value)
    assert msg.startswith(prefix), msg
    assert mentions in msg, msg
    assert "test_shape_smoke.py" in msg, msg
