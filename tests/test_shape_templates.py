"""Shape templates: compat's eager ops traced once at symbolic dimensions and reused at
new shapes wherever their guards hold (funcgrad/core/symbolic.py, funcgrad/shape_templates.py).

The oracle is NumPy (and PyTorch where installed) on the same values: results with
templates must equal what a fresh concrete trace computes, at every length of a
growing sequence, including the lengths where a guard changes its outcome (a slice
limit ``min(5, t)``, a size-1 dimension that broadcasts)."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compat.torch as torch
import funcgrad as fg
from funcgrad.core.symbolic import Guards, SymDim, holds, substitute

F = torch.nn.functional


@pytest.fixture(autouse=True)
def _fresh_caches():
    fg.clear_caches()
    fg.debug.reset_tier_stats()
    yield
    fg.clear_caches()


# --------------------------------------------------------------------------- SymDim


def test_symdim_arithmetic_records_expressions_and_comparisons_record_guards():
    g = Guards()
    t = SymDim(5, ("in", 0), g)
    u = (t + 3) * 2 - t // 2
    assert u.value == (5 + 3) * 2 - 5 // 2
    assert substitute((1, u, 64), (9,)) == (1, (9 + 3) * 2 - 9 // 2, 64)
    assert not g.items  # arithmetic alone decides nothing
    assert (t < 7) is True and (t == 1) is False
    assert holds(g, (6,)) and not holds(g, (7,)) and not holds(g, (1,))


def test_symdim_value_reads_pin_it():
    g = Guards()
    t = SymDim(4, ("in", 0), g)
    assert operator.index(t) == 4 and g.pinned == 1
    assert len(range(t)) == 4  # C code asks for __index__: a pin, never a silent read
    assert holds(g, (4,)) and not holds(g, (5,))
    assert hash(SymDim(4, ("in", 0), g)) == hash(4)
    assert not isinstance(t, int)  # an int subclass would be read by C code unguarded


def test_symdim_identity_compares_without_a_guard():
    g = Guards()
    t = SymDim(3, ("in", 0), g)
    assert (1, t, 8) == (1, t, 8) and not g.items
    assert (t + 0) is t and (1 * t) is t


# --------------------------------------------------------------------------- compat ops


def _grow(fn, lengths, make):
    """``fn`` at each length, as NumPy arrays."""
    return [np.asarray(fn(make(t))) for t in lengths]


def _stats():
    return fg.debug.tier_stats()


def test_slice_limit_min_five_is_right_on_both_sides_of_the_guard():
    rng = np.random.default_rng(0)
    data = {t: rng.standard_normal((2, t, 3)).astype(np.float32) for t in range(1, 13)}
    for t in range(1, 13):  # (a fitted template would compute t at t > 5)
        got = (torch.tensor(data[t])[:, :5] * 2).numpy()
        np.testing.assert_array_equal(got, data[t][:, :5] * 2)
    s = _stats()
    assert s["shape_templates"] >= 1 and s["template_calls"] >= 1


@pytest.mark.parametrize(
    "name",
    ["last3", "step2", "neg_stop", "split", "reshape", "broadcast", "cat", "tril", "mean"],
)
def test_ops_of_a_growing_axis_match_numpy(name):
    fns = {
        "last3": (lambda x: x[:, -3:], lambda a: a[:, -3:]),
        "step2": (lambda x: x[:, 1::2] + 1, lambda a: a[:, 1::2] + 1),
        "neg_stop": (lambda x: x[:, :-2], lambda a: a[:, :-2]),
        "split": (
            lambda x: torch.stack([c.sum() for c in x.split(2, dim=1)]),
            lambda a: np.stack([a[:, i : i + 2].sum() for i in range(0, a.shape[1], 2)]),
        ),
        "reshape": (lambda x: x.reshape(-1, 3) * 3, lambda a: a.reshape(-1, 3) * 3),
        "broadcast": (
            lambda x: x[:, :, :1] + x[:, :1, :],
            lambda a: a[:, :, :1] + a[:, :1, :],
        ),
        "cat": (lambda x: torch.cat([x, x[:, :1]], 1), lambda a: np.concatenate([a, a[:, :1]], 1)),
        "tril": (
            lambda x: torch.tril(x[0, :, :1] * x[0, :, :1].T),
            lambda a: np.tril(a[0, :, :1] * a[0, :, :1].T),
        ),
        "mean": (lambda x: x.mean(1), lambda a: a.mean(1)),
    }
    fc, fn = fns[name]
    rng = np.random.default_rng(1)
    for t in [1, 2, 3, 4, 5, 6, 7, 9, 4, 2, 1, 11]:
        a = rng.standard_normal((2, t, 3)).astype(np.float32)
        got = np.asarray(fc(torch.tensor(a)).numpy())
        np.testing.assert_allclose(got, fn(a), rtol=1e-6, atol=1e-6)


def test_attention_and_layer_norm_of_a_growing_sequence_match_the_concrete_traces():
    rng = np.random.default_rng(2)
    w = torch.tensor(rng.standard_normal(16).astype(np.float32))
    b = torch.tensor(rng.standard_normal(16).astype(np.float32))
    inputs = [rng.standard_normal((1, 2, t, 16)).astype(np.float32) for t in range(1, 10)]

    def step(a):
        q = torch.tensor(a)
        y = F.scaled_dot_product_attention(q, q * 2, q + 1, is_causal=True)
        return F.layer_norm(y, (16,), w, b).numpy()

    with_templates = [step(a) for a in inputs]
    assert _stats()["template_calls"] > 0
    fg.clear_caches()
    fg.debug.reset_tier_stats()
    fg.config.update("compat_shape_templates", False)
    try:
        concrete = [step(a) for a in inputs]
        assert _stats()["shape_templates"] == 0
    finally:
        fg.config.update("compat_shape_templates", True)
    for x, y in zip(with_templates, concrete):
        np.testing.assert_array_equal(x, y)


def test_switching_templates_off_traces_every_shape():
    fg.config.update("compat_shape_templates", False)
    try:
        for t in range(2, 8):
            torch.ones(1, t) * 2
        assert _stats()["shape_templates"] == 0
    finally:
        fg.config.update("compat_shape_templates", True)


def test_gradients_at_new_shapes_use_the_concrete_program():
    rng = np.random.default_rng(3)
    for t in range(2, 8):
        a = rng.standard_normal((1, t, 4)).astype(np.float32)
        x = torch.tensor(a, requires_grad=True)
        (x[:, :3] * x[:, :3]).sum().backward()
        want = np.zeros_like(a)
        want[:, :3] = 2 * a[:, :3]
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 12), min_size=2, max_size=8),
    start=st.one_of(st.none(), st.integers(-6, 6)),
    stop=st.one_of(st.none(), st.integers(-6, 6)),
    step=st.one_of(st.none(), st.integers(1, 3)),  # (PyTorch refuses negative steps)
)
def test_any_slice_of_a_growing_axis_matches_numpy(lengths, start, stop, step):
    fg.clear_caches()
    rng = np.random.default_rng(4)
    for t in lengths:
        a = rng.standard_normal((2, t)).astype(np.float32)
        got = (torch.tensor(a)[:, start:stop:step] + 1).numpy()
        np.testing.assert_array_equal(got, a[:, start:stop:step] + 1)
