"""``lax.gather``/``lax.scatter`` with malformed dimension numbers: the ``TypeError`` and
the sentence of JAX 0.10.2's shape rules, one case per check (each sentence differs), on
funcgrad and on JAX. funcgrad's message may carry its primitive's name in front."""

from __future__ import annotations

import jax
import jax.lax as jlax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as flax

G = jlax.GatherDimensionNumbers
S = jlax.ScatterDimensionNumbers
OP5 = (10, 9, 8, 7, 6)

#: (operand shape, indices shape, offset_dims, collapsed, start_index_map, batching
#: (operand, indices), slice sizes)
GATHER = {
    "offset_not_sorted": (OP5, (5, 4, 3, 2, 5), (4, 3, 5, 6, 7), (), (0, 1, 2, 3, 4), (), OP5),
    "offset_repeated": (OP5, (5, 4, 3, 2, 5), (4, 4, 5, 6, 7), (), (0, 1, 2, 3, 4), (), OP5),
    "offset_out_of_bounds": (OP5, (5, 4, 3, 2, 5), (4, 5, 6, 7, 9), (), (0, 1, 2, 3, 4), (), OP5),
    "index_vector_length": (OP5, (5, 4, 3, 2, 5), (4, 5, 6, 7, 8), (), (0, 1, 2, 3), (), OP5),
    "start_map_out_of_range": (OP5, (5, 4, 3, 2, 2), (4, 5, 6, 7, 8), (), (0, 9), (), OP5),
    "start_map_repeated": (OP5, (5, 4, 3, 2, 2), (4, 5, 6, 7, 8), (), (3, 3), (), OP5),
    "collapsed_not_sorted": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (1, 0), (0, 1), (), (1, 1, 8, 7, 6)),
    "collapsed_out_of_range": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (0, 7), (0, 1), (), OP5),
    "collapsed_repeated": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (1, 1), (0, 1), (), OP5),
    "batching_not_sorted": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (), (0, 1), ((3, 2), (0, 1)), OP5),
    "collapsed_and_batching": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (2,), (0, 1), ((2,), (0,)), OP5),
    "start_map_and_batching": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (), (0, 2), ((2,), (0,)), OP5),
    "index_batching_repeated": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (), (0, 1), ((2, 3), (1, 1)), OP5),
    "index_vector_batching": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (), (0, 1), ((2,), (4,)), OP5),
    "batching_count": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (), (0, 1), ((2, 3), (0,)), OP5),
    "batching_sizes": (OP5, (5, 4, 3, 2, 2), (4, 5, 6), (), (0, 1), ((2,), (0,)), OP5),
    "slice_sizes_count": (OP5, (5, 4, 3, 2, 5), (4, 5, 6, 7), (2,), (0, 1, 2, 3, 4), (), OP5[:4]),
    "slice_accounting": (OP5, (5, 4, 3, 2, 5), (4, 5, 6, 7), (), (0, 1, 2, 3, 4), (), OP5),
    "slice_too_large": (
        OP5,
        (5, 4, 3, 2, 5),
        (4, 5, 6, 7),
        (2,),
        (0, 1, 2, 3, 4),
        (),
        (10, 9, 1, 70, 6),
    ),
    "collapsed_bound": (OP5, (5, 4, 3, 2, 5), (4, 5, 6, 7), (2,), (0, 1, 2, 3, 4), (), OP5),
    "batching_bound": (OP5, (9, 4, 3, 2, 4), (4, 5, 6, 7), (), (0, 2, 3, 4), ((1,), (0,)), OP5),
}


def _gather(lax_, case):
    op, ix, offset, collapsed, sim, batching, sizes = GATHER[case]
    ob, ib = batching if batching else ((), ())
    dn = lax_.GatherDimensionNumbers(offset, collapsed, sim, ob, ib)
    return lax_.gather(np.ones(op, np.int32), np.ones(ix, np.int32), dn, sizes)


@pytest.mark.parametrize("case", GATHER)
def test_gather(case):
    with pytest.raises(TypeError) as theirs:
        _gather(jlax, case)
    with pytest.raises(TypeError) as ours:
        _gather(flax, case)
    assert str(ours.value).split("\n")[0].endswith(str(theirs.value))


