"""Products (matmul, dot, tensordot, einsum, ...) and norms against jax.numpy."""

from __future__ import annotations

import itertools

import jax.numpy as jnp
import numpy as np
import pytest
from fnp_testutil import (
    BOOL,
    F16,
    F32,
    I8,
    I32,
    check,
    check_abstract,
    check_batch,
    operand,
    raises_same,
    rand,
    seeds,
)
from hypothesis import given
from hypothesis import strategies as st

import funcgrad.numpy as fnp

MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (4, 3, 2)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
]
DOT_SHAPES = MATMUL_SHAPES + [((), (3,)), ((2, 3), ()), ((2, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3))]
KIND_PAIRS = [
    (F32, F32),
    (I32, I32),
    (I8, I8),
    (BOOL, BOOL),
    (F32, I32),
    (F16, F16),
    (I32, "weak_f32"),
    (BOOL, I32),
    ("weak_f32", "weak_f32"),
]


@pytest.mark.parametrize("name", ["matmul", "dot", "inner", "vdot", "outer", "tensordot", "kron"])
def test_product_dtypes(name: str) -> None:
    f, g = getattr(fnp, name), getattr(jnp, name)
    shapes = DOT_SHAPES if name != "inner" else DOT_SHAPES + [((2, 3), (4, 3))]
    for (s1, s2), (k1, k2) in itertools.product(shapes, KIND_PAIRS):
        if name == "kron" and BOOL in (k1, k2):
            continue  # jnp.kron multiplies with lax.mul, which rejects bools
        a, b = operand(k1, s1), operand(k2, s2)
        check_abstract(f, g, a, b, what=f"{name}({k1}{s1}, {k2}{s2})")
    check_abstract(f, g, 2, 3.0, what=f"{name}(2, 3.0)")


@given(
    seed=seeds,
    shapes=st.sampled_from([MATMUL_SHAPES[i] for i in (0, 3, 6, 9)]),
    kinds=st.sampled_from([(F32, F32), (F32, F32), (I32, I32)]),
)
def test_product_values(seed: int, shapes, kinds) -> None:
    rng = np.random.default_rng(seed)
    a, b = rand(rng, shapes[0], kinds[0]), rand(rng, shapes[1], kinds[1])
    cases = [
        (name, getattr(fnp, name), getattr(jnp, name), (a, b))
        for name in ["matmul", "dot", "inner", "vdot", "outer", "tensordot", "kron"]
    ]
    check_batch(cases, key=(shapes, kinds), scale=10.0)


def test_bool_and_int8_products() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random((2, 3)) < 0.5, rng.random((3, 4)) < 0.5
    for name in ["matmul", "dot"]:
        check(getattr(fnp, name), getattr(jnp, name), a, b, jit=False)
    check(lambda x, y: fnp.tensordot(x, y, 1), lambda x, y: jnp.tensordot(x, y, 1), a, b, jit=False)
    a8, b8 = rand(rng, (2, 3), I8), rand(rng, (3, 4), I8)
    check(fnp.matmul, jnp.matmul, a8, b8)
    check(
        lambda x, y: fnp.matmul(x, y, preferred_element_type=np.int32),
        lambda x, y: jnp.matmul(x, y, preferred_element_type=np.int32),
        a8,
        b8,
    )
    check(
        lambda x, y: fnp.einsum("ij,jk->ik", x, y, preferred_element_type=np.float32),
        lambda x, y: jnp.einsum("ij,jk->ik", x, y, preferred_element_type=np.float32),
        a8,
        b8,
    )


