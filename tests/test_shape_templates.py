"""Shape templates: compat's eager ops traced once at symbolic dimensions and reused at
new shapes wherever their guards hold (funcgrad/core/symbolic.py, funcgrad/shape_templates.py).

The oracle is NumPy (and PyTorch where installed) on the same values: results with
templates must equal what a fresh concrete trace computes, at every length of a
growing sequence, including the lengths where a guard changes its outcome (a slice
limit ``min(5, t)``, a size-1 dimension that broadcasts)."""

from __future__ import annotations

import operator
import sys

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compat.torch as torch
import funcgrad as fg
from compat._core import host_views
from funcgrad import _compat_contract as _contract
from funcgrad import shape_templates
from funcgrad.core.symbolic import Guards, SymDim, holds, param_maker, substitute

F = torch.nn.functional


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    # funcgrad's caches (templates, traces, executables) are emptied; JAX's own are left
    # alone (as tests/test_toplevel_api.py does): jax.clear_caches() took ~0.3 s a call in
    # a full xdist worker here, twice per test and once per hypothesis example, and made
    # every later test in that worker lower its programs again. Nothing here reads JAX's
    # caches; tests/test_compile_cache.py checks the real call in a fresh process.
    monkeypatch.setattr(jax, "clear_caches", lambda: None)
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
    # a recorded call traces the concrete program only (a symbolic trace would serve
    # nothing: the graph needs the concrete op's VJP)
    assert _stats()["shape_templates"] == 0


def test_a_template_made_without_grad_still_gives_recorded_calls_their_gradient():
    rng = np.random.default_rng(4)
    for t in range(2, 8):
        a = rng.standard_normal((1, t, 4)).astype(np.float32)
        with torch.no_grad():
            np.testing.assert_array_equal((torch.tensor(a)[:, 1:] * 3).numpy(), a[:, 1:] * 3)
        x = torch.tensor(a, requires_grad=True)
        (x[:, 1:] * 3).sum().backward()
        want = np.zeros_like(a)
        want[:, 1:] = 3
        np.testing.assert_array_equal(x.grad.numpy(), want)
    assert _stats()["shape_templates"] > 0


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


# --------------------------------------------------------------------------- static integers


