"""Collectives over named axes under ``fg.vmap(..., axis_name=)``: values and derivatives
against JAX's own collectives under ``jax.vmap`` (the oracle), against a Python loop, and
the errors. The mesh side (``fg.shard_map`` on 8 devices and across processes) is in
tests/test_collectives_mesh.py.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from tests import jax_oracle

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 8, 4)).astype(np.float32)
CYCLE = [(0, 1), (1, 2), (2, 3), (3, 0)]


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


#: (id, funcgrad function, JAX function, differentiable): each on one example of X
CASES = [
    ("psum", lambda L, v: L.psum(v, "i"), True),
    ("psum_tuple_leaves", lambda L, v: L.psum((v, 2 * v), "i")[1], True),
    ("pmean", lambda L, v: L.pmean(v, "i"), True),
    ("pmax", lambda L, v: L.pmax(v, "i"), False),
    ("pmin", lambda L, v: L.pmin(v, "i"), False),
    ("all_gather", lambda L, v: L.all_gather(v, "i"), True),
    ("all_gather_axis1", lambda L, v: L.all_gather(v, "i", axis=1), True),
    ("all_gather_tiled", lambda L, v: L.all_gather(v, "i", axis=1, tiled=True), True),
    ("psum_scatter", lambda L, v: L.psum_scatter(v[:, :4], "i", scatter_dimension=1), True),
    ("psum_scatter_tiled", lambda L, v: L.psum_scatter(v, "i", tiled=True), True),
    ("ppermute", lambda L, v: L.ppermute(v, "i", CYCLE), True),
    ("all_to_all_tiled", lambda L, v: L.all_to_all(v, "i", 0, 1, tiled=True), True),
    ("all_to_all_tiled_same", lambda L, v: L.all_to_all(v, "i", 1, 1, tiled=True), True),
    ("all_to_all", lambda L, v: L.all_to_all(v[:4], "i", 0, 1), True),
    ("axis_index", lambda L, v: v * L.axis_index("i"), True),
    ("pshuffle", lambda L, v: L.pshuffle(v, "i", [2, 0, 3, 1]), True),
    ("pswapaxes", lambda L, v: L.pswapaxes(v[:, :4], "i", 1), True),
    ("mixed", lambda L, v: L.psum(v, "i") * v - L.pmean(v * v, "i"), True),
]


@pytest.mark.parametrize("in_axis", [0, 1])
@pytest.mark.parametrize("name,fn,diff", CASES, ids=[c[0] for c in CASES])
def test_vmap_collective_matches_jax(name, fn, diff, in_axis):
    """Values, and gradients of a scalar of them, equal JAX's under jax.vmap."""
    xs = np.moveaxis(X, 0, in_axis)
    ours = fg.vmap(lambda v: fn(lax, v), in_axes=in_axis, axis_name="i")
    theirs = jax.vmap(lambda v: fn(jax.lax, v), in_axes=in_axis, axis_name="i")
    _close(ours(xs), theirs(xs))
    _close(fg.jit(ours)(xs), theirs(xs))
    if diff:
        g = fg.grad(lambda x: fnp.sum(fnp.sin(ours(x))))(xs)
        want = jax_oracle.grad(lambda x: jnp.sum(jnp.sin(theirs(x))))(xs)
        _close(g, want)


@pytest.mark.parametrize("prim", ["pmax", "pmin"])
def test_pmax_pmin_derivative_splits_between_ties(prim):
    """JAX has no derivative of pmax/pmin; funcgrad's is reduce_max's (ties share it),
    checked against the reduction over the stacked examples."""
    x = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, -1.0]], np.float32)
    ours = fg.vmap(lambda v: getattr(lax, prim)(v, "i"), axis_name="i")
    red = fnp.max if prim == "pmax" else fnp.min
    want = fg.grad(lambda x: fnp.sum(3 * red(x, axis=0) * fnp.arange(1.0, 3.0)))(x)
    got = fg.grad(lambda x: fnp.sum(ours(x) * fnp.arange(1.0, 3.0)))(x)
    _close(got, want)
    t = np.ones_like(x)
    _close(fg.jvp(ours, (x,), (t,))[1][0], fg.jvp(lambda x: red(x, axis=0), (x,), (t,))[1])