@pytest.mark.parametrize("axes", [0, 1, 2, (1, 0), ((0,), (1,)), ((2, 1), (0, 1)), ([-1], [0])])
def test_tensordot_axes(axes) -> None:
    rng = np.random.default_rng(2)
    a, b = rand(rng, (2, 3, 4), F32), rand(rng, (4, 3, 2), F32)
    if axes == 2:
        b = rand(rng, (3, 4, 5), F32)
    if axes == 1:
        b = rand(rng, (4, 5), F32)
    if axes == (1, 0):
        b = rand(rng, (3, 2), F32)
    if raises_same(lambda: fnp.tensordot(a, b, axes), lambda: jnp.tensordot(a, b, axes)):
        return
    check(
        lambda x, y: fnp.tensordot(x, y, axes),
        lambda x, y: jnp.tensordot(x, y, axes),
        a,
        b,
        scale=10.0,
    )


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("i,i->", [(3,), (3,)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (2,)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,jk->...ik", [(2, 5, 2, 3), (3, 4)]),
    ("...j,j", [(2, 3), (3,)]),
    ("...i->...", [(2, 3, 4)]),
    ("i...->...", [(2, 3, 4)]),
    ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 5)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("iij->ij", [(3, 3, 2)]),
    ("iji->ij", [(3, 2, 3)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("a,b,c->abc", [(2,), (3,), (2,)]),
    ("ij,kl->ikjl", [(2, 3), (2, 2)]),
    ("ba,ab", [(3, 2), (2, 3)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]),
    (" ij , jk -> ik ", [(2, 3), (3, 4)]),
    ("i,i,i", [(3,), (3,), (3,)]),
    ("...", [(2, 3)]),
    ("ij,j->i", [(2, 3), (1,)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ijj,jk->ik", [(2, 3, 3), (3, 4)]),
    ("bi,bj->bij", [(0, 2), (0, 3)]),  # an empty label stays empty (it broadcast to 1)
    ("bi,kij,bj->bk", [(0, 2), (4, 2, 3), (0, 3)]),
]


@pytest.mark.parametrize("subs,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(subs: str, shapes) -> None:
    rng = np.random.default_rng(3)
    ops = [rand(rng, s, F32) for s in shapes]
    if raises_same(lambda: fnp.einsum(subs, *ops), lambda: jnp.einsum(subs, *ops)):
        return
    check(lambda *o: fnp.einsum(subs, *o), lambda *o: jnp.einsum(subs, *o), *ops, scale=10.0)
    ints = [rand(rng, s, I8) for s in shapes]
    check_abstract(
        lambda *o: fnp.einsum(subs, *o), lambda *o: jnp.einsum(subs, *o), *ints, what=subs
    )
    if len(shapes) > 2:
        return  # jnp.einsum rejects a narrower preferred_element_type mid-contraction
    mixed = [rand(rng, s, k) for s, k in zip(shapes, [BOOL, F16])]
    check_abstract(
        lambda *o: fnp.einsum(subs, *o), lambda *o: jnp.einsum(subs, *o), *mixed, what=subs
    )


def test_einsum_errors() -> None:
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="einsum"):
        fnp.einsum("ij,jk->ik", a, a)
    with pytest.raises(ValueError, match="einsum"):
        fnp.einsum("ij->k", a)
    with pytest.raises(ValueError, match="einsum"):
        fnp.einsum("ijk", a)
    with pytest.raises(ValueError, match="einsum"):
        fnp.einsum("ij,j", a)


@given(
    seed=seeds,
    ord=st.sampled_from([None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1]),
    axis=st.sampled_from([None, 0, 1, -1]),
    keepdims=st.booleans(),
)
def test_vector_norms(seed: int, ord, axis, keepdims: bool) -> None:
    x = rand(np.random.default_rng(seed), (3, 4), F32)
    if axis is None and ord is not None:
        x = x[0]
    f = lambda v: fnp.linalg.norm(v, ord=ord, axis=axis, keepdims=keepdims)
    g = lambda v: jnp.linalg.norm(v, ord=ord, axis=axis, keepdims=keepdims)
    if raises_same(lambda: f(x), lambda: g(x)):
        return
    check(f, g, x, scale=10.0)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf])
def test_matrix_norms(ord) -> None:
    x = rand(np.random.default_rng(4), (3, 4), F32)
    cases = []
    for axis in [None, (0, 1), (1, 0), (-1, -2)]:
        for keepdims in (False, True):
            cases.append(
                (
                    f"{axis},{keepdims}",
                    lambda v, axis=axis, keepdims=keepdims: fnp.linalg.norm(v, ord, axis, keepdims),
                    lambda v, axis=axis, keepdims=keepdims: jnp.linalg.norm(v, ord, axis, keepdims),
                    (x,),
                )
            )
    check_batch(cases)
    np.testing.assert_allclose(
        fnp.linalg.norm(x, ord="nuc"), jnp.linalg.norm(x, ord="nuc"), rtol=1e-5
    )


def test_norm_dtypes_and_helpers() -> None:
    for kind in [F32, F16, I32, I8, BOOL, "py_float", "py_int", "weak_f32"]:
        x = operand(kind, (3,))
        check_abstract(fnp.linalg.norm, jnp.linalg.norm, x, what=f"norm({kind})")
    rng = np.random.default_rng(5)
    x = rand(rng, (2, 3, 4), F32)
    check(
        lambda v: fnp.linalg.vector_norm(v, axis=1, ord=1),
        lambda v: jnp.linalg.vector_norm(v, axis=1, ord=1),
        x,
    )
    check(
        lambda v: fnp.linalg.vector_norm(v, keepdims=True),
        lambda v: jnp.linalg.vector_norm(v, keepdims=True),
        x,
    )
    check(
        lambda v: fnp.linalg.matrix_norm(v, ord=np.inf),
        lambda v: jnp.linalg.matrix_norm(v, ord=np.inf),
        x,
    )
    check(lambda v: fnp.linalg.matrix_norm(v), lambda v: jnp.linalg.matrix_norm(v), x)
    check(lambda v: fnp.linalg.vecdot(v, v, axis=1), lambda v: jnp.linalg.vecdot(v, v, axis=1), x)
    check(lambda v: fnp.vecdot(v, v[0]), lambda v: jnp.vecdot(v, v[0]), x)
    check(lambda v: fnp.linalg.trace(v), lambda v: jnp.linalg.trace(v), x)
    check(lambda v: fnp.linalg.diagonal(v, offset=1), lambda v: jnp.linalg.diagonal(v, offset=1), x)
    check(lambda v: fnp.linalg.matrix_transpose(v), lambda v: jnp.linalg.matrix_transpose(v), x)
    with pytest.raises(ValueError, match="inv"):
        jnp.linalg.inv(x)
    with pytest.raises(ValueError, match="inv: expected square matrices"):
        fnp.linalg.inv(x)


def test_cross_kron_trace() -> None:
    rng = np.random.default_rng(6)
    a, b = rand(rng, (4, 3), F32), rand(rng, (3,), F32)
    check(fnp.cross, jnp.cross, a, b)
    check(fnp.cross, jnp.cross, a[:, :2], b[:2])
    check(fnp.cross, jnp.cross, a[:, :2], b)
    c = rand(rng, (3, 4), F32)
    check(
        lambda x, y: fnp.cross(x, y, axisa=0, axisc=0),
        lambda x, y: jnp.cross(x, y, axisa=0, axisc=0),
        c,
        b,
    )
    check(fnp.kron, jnp.kron, rand(rng, (2, 3), F32), rand(rng, (2, 2), I32))
    check(fnp.kron, jnp.kron, rand(rng, (3,), F32), rand(rng, (2, 2), F32))
    x = rand(rng, (3, 4, 2), I8)
    check(lambda v: fnp.trace(v, 1, 0, 1), lambda v: jnp.trace(v, 1, 0, 1), x)
    check(
        lambda v: fnp.trace(v, -1, 2, 0, dtype=np.float32),
        lambda v: jnp.trace(v, -1, 2, 0, dtype=np.float32),
        x,
    )
