"""What the eager cold path's faster helpers must keep computing (nineteenth session,
helper-106): program keys and their params' keys, the host plan's interpreter and broadcast, the
shape templates' static-argument split and signature match, ``_ints`` and the x64 flag.

Each is checked against an independent oracle: a plain recursive reference written
here (the definitions the faster code replaced), JAX's evaluation of the same
function, or JAX's own x64 flag."""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad.lax as lax
from funcgrad import shape_templates
from funcgrad.core import dtypes
from funcgrad.core.host import HostPlan
from funcgrad.core.interp import trace_flat
from funcgrad.core.ir import Aval, Eqn, Program, ShapedArray, _hashable_param
from funcgrad.core.symbolic import Guards, SymDim, holds
from funcgrad.primitives.shape import _host_spread, _ints

_PLAIN = (int, str, bool, float, type(None))


def _reference_param_key(v):
    """The params key as a plain recursion (lists and tuples alike, dicts sorted)."""
    if type(v) in _PLAIN:
        return v
    if type(v) is SymDim:
        return ("sym", v.expr)
    if isinstance(v, (list, tuple)):
        return tuple(_reference_param_key(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _reference_param_key(x)) for k, x in v.items()))
    if isinstance(v, np.ndarray):
        return ("nd", v.shape, v.dtype.str, v.tobytes())
    return v


_LEAVES = st.one_of(
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
    st.sampled_from(["a", "b", "cd"]),
    st.floats(allow_nan=False, width=32),
    st.sampled_from([np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.bool_)]),
    st.integers(0, 3).map(lambda k: SymDim(4, ("in", k), Guards())),
    st.lists(st.integers(0, 3), max_size=3).map(lambda xs: np.asarray(xs, np.int32)),
)
_PARAMS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["x", "y", "z", "w"]), inner, max_size=3),
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.sampled_from(["shape", "axes", "dtype", "k", "spec"]), _PARAMS))
def test_param_keys_are_the_plain_recursions(params):
    got = _hashable_param(params)
    assert got == _reference_param_key(params)
    hash(got)


def _prog(fn, *avals):
    return trace_flat(fn, list(avals), "test")


def _chain(x, y):
    return [(x + y) * 2.0]


def test_program_keys_tell_avals_apart_by_every_field():
    f32 = np.dtype(np.float32)
    base = _prog(_chain, Aval((2, 3), f32), Aval((2, 3), f32))
    same = _prog(_chain, Aval((2, 3), f32), Aval((2, 3), f32))
    assert base.key() == same.key() and base.hashed_key() == same.hashed_key()
    for other in (
        _prog(_chain, Aval((3, 2), f32), Aval((3, 2), f32)),
        _prog(_chain, Aval((2, 3), np.dtype(np.float64)), Aval((2, 3), np.dtype(np.float64))),
    ):
        assert base.key() != other.key()
    # a weak type and an aval subclass are part of the key, as the dataclass's equality has
    # them (an Aval never equals a ShapedArray of the same fields)
    weak = Program(base.invars, (), (), (base.invars[0],))
    v = base.invars[0]
    w = type(v)(Aval(v.aval.shape, v.aval.dtype, True))
    assert weak.key() != Program((w, *base.invars[1:]), (), (), (w,)).key()
    s = type(v)(ShapedArray(v.aval.shape, v.aval.dtype))
    assert Aval(v.aval.shape, v.aval.dtype) != s.aval
    assert weak.key() != Program((s, *base.invars[1:]), (), (), (s,)).key()


def test_eqns_are_frozen_and_take_keywords():
    prog = _prog(_chain, Aval((2,), np.dtype(np.float32)), Aval((2,), np.dtype(np.float32)))
    e = prog.eqns[0]
    e2 = Eqn(prim=e.prim, inputs=e.inputs, outvars=e.outvars, params=e.params)
    assert (e2.prim, e2.inputs, e2.outvars, e2.params, e2.source) == (
        e.prim,
        e.inputs,
        e.outvars,
        e.params,
        None,
    )
    with pytest.raises(AttributeError):
        e2.prim = None  # type: ignore[misc]


def _mixed(x, y, p):
    # one, two and three operands (select_n), a weak scalar operand cast, a literal, and a
    # primitive with several results
    a = lax.exp(x)
    b = lax.add(a, y)
    c = lax.select(p, b, lax.mul(x, np.float32(3.0)))
    lo, hi = lax.sort((c, lax.neg(c)), num_keys=1)
    return [lax.sub(lo, hi), lax.max(c, np.float32(0.5))]


def _jax_mixed(x, y, p):
    c = jnp.where(p, jnp.exp(x) + y, x * np.float32(3.0))
    lo, hi = jax.lax.sort((c, -c), num_keys=1)
    return [lo - hi, jnp.maximum(c, np.float32(0.5))]


@pytest.mark.parametrize("generate_after", [10**9, 1])
def test_interpreted_and_generated_plans_compute_what_jax_computes(generate_after):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(7).astype(np.float32)
    y = rng.standard_normal(7).astype(np.float32)
    p = rng.standard_normal(7) > 0
    f32, b = np.dtype(np.float32), np.dtype(np.bool_)
    prog = _prog(_mixed, Aval((7,), f32), Aval((7,), f32), Aval((7,), b))
    plan = HostPlan(prog, generate_after=generate_after)
    want = jax.jit(_jax_mixed)(x, y, p)
    for _ in range(2):  # (the first call of ``generate_after=1`` generates the code)
        got = plan.run(*prog.consts, x, y, p)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-6)