OP = (50, 49, 48, 47, 46)
U = (10, 9, 8, 7, 3, 2, 4)
#: (operand, indices, updates, update_window_dims, inserted, scatter_dims_to_operand,
#: batching (operand, indices))
SCATTER = {
    "updates_rank": (OP, (10, 9, 8, 7, 5), U[:-1], (4, 5, 6), (1, 2), (0, 1, 2, 3, 4), ()),
    "window_not_sorted": (OP, (10, 9, 8, 7, 5), U, (5, 4, 6), (1, 2), (0, 1, 2, 3, 4), ()),
    "window_repeated": (OP, (10, 9, 8, 7, 5), U, (4, 4, 6), (1, 2), (0, 1, 2, 3, 4), ()),
    "window_out_of_range": (OP, (10, 9, 8, 7, 5), U, (4, 5, 7), (1, 2), (0, 1, 2, 3, 4), ()),
    "inserted_not_sorted": (OP, (10, 9, 8, 7, 5), U, (4, 5, 6), (2, 1), (0, 1, 2, 3, 4), ()),
    "inserted_out_of_range": (OP, (10, 9, 8, 7, 5), U, (4, 5, 6), (1, 5), (0, 1, 2, 3, 4), ()),
    "batching_repeated": (
        OP,
        (10, 9, 8, 7, 5),
        U,
        (4, 5, 6),
        (),
        (0, 1, 2, 3, 4),
        ((1, 1), (0, 1)),
    ),
    "inserted_and_batching": (OP, (10, 9, 8, 7, 3), U, (4, 5, 6), (1,), (0, 2, 3), ((1,), (0,))),
    "scatter_dims_and_batching": (
        OP,
        (10, 9, 8, 7, 3),
        U,
        (4, 5, 6),
        (),
        (0, 2, 3),
        ((2, 4), (0, 1)),
    ),
    "index_batching_out_of_range": (
        OP,
        (10, 9, 8, 7, 5),
        U,
        (4, 5, 6),
        (),
        (0, 3, 4),
        ((1, 2), (0, 7)),
    ),
    "index_vector_batching": (
        OP,
        (10, 9, 8, 7, 5),
        U,
        (4, 5, 6),
        (),
        (0, 3, 4),
        ((1, 2), (0, 4)),
    ),
    "batching_count": (OP, (10, 9, 8, 7, 5), U, (4, 5, 6), (), (0, 3, 4), ((1, 2), (0,))),
    "operand_indices_batch": (
        OP,
        (10, 9, 8, 7, 5),
        U,
        (4, 5, 6),
        (),
        (0, 3, 4),
        ((1, 2), (0, 1)),
    ),
    "window_size": (OP, (10, 9, 8, 7, 5), U, (4, 5, 6), (1,), (0, 1, 2, 3, 4), ()),
    "scatter_dims_count": (OP, (10, 9, 8, 7, 5), U, (4, 5, 6), (1, 2), (0, 1, 2, 3), ()),
    "scatter_dims_range": (OP, (10, 9, 8, 7, 5), U, (4, 5, 6), (1, 2), (0, 1, 2, 3, 10), ()),
    "scatter_dims_repeated": (OP, (10, 9, 8, 7, 5), U, (4, 5, 6), (1, 2), (0, 1, 2, 2, 3), ()),
    "window_bound": (
        (2, 49, 48, 47, 46),
        (10, 9, 8, 7, 5),
        U,
        (4, 5, 6),
        (1, 2),
        (0, 1, 2, 3, 4),
        (),
    ),
    "updates_batch": (
        (50, 10, 48, 47, 46),
        (10, 9, 8, 7, 3),
        (11, 9, 8, 7, 3, 2, 4),
        (4, 5, 6),
        (),
        (0, 2, 3),
        ((1,), (0,)),
    ),
    "scatter_bound": (OP, (10, 9, 8, 6, 5), U, (4, 5, 6), (1, 2), (0, 1, 2, 3, 4), ()),
}


def _scatter(lib, case):
    op, ix, up, uwd, iwd, sdims, batching = SCATTER[case]
    ob, ib = batching if batching else ((), ())
    dn = lib.lax.ScatterDimensionNumbers(uwd, iwd, sdims, ob, ib)
    idx = np.zeros(ix, np.int32)

    def f(x, y):
        return lib.lax.scatter(lib.lax.broadcast(x, op), idx, lib.lax.broadcast(y, up), dn)

    return lib.eval_shape(f, np.int32(1), np.int32(1))


@pytest.mark.parametrize("case", SCATTER)
def test_scatter(case):
    with pytest.raises(TypeError) as theirs:
        _scatter(jax, case)
    with pytest.raises(TypeError) as ours:
        _scatter(fg, case)
    assert str(ours.value).split("\n")[0].endswith(str(theirs.value))


def test_well_formed_numbers_still_work():
    dn = G(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    x, i = np.arange(12.0, dtype=np.float32).reshape(4, 3), np.array([[2], [0]], np.int32)
    np.testing.assert_array_equal(flax.gather(x, i, dn, (1, 3)), jlax.gather(x, i, dn, (1, 3)))
    sdn = S(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    u = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(flax.scatter_add(x, i, u, sdn), jlax.scatter_add(x, i, u, sdn))