def test_param_maker_computes_what_substitute_computes():
    g = Guards()
    t, u = SymDim(5, ("in", 0), g), SymDim(3, ("in", 1), g)
    params = {
        0: {"shape": (1, t, 64), "xs": [t - 1, "a"], "n": None},
        2: {"lim": (t * u // 2, u % 2)},
    }
    make = param_maker(params)
    for dims in [(5, 3), (9, 4), (2, 7)]:
        assert make(dims) == {k: substitute(v, dims) for k, v in params.items()}


def _traced_per_length(fn, lengths, make):
    """How many new op programs ``fn`` traced at each length."""
    counts = []
    for t in lengths:
        before = len(_contract._BY_KEY)
        fn(make(t))
        counts.append(len(_contract._BY_KEY) - before)
    return counts


@pytest.mark.parametrize(
    "name",
    ["view", "view_back", "last", "select", "int_and_slice", "arange", "bounds", "causal"],
)
def test_static_integers_of_a_growing_axis_are_symbols(name, monkeypatch):
    # (on a host tensor with nothing recorded, views and basic indexes run on NumPy,
    # compat/_core/host_views.py: off here, so the ops are the templated programs any
    # other input takes)
    monkeypatch.setattr(host_views, "host_value", lambda t: None)
    tril = np.tril(np.ones((16, 16), np.float32))
    bias = torch.tensor(tril).view(1, 1, 16, 16)
    fns = {
        "bounds": (lambda x: x[:, : x.shape[1] - 1] * 2, lambda a: a[:, : a.shape[1] - 1] * 2),
        "causal": (  # nanoGPT's mask: a buffer sliced to the sequence length
            lambda x: bias[:, :, : x.shape[1], : x.shape[1]] * x[0, 0, 0],
            lambda a: tril[None, None, : a.shape[1], : a.shape[1]] * a[0, 0, 0],
        ),
        "view": (lambda x: x.view(1, x.shape[1], 4, 2) * 2, lambda a: a.reshape(1, -1, 4, 2) * 2),
        "view_back": (
            lambda x: x.view(1, x.shape[1], 4, 2).transpose(1, 2).contiguous().view(1, 4, -1),
            lambda a: a.reshape(1, -1, 4, 2).transpose(0, 2, 1, 3).reshape(1, 4, -1),
        ),
        "last": (lambda x: x[:, -1, :] + 1, lambda a: a[:, -1, :] + 1),
        "select": (lambda x: x[0, 0] * 3, lambda a: a[0, 0] * 3),
        "int_and_slice": (lambda x: x[0, -2:, 1], lambda a: a[0, -2:, 1]),
        "arange": (
            lambda x: x[0, :, 0] * torch.arange(x.shape[1], dtype=torch.float32),
            lambda a: a[0, :, 0] * np.arange(a.shape[1], dtype=np.float32),
        ),
    }
    fc, fn = fns[name]
    rng = np.random.default_rng(5)
    data = {t: rng.standard_normal((1, t, 8)).astype(np.float32) for t in range(1, 12)}
    with torch.no_grad():
        for t in range(1, 12):
            np.testing.assert_allclose(fc(torch.tensor(data[t])).numpy(), fn(data[t]), rtol=1e-6)
        new = _traced_per_length(
            fc,
            range(12, 16),
            lambda t: torch.tensor(rng.standard_normal((1, t, 8)), dtype=torch.float32),
        )
    assert new == [0, 0, 0, 0]  # every op of a new length served by a template
    assert _stats()["template_calls"] > 0


def test_static_integers_that_are_no_lengths_stay_exact():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    perms = [(0, 2, 1, 3), (0, 1, 3, 2), (3, 2, 1, 0), (0, 3, 2, 1), (2, 3, 0, 1), (1, 0, 3, 2)]
    for p in perms * 2:
        np.testing.assert_array_equal(torch.tensor(a).permute(*p).numpy(), a.transpose(p))
    for k in range(-3, 4):
        np.testing.assert_array_equal(
            torch.tril(torch.tensor(a[0, 0]), k).numpy(), np.tril(a[0, 0], k)
        )
    for n in range(2, 9):
        np.testing.assert_array_equal(torch.tensor(a).reshape(-1)[:n].numpy(), a.reshape(-1)[:n])


def test_an_integer_index_of_a_growing_axis_keeps_its_gradient():
    rng = np.random.default_rng(7)
    for t in range(2, 7):
        a = rng.standard_normal((2, t, 3)).astype(np.float32)
        x = torch.tensor(a, requires_grad=True)
        (x[:, -1, 1:] * 2).sum().backward()
        want = np.zeros_like(a)
        want[:, -1, 1:] = 2
        np.testing.assert_array_equal(x.grad.numpy(), want)


@pytest.mark.parametrize("generate_at", [0, 10**9])
def test_generated_template_plans_compute_what_interpreted_ones_do(monkeypatch, generate_at):
    # a template's plan generated once as a factory of its params
    # (HostPlan.param_runner) against the same plan interpreted per instantiation, and
    # both against NumPy
    monkeypatch.setattr(shape_templates.Template, "GENERATE_AT", generate_at)
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 8)).astype(np.float32)
    for t in [1, 2, 3, 5, 4, 7, 6, 9]:
        a = rng.standard_normal((1, t, 8)).astype(np.float32)
        x = torch.tensor(a)
        y = (x @ torch.tensor(w)).reshape(1, t, 2, 4).transpose(1, 2)[:, :, -2:] * 0.5
        want = (a @ w).reshape(1, t, 2, 4).transpose(0, 2, 1, 3)[:, :, -2:] * 0.5
        assert y.dtype == torch.float32
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)
    generated = [
        tm._runner is not None for fam in shape_templates._FAMILIES.values() for tm in fam.templates
    ]
    assert generated and any(generated) == (generate_at == 0)


# --------------------------------------------------------------------------- validation


def _double(x):
    return (x * 2 + 1).sum(1)


def test_a_template_is_validated_against_the_trace_it_was_made_against():
    # made at length 4 against length 3's concrete trace, where its guards hold: checked
    # there, so length 5 traces nothing (a validating trace at the first use otherwise)
    rng = np.random.default_rng(7)
    data = {t: rng.standard_normal((2, t)).astype(np.float32) for t in range(3, 8)}
    with torch.no_grad():
        new = _traced_per_length(_double, range(3, 8), lambda t: torch.tensor(data[t]))
        for t in range(3, 8):
            np.testing.assert_allclose(
                _double(torch.tensor(data[t])).numpy(), (data[t] * 2 + 1).sum(1), rtol=1e-6
            )
    assert new[0] > 0 and new[1:] == [0, 0, 0, 0]
    assert shape_templates.validations["early"] >= new[0]


