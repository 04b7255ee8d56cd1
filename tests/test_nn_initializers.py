"""funcgrad.nn.initializers against jax.nn.initializers: the same key gives the same bits."""

from __future__ import annotations

import inspect

import jax
import jax.nn.initializers as jinit
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
from funcgrad.nn import initializers as finit

KEY = jax.random.PRNGKey(7)
#: one shape everywhere, so each sampler compiles once per dtype (on both sides)
SHAPE = (3, 4, 5)


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


BUILDERS = [
    ("uniform", (0.5,)),
    ("normal", (0.3,)),
    ("truncated_normal", (0.3,)),
    ("truncated_normal", (1.0, None, -1.0, 0.5)),
    ("glorot_uniform", ()),
    ("glorot_normal", ()),
    ("he_normal", ()),
    ("lecun_uniform", ()),
    ("constant", (-2.5,)),
]


@pytest.mark.parametrize("name,args", BUILDERS, ids=[f"{n}{a}" for n, a in BUILDERS])
def test_bit_identical(name, args):
    _bit_identical(name, args, jnp.float32)


@pytest.mark.parametrize(
    "name,dtype",
    [("normal", jnp.bfloat16), ("glorot_uniform", jnp.float16), ("he_normal", jnp.float64)],
)
def test_bit_identical_dtypes(name, dtype):
    _bit_identical(name, (), dtype)


def test_aliases():
    assert finit.xavier_uniform is finit.glorot_uniform
    assert finit.xavier_normal is finit.glorot_normal
    assert finit.kaiming_uniform is finit.he_uniform
    assert finit.kaiming_normal is finit.he_normal


def _bit_identical(name, args, dtype):
    shape = SHAPE
    _same_bits(
        getattr(finit, name)(*args)(KEY, shape, dtype),
        getattr(jinit, name)(*args)(KEY, shape, dtype),
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(scale=1.3, mode="fan_out", distribution="normal", in_axis=0, out_axis=(1, 2)),
        dict(scale=2.0, mode="fan_geo_avg", distribution="truncated_normal", in_axis=(0, 1)),
    ],
)
def test_variance_scaling(kw):
    shape = SHAPE
    _same_bits(finit.variance_scaling(**kw)(KEY, shape), jinit.variance_scaling(**kw)(KEY, shape))


@pytest.mark.parametrize("dist", ["uniform"])
def test_variance_scaling_complex(dist):
    a = finit.variance_scaling(1.0, "fan_in", dist)(KEY, SHAPE, jnp.complex64)
    b = jinit.variance_scaling(1.0, "fan_in", dist)(KEY, SHAPE, jnp.complex64)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)
    assert a.dtype == b.dtype


def test_default_dtype_and_funcgrad_key():
    w = finit.he_normal()(fg.random.key(7), SHAPE)
    _same_bits(w, jinit.he_normal()(KEY, SHAPE))  # default float dtype


def test_zeros_ones():
    for name in ("zeros", "ones"):
        a = getattr(finit, name)(KEY, (2, 3), jnp.float16)
        _same_bits(a, getattr(jinit, name)(KEY, (2, 3), jnp.float16))
    assert finit.zeros(KEY, (2,)).dtype == jinit.zeros(KEY, (2,)).dtype


def test_truncated_normal_bounds():
    x = np.asarray(finit.truncated_normal(1.0, lower=-0.5, upper=0.5)(KEY, SHAPE))
    assert x.min() > -0.5 and x.max() < 0.5


def test_initializers_work_under_jit_and_vmap():
    init = finit.glorot_normal()
    a = fg.jit(lambda k: init(k, SHAPE))(KEY)
    _same_bits(a, jinit.glorot_normal()(KEY, SHAPE))
    keys = jax.random.split(KEY, 2)
    b = fg.vmap(lambda k: init(k, SHAPE))(keys)
    c = jax.vmap(lambda k: jinit.glorot_normal()(k, SHAPE))(keys)
    np.testing.assert_allclose(np.asarray(b), np.asarray(c), rtol=1e-6)


def test_errors_like_jax():
    with pytest.raises(ValueError, match="Can't compute input and output sizes"):
        finit.glorot_uniform()(KEY, (4,))
    with pytest.raises(ValueError, match="invalid mode"):
        finit.variance_scaling(1.0, "fan_bad", "normal")(KEY, (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        finit.variance_scaling(1.0, "fan_in", "cauchy")(KEY, (2, 2))
    with pytest.raises(ValueError, match="at least a 2D shape"):
        finit.orthogonal()(KEY, (3,))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        finit.delta_orthogonal()(KEY, (3, 3))


def test_orthogonal():
    if not hasattr(fg.random, "orthogonal"):
        with pytest.raises(NotImplementedError, match=r"random\.orthogonal"):
            finit.orthogonal()(KEY, (4, 3))
        return
    for shape, axis in [((2, 3, 4), 0)]:
        a = finit.orthogonal(2.0, column_axis=axis)(KEY, shape)
        b = jinit.orthogonal(2.0, column_axis=axis)(KEY, shape)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    d = finit.delta_orthogonal()(KEY, (3, 3, 4, 4))
    e = jinit.delta_orthogonal()(KEY, (3, 3, 4, 4))
    np.testing.assert_allclose(np.asarray(d), np.asarray(e), rtol=1e-5, atol=1e-6)


def test_names_and_signatures_match_jax():
    names = [n for n in dir(jinit) if not n.startswith("_")]
    for n in names:
        assert hasattr(finit, n), n
        j = getattr(jinit, n)
        if inspect.isfunction(j):
            fparams = list(inspect.signature(getattr(finit, n)).parameters)
            jparams = list(inspect.signature(j).parameters)
            assert fparams == jparams, n
    assert isinstance(finit.normal(), finit.Initializer)
