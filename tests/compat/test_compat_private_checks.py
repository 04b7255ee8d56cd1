"""Private names PyTorch's own tests call, against PyTorch 2.13: ``torch._assert``
(FX-traceable ``assert``: ``AssertionError(message)``; a tensor condition read as its bool),
``torch._assert_async`` (a one-element tensor must be nonzero; its words or the given
message), ``torch.ops.aten._local_scalar_dense`` (``item``'s kernel) and
``torch._debug_has_internal_overlap`` (0 none, 1 yes, 2 too hard: from the layout)."""

from __future__ import annotations

import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")


def _outcome(f, lib):
    try:
        return ("ok", f(lib))
    except (RuntimeError, TypeError, AssertionError) as e:
        return (type(e).__name__, str(e))


@pytest.mark.parametrize(
    "f",
    [
        lambda t: t._assert(True, "never"),
        lambda t: t._assert(False, "the words"),
        lambda t: t._assert(0, 3),
        lambda t: t._assert([], None),
        lambda t: t._assert(t.tensor(1.5), "never"),
        lambda t: t._assert(t.tensor(0), "zero tensor"),
        lambda t: t._assert(t.tensor([False]), "one false element"),
        lambda t: t._assert(t.tensor([1, 1]), "two elements"),
        lambda t: t._assert(t.tensor([]), "no elements"),
    ],
)
def test_assert(f):
    assert _outcome(f, ctorch) == _outcome(f, torch)


@pytest.mark.parametrize(
    "f",
    [
        lambda t: t._assert_async(t.tensor(1)),
        lambda t: t._assert_async(t.tensor(-0.1)),
        lambda t: t._assert_async(t.tensor(True)),
        lambda t: t._assert_async(t.tensor([2.0])),
        lambda t: t._assert_async(t.tensor(0)),
        lambda t: t._assert_async(t.tensor(0.0), "custom words"),
        lambda t: t._assert_async(t.tensor(False)),
        lambda t: t._assert_async(t.tensor(0j)),
        lambda t: t._assert_async(t.tensor([])),
        lambda t: t._assert_async(t.tensor([0, 0]), "custom words"),
        lambda t: t._assert_async(1),
        lambda t: t.ops.aten._local_scalar_dense(t.tensor([3.5])),
        lambda t: t.ops.aten._local_scalar_dense(t.tensor(7)),
        lambda t: t.ops.aten._local_scalar_dense(t.randn(0)),
    ],
)
def test_assert_async_and_local_scalar_dense(f):
    assert _outcome(f, ctorch) == _outcome(f, torch)


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.randn(3, 3),
        lambda t: t.randn(1, 3).expand(4, 3),
        lambda t: t.randn(10).as_strided([2, 1, 5], [1, 0, 2]),
        lambda t: t.randn(2, 1, 10)[::2].as_strided((2, 1, 5), (10, 0, 2)),
        lambda t: t.randn(3, 4).t(),
        lambda t: t.randn(4, 4)[:, :2],
        lambda t: t.zeros(0, 3),
        lambda t: t.randn(5)[::2],
        lambda t: t.randn(3, 1).expand(3, 1),
        lambda t: t.randn(2, 3, 4).permute(2, 0, 1),
        lambda t: t.randn(()),
    ],
)
def test_debug_has_internal_overlap(make):
    assert ctorch._debug_has_internal_overlap(make(ctorch)) == torch._debug_has_internal_overlap(
        make(torch)
    )