_STATIC = st.recursive(
    st.one_of(st.integers(-3, 40), st.booleans(), st.none(), st.sampled_from(["a", "mean"])),
    lambda inner: st.lists(inner, max_size=4).map(tuple),
    max_leaves=12,
)


def _reference_ints(x):
    if type(x) is int:
        return [x]
    if type(x) is tuple:
        return [i for y in x for i in _reference_ints(y)]
    return []


@given(_STATIC)
def test_split_static_takes_out_exactly_the_ints_and_fill_puts_them_back(static):
    skeleton, ints = shape_templates.split_static(static)
    assert list(ints) == _reference_ints(static)
    assert shape_templates.fill_static(skeleton, ints) == static
    again, _ = shape_templates.split_static(tuple(static) if type(static) is tuple else static)
    assert again == skeleton


def _reference_match(tm, sig):
    """Template.match as a walk over every dimension of every entry."""
    if len(sig) != len(tm.layout):
        return None
    dims = [None] * tm.n_syms
    for s, t, lay in zip(sig, tm.sig, tm.layout):
        if lay is None:
            if s is not t:
                return None
            continue
        if type(s) is type or s[1] != t[1] or len(s[0]) != len(lay):
            return None
        for d, dt, k in zip(s[0], t[0], lay):
            if k is None:
                if d != dt:
                    return None
            elif dims[k] is None:
                dims[k] = d
            elif dims[k] != d:
                return None
    return tuple(dims) if holds(tm.guards, tuple(dims)) else None


def _affine(x, w, b, c):
    return [lax.add(lax.add(lax.mul(x, c), w), lax.broadcast_in_dim(b, x.shape, (1,)))]


@given(
    st.integers(2, 6),
    st.integers(1, 6),
    st.integers(2, 6),
    st.sampled_from([4, 5]),
    st.sampled_from([np.float32, np.float64]),
    st.sampled_from([float, int]),
)
def test_template_match_is_the_per_dimension_walk(t, c, w_rows, b_len, dtype, scalar):
    f32 = np.dtype(np.float32)
    # x and w share a symbolic row count; b has no symbol (compared whole); a scalar's type
    sig = (((3, 5), f32), ((3, 5), f32), ((5,), f32), float)
    layout = ((0, None), (0, None), (None,), None)

    def fn_of(static):
        return lambda x, w, b, s: _affine(x, w, b, lax.convert_element_type(s, np.float32))

    scalar_avals = {float: Aval((), np.dtype(np.float64), True)}
    tm = shape_templates.Template(fn_of, sig, layout, scalar_avals)
    probe = (
        ((t, 5), f32),
        ((w_rows, 5 if c > 1 else c), f32),
        ((b_len,), np.dtype(dtype)),
        scalar,
    )
    want = _reference_match(tm, probe)
    got = tm.match(probe)
    assert got == want if want is not None else got is None
    if (t, w_rows, c > 1, b_len, dtype, scalar) == (t, t, True, 5, np.float32, float):
        assert got == (t,)  # (the probes do reach a match)


def test_ints_keep_ints_and_symbols_and_read_the_rest_as_indices():
    s = SymDim(3, ("in", 0), Guards())
    xs = (1, 2, 3)
    assert _ints(xs) is xs
    assert _ints([np.int64(2), True, 4]) == (2, 1, 4)
    got = _ints((2, s))
    assert got[0] == 2 and got[1] is s
    with pytest.raises(TypeError):
        _ints((1.5,))
    assert _ints(range(3)) == tuple(operator.index(i) for i in range(3))


def test_x64_flag_is_jax_own():
    outer = bool(jax.config.jax_enable_x64)
    assert dtypes.x64_enabled() is outer
    with jax.enable_x64(not outer):
        assert dtypes.x64_enabled() is (not outer)
        assert dtypes.x64_enabled() is bool(jax.config.jax_enable_x64)
    assert dtypes.x64_enabled() is outer


@given(
    st.lists(st.integers(1, 4), min_size=0, max_size=4),
    st.data(),
    st.sampled_from([np.float32, np.int64, np.bool_]),
)
def test_host_broadcast_is_numpys_broadcast_of_the_mapped_dims(shape, data, dtype):
    shape = tuple(shape)
    k = data.draw(st.integers(0, len(shape)))
    dims = tuple(sorted(data.draw(st.permutations(range(len(shape))))[:k]))
    xshape = tuple(data.draw(st.sampled_from([1, shape[d]])) for d in dims)
    x = (np.arange(int(np.prod(xshape))) % 7).astype(dtype).reshape(xshape)  # (bools too)
    sizes = [xshape[dims.index(d)] if d in dims else 1 for d in range(len(shape))]
    want = np.broadcast_to(x.reshape(sizes), shape)
    got = _host_spread(x, shape, dims)
    assert got.dtype == x.dtype and got.shape == shape
    np.testing.assert_array_equal(got, want)