def test_vmap_collectives_against_a_python_loop():
    """psum, all_gather and ppermute are what a loop over the examples computes."""
    xs = X[:, :2, 0]
    n = len(xs)
    _close(fg.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(xs), np.tile(xs.sum(0), (n, 1)))
    gathered = fg.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(xs)
    _close(gathered, np.stack([xs] * n))
    perm = [(0, 2), (2, 1)]  # a partial permutation: index 0 and 3 receive zeros
    got = fg.vmap(lambda v: lax.ppermute(v, "i", perm), axis_name="i")(xs)
    want = np.zeros_like(xs)
    for s, d in perm:
        want[d] = xs[s]
    _close(got, want)
    _close(fg.vmap(lambda v: lax.axis_index("i"), axis_name="i")(xs), np.arange(n))


def _nested(L, v):
    return (
        L.psum(v, "i") * L.axis_index("j")
        + L.all_gather(v, "i").sum(0)
        + L.psum(v, ("i", "j"))
        - L.pmean(v, "j") * L.axis_index(("i", "j"))
    )


@pytest.mark.parametrize("axes", [(0, 0), (1, 1), (1, 2)])
def test_nested_vmaps_with_different_names(axes):
    inner, outer = axes
    ours = fg.vmap(fg.vmap(lambda v: _nested(lax, v), inner, axis_name="j"), outer, axis_name="i")
    theirs = jax.vmap(
        jax.vmap(lambda v: _nested(jax.lax, v), inner, axis_name="j"), outer, axis_name="i"
    )
    _close(ours(X), theirs(X))
    g = fg.grad(lambda x: fnp.sum(fnp.cos(ours(x))))(X)
    _close(g, jax_oracle.grad(lambda x: jnp.sum(jnp.cos(theirs(x))))(X), 1e-4)


def test_all_gather_and_psum_scatter_over_two_axes_against_reshapes():
    """Over ("i", "j") the gathered index is i * n_j + j (JAX's vmap has no oracle here;
    the 8-device tests compare with jax.shard_map)."""
    x = X[:2, :3, :2]  # (n_i, n_j, 2)
    both = fg.vmap(fg.vmap(lambda v: lax.all_gather(v, ("i", "j")), axis_name="j"), axis_name="i")
    _close(both(x), np.broadcast_to(x.reshape(6, 2), (2, 3, 6, 2)))
    tiled = fg.vmap(
        fg.vmap(lambda v: lax.all_gather(v, ("j", "i"), tiled=True), axis_name="j"), axis_name="i"
    )
    _close(tiled(x), np.broadcast_to(x.transpose(1, 0, 2).reshape(12), (2, 3, 12)))
    y = X[:2, :3, :3].reshape(2, 3, 3)[..., None] * np.ones(6, np.float32)  # (2, 3, 3, 6)
    sc = fg.vmap(
        fg.vmap(lambda v: lax.psum_scatter(v, ("i", "j"), scatter_dimension=1), axis_name="j"),
        axis_name="i",
    )
    total = y.sum((0, 1))  # (3, 6): block k = i * 3 + j of the scattered dimension
    _close(sc(y), total.T.reshape(2, 3, 3))


@pytest.mark.parametrize("split,concat,mapped", [(0, 0, 0), (0, 1, 2), (1, 0, 1), (1, 1, 0)])
def test_all_to_all_over_two_axes_moves_the_mapped_axis(split, concat, mapped):
    """all_to_all over ("i", "j") under two vmaps splitting one axis of 4 into 2 x 2: the
    mapped axis and the split axis trade places (JAX's batching_test expectation)."""
    shape = (4, 4, 4)
    x = np.arange(64.0).reshape(shape)
    f = fg.vmap(
        fg.vmap(lambda v: lax.all_to_all(v, ("i", "j"), split, concat), mapped, axis_name="j"),
        mapped,
        axis_name="i",
    )
    unrolled = list(shape)
    unrolled[mapped : mapped + 1] = (2, 2)
    y = np.asarray(f(x.reshape(unrolled))).reshape(shape)
    s = split + 1 if mapped <= split else split
    _close(y, np.moveaxis(x, (mapped, s), (concat + 1, 0)))


