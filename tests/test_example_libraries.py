"""funcgrad.example_libraries (stax, optimizers) against jax.example_libraries.

Parameters drawn by ``init_fun`` must equal JAX's bit for bit (same keys, same samplers);
``apply_fun`` values agree to float32 rounding; optimizer trajectories agree step by
step, eagerly and under ``jit``; pytree handling, schedules, serialisation and errors
behave as JAX's.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax_oracle as jo  # noqa: E402
from jax.example_libraries import optimizers as jopt  # noqa: E402
from jax.example_libraries import stax as jstax  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
from funcgrad.example_libraries import optimizers as fopt  # noqa: E402
from funcgrad.example_libraries import stax as fstax  # noqa: E402

KEY = jax.random.PRNGKey(0)


def _leaves(tree):
    return [np.asarray(x) for x in jax.tree.leaves(tree)]


def _shape_tuple(s):
    if isinstance(s, (list, tuple)) and s and isinstance(s[0], (list, tuple)):
        return [tuple(int(d) for d in t) for t in s]
    return tuple(int(d) for d in s)


# ----------------------------------------------------------------------------- stax

# (name, layer builder taking the stax module, input shape). Random initialisation
# compiles a sampler per parameter shape (on both sides), so the layers with parameters
# are checked inside a few composite networks rather than one by one.
LAYERS = [
    (
        "cnn_nhwc",  # Conv (SAME, strided), BatchNorm, pools, ConvTranspose, Dense
        # (every kernel is (3, 3, 4, 4): the samplers compile once per shape)
        lambda s: s.serial(
            s.Conv(4, (3, 3), padding="SAME"),
            s.BatchNorm(),
            s.Relu,
            s.MaxPool((3, 3), (2, 2), "SAME"),
            s.Conv(4, (3, 3), strides=(2, 1)),
            s.ConvTranspose(4, (3, 3), (2, 2), "SAME"),
            s.AvgPool((2, 2), (1, 1), "SAME"),
            s.ConvTranspose(4, (3, 3), (2, 1)),
            s.SumPool((2, 2)),
            s.ConvTranspose(4, (3, 3), padding=[(1, 2), (0, 1)]),
            s.Flatten,
            s.Dense(5),
            s.LogSoftmax,
        ),
        (2, 9, 9, 4),
    ),
    (
        "general_layouts",  # GeneralConv with mixed layouts, pool spec, 1-d transpose
        lambda s: s.serial(
            s.GeneralConv(("NCHW", "OIHW", "NHWC"), 3, (2, 2), (1, 2), "SAME"),
            s.BatchNorm(axis=(0, 2), center=False),
            s.AvgPool((2, 2), (1, 2), "SAME", spec="NHWC"),
            s.shape_dependent(lambda shape: s.Conv(shape[-1] * 2, (1, 1))),
            s.Flatten,
            s.BatchNorm(axis=0, scale=False),
        ),
        (2, 2, 5, 6),
    ),
    ("conv1d_transpose", lambda s: s.Conv1DTranspose(2, (2,), (3,)), (2, 3, 2)),
    (
        "fanout_parallel",  # VAE-style heads, residual sum, concatenation, custom inits
        lambda s: s.serial(
            s.Dense(4, s.randn(0.5), s.zeros),
            s.FanOut(3),
            s.parallel(s.Dense(3), s.serial(s.Dense(3), s.Softplus), s.Identity),
            s.FanInConcat(),
            s.FanOut(2),
            s.parallel(s.Identity, s.Tanh),
            s.FanInSum,
        ),
        (2, 4),
    ),
    (
        "activations",
        lambda s: s.serial(
            s.Tanh, s.Exp, s.Sigmoid, s.Elu, s.LeakyRelu, s.Selu, s.Gelu, s.Softmax, s.Relu
        ),
        (3, 4),
    ),
]


@pytest.mark.parametrize("name,build,shape", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_init_and_apply_match_jax(name, build, shape):
    j_init, j_apply = build(jstax)
    f_init, f_apply = build(fstax)
    j_shape, j_params = j_init(KEY, shape)
    f_shape, f_params = f_init(KEY, shape)
    assert _shape_tuple(f_shape) == _shape_tuple(j_shape)
    assert jax.tree.structure(f_params) == jax.tree.structure(j_params)
    for a, b in zip(_leaves(f_params), _leaves(j_params)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)  # bit-identical initialisation
    x = np.asarray(jax.random.normal(jax.random.PRNGKey(1), shape))
    # the oracle compiled whole (eagerly JAX compiles each of its primitives on its own)
    y_f, y_j = fg.jit(f_apply)(f_params, x), jax.jit(j_apply)(j_params, x)
    for a, b in zip(_leaves(y_f), _leaves(y_j)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert _shape_tuple(np.shape(_leaves(y_f)[0])) == _shape_tuple(f_shape)


POOLS = [
    ("max_valid", lambda s: s.MaxPool((2, 2), (2, 2))),
    ("max_same", lambda s: s.MaxPool((3, 3), (2, 2), "SAME")),
    ("sum_valid", lambda s: s.SumPool((2, 3))),
    ("avg_same", lambda s: s.AvgPool((3, 3), (2, 2), "SAME")),
    ("avg_spec", lambda s: s.AvgPool((2, 2), (1, 2), "SAME", spec="NCHW")),
]


@pytest.mark.parametrize("name,build", POOLS, ids=[p[0] for p in POOLS])
def test_pooling_matches_jax(name, build):
    x = np.asarray(jax.random.normal(jax.random.PRNGKey(1), (2, 5, 5, 3)))
    (j_init, j_apply), (f_init, f_apply) = build(jstax), build(fstax)
    f_shape = f_init(KEY, x.shape)[0]
    assert all(type(d) is int for d in f_shape), f_shape  # plain ints, as JAX's
    assert f_shape == tuple(j_init(KEY, x.shape)[0])
    y = f_apply((), x)
    np.testing.assert_allclose(np.asarray(y), j_apply((), x), rtol=1e-6, atol=1e-6)
    # differentiable: max pool's gradient routes to the window maxima as JAX's
    np.testing.assert_allclose(
        np.asarray(fg.grad(lambda v: fnp.sum(f_apply((), v) ** 2))(x)),
        jo.grad(lambda v: jnp.sum(j_apply((), v) ** 2))(x),
        rtol=1e-5,
        atol=1e-6,
    )


def test_unknown_batch_dimension_and_aliases():
    init, _ = fstax.serial(fstax.Dense(7), fstax.Relu)
    shape, _ = init(KEY, (-1, 3))
    assert shape == (-1, 7)
    assert fstax.glorot is fstax.glorot_normal and fstax.randn is fstax.normal
    assert fstax.logsoftmax is fg.nn.log_softmax


def test_dropout_matches_jax_and_needs_rng():
    x = np.asarray(jax.random.normal(jax.random.PRNGKey(1), (4, 5)))
    rng = jax.random.PRNGKey(3)
    _, j_apply = jstax.Dropout(0.7)
    _, f_apply = fstax.Dropout(0.7)
    np.testing.assert_array_equal(np.asarray(f_apply((), x, rng=rng)), j_apply((), x, rng=rng))
    _, f_eval = fstax.Dropout(0.7, mode="test")
    np.testing.assert_array_equal(np.asarray(f_eval((), x, rng=rng)), x)
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        f_apply((), x)
    # serial splits rng= over its layers as JAX's does
    _, j_net = jstax.serial(jstax.Dropout(0.5), jstax.Dropout(0.5))
    _, f_net = fstax.serial(fstax.Dropout(0.5), fstax.Dropout(0.5))
    np.testing.assert_array_equal(
        np.asarray(f_net(((), ()), x, rng=rng)), j_net(((), ()), x, rng=rng)
    )


def test_stax_model_grad_vmap_jit_match_jax():
    def build(s):
        return s.serial(s.Conv(4, (3, 3), padding="SAME"), s.Relu, s.AvgPool((2, 2), (2, 2)),
                        s.Flatten, s.Dense(4), s.LogSoftmax)  # fmt: skip

    (j_init, j_apply), (_f_init, f_apply) = build(jstax), build(fstax)
    _, params = j_init(KEY, (-1, 4, 4, 4))
    x = np.asarray(jax.random.normal(jax.random.PRNGKey(2), (3, 4, 4, 4)))
    y = np.eye(4, dtype=np.float32)[[0, 2, 3]]

    def j_loss(p):
        return -jnp.mean(jnp.sum(j_apply(p, x) * y, axis=1))

    def f_loss(p):
        return -fnp.mean(fnp.sum(f_apply(p, x) * y, axis=1))

    for a, b in zip(_leaves(fg.jit(fg.grad(f_loss))(params)), _leaves(jo.grad(j_loss)(params))):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    per_example = fg.vmap(lambda xi: f_apply(params, xi[None])[0])(x)
    np.testing.assert_allclose(np.asarray(per_example), j_apply(params, x), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------ optimizers

OPTIMIZERS = [
    ("sgd", (0.1,), {}),
    ("momentum", (0.1, 0.9), {}),
    ("nesterov", (0.05,), {"mass": 0.8}),
    ("adagrad", (0.1,), {}),
    ("rmsprop", (0.05,), {"gamma": 0.8}),
    ("rmsprop_momentum", (0.05,), {}),
    ("adam", (0.1,), {"b1": 0.8}),
    ("adamax", (0.1,), {}),
    ("sm3", (0.1,), {}),
]

PARAMS = {
    "w": np.array([[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]], np.float32),
    "b": (np.float32(0.5), np.array([0.1, -0.3], np.float32)),
}


def _j_loss(p):
    return (
        jnp.sum(jnp.sin(p["w"]) ** 2) + p["b"][0] ** 2 * jnp.sum(p["w"]) + jnp.sum(p["b"][1] ** 3)
    )


def _f_loss(p):
    return (
        fnp.sum(fnp.sin(p["w"]) ** 2) + p["b"][0] ** 2 * fnp.sum(p["w"]) + fnp.sum(p["b"][1] ** 3)
    )


@pytest.mark.parametrize("name,args,kwargs", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_optimizer_trajectory_matches_jax(name, args, kwargs):
    j_init, j_update, j_params = getattr(jopt, name)(*args, **kwargs)
    f_init, f_update, f_params = getattr(fopt, name)(*args, **kwargs)
    j_state, f_state = j_init(PARAMS), f_init(PARAMS)
    assert isinstance(f_state, fopt.OptimizerState)
    for i in range(3):  # eager
        j_state = j_update(i, jo.grad(_j_loss)(j_params(j_state)), j_state)
        f_state = f_update(i, fg.grad(_f_loss)(f_params(f_state)), f_state)
        for a, b in zip(_leaves(f_params(f_state)), _leaves(j_params(j_state))):
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
    assert jax.tree.structure(f_params(f_state)) == jax.tree.structure(PARAMS)
    if name == "sm3":  # its state holds the shape as Python ints: not jittable in JAX either
        return
    step = fg.jit(lambda i, s: f_update(i, fg.grad(_f_loss)(f_params(s)), s))
    j_step = jax.jit(lambda i, s: j_update(i, jo.grad(_j_loss)(j_params(s)), s))
    for i in range(3, 6):  # under jit with a traced step index
        j_state, f_state = j_step(i, j_state), step(i, f_state)
        for a, b in zip(_leaves(f_params(f_state)), _leaves(j_params(j_state))):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_update_inside_fori_loop():
    f_init, f_update, f_params = fopt.momentum(0.05, mass=0.9)
    j_init, j_update, j_params = jopt.momentum(0.05, mass=0.9)

    def f_run(state):
        return fg.fori_loop(0, 4, lambda i, s: f_update(i, fg.grad(_f_loss)(f_params(s)), s), state)

    def j_run(state):
        return jax.lax.fori_loop(
            0, 4, lambda i, s: j_update(i, jo.grad(_j_loss)(j_params(s)), s), state
        )

    out_f, out_j = fg.jit(f_run)(f_init(PARAMS)), jax.jit(j_run)(j_init(PARAMS))
    for a, b in zip(_leaves(f_params(out_f)), _leaves(j_params(out_j))):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


SCHEDULES = [
    ("constant", (0.3,)),
    ("exponential_decay", (0.1, 3, 0.5)),
    ("inverse_time_decay", (0.1, 2, 0.5)),
    ("inverse_time_decay", (0.1, 2, 0.5, True)),
    ("polynomial_decay", (0.1, 4, 0.01)),
    ("polynomial_decay", (0.1, 4, 0.01, 2.0)),
    ("piecewise_constant", ([2, 5], [0.1, 0.05, 0.01])),
]


@pytest.mark.parametrize("name,args", SCHEDULES, ids=[f"{s[0]}{len(s[1])}" for s in SCHEDULES])
def test_schedules_match_jax(name, args):
    j_sched, f_sched = getattr(jopt, name)(*args), getattr(fopt, name)(*args)
    steps = np.arange(8)
    np.testing.assert_allclose(
        [float(f_sched(int(i))) for i in steps], [float(j_sched(int(i))) for i in steps], rtol=1e-6
    )
    traced = fg.jit(fg.vmap(f_sched))(steps)  # schedules of a traced step
    np.testing.assert_allclose(np.asarray(traced), jo.vmap(j_sched)(steps), rtol=1e-6)
    # a schedule drives an optimizer
    f_init, f_update, f_params = fopt.sgd(f_sched)
    j_init, j_update, j_params = jopt.sgd(j_sched)
    f_state, j_state = f_init(np.ones(2, np.float32)), j_init(np.ones(2, np.float32))
    for i in range(3):
        f_state = f_update(i, np.float32([1.0, -2.0]), f_state)
        j_state = j_update(i, np.float32([1.0, -2.0]), j_state)
    np.testing.assert_allclose(np.asarray(f_params(f_state)), j_params(j_state), rtol=1e-6)


def test_schedule_errors():
    with pytest.raises(ValueError, match="must be sequences"):
        fopt.piecewise_constant(1.0, [0.1, 0.2])
    with pytest.raises(ValueError, match="one shorter"):
        fopt.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(TypeError):
        fopt.make_schedule(np.ones(3))
    assert fopt.make_schedule(0.5)(10) == 0.5


def test_optimizer_errors_and_decorator():
    init, update, _ = fopt.sgd(0.1)
    state = init({"a": np.ones(2, np.float32)})
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        update(0, [np.ones(2, np.float32)], state)

    @fopt.optimizer
    def bad(step_size):
        return (lambda x: (x, x)), (lambda i, g, s: s[0]), (lambda s: s[0])

    b_init, b_update, _ = bad(0.1)
    with pytest.raises(TypeError, match="did not match its input structure"):
        b_update(0, np.ones(2, np.float32), b_init(np.ones(2, np.float32)))
    opt = fopt.adam(0.1)
    assert isinstance(opt, fopt.Optimizer) and opt.init_fn is opt[0]


def test_pack_unpack_and_utilities():
    init, update, _get_params = fopt.adam(0.1)
    state = update(0, jax.tree.map(np.ones_like, PARAMS), init(PARAMS))
    marked = fopt.unpack_optimizer_state(state)
    assert isinstance(marked["w"], fopt.JoinPoint)
    again = fopt.pack_optimizer_state(marked)
    assert again.tree_def == state.tree_def and again.subtree_defs == state.subtree_defs
    for a, b in zip(_leaves(again), _leaves(state)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="JoinPoint"):
        fopt.pack_optimizer_state({"w": 1.0})

    grads = {"a": np.float32([3.0, 4.0]), "b": np.float32([12.0])}
    np.testing.assert_allclose(float(fopt.l2_norm(grads)), float(jopt.l2_norm(grads)))
    for max_norm in (1.0, 20.0):
        for a, b in zip(
            _leaves(fopt.clip_grads(grads, max_norm)), _leaves(jopt.clip_grads(grads, max_norm))
        ):
            np.testing.assert_allclose(a, b, rtol=1e-6)
