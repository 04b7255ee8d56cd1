"""``funcgrad.scipy.spatial.transform`` (``Rotation``, ``Slerp``) against
``jax.scipy.spatial.transform``: every conversion, composition, mean, interpolation, errors,
gradients and pytree behaviour under ``jit``/``vmap``."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax.scipy.spatial.transform import Rotation as JRot
from jax.scipy.spatial.transform import Slerp as JSlerp

import funcgrad as fg
import funcgrad.scipy
from funcgrad.scipy.spatial.transform import Rotation, Slerp

RNG = np.random.default_rng(0)
QUATS = RNG.normal(size=(5, 4))
EULER_SEQS = ["xyz", "ZYX", "xzx", "YXY", "zxy", "XZX"]


def close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def conversions(cls):
    """One program computing every output of ``cls`` (funcgrad's or JAX's Rotation)."""

    def prog(q, v):
        r = cls.from_quat(q)
        outs = [r.quat, r.as_matrix(), r.as_rotvec(), r.as_rotvec(degrees=True), r.as_mrp(),
                r.magnitude(), r.inv().quat, r.as_quat(canonical=True, scalar_first=True),
                r.apply(v), r.apply(v, inverse=True), (r * r.inv()).quat,
                cls.from_matrix(r.as_matrix()).quat, cls.from_rotvec(r.as_rotvec()).quat,
                cls.from_rotvec(r.as_rotvec(True) / 7, degrees=True).quat,
                cls.from_mrp(r.as_mrp()).quat]  # fmt: skip
        outs += [r.as_euler(seq) for seq in EULER_SEQS]
        outs += [r.as_euler(seq, degrees=True) for seq in EULER_SEQS[:2]]
        return tuple(outs)

    return prog


_FG_CONV, _JAX_CONV = fg.jit(conversions(Rotation)), jax.jit(conversions(JRot))


VECS = RNG.normal(size=(5, 3))


@functools.cache
def _jax_conversions():
    return [np.asarray(w) for w in _JAX_CONV(QUATS, VECS)]


def test_conversions_match_jax():
    for got, want in zip(_FG_CONV(QUATS, VECS), _jax_conversions()):
        close(got, want, 1e-9)


def test_eager_single_rotation():
    r, want = Rotation.from_quat(QUATS[1]), [w[1] for w in _jax_conversions()]
    close(r.as_matrix(), want[1])
    close(r.as_rotvec(), want[2], 1e-9)
    close(r.apply(VECS[1]), want[8])
    close(r.as_euler("xyz"), want[15], 1e-9)
    assert r.single and not Rotation.from_quat(QUATS).single


def _from_euler_prog(cls):
    def prog(a):
        out = []
        for seq in ["xyz", "ZYX", "xzx", "YXY", "zy", "X"]:
            sub = a[:, : len(seq)]
            out += [cls.from_euler(seq, sub).quat, cls.from_euler(seq, sub * 40, True).quat]
        out.append(cls.from_euler("x", a[0, 0]).quat)
        return tuple(out)

    return prog


def test_from_euler_matches_jax():
    a = RNG.uniform(-3, 3, size=(5, 3))
    for got, want in zip(fg.jit(_from_euler_prog(Rotation))(a), jax.jit(_from_euler_prog(JRot))(a)):
        close(got, want)


@pytest.mark.parametrize("seq", ["xyz", "XYZ", "zxz", "ZXZ"])
def test_as_euler_gimbal_lock_matches_jax(seq):
    middle = 0.0 if seq[0] == seq[2] else np.pi / 2
    q = np.asarray(JRot.from_euler(seq, np.array([0.3, middle, 0.2])).quat)
    close(Rotation.from_quat(q).as_euler(seq), JRot.from_quat(q).as_euler(seq), 1e-9)


def test_mean_identity_concatenate_indexing():
    r, j = Rotation.from_quat(QUATS), JRot.from_quat(QUATS)
    close(r.mean().quat, j.mean().quat, 1e-9)
    w = RNG.uniform(size=5)
    got, want = np.asarray(r.mean(w).quat), np.asarray(j.mean(w).quat)
    close(got * np.sign(got[3]), want * np.sign(want[3]), 1e-9)  # eigenvector sign
    close(Rotation.identity().quat, JRot.identity().quat)
    close(Rotation.identity(dtype=np.float32).quat, JRot.identity(dtype=np.float32).quat)
    assert Rotation.identity(3).quat.shape == (3, 4)
    close(Rotation.concatenate([r, r[:2]]).quat, JRot.concatenate([j, j[:2]]).quat)
    close(r[1:3].quat, j[1:3].quat)
    close(r[4].quat, j[4].quat)
    assert len(r) == len(j) == 5


def test_random_is_uniform_unit_quaternions():
    r = Rotation.random(fg.random.PRNGKey(0), 200)
    q = np.asarray(r.quat)
    assert q.shape == (200, 4)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-12)
    assert abs(q.mean()) < 0.1  # symmetric distribution
    assert Rotation.random(fg.random.PRNGKey(1)).single


def test_errors_like_jax():
    single = Rotation.from_quat(QUATS[0])
    with pytest.raises(TypeError, match="not subscriptable"):
        single[0]
    with pytest.raises(TypeError, match="has no len"):
        len(single)
    with pytest.raises(ValueError, match="Expected 3 axes"):
        single.as_euler("xy")
    with pytest.raises(ValueError, match="Expected axes from `seq`"):
        Rotation.from_euler("xYz", np.zeros(3))
    with pytest.raises(ValueError, match="consecutive axes"):
        Rotation.from_euler("xxz", np.zeros(3))
    with pytest.raises(ValueError, match="upto 3 characters"):
        Rotation.from_euler("xyzx", np.zeros(4))
    with pytest.raises(ValueError, match="quat"):
        Rotation.from_quat(np.ones(3))
    with pytest.raises(ValueError, match="matrix"):
        Rotation.from_matrix(np.eye(4))
    r = Rotation.from_quat(QUATS)
    with pytest.raises(ValueError, match="1 dimensional"):
        r.mean(np.ones((5, 1)))
    with pytest.raises(ValueError, match="number of rotations"):
        r.mean(np.ones(4))
    with pytest.raises(TypeError, match="Rotation"):
        Slerp.init(np.arange(5.0), QUATS)
    with pytest.raises(ValueError, match="at least 2"):
        Slerp.init(np.arange(1.0), r[:1])
    with pytest.raises(ValueError, match="number of timestamps"):
        Slerp.init(np.arange(4.0), r)
    with pytest.raises(ValueError, match="at most 1-dimensional"):
        Slerp.init(np.arange(5.0), r)(np.ones((2, 2)))


def _slerp_prog(rot, slerp):
    def prog(t, q, tt):
        interp = slerp.init(t, rot.from_quat(q))
        return interp(tt).quat, interp(1.7).quat

    return prog


def _apply_slerp(interp, tt):
    return interp(tt).quat


def test_slerp_matches_jax():
    t, tt = np.array([0.0, 1.0, 2.5, 4.0, 5.0]), np.linspace(0, 5, 11)
    want = jax.jit(_slerp_prog(JRot, JSlerp))(t, QUATS, tt)
    # the interpolator is a pytree: an argument of jit
    f = Slerp.init(t, Rotation.from_quat(QUATS))
    close(fg.jit(_apply_slerp)(f, tt), want[0], 1e-9)
    close(f(1.7).quat, want[1], 1e-9)  # eager; a scalar time gives a single rotation
    assert f(1.7).single


def _grads_prog(cls, grad):
    def prog(q):
        outs = []
        for method in ["as_rotvec", "as_mrp", "as_matrix", "magnitude"]:
            outs.append(grad(lambda q, m=method: (getattr(cls.from_quat(q), m)() ** 2).sum())(q))
        outs.append(grad(lambda q: cls.from_quat(q).as_euler("xyz").sum())(q))
        return tuple(outs)

    return prog


def test_pytree_jit_vmap_grad():
    r = Rotation.from_quat(QUATS)
    out = fg.jit(lambda rot: rot.inv())(r)
    assert isinstance(out, Rotation)
    close(out.quat, QUATS / np.linalg.norm(QUATS, axis=-1, keepdims=True) * [-1, -1, -1, 1])
    got = fg.jit(fg.vmap(lambda q: Rotation.from_quat(q).as_euler("zyx")))(QUATS)
    close(got, jax.jit(jax.vmap(lambda q: JRot.from_quat(q).as_euler("zyx")))(QUATS), 1e-9)
    got = fg.jit(_grads_prog(Rotation, fg.grad))(QUATS[0])
    want = jax.jit(_grads_prog(JRot, jax.grad))(QUATS[0])
    for g, w in zip(got, want):
        close(g, w, 1e-9)
    # the rotation-vector map has a finite gradient at the identity
    g = fg.jit(fg.grad(lambda v: Rotation.from_rotvec(v).as_matrix().sum()))(np.zeros(3))
    assert np.all(np.isfinite(np.asarray(g)))


_ROUND_TRIP = fg.jit(lambda v: Rotation.from_rotvec(v).as_rotvec())


@given(st.lists(st.floats(-1.7, 1.7), min_size=3, max_size=3))
def test_rotvec_round_trip(values):
    v = np.array(values)  # norm < pi: the rotation vector is unique
    np.testing.assert_allclose(np.asarray(_ROUND_TRIP(v)), v, atol=1e-9)


def test_namespace():
    assert funcgrad.scipy.spatial.transform.Rotation is Rotation


def test_inverse_and_slerp_of_batches_under_rank_promotion_raise():
    # funcgrad's own arithmetic on eager arrays (a batch of quaternions times the
    # conjugation signs) must not obey the user's rank-promotion setting
    rng = np.random.RandomState(7)
    q = rng.randn(2, 4).astype(np.float32)
    with jax.numpy_rank_promotion("raise"):
        ours = Rotation.from_quat(q).inv().as_quat()
        theirs = JRot.from_quat(q).inv().as_quat()
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
        times = np.array([0.0, 1.0], dtype=np.float32)
        ours = Slerp.init(times, Rotation.from_quat(q))(np.float32(0.3)).as_quat()
        theirs = JSlerp.init(times, JRot.from_quat(q))(np.float32(0.3)).as_quat()
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)
