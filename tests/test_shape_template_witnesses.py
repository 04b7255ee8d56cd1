"""Which concrete trace validates a shape template (funcgrad/shape_templates.py).

A template made at a new length must equal a concrete trace at another point before it
serves; where the family already holds such a trace (its program), no new trace is
needed. These tests count the op programs traced at each length of a growing sequence
(a generation from a one-token prompt after a training step at another batch size)
and check the values against NumPy: the trace that validates is any held one where the
template's guards hold and every symbol differs, and a broadcast of ``(t, 4)`` against
``(1, t, 4)`` asks nothing of ``t`` (so a template traced at ``t = 2`` holds at 1)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import compat.torch as torch
import funcgrad as fg
from funcgrad import _compat_contract as _contract
from funcgrad import shape_templates
from funcgrad.core.symbolic import Guards, SymDim, same_shape
from funcgrad.numpy._core import _broadcast


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    # (as tests/test_shape_templates.py: funcgrad's caches emptied, JAX's left alone)
    monkeypatch.setattr(jax, "clear_caches", lambda: None)
    fg.clear_caches()
    fg.debug.reset_tier_stats()
    yield
    fg.clear_caches()


def test_shapes_of_other_ranks_compare_no_dimension():
    g = Guards()
    t = SymDim(3, ("in", 0), g)
    assert not same_shape((t, 8), (1, t, 8)) and not g.items
    assert same_shape((1, t, 8), (1, t, 8)) and not g.items
    assert (t, 8) != (1, t, 8) and g.items  # (tuple equality compares t with 1 first)


def test_a_broadcast_against_the_same_symbol_records_no_guard():
    g = Guards()
    t = SymDim(3, ("in", 0), g)
    assert _broadcast([(1, t, 8), (t, 8)]) == (1, t, 8) and not g.items
    assert _broadcast([(t, 1), (8,)]) == (t, 8) and not g.items
    assert _broadcast([(t, 8), (1, 8)]) == (t, 8)
    with pytest.raises(ValueError):
        _broadcast([(t, 8), (2, 8)])


def _programs_per_length(fn, shapes, make):
    """How many new op programs ``fn`` traced at each input shape, and its values."""
    counts, values = [], []
    for s in shapes:
        before = len(_contract._BY_KEY)
        values.append(fn(*make(s)).numpy())
        counts.append(len(_contract._BY_KEY) - before)
    return counts, values


def _position_add(x, p):
    return (x + p) * 2


@pytest.mark.parametrize("training_first", [False, True])
def test_a_growing_sequence_is_validated_against_its_first_length(training_first):
    # a one-token prompt: length 1 traced concretely, the template traced at length 2
    # (against the training batch's signature where there is one: batch 8 there, 1 here)
    # and validated against length 1's trace, which the family holds: length 3 traces
    # nothing (it used to trace each op again to validate)
    rng = np.random.default_rng(0)
    shapes = [(1, t) for t in range(1, 7)]
    if training_first:
        shapes.insert(0, (8, 5))
    data = {s: rng.standard_normal((*s, 4)).astype(np.float32) for s in shapes}
    pos = rng.standard_normal((8, 4)).astype(np.float32)
    before = dict(shape_templates.validations)
    with torch.no_grad():
        counts, values = _programs_per_length(
            _position_add, shapes, lambda s: (torch.tensor(data[s]), torch.tensor(pos[: s[1]]))
        )
    for s, got in zip(shapes, values):
        np.testing.assert_array_equal(got, (data[s] + pos[: s[1]]) * 2)
    tokens = counts[1:] if training_first else counts
    assert tokens[0] > 0 and tokens[1:] == [0] * (len(tokens) - 1)
    assert shape_templates.validations["early"] > before["early"]
    assert shape_templates.validations["at_use"] == before["at_use"]


def test_a_trace_made_to_validate_at_use_validates_a_later_template():
    # a linear layer after a training step (batch 8): at length 1 a template over the
    # output features (7 against 6) serves a second layer (9) once validated there by a
    # concrete trace; that trace is the family's too, so the template made at length 2
    # (against it: the length alone changed) is validated against it, and lengths 3 and 4
    # trace nothing (made against the training signature instead, with the features
    # symbolic too at their value 9, it would trace to validate at every later length)
    def lin(x, w):
        return torch.nn.functional.linear(x, w)

    rng = np.random.default_rng(1)
    calls = [((8, 5), 6), ((1, 1), 7), ((1, 1), 9), ((1, 2), 9), ((1, 3), 9), ((1, 4), 9)]
    xs = {s: rng.standard_normal((*s, 4)).astype(np.float32) for s, _ in calls}
    ws = {n: rng.standard_normal((n, 4)).astype(np.float32) for _, n in calls}
    counts = []
    with torch.no_grad():
        for s, n in calls:
            b = len(_contract._BY_KEY)
            got = lin(torch.tensor(xs[s]), torch.tensor(ws[n])).numpy()
            counts.append(len(_contract._BY_KEY) - b)
            np.testing.assert_allclose(got, xs[s] @ ws[n].T, rtol=1e-5, atol=1e-6)
    assert counts[0] > 0 and counts[2] > 0  # (the training shape; the validation at use)
    assert counts[3:] == [0, 0, 0]


def test_a_template_that_can_be_validated_at_once_is_preferred():
    # two recorded calls (traced concretely: a training step at (8, 5) x 7 rows, and
    # (1, 1) x 6), then a generation without grad. At (1, 2) x 7 the closest signature is
    # the training step's (the length alone symbolic), but a template of that layout
    # cannot be checked against any trace the family holds (its batch is 1); the one made
    # against (1, 1) x 6 (the length and the rows symbolic) is checked against that trace
    # at once: nothing is traced at the later lengths, of either row count
    def lin(x, w):
        return torch.nn.functional.linear(x, w)

    rng = np.random.default_rng(2)
    calls = [((8, 5), 7), ((1, 1), 6), ((1, 2), 7), ((1, 3), 7), ((1, 3), 6), ((1, 4), 7)]
    xs = {s: rng.standard_normal((*s, 4)).astype(np.float32) for s, _ in calls}
    ws = {n: rng.standard_normal((n, 4)).astype(np.float32) for _, n in calls}
    counts = []
    for i, (s, n) in enumerate(calls):
        b = len(_contract._BY_KEY)
        w = torch.tensor(ws[n], requires_grad=i < 2)
        with torch.set_grad_enabled(i < 2):
            got = lin(torch.tensor(xs[s]), w).detach().numpy()
        counts.append(len(_contract._BY_KEY) - b)
        np.testing.assert_allclose(got, xs[s] @ ws[n].T, rtol=1e-5, atol=1e-6)
    assert counts[0] > 0 and counts[1] > 0 and counts[2:] == [0, 0, 0, 0]
