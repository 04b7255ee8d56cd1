"""Three of JAX's example programs, step for step against JAX as the oracle.

The same program text runs over both libraries (the module namespaces are parameters):
ADVI on a funnel density (``vmap`` over split keys, ``random.normal``, ``norm.logpdf``,
``jit(grad)``, ``optimizers.momentum``), a Gaussian-process regression fitted by gradient descent on its negative marginal
likelihood (Cholesky, triangular solves, nested ``vmap``, ``jit(grad)``), and a small
ResNet made of stax's layers (``GeneralConv``, ``BatchNorm``, ``MaxPool``, ``AvgPool``,
``FanOut``/``FanInSum``, ``shape_dependent``) trained with ``optimizers.momentum``.
In float64 the two runs agree to ~1e-10 at every step; in float32 each step's gradient
agrees to float32 rounding (``tools/jax_examples.py`` runs the upstream programs).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import jax
import jax.numpy as jjnp
import jax.scipy as jsp
import jax.scipy.stats.norm as jnorm
import numpy as np
import pytest
from jax.example_libraries import optimizers as joptim
from jax.example_libraries import stax as jstax

import funcgrad
import funcgrad.numpy as fjnp
import funcgrad.random as frandom
import funcgrad.scipy as fsp
import funcgrad.scipy.stats.norm as fnorm
from funcgrad.example_libraries import optimizers as foptim
from funcgrad.example_libraries import stax as fstax

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools import jax_examples as jx

JAX = types.SimpleNamespace(
    np=jjnp,
    sp=jsp,
    grad=jax.grad,
    jit=jax.jit,
    vmap=jax.vmap,
    stax=jstax,
    opt=joptim,
    random=jax.random,
    norm=jnorm,
)
FG = types.SimpleNamespace(
    np=fjnp,
    sp=fsp,
    grad=funcgrad.grad,
    jit=funcgrad.jit,
    vmap=funcgrad.vmap,
    stax=fstax,
    opt=foptim,
    random=frandom,
    norm=fnorm,
)


# -- ADVI on a funnel density ---------------------------------------------------------


def _advi_objective(lib: types.SimpleNamespace, num_samples: int = 40):
    """The negative ELBO of a diagonal Gaussian fitted to a funnel, estimated from
    ``num_samples`` draws of the key ``random.key(t)`` (as JAX's ``examples/advi.py``)."""
    jnp, random, norm = lib.np, lib.random, lib.norm

    def funnel(z):
        return norm.logpdf(z[0], 0, jnp.exp(z[1])) + norm.logpdf(z[1], 0, 1.35)

    def elbo(rng, mean, log_std):
        z = mean + jnp.exp(log_std) * random.normal(rng, mean.shape)
        return funnel(z) - jnp.sum(lib.vmap(norm.logpdf)(z, mean, jnp.exp(log_std)))

    def objective(params, t):
        rngs = random.split(random.key(t), num_samples)
        return -jnp.mean(lib.vmap(elbo, in_axes=(0, None, None))(rngs, *params))

    return objective


def _advi_trajectory(steps: int) -> list:
    """JAX's float64 run of the example's loop: each step's parameters (momentum 0.9,
    step size 0.1, from zeros)."""
    objective = _advi_objective(JAX)
    opt_init, opt_update, get_params = joptim.momentum(step_size=0.1, mass=0.9)
    update = jax.jit(lambda i, st: opt_update(i, jax.grad(objective)(get_params(st), i), st))
    state = opt_init((jjnp.zeros(2, np.float64), jjnp.zeros(2, np.float64)))
    out = []
    for t in range(steps):
        out.append(tuple(np.asarray(p) for p in get_params(state)))
        state = update(t, state)
    return out


def test_advi_float64_value_and_gradient_along_jax_trajectory():
    """At each of JAX's 30 float64 iterates, funcgrad's objective and gradient (the same
    keys) are JAX's to float64 rounding. The upstream program run whole under ``--x64``
    drifts apart anyway (3e-3 by iteration 29): JAX drifts as far from itself when its
    initial log-std is moved by 1e-15, so that is the funnel amplifying rounding."""
    trajectory = _advi_trajectory(30)
    obj_j, obj_f = _advi_objective(JAX), _advi_objective(FG)
    vg_j = jax.jit(jax.value_and_grad(obj_j), static_argnums=1)
    vg_f = funcgrad.jit(funcgrad.value_and_grad(obj_f), static_argnums=1)
    for t, params in enumerate(trajectory):
        (vj, gj), (vf, gf) = vg_j(params, t), vg_f(params, t)
        np.testing.assert_allclose(float(vf), float(vj), rtol=1e-12, err_msg=f"value at {t}")
        for k in range(2):
            assert np.asarray(gf[k]).dtype == np.float64
            np.testing.assert_allclose(
                np.asarray(gf[k]), np.asarray(gj[k]), rtol=1e-11, atol=1e-13, err_msg=f"{k} {t}"
            )


# -- Gaussian-process regression ------------------------------------------------------


def _gp_loss(lib: types.SimpleNamespace, n: int, dtype: type):
    """The negative log marginal likelihood (with a log-normal prior on the amplitude)."""
    jnp, sp = lib.np, lib.sp

    def softplus(v):
        return jnp.logaddexp(v, 0.0)

    def sq_exp(a, b):
        return jnp.exp(-jnp.sum((a - b) ** 2))

    def gram(xs):
        return lib.vmap(lambda a: lib.vmap(lambda b: sq_exp(a, b))(xs))(xs)

    def neg_ml(params, x, y):
        noise, amp, ls = (softplus(params[k]) for k in ("noise", "amp", "ls"))
        y = y - jnp.mean(y)
        cov = amp * gram(x / ls) + jnp.eye(n, dtype=dtype) * (noise + 1e-6)
        chol = sp.linalg.cholesky(cov, lower=True)
        alpha = sp.linalg.solve_triangular(chol.T, sp.linalg.solve_triangular(chol, y, lower=True))
        ml = -0.5 * jnp.dot(y.T, alpha) - jnp.sum(jnp.log(jnp.diag(chol)))
        ml = jnp.sum(ml - n / 2.0 * jnp.log(2.0 * np.pi))
        prior = jnp.sum(-0.5 * jnp.log(2 * np.pi) - jnp.log(amp) - 0.5 * jnp.log(amp) ** 2)
        return -(ml - prior)

    return neg_ml


def _gp_fit(lib: types.SimpleNamespace, x: np.ndarray, y: np.ndarray, steps: int) -> list:
    """Fit the kernel's amplitude, noise and length scale; each step's loss, grads, params."""
    jnp = lib.np
    dtype = x.dtype
    neg_ml = _gp_loss(lib, x.shape[0], dtype)
    grad_fn = lib.jit(lib.grad(neg_ml))
    loss_fn = lib.jit(neg_ml)
    params = {
        "amp": jnp.zeros((1, 1), dtype),
        "noise": jnp.zeros((1, 1), dtype) - 5.0,
        "ls": jnp.zeros((1, 1), dtype),
    }
    mom = {k: v * 0.0 for k, v in params.items()}
    scale = {k: v * 0.0 + 1.0 for k, v in params.items()}
    trace = []
    for _ in range(steps):
        g = grad_fn(params, x, y)
        for k in params:
            mom[k] = 0.9 * mom[k] + 0.1 * g[k][0]
            scale[k] = 0.9 * scale[k] + 0.1 * g[k][0] ** 2
            params[k] = params[k] - 0.01 * mom[k] / jnp.sqrt(scale[k] + 1e-5)
        trace.append(
            (
                float(loss_fn(params, x, y)),
                {k: np.asarray(v) for k, v in g.items()},
                {k: np.asarray(v) for k, v in params.items()},
            )
        )
    return trace


def _gp_data(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(0)
    x = (rng.uniform(size=(7, 1)) * 4.0 + 1.0).astype(dtype)
    y = (np.sin(x) + 0.1 * rng.normal(size=(7, 1))).astype(dtype)
    return x, y


def test_gp_regression_fit_float64_step_for_step():
    x, y = _gp_data(np.float64)
    ref = _gp_fit(JAX, x, y, steps=150)
    got = _gp_fit(FG, x, y, steps=150)
    for i, ((lr, gr, pr), (lg, gg, pg)) in enumerate(zip(ref, got, strict=True)):
        np.testing.assert_allclose(lg, lr, rtol=1e-9, atol=1e-12, err_msg=f"loss at step {i}")
        for k in pr:
            np.testing.assert_allclose(gg[k], gr[k], rtol=1e-8, atol=1e-12, err_msg=f"d{k} {i}")
            np.testing.assert_allclose(pg[k], pr[k], rtol=1e-9, atol=1e-12, err_msg=f"{k} {i}")


def test_gp_regression_float32_gradients_match_at_jax_params():
    """Along JAX's own float32 trajectory, funcgrad's gradient at each step's parameters
    is JAX's to float32 rounding (amplified by the kernel matrix's condition number as the
    fitted noise shrinks): the drift of a long float32 run is rounding, not a rule."""
    x, y = _gp_data(np.float32)
    ref = _gp_fit(JAX, x, y, steps=300)
    g_fg = funcgrad.jit(funcgrad.grad(_gp_loss(FG, x.shape[0], np.float32)))
    g_jax = jax.jit(jax.grad(_gp_loss(JAX, x.shape[0], np.float32)))
    for i in range(0, len(ref), 30):
        params = {k: np.asarray(v, np.float32) for k, v in ref[i][2].items()}
        gj, gf = g_jax(params, x, y), g_fg(params, x, y)
        for k in params:
            assert np.asarray(gf[k]).dtype == np.float32
            np.testing.assert_allclose(
                np.asarray(gf[k]), np.asarray(gj[k]), rtol=2e-3, atol=2e-3, err_msg=f"{k} {i}"
            )


# -- a small stax ResNet ----------------------------------------------------------------


def _resnet(stax: types.ModuleType, num_classes: int) -> tuple:
    def conv_block(ks, filters, strides=(2, 2)):
        f1, f2, f3 = filters
        main = stax.serial(
            stax.Conv(f1, (1, 1), strides),
            stax.BatchNorm(),
            stax.Relu,
            stax.Conv(f2, (ks, ks), padding="SAME"),
            stax.BatchNorm(),
            stax.Relu,
            stax.Conv(f3, (1, 1)),
            stax.BatchNorm(),
        )
        short = stax.serial(stax.Conv(f3, (1, 1), strides), stax.BatchNorm())
        return stax.serial(stax.FanOut(2), stax.parallel(main, short), stax.FanInSum, stax.Relu)

    def identity_block(ks, filters):
        f1, f2 = filters

        def make_main(input_shape):
            return stax.serial(
                stax.Conv(f1, (1, 1)),
                stax.BatchNorm(),
                stax.Relu,
                stax.Conv(f2, (ks, ks), padding="SAME"),
                stax.BatchNorm(),
                stax.Relu,
                stax.Conv(input_shape[3], (1, 1)),
                stax.BatchNorm(),
            )

        main = stax.shape_dependent(make_main)
        return stax.serial(
            stax.FanOut(2), stax.parallel(main, stax.Identity), stax.FanInSum, stax.Relu
        )

    return stax.serial(
        stax.GeneralConv(("HWCN", "OIHW", "NHWC"), 4, (3, 3), (2, 2), "SAME"),
        stax.BatchNorm(),
        stax.Relu,
        stax.MaxPool((3, 3), strides=(2, 2)),
        conv_block(3, [2, 2, 8], strides=(1, 1)),
        identity_block(3, [2, 2]),
        stax.AvgPool((2, 2)),
        stax.Flatten,
        stax.Dense(num_classes),
        stax.LogSoftmax,
    )


def _resnet_steps(lib: types.SimpleNamespace, dtype: type, steps: int) -> list:
    jnp = lib.np
    classes, batch = 5, 3
    input_shape = (12, 12, 3, batch)
    init_fun, predict = _resnet(lib.stax, classes)
    _, params = init_fun(
        jax.random.PRNGKey(0) if lib is JAX else funcgrad.random.PRNGKey(0), input_shape
    )
    params = jax.tree_util.tree_map(lambda p: np.asarray(p, dtype), params)

    def loss(params, batch):
        inputs, targets = batch
        return -jnp.sum(predict(params, inputs) * targets)

    opt_init, opt_update, get_params = lib.opt.momentum(0.01, mass=0.9)

    @lib.jit
    def update(i, state, batch):
        p = get_params(state)
        g = lib.grad(loss)(p, batch)
        return opt_update(i, g, state), loss(p, batch), g

    rng = np.random.RandomState(0)
    state = opt_init(params)
    trace = []
    for i in range(steps):
        images = rng.rand(*input_shape).astype(dtype)
        labels = rng.randint(classes, size=(batch, 1))
        onehot = (labels == np.arange(classes)).astype(dtype)
        state, value, g = update(i, state, (images, onehot))
        leaves = [np.asarray(v) for v in jax.tree_util.tree_leaves(g)]
        trace.append((float(value), leaves))
    trace.append((0.0, [np.asarray(v) for v in jax.tree_util.tree_leaves(get_params(state))]))
    return trace


@pytest.mark.parametrize(
    "dtype,rtol", [(np.float64, 1e-9), (np.float32, 1e-2)], ids=["float64", "float32"]
)
def test_stax_resnet_momentum_steps(dtype, rtol):
    # float32: a gradient leaf that is a sum with cancellation (a BatchNorm shift) is
    # off by float32 rounding relative to the largest entry, hence the looser bound; the
    # oracle is JAX's run in float64 on the same data (JAX's own float32 run is off from
    # it by float32 rounding too, 3e-3 on that leaf, so two float32 runs differ by both)
    ref = _resnet_steps(JAX, np.float64, steps=3)
    got = _resnet_steps(FG, dtype, steps=3)
    for i, ((vr, lr), (vg, lg)) in enumerate(zip(ref, got, strict=True)):
        np.testing.assert_allclose(vg, vr, rtol=rtol, err_msg=f"loss at step {i}")
        assert len(lg) == len(lr)
        for j, (a, b) in enumerate(zip(lg, lr, strict=True)):
            assert a.dtype == np.dtype(dtype) and a.shape == b.shape, (i, j)
            scale = max(float(np.abs(b).max()), 1e-3)
            err = float(np.abs(a - b).max()) / scale
            assert err <= rtol, f"step {i}, leaf {j} {b.shape}: rel {err:.2e}"


# -- the runner's comparison ----------------------------------------------------------


def test_runner_reads_printed_numbers_without_timings_or_dtypes():
    text = (
        "Epoch 0 in 1.23 sec\nTraining set accuracy 0.875\n"
        "{'a': Array([[7.5]], dtype=float32)}\n  3 -242.67 (0.540 sec)\njaxpr text\n"
    )
    assert jx.printed_numbers(text) == [[0.0], [0.875], [7.5], [3.0, -242.67]]
    assert jx.printed_numbers(text, r"^Training") == [[0.875]]
    assert jx.rel(np.array([1.0, np.nan]), np.array([1.001, np.nan])) == pytest.approx(1e-3 / 1.001)
    assert jx.rel(np.zeros(2), np.zeros(3)) == float("inf")