@pytest.mark.parametrize("names", [("i", "j"), ("j", "i")])
def test_ppermute_over_two_axes_against_a_loop(names):
    """A partial permutation of the 4 x 2 indices (row-major over ``names``) moves each
    example's value; the gradient moves back along the inverse permutation."""
    perm = [(0, 5), (5, 2), (2, 7), (7, 1), (1, 0), (3, 4)]
    x = X[:, :2, :3]  # (4, 2, 3)
    f = fg.vmap(fg.vmap(lambda v: lax.ppermute(v, names, perm), axis_name="j"), axis_name="i")
    sizes = {"i": 4, "j": 2}
    where = {}
    for i in range(4):
        for j in range(2):
            d = {"i": i, "j": j}
            where[d[names[0]] * sizes[names[1]] + d[names[1]]] = (i, j)
    want = np.zeros_like(x)
    for s, d in perm:
        want[where[d]] = x[where[s]]
    _close(f(x), want)
    w = np.arange(24.0, dtype=np.float32).reshape(4, 2, 3)
    g = fg.grad(lambda x: fnp.sum(fnp.sin(f(x)) * w))(x)
    g_want = np.zeros_like(x)
    for s, d in perm:
        g_want[where[s]] = np.cos(want[where[d]]) * w[where[d]]
    _close(g, g_want)


def test_inner_name_shadows_outer_name():
    ours = fg.vmap(fg.vmap(lambda v: lax.psum(v, "i"), axis_name="i"), axis_name="i")
    theirs = jax.vmap(jax.vmap(lambda v: jax.lax.psum(v, "i"), axis_name="i"), axis_name="i")
    _close(ours(X), theirs(X))


def _in_control_flow(L, cond, scan, v):
    """A collective of the outer axis in a per-example branch, one in a loop body."""
    a = cond(v[0] > 0, lambda u: L.psum(u, "i"), lambda u: u * 2, v)
    _, b = scan(lambda c, r: (c, L.pmean(r, "i") * L.axis_index("i")), 0.0, v)
    return a + b


def test_collectives_inside_jit_cond_and_scan_under_vmap():
    """The token of the axis reaches sub-programs as an operand: the batching rules run
    there too, also when a per-example cond batches every operand of its branches."""
    ours = fg.vmap(
        fg.vmap(lambda v: _in_control_flow(lax, fg.lax.cond, fg.lax.scan, v), axis_name="j"),
        axis_name="i",
    )
    theirs = jax.vmap(
        jax.vmap(lambda v: _in_control_flow(jax.lax, jax.lax.cond, jax.lax.scan, v), axis_name="j"),
        axis_name="i",
    )
    _close(ours(X), theirs(X))
    inner = fg.jit(lambda v: lax.pmean(fnp.sin(v), "i") * v)
    jinner = jax.jit(lambda v: jax.lax.pmean(jnp.sin(v), "i") * v)
    g = fg.grad(lambda x: fnp.sum(fg.vmap(inner, axis_name="i")(x) ** 2))(X)
    want = jax_oracle.grad(lambda x: jnp.sum(jax.vmap(jinner, axis_name="i")(x) ** 2))(X)
    _close(g, want)
    # the jitted function closes over the axis: called under another size it retraces
    _close(fg.vmap(inner, axis_name="i")(X[:2]), jax.vmap(jinner, axis_name="i")(X[:2]))


