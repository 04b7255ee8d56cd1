"""funcgrad.debug.nans: the operation (and line) that made a NaN/Inf, in the forward pass
and in gradients, eagerly and under jit, vmap, grad and grad(jit); silent for NaNs that
never reach an output. The oracle for the values is NumPy / JAX: each case checks that
the function really produces a non-finite result without the check."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp


def f_log(x):
    return fnp.sum(fnp.log(x) * 2.0)


def f_div(x):
    return fnp.sum(fnp.divide(x, x))


def f_sqrt(x):
    return fnp.sum(fnp.sqrt(x))


def j_log(x):
    return jnp.sum(jnp.log(x) * 2.0)


def j_div(x):
    return jnp.sum(jnp.divide(x, x))


def j_sqrt(x):
    return jnp.sum(jnp.sqrt(x))


def _line(f):
    """The file:line of the operation in ``f`` (the line after its ``def``)."""
    return f"test_debug_nans.py:{f.__code__.co_firstlineno + 1}"


# (funcgrad function, JAX twin, primitive, input with the bad lane at index 1)
FORWARD = {
    "log(0)": (f_log, j_log, "log", np.array([1.0, 0.0, 2.0], np.float32)),
    "0/0": (f_div, j_div, "div", np.array([1.0, 0.0, 2.0], np.float32)),
    "sqrt(-1)": (f_sqrt, j_sqrt, "sqrt", np.array([1.0, -1.0, 2.0], np.float32)),
}

MODES = {
    "eager": lambda f: f,
    "jit": fg.jit,
    "vmap": lambda f: lambda x: fg.vmap(f)(x[None]),
    "jit(vmap)": lambda f: fg.jit(lambda x: fg.vmap(f)(x[None])),
}

GRAD_MODES = {
    "grad": fg.grad,
    "grad(jit)": lambda f: fg.grad(fg.jit(f)),
    "jit(grad)": lambda f: fg.jit(fg.grad(f)),
    "vmap(grad)": lambda f: lambda x: fg.vmap(fg.grad(f))(x[None]),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", FORWARD)
def test_forward_nan_is_located(case, mode):
    f, jf, prim, x = FORWARD[case]
    assert not np.isfinite(np.asarray(jf(x)))  # the oracle: JAX makes a NaN/Inf too
    assert not np.isfinite(np.asarray(MODES[mode](f)(x))).all()  # and unchecked, no error
    with fg.debug.nans(), pytest.raises(FloatingPointError) as info:
        MODES[mode](f)(x)
    msg = str(info.value)
    assert f"`{prim}`" in msg and _line(f) in msg, msg
    assert "f32[" in msg  # the inputs' shapes and dtypes
    assert "0.0" in msg or "-1.0" in msg  # the value the operation received


# gradient cases: (function, JAX twin, what the message must name, input)
GRADIENT = {
    # forward finite except at the untouched output; the derivative 1/x is infinite
    "log(0)": (f_log, j_log, "derivative of `log`", np.array([1.0, 0.0, 2.0], np.float32)),
    # forward finite (sqrt(0) = 0); the derivative 1/(2 sqrt x) is infinite
    "sqrt(0)": (f_sqrt, j_sqrt, "derivative of `sqrt`", np.array([1.0, 0.0, 2.0], np.float32)),
    # forward already NaN: the forward sqrt is where it starts
    "sqrt(-1)": (f_sqrt, j_sqrt, "`sqrt`", np.array([1.0, -1.0, 2.0], np.float32)),
    "0/0": (f_div, j_div, "div`", np.array([1.0, 0.0, 2.0], np.float32)),
}


@pytest.mark.parametrize("mode", GRAD_MODES)
@pytest.mark.parametrize("case", GRADIENT)
def test_gradient_nan_names_the_forward_equation(case, mode):
    f, jf, named, x = GRADIENT[case]
    assert not np.isfinite(np.asarray(jax.grad(jf)(x))).all()  # JAX's gradient is bad too
    with fg.debug.nans(), pytest.raises(FloatingPointError) as info:
        GRAD_MODES[mode](f)(x)
    msg = str(info.value)
    assert named in msg and _line(f) in msg, msg


def f_where(x):
    return fnp.sum(fnp.where(x > 0, fnp.log(x), 0.0))


def f_safe_where(x):
    safe = fnp.where(x > 0, x, 1.0)
    return fnp.sum(fnp.where(x > 0, fnp.log(safe), 0.0))


def f_masked(x):
    return fnp.sum(fnp.log(x)[1:])


@pytest.mark.parametrize("mode", ["jit", "vmap", "jit(vmap)"])
@pytest.mark.parametrize("f", [f_where, f_masked], ids=["where", "masked"])
def test_silent_when_the_nan_does_not_reach_an_output(f, mode):
    x = np.array([0.0, 1.0, 2.0], np.float32)
    with fg.debug.nans():
        out = MODES[mode](f)(x)
    assert np.isfinite(np.asarray(out)).all()


@pytest.mark.parametrize("mode", GRAD_MODES)
def test_silent_for_the_safe_where_gradient(mode):
    x = np.array([0.0, 1.0, 2.0], np.float32)
    with fg.debug.nans():
        g = GRAD_MODES[mode](f_safe_where)(x)
    np.testing.assert_allclose(
        np.ravel(g),
        jax.grad(lambda x: jnp.sum(jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)))(x),
    )


def test_where_gradient_trap_is_reported():
    # grad of where(x > 0, log(x), 0) at 0 is NaN in JAX as here (0 * inf): a real
    # NaN in the output, so it is reported, naming log's derivative
    x = np.array([0.0, 1.0], np.float32)
    assert np.isnan(jax.grad(lambda x: jnp.sum(jnp.where(x > 0, jnp.log(x), 0.0)))(x)[0])
    with fg.debug.nans(), pytest.raises(FloatingPointError, match="derivative of `log`"):
        fg.grad(f_where)(x)


def test_nan_from_the_inputs_is_not_reported():
    x = np.array([np.nan, 1.0], np.float32)
    with fg.debug.nans():
        out = fg.jit(lambda x: x * 2.0)(x)
        out2 = x * fnp.ones(2)
    assert np.isnan(out[0]) and np.isnan(out2[0])


def test_config_flag_and_off_by_default():
    x = np.array([0.0], np.float32)
    assert fg.config.debug_nans is False
    assert np.isinf(fg.jit(f_log)(x))
    fg.config.update("debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="`log`"):
            fg.jit(f_log)(x)
    finally:
        fg.config.update("debug_nans", False)
    assert np.isinf(fg.jit(f_log)(x))


def test_nested_jit_and_scan_origin():
    inner = fg.jit(lambda x: fnp.log(x))

    def outer(x):
        return fnp.sum(inner(x) + 1.0)

    with fg.debug.nans(), pytest.raises(FloatingPointError, match="`log`"):
        fg.jit(outer)(np.array([0.0, 1.0], np.float32))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 6), data=st.data())
def test_reported_index_is_the_bad_lane(n, data):
    i = data.draw(st.integers(0, n - 1))
    x = np.arange(1, n + 1, dtype=np.float32)
    x[i] = 0.0
    with fg.debug.nans(), pytest.raises(FloatingPointError) as info:
        fg.jit(f_log)(x)
    assert f"at index ({i},): 0.0" in str(info.value)
    assert f"(1 of {n} values)" in str(info.value)


@fg.custom_vjp
def _cv(x):
    return fnp.sin(x)


def _cv_fwd(x):
    return fnp.sin(x), fnp.cos(x)


def _cv_bwd(c, g):
    return (g * fnp.log(c - c),)


_cv.defvjp(_cv_fwd, _cv_bwd)


@pytest.mark.parametrize("mode", ["grad", "jit(grad)", "grad(jit)"])
def test_user_lines_inside_custom_vjp_rules_are_kept(mode):
    x = np.array([1.0, 2.0], np.float32)
    with fg.debug.nans(), pytest.raises(FloatingPointError) as info:
        GRAD_MODES[mode](lambda x: fnp.sum(_cv(x)))(x)
    assert "`log`" in str(info.value) and _line(_cv_bwd) in str(info.value)


def test_equations_keep_user_lines_through_transforms():
    x = np.array([1.0, 2.0], np.float32)
    for prog in (
        fg.make_ir(fg.grad(f_log))(x),
        fg.make_ir(fg.vmap(f_log))(x[None]),
        fg.make_ir(fg.jit(fg.grad(f_log)))(x).eqns[0].params["program"],
    ):
        lines = {f"{e.source[0].rsplit('/', 1)[-1]}:{e.source[1]}" for e in prog.eqns}
        assert lines == {_line(f_log)}, prog
    derived = [e for e in fg.make_ir(fg.grad(f_log))(x).eqns if hasattr(e.source, "prim")]
    assert {e.source.prim for e in derived} >= {"log"}


def test_donated_arguments_still_raise():
    f = fg.jit(lambda x: fnp.log(x), donate_argnums=0)
    with fg.debug.nans(), pytest.raises(FloatingPointError, match="nans"):
        f(fnp.asarray(np.array([0.0, 1.0], np.float32)))


def _branch(x):
    return fnp.sqrt(x - 5.0)


def f_cond(x):
    return fg.cond(x[0] > 0, _branch, lambda x: x, x)


def _loop_body(i, c):
    return c + fnp.log(c - 1.0)


def f_loop(x):
    return fg.fori_loop(0, 3, _loop_body, x)


@pytest.mark.parametrize("mode", ["jit", "eager"])
def test_cond_branch_is_entered(mode):
    x = np.array([1.0, 3.0], np.float32)
    with fg.debug.nans(), pytest.raises(FloatingPointError) as info:
        MODES[mode](f_cond)(x)
    assert "`sqrt`" in str(info.value) and _line(_branch) in str(info.value)


def test_loop_is_reported_as_the_loop():
    x = np.array([1.0, 3.0], np.float32)
    with fg.debug.nans(), pytest.raises(FloatingPointError) as info:
        fg.jit(f_loop)(x)
    msg = str(info.value)
    assert "`scan`" in msg and "in the body" in msg and _line(f_loop) in msg