def test_a_template_that_differs_from_that_trace_is_validated_at_its_first_use(monkeypatch):
    # the early check failing (here: made to fail) leaves the template to the check at its
    # first use elsewhere, which traces the op concretely there, as before
    real = shape_templates.instantiate_program
    early = [0]

    def instantiate(prog, dims):
        if sys._getframe(1).f_code.co_name == "_validate_early":
            early[0] += 1
            return real(prog, tuple(d + 1 for d in dims))  # (not the witness's program)
        return real(prog, dims)

    monkeypatch.setattr(shape_templates, "instantiate_program", instantiate)
    before = dict(shape_templates.validations)
    rng = np.random.default_rng(8)
    data = {t: rng.standard_normal((2, t)).astype(np.float32) for t in range(3, 8)}
    with torch.no_grad():
        new = _traced_per_length(_double, range(3, 8), lambda t: torch.tensor(data[t]))
        for t in range(3, 8):
            np.testing.assert_allclose(
                _double(torch.tensor(data[t])).numpy(), (data[t] * 2 + 1).sum(1), rtol=1e-6
            )
    assert early[0] > 0 and new[1] == 0 and new[2] == new[0] and new[3:] == [0, 0]
    assert shape_templates.validations["early"] == before["early"]
    assert shape_templates.validations["at_use"] > before["at_use"]


def test_a_dimension_the_op_reads_as_a_value_stays_concrete_and_others_are_templated():
    # two tables of different row counts at one index shape: the symbolic trace against
    # the first reads the row count (take's index dtype and bound), every symbol pinned;
    # that dimension stays concrete from then on and a growing index is still templated
    # (the family used to give up templates for the whole process)
    rng = np.random.default_rng(9)
    small = rng.standard_normal((11, 4)).astype(np.float32)
    big = rng.standard_normal((23, 4)).astype(np.float32)
    idx = {t: rng.integers(0, 11, (1, t)) for t in range(2, 10)}
    with torch.no_grad():
        for table in (small, big):
            np.testing.assert_array_equal(
                F.embedding(torch.tensor(idx[2]), torch.tensor(table)).numpy(), table[idx[2]]
            )
        fam = next(f for k, f in shape_templates._FAMILIES.items() if "embedding" in str(k[0]))
        assert not fam.off and fam.pinned == {(1, 0)}
        new = _traced_per_length(
            lambda i: F.embedding(i, torch.tensor(big)),
            range(3, 10),
            lambda t: torch.tensor(idx[t]),
        )
        for t in range(3, 10):
            np.testing.assert_array_equal(
                F.embedding(torch.tensor(idx[t]), torch.tensor(big)).numpy(), big[idx[t]]
            )
    assert not fam.off and fam.templates
    assert new[-4:] == [0, 0, 0, 0]


def test_without_positions_keeps_the_other_symbols_and_renumbers_them():
    layout = ((0, None, 1), None, (1, 2))
    assert shape_templates.symbolic_positions(layout) == {(0, 0), (0, 2), (2, 0), (2, 1)}
    assert shape_templates.without_positions(layout, frozenset({(0, 0)})) == (
        (None, None, 0),
        None,
        (0, 1),
    )
    assert shape_templates.without_positions(layout, frozenset({(0, 2), (2, 0)})) == (
        (0, None, None),
        None,
        (None, 1),
    )
    assert (
        shape_templates.without_positions(layout, shape_templates.symbolic_positions(layout))
        is None
    )


def test_a_template_is_validated_at_use_only_where_every_symbol_differs(monkeypatch):
    # two symbols (rows and columns), the early check made to fail: a first use where the
    # rows keep their traced value runs the concrete op and validates nothing (a value of
    # the rows that escaped into the trace would look right there); the next use, where
    # both differ, validates the template
    real = shape_templates.instantiate_program

    def instantiate(prog, dims):
        if sys._getframe(1).f_code.co_name == "_validate_early":
            return real(prog, tuple(d + 1 for d in dims))  # (not the witness's program)
        return real(prog, dims)

    monkeypatch.setattr(shape_templates, "instantiate_program", instantiate)
    rng = np.random.default_rng(9)
    shapes = [(2, 3), (3, 4), (3, 5), (4, 6), (5, 7)]
    data = {s: rng.standard_normal(s).astype(np.float32) for s in shapes}
    at_use = []
    with torch.no_grad():
        for s in shapes:
            got = _double(torch.tensor(data[s])).numpy()
            np.testing.assert_allclose(got, (data[s] * 2 + 1).sum(1), rtol=1e-6)
            at_use.append(shape_templates.validations["at_use"])
    assert at_use[2] == at_use[1]  # (3, 5): the rows at their traced value: no validation
    assert at_use[3] > at_use[2]  # (4, 6): validated there (each op of the function)
    assert at_use[4] == at_use[3]