def test_unbatched_operands_and_closed_over_values():
    """A collective of a value that is the same for every example: psum is n times it
    (also its derivative), all_gather repeats it."""
    c = np.float32(3.0)

    def ours(c):
        return fnp.sum(fg.vmap(lambda v: lax.psum(c * c, "i") * v, axis_name="i")(X))

    def theirs(c):
        return jnp.sum(jax.vmap(lambda v: jax.lax.psum(c * c, "i") * v, axis_name="i")(X))

    _close(ours(c), theirs(c), 1e-4)
    _close(fg.grad(ours)(c), jax_oracle.grad(theirs)(c), 1e-4)
    got = fg.vmap(lambda v: lax.all_gather(fnp.ones(2), "i") + lax.psum(1, "i"), axis_name="i")(X)
    _close(got, np.full((4, 4, 2), 5.0))
    assert fg.vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(X).shape == X.shape
    assert (
        fg.vmap(lambda v: lax.pmean(fnp.int32(3), "i"), axis_size=2, axis_name="i")(X[:2]).dtype
        == jax.vmap(lambda v: jax.lax.pmean(jnp.int32(3), "i"), axis_name="i")(X[:2]).dtype
    )


def test_jvp_and_second_order_through_collectives():
    def f(L, v):
        return L.psum(jnp.sin(v) if L is jax.lax else fnp.sin(v), "i") * L.all_gather(v, "i")[0]

    ours = fg.vmap(lambda v: f(lax, v), axis_name="i")
    theirs = jax.vmap(lambda v: f(jax.lax, v), axis_name="i")
    t = RNG.normal(size=X.shape).astype(np.float32)
    _close(fg.jvp(ours, (X,), (t,))[1], jax.jvp(theirs, (X,), (t,))[1], 1e-4)
    x = X[:, 0, :2]
    h = fg.hessian(lambda x: fnp.sum(ours(x)))(x)
    _close(h, jax_oracle.hessian(lambda x: jnp.sum(theirs(x)))(x), 1e-4)


@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    n=st.integers(1, 4),
    data=st.data(),
)
def test_all_gather_and_psum_scatter_shapes(shape, n, data):
    """all_gather at any axis (tiled or not) and its transpose psum_scatter, vs JAX."""
    axis = data.draw(st.integers(0, len(shape) - 1))
    tiled = data.draw(st.booleans())
    x = np.random.default_rng(len(shape) * n).normal(size=(n, *shape)).astype(np.float32)

    def f(L, v):
        g = L.all_gather(v, "i", axis=axis, tiled=tiled)
        return L.psum_scatter(g * g, "i", scatter_dimension=axis, tiled=tiled)

    ours = fg.vmap(lambda v: f(lax, v), axis_name="i")
    theirs = jax.vmap(lambda v: f(jax.lax, v), axis_name="i")
    _close(ours(x), theirs(x), 1e-4)


# --------------------------------------------------------------------------- errors


def test_unbound_axis_name_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(X, "i")
    with pytest.raises(NameError, match="unbound axis name: i"):
        fg.jit(lambda x: lax.all_gather(x, "i"))(X)
    with pytest.raises(NameError, match="unbound axis name: j"):
        fg.vmap(lambda v: lax.psum(v, "j"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        fg.vmap(lambda v: lax.axis_index("i"))(X)


def test_bad_permutations_and_sizes():
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        fg.vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]), axis_name="i")(X)
    with pytest.raises(ValueError, match="outside the axis of size 4"):
        fg.vmap(lambda v: lax.ppermute(v, "i", [(0, 4)]), axis_name="i")(X)
    with pytest.raises(TypeError, match="must be a list or a tuple"):
        fg.vmap(lambda v: lax.ppermute(v, "i", {0: 1}), axis_name="i")(X)
    with pytest.raises(ValueError, match="does not represent a permutation"):
        fg.vmap(lambda v: lax.pshuffle(v, "i", [0, 0, 1, 2]), axis_name="i")(X)
    with pytest.raises(ValueError, match="must match shard count 4"):
        fg.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(X)
    with pytest.raises(ValueError, match="divisible by shard_count 4"):
        fg.vmap(lambda v: lax.psum_scatter(v[:3], "i", tiled=True), axis_name="i")(X)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        fg.vmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]), axis_name="i")(X)
    with pytest.raises(NotImplementedError, match="chunk_size"):
        fg.vmap(lambda v: lax.psum(v, "i"), axis_name="i", chunk_size=2)(X)
    # chunking is fine when nothing names the axis
    _close(fg.vmap(lambda v: v * 2, axis_name="i", chunk_size=3)(X), X * 2)
