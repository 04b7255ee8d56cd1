"""cond / switch / while_loop / fori_loop / scan against ``jax.lax`` on the same programs.

Values, gradients (``jax.grad`` of the ``jax.lax`` version as the oracle), JVPs and
vmaps; scan's VJP against finite differences; batched predicates; error messages;
and the nested-``jit`` program shape (one call equation, no inlined copy).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax_oracle as jo
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives.control_flow import WHILE_VJP_ERROR, cond_p, scan_p, while_p
from funcgrad.testing import check_grads

SETTINGS = settings(deadline=None)  # max_examples: the hypothesis profile (tests/conftest.py)


def close(a, b, tol=1e-9):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def arrays(shape):
    return st.builds(
        lambda seed: np.random.default_rng(seed).uniform(-1.5, 1.5, shape),
        st.integers(0, 2**31),
    )


def prims_in(prog, recurse=True):
    """Names of the primitives of a program (and its sub-programs)."""
    out = []
    for e in prog.eqns:
        out.append(e.prim.name)
        if recurse:
            for v in e.params.values():
                for sub in v if isinstance(v, (tuple, list)) else (v,):
                    if isinstance(sub, fg.Program):
                        out.extend(prims_in(sub))
    return out


# --------------------------------------------------------------------------- cond / switch


def fg_cond(p, x, y):
    return fg.cond(p, lambda x, y: fnp.sin(x) * y, lambda x, y: fnp.cos(y) - x * x, x, y)


def jax_cond(p, x, y):
    return lax.cond(p, lambda x, y: jnp.sin(x) * y, lambda x, y: jnp.cos(y) - x * x, x, y)


@SETTINGS
@given(p=st.booleans(), x=arrays((3,)), y=arrays((3,)))
def test_cond_value_grad_jvp(p, x, y):
    close(fg_cond(p, x, y), jax_cond(p, x, y))
    close(fg.jit(fg_cond)(p, x, y), jax_cond(p, x, y))
    loss = lambda f: lambda x, y: (f(p, x, y) ** 2).sum()
    close(fg.grad(loss(fg_cond), (0, 1))(x, y), jo.grad(loss(jax_cond), (0, 1))(x, y))
    t = (np.ones(3), np.linspace(-1, 1, 3))
    close(
        fg.jvp(lambda x, y: fg_cond(p, x, y), (x, y), t),
        jo.jvp(lambda x, y: jax_cond(p, x, y), (x, y), t),
    )


@SETTINGS
@given(x=arrays((5,)), y=arrays((5, 2)))
def test_vmap_cond_batched_predicate(x, y):
    def f(x, y):
        return fg.cond(x > 0, lambda x, y: y * x, lambda x, y: fnp.sin(y) + x, x, y)

    def g(x, y):
        return lax.cond(x > 0, lambda x, y: y * x, lambda x, y: jnp.sin(y) + x, x, y)

    close(fg.vmap(f)(x, y), jo.vmap(g)(x, y))
    close(
        fg.vmap(fg.grad(lambda x, y: f(x, y).sum()))(x, y),
        jo.vmap(jo.grad(lambda x, y: g(x, y).sum()))(x, y),
    )
    # a batched predicate becomes a select of both branches: no cond left
    prog = fg.make_ir(fg.vmap(f))(x, y)
    assert "cond" not in prims_in(prog) and "select_n" in prims_in(prog)
    # an unbatched predicate keeps the cond, with batched branches
    prog = fg.make_ir(fg.vmap(lambda y: f(0.5, y)))(y)
    assert prims_in(prog, recurse=False).count("cond") == 1
    close(fg.vmap(lambda y: f(0.5, y))(y), jo.vmap(lambda y: g(0.5, y))(y))


@SETTINGS
@given(i=st.integers(-2, 5), x=arrays((4,)))
def test_switch(i, x):
    fbr = [lambda x: fnp.sin(x), lambda x: x * x, lambda x: fnp.exp(x) - 1.0]
    jbr = [lambda x: jnp.sin(x), lambda x: x * x, lambda x: jnp.exp(x) - 1.0]
    close(fg.switch(i, fbr, x), lax.switch(i, jbr, x))
    close(fg.jit(lambda i, x: fg.switch(i, fbr, x))(i, x), lax.switch(i, jbr, x))
    close(
        fg.grad(lambda x: fg.switch(i, fbr, x).sum())(x),
        jo.grad(lambda x: lax.switch(i, jbr, x).sum())(x),
    )
    idx = np.array([i, 0, 1, 2, 7, -1])
    xs = np.stack([x] * 6)
    close(
        fg.vmap(lambda i, x: fg.switch(i, fbr, x))(idx, xs),
        jo.vmap(lambda i, x: lax.switch(i, jbr, x))(idx, xs),
    )


def test_cond_pytrees_closures_and_weak_types():
    w = np.arange(3.0)

    def f(p, x):
        return fg.cond(
            p,
            lambda d: {"a": d["x"] * w, "b": 0.0},
            lambda d: {"a": -d["x"], "b": d["x"].sum()},
            {"x": x},
        )

    out = f(True, np.ones(3))
    assert set(out) == {"a", "b"} and out["b"].dtype == np.float64
    close(out["a"], w)
    close(f(False, np.ones(3))["b"], 3.0)
    g = fg.grad(lambda x: f(True, x)["a"].sum())(np.ones(3))
    close(g, w)
    # numeric (non-bool) predicate: non-zero is true
    close(fg.cond(2, lambda: 1.0, lambda: 0.0), 1.0)
    close(fg.cond(0.0, lambda: 1.0, lambda: 0.0), 0.0)


# --------------------------------------------------------------------------- while_loop


def fg_while(x, limit):
    def body(c):  # the sum grows by at least 1.5 per step
        i, x = c
        return i + 1, x + 0.5 + 0.1 * x * x

    return fg.while_loop(lambda c: fnp.sum(c[1]) < limit, body, (0, x))


def jax_while(x, limit):
    def body(c):
        i, x = c
        return i + 1, x + 0.5 + 0.1 * x * x

    return lax.while_loop(lambda c: jnp.sum(c[1]) < limit, body, (0, x))


@SETTINGS
@given(x=arrays((3,)), limit=st.floats(-5, 40))
def test_while_value_and_jvp(x, limit):
    close(fg_while(x, limit), jax_while(x, limit))
    close(fg.jit(fg_while)(x, limit), jax_while(x, limit))
    t = np.linspace(0.5, 1.0, 3)
    out, tout = fg.jvp(lambda x: fg_while(x, limit)[1], (x,), (t,))
    jout, jtout = jo.jvp(lambda x: jax_while(x, limit)[1], (x,), (t,))
    close(out, jout)
    close(tout, jtout)


@SETTINGS
@given(x=arrays((6, 2)), limits=arrays((6,)))
def test_vmap_while_batched_predicate(x, limits):
    limits = limits * 20  # lanes need different trip counts
    got = fg.vmap(fg_while)(x, limits)
    want = jo.vmap(jax_while)(x, limits)
    close(got, want)
    for b in range(6):  # against a Python loop over the examples
        close((got[0][b], got[1][b]), fg_while(x[b], limits[b]))
    # batched carry only (the predicate stays unbatched when it reads no batched value)
    close(
        fg.vmap(
            lambda x: fg.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))
        )(x),
        jo.vmap(
            lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))
        )(x),
    )
    # jvp of the vmapped loop
    t = np.ones_like(x)
    close(
        fg.jvp(lambda x: fg.vmap(fg_while)(x, limits)[1], (x,), (t,)),
        jo.jvp(lambda x: jo.vmap(jax_while)(x, limits)[1], (x,), (t,)),
    )


def test_while_reverse_mode_error():
    # JAX's words (its test matches "Reverse-mode differentiation does not work for
    # lax.while_loop"), checked against JAX's own error
    with pytest.raises(ValueError) as ours:
        fg.grad(lambda x: fg_while(x, 10.0)[1].sum())(np.ones(3))
    with pytest.raises(ValueError) as theirs:
        jax.grad(lambda x: jax_while(x, 10.0)[1].sum())(np.ones(3))
    head = "Reverse-mode differentiation does not work for lax.while_loop"
    assert str(ours.value).startswith(head) and str(theirs.value).startswith(head)
    traced_bounds = fg.jit(lambda x, n: fg.fori_loop(0, n, lambda i, c: c * 2.0, x))
    with pytest.raises(ValueError, match="fori_loop with static start/stop"):
        fg.grad(lambda x: traced_bounds(x, 3))(1.0)
    assert "dynamic start/stop" in WHILE_VJP_ERROR
    assert while_p.reverse_differentiable is False
    # no derivative needed through the loop: no error
    fg.grad(lambda x: x * fg_while(np.ones(3), 10.0)[1].sum())(2.0)


# --------------------------------------------------------------------------- fori_loop


def fg_fori(x, w, n):
    return fg.fori_loop(0, n, lambda i, c: fnp.sin(c * w) + i * 0.1, x)


def jax_fori(x, w, n):
    return lax.fori_loop(0, n, lambda i, c: jnp.sin(c * w) + i * 0.1, x)


@SETTINGS
@given(x=arrays((3,)), w=arrays((3,)), n=st.integers(0, 6))
def test_fori_static_bounds(x, w, n):
    close(fg_fori(x, w, n), jax_fori(x, w, n))
    loss = lambda f: lambda x, w: (f(x, w, n) ** 2).sum()
    close(fg.grad(loss(fg_fori), (0, 1))(x, w), jo.grad(loss(jax_fori), (0, 1))(x, w))
    close(
        fg.jvp(lambda x: fg_fori(x, w, n), (x,), (w,)),
        jo.jvp(lambda x: jax_fori(x, w, n), (x,), (w,)),
    )
    xs = np.stack([x, w, x * w])
    close(fg.vmap(lambda x: fg_fori(x, w, n))(xs), jo.vmap(lambda x: jax_fori(x, w, n))(xs))
    # static bounds lower to a scan, so reverse mode works
    prog = fg.make_ir(lambda x: fg_fori(x, w, n))(x)
    assert prims_in(prog, recurse=False) == ["scan"]


@SETTINGS
@given(x=arrays((3,)), w=arrays((3,)), n=st.integers(0, 6))
def test_fori_traced_bounds(x, w, n):
    f = fg.jit(fg_fori)
    close(f(x, w, n), jax_fori(x, w, n))
    assert "while" in prims_in(f.trace(x, w, n).jaxpr, recurse=False)
    close(
        fg.jvp(lambda x: f(x, w, n), (x,), (w,)),
        jo.jvp(lambda x: jax.jit(jax_fori)(x, w, n), (x,), (w,)),
    )
    ns = np.array([0, n, 3])
    close(
        fg.vmap(f, in_axes=(None, None, 0))(x, w, ns),
        jo.vmap(jax_fori, in_axes=(None, None, 0))(x, w, ns),
    )


# --------------------------------------------------------------------------- scan


def fg_rnn(params, h, xs, reverse=False):
    def body(carry, x):
        h, acc = carry
        h = fnp.tanh(params["W"] @ h + params["U"] @ x["a"] + x["b"])
        return (h, acc + fnp.sum(h)), {"h": h, "sq": h * h}

    return fg.scan(body, (h, 0.0), xs, reverse=reverse)


def jax_rnn(params, h, xs, reverse=False):
    def body(carry, x):
        h, acc = carry
        h = jnp.tanh(params["W"] @ h + params["U"] @ x["a"] + x["b"])
        return (h, acc + jnp.sum(h)), {"h": h, "sq": h * h}

    return lax.scan(body, (h, 0.0), xs, reverse=reverse)


def rnn_args(seed, length):
    r = np.random.default_rng(seed)
    params = {"W": r.normal(0, 0.4, (3, 3)), "U": r.normal(0, 0.4, (3, 2))}
    xs = {"a": r.normal(size=(length, 2)), "b": r.normal(size=(length, 3))}
    return params, r.normal(size=3), xs


@SETTINGS
@given(seed=st.integers(0, 2**31), length=st.integers(1, 6), reverse=st.booleans())
def test_scan_value_grad_jvp_vmap(seed, length, reverse):
    params, h, xs = rnn_args(seed, length)
    close(fg_rnn(params, h, xs, reverse), jax_rnn(params, h, xs, reverse))
    close(fg.jit(fg_rnn, static_argnums=3)(params, h, xs, reverse), jax_rnn(params, h, xs, reverse))

    def loss(f):
        def loss_fn(params, h, xs):
            (hT, acc), ys = f(params, h, xs, reverse)
            return acc + (hT**2).sum() + (ys["sq"] * xs["b"]).sum()

        return loss_fn

    close(
        fg.grad(loss(fg_rnn), (0, 1, 2))(params, h, xs),
        jo.grad(loss(jax_rnn), (0, 1, 2))(params, h, xs),
    )
    tan = jax.tree_util.tree_map(np.ones_like, (params, h))
    close(
        fg.jvp(lambda p, h: fg_rnn(p, h, xs, reverse), (params, h), tan),
        jo.jvp(lambda p, h: jax_rnn(p, h, xs, reverse), (params, h), tan),
    )
    hs = np.stack([h, -h, 2 * h, h * 0])
    close(
        fg.vmap(lambda h: fg_rnn(params, h, xs, reverse))(hs),
        jo.vmap(lambda h: jax_rnn(params, h, xs, reverse))(hs),
    )
    xsb = jax.tree_util.tree_map(lambda a: np.stack([a, a[::-1]], 1), xs)  # batch axis 1
    close(
        fg.vmap(lambda xs: fg_rnn(params, h, xs, reverse), in_axes=({"a": 1, "b": 1},))(xsb),
        jo.vmap(lambda xs: jax_rnn(params, h, xs, reverse), in_axes=({"a": 1, "b": 1},))(xsb),
    )


def test_scan_vjp_finite_differences():
    params, h, xs = rnn_args(0, 4)

    def f(W, h, b):
        (hT, acc), ys = fg_rnn({"W": W, "U": params["U"]}, h, {"a": xs["a"], "b": b})
        return hT, acc, ys["sq"]

    check_grads(f, (params["W"], h, xs["b"]), order=2, rtol=1e-4, atol=1e-4)
    check_grads(
        lambda h: fg.scan(lambda c, _: (fnp.sin(c) * 1.1, c), h, None, length=5), (h,), order=2
    )


def test_scan_int_carry_and_residual_hoisting():
    def f(w, x):
        def body(c, xi):
            i, h = c
            return (i + 1, fnp.sin(w * h + xi) * i), h * w

        return fg.scan(body, (0, x[0]), x)

    def g(w, x):
        def body(c, xi):
            i, h = c
            return (i + 1, jnp.sin(w * h + xi) * i), h * w

        return lax.scan(body, (0, x[0]), x)

    w, x = 0.7, np.linspace(-1, 1, 5)
    close(f(w, x), g(w, x))
    loss = lambda f: lambda w, x: f(w, x)[0][1] + f(w, x)[1].sum()
    close(fg.grad(loss(f), (0, 1))(w, x), jo.grad(loss(g), (0, 1))(w, x))
    # the forward scan of the VJP stacks per-iteration residuals but not loop invariants (w)
    prog = fg.make_ir(fg.grad(loss(f)))(w, x)
    fwd = next(e for e in prog.eqns if e.prim is scan_p)
    stacked = [v.aval.shape for v in fwd.outvars[2 + 1 :]]
    assert all(s[0] == 5 for s in stacked)
    assert len(stacked) <= 4


def test_scan_hessian_and_nested_control_flow():
    def f(x):
        def body(c, xi):
            c = fg.cond(xi > 0, lambda c: c * fnp.sin(c), lambda c: c + xi * c * c, c)
            return c, fnp.sum(c)

        c, ys = fg.scan(body, x, np.array([0.5, -0.3, 1.2]))
        return fnp.sum(c) + fnp.sum(ys)

    def g(x):
        def body(c, xi):
            c = lax.cond(xi > 0, lambda c: c * jnp.sin(c), lambda c: c + xi * c * c, c)
            return c, jnp.sum(c)

        c, ys = lax.scan(body, x, jnp.array([0.5, -0.3, 1.2]))
        return jnp.sum(c) + jnp.sum(ys)

    x = np.array([0.3, -0.8])
    close(fg.grad(f)(x), jo.grad(g)(x))
    close(fg.hessian(f)(x), jo.hessian(g)(x))
    close(fg.jit(fg.grad(f))(x), jo.grad(g)(x))
    xs = np.array([[0.3, -0.8], [1.0, 0.2], [-0.5, 0.5]])
    close(fg.vmap(fg.grad(f))(xs), jo.vmap(jo.grad(g))(xs))

    # a scan inside a cond inside a while, under vmap with batched predicates
    def h(x, n):
        def body(c):
            i, v = c
            v = fg.cond(
                i % 2 == 0,
                lambda v: fg.scan(lambda a, _: (a * 0.9 + 0.1, None), v, None, length=3)[0],
                lambda v: -v,
                v,
            )
            return i + 1, v

        return fg.while_loop(lambda c: c[0] < n, body, (0, x))[1]

    def hj(x, n):
        def body(c):
            i, v = c
            v = lax.cond(
                i % 2 == 0,
                lambda v: lax.scan(lambda a, _: (a * 0.9 + 0.1, None), v, None, length=3)[0],
                lambda v: -v,
                v,
            )
            return i + 1, v

        return lax.while_loop(lambda c: c[0] < n, body, (0, x))[1]

    ns = np.array([0, 1, 4])
    close(fg.vmap(h)(xs, ns), jo.vmap(hj)(xs, ns))


# --------------------------------------------------------------------------- errors


def _same_error(ours, theirs, prefix: str | None = None) -> str:
    """Both calls raise the same exception type, and funcgrad's message starts with JAX's
    (funcgrad adds the user's line after it), or both start with ``prefix``."""
    with pytest.raises(Exception) as a:
        ours()
    with pytest.raises(Exception) as b:
        theirs()
    assert type(b.value).__name__ in {c.__name__ for c in type(a.value).__mro__}
    want = str(b.value) if prefix is None else prefix
    assert str(a.value).startswith(want) and str(b.value).startswith(want), (a.value, b.value)
    return str(a.value)


def test_carry_type_errors():
    # JAX's message, word for word: which carry component changed type, and how
    _same_error(
        lambda: fg.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1][:2]), (0, np.ones(3))),
        lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1][:2]), (0, np.ones(3))),
    )
    _same_error(
        lambda: fg.scan(
            lambda c, x: ({"h": fnp.asarray(c["h"] > 0).astype("int32")}, x),
            {"h": np.ones(3)},
            np.ones(2),
        ),
        lambda: lax.scan(
            lambda c, x: ({"h": jnp.asarray(c["h"] > 0).astype("int32")}, x),
            {"h": np.ones(3)},
            np.ones(2),
        ),
    )
    two = (np.int32(0), np.int32(0), np.int32(0))
    _same_error(
        lambda: fg.scan(
            lambda x, _: ((x[0].astype("float32"), fnp.reshape(x[1], (1, 1)), x[2]), None),
            two,
            None,
            length=1,
        ),
        lambda: lax.scan(
            lambda x, _: ((x[0].astype("float32"), jnp.reshape(x[1], (1, 1)), x[2]), None),
            two,
            None,
            length=1,
        ),
    )
    with pytest.raises(TypeError, match="equal types"):
        fg.fori_loop(0, 3, lambda i, c: fnp.ones(4), np.ones(3))


def test_carry_structure_errors():
    # where the carry's pytree structure changed, in JAX's words
    cases = [
        (lambda c, x: ((0, 0, 0), x), (1, (2, 3)), np.arange(5.0), None),
        (lambda x, _: ([x[0], x[1]], None), (np.int32(0),) * 2, None, 1),
        (lambda x, _: ({"a": x["a"], "b": x["a"]}, None), {"a": np.int32(0)}, None, 1),
        (lambda x, _: (({"a": x[0]["a"], "b": x[0]["a"]},) * 2, None), ({"a": 0},) * 2, None, 1),
    ]
    for body, init, xs, length in cases:
        _same_error(
            lambda: fg.scan(body, init, xs, length=length),
            lambda: lax.scan(body, init, xs, length=length),
        )
    # (a leaf where a tuple comes back: JAX names its own abstract-value class)
    _same_error(
        lambda: fg.while_loop(lambda c: True, lambda c: (1.0, 1.0), 0.0),
        lambda: lax.while_loop(lambda c: True, lambda c: (1.0, 1.0), 0.0),
        "while_loop body function carry input and carry output must have the same pytree "
        "structure, but they differ:\n\nThe input carry c is a",
    )
    # fori_loop: the dict keys differ (pytree metadata), as JAX reports it
    with pytest.raises(TypeError, match=r"with pytree metadata \('t',\).*\('T',\)"):
        fg.fori_loop(0, 1, lambda i, x: {"T": fnp.ones(1)}, {"t": np.ones(1)})
    with pytest.raises(TypeError, match=r"with pytree metadata \('t',\).*\('T',\)"):
        lax.fori_loop(0, 1, lambda i, x: {"T": jnp.ones(1)}, {"t": np.ones(1)})


def test_loop_and_branch_argument_errors():
    # JAX's words for a bad predicate, index or cond_fun output
    not_an_array = lambda x: True
    for call in (
        lambda m: m.cond(None, lambda: 1.0, lambda: 2.0),
        lambda m: m.cond(not_an_array, lambda: 1.0, lambda: 2.0),
        lambda m: m.switch(not_an_array, [lambda: 1.0, lambda: 2.0]),
        lambda m: m.switch((1.0, 1.0), [lambda: 1.0, lambda: 2.0]),
        lambda m: m.cond("foo", lambda: 1.0, lambda: 2.0),
        lambda m: m.cond([True], lambda: 1.0, lambda: 2.0),
        lambda m: m.fori_loop(0, 1, None, 1.0),
        lambda m: m.cond(True, None, lambda: 1.0),
        lambda m: m.while_loop(42, 42, 0),
        lambda m: m.scan(42, 0, None, length=1),
        lambda m: m.switch(0, [], 1.0),
        lambda m: m.while_loop(lambda c: (1.0, 1.0), lambda c: c, 0.0),
        lambda m: m.while_loop(lambda c: np.float32(1.0), lambda c: c, np.float32(0.0)),
    ):
        _same_error(lambda: call(fg), lambda: call(lax))


def test_cond_and_scan_errors():
    with pytest.raises(TypeError, match=r"path \[0\] has type float\d+\[3\].*type float\d+\[2\]"):
        fg.cond(True, lambda x: (x, x), lambda x: (x[:2], x), np.ones(3))
    with pytest.raises(TypeError, match="same pytree structure"):
        fg.cond(True, lambda x: (x, x), lambda x: x, np.ones(3))
    with pytest.raises(TypeError, match="scalar"):
        fg.cond(np.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="boolean scalar"):
        fg.while_loop(lambda c: c, lambda c: c + 1, 0)
    with pytest.raises(ValueError, match="different leading axis sizes"):
        fg.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="length"):
        fg.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(TypeError, match="pair"):
        fg.scan(lambda c, x: c, 0.0, np.ones(3))


def test_primitive_abstract_eval_errors():
    from funcgrad.core.ir import Aval
    from funcgrad.primitives.control_flow import trace_program

    f64 = np.dtype("float64")
    body, _ = trace_program(lambda c, x: [c, fnp.sin(x)], [Aval((3,), f64), Aval((3,), f64)], "t")
    bad, _ = trace_program(lambda c, x: [x[:2], x], [Aval((3,), f64), Aval((3,), f64)], "t")
    with pytest.raises(TypeError, match=r"scan: the body's carry output 0 has shape \(2,\)"):
        scan_p.bind(
            np.ones(3),
            np.ones((4, 3)),
            program=bad,
            length=4,
            reverse=False,
            num_consts=0,
            num_carry=1,
        )
    with pytest.raises(TypeError, match="leading axis of length 5"):
        scan_p.bind(
            np.ones(3),
            np.ones((4, 3)),
            program=body,
            length=5,
            reverse=False,
            num_consts=0,
            num_carry=1,
        )
    with pytest.raises(TypeError, match="integer scalar"):
        cond_p.bind(1.0, np.ones(3), np.ones(3), branches=(body,))


# --------------------------------------------------------------------------- nested jit


def test_grad_of_jit_is_one_call_holding_the_transformed_program():
    @fg.jit
    def f(x):
        return fnp.sum(fnp.sin(x) ** 2)

    x = np.linspace(0, 1, 4)
    oracle = jo.grad(lambda x: jnp.sum(jnp.sin(x) ** 2))
    prog = fg.make_ir(fg.grad(f))(x)
    prog.check()
    # one call equation and nothing else at the top level: nothing of f is inlined
    assert prims_in(prog, recurse=False) == ["jit_call"], str(prog)
    (call,) = prog.eqns
    inner = prims_in(call.params["program"])
    # it holds f's transformed program: the primal once, and its derivative
    assert inner.count("sin") == 1 and "cos" in inner, str(prog)
    assert len(call.outvars) == 1  # grad keeps only the gradient
    close(fg.grad(f)(x), oracle(x))
    # value_and_grad: the same single call, returning both
    vprog = fg.make_ir(fg.value_and_grad(f))(x)
    assert prims_in(vprog, recurse=False) == ["jit_call"]
    assert len(vprog.eqns[0].outvars) == 2
    v, g = fg.value_and_grad(f)(x)
    close(v, np.sum(np.sin(x) ** 2))
    close(g, oracle(x))
    # a constant scale of the output still fuses: its cotangent does not depend on f
    sprog = fg.make_ir(fg.grad(lambda x: 3.0 * f(x)))(x)
    assert prims_in(sprog, recurse=False).count("jit_call") == 1, str(sprog)
    close(fg.grad(lambda x: 3.0 * f(x))(x), 3.0 * oracle(x))
    # a cotangent computed from f's output cannot be known before f runs: the forward
    # and backward calls stay two units (JAX also keeps two), still nothing inlined
    nprog = fg.make_ir(fg.grad(lambda x: fnp.sin(f(x))))(x)
    nprog.check()
    assert prims_in(nprog, recurse=False).count("jit_call") == 2
    assert prims_in(nprog).count("sin") == 1  # f's primal once (the outer sin's value is dead)
    close(
        fg.grad(lambda x: fnp.sin(f(x)))(x),
        jo.grad(lambda x: jnp.sin(jnp.sum(jnp.sin(x) ** 2)))(x),
    )
    # vmap(jit(f)) and jit(grad(jit(f))) keep one unit too
    assert prims_in(fg.make_ir(fg.vmap(f))(np.ones((2, 4))), recurse=False) == ["jit_call"]
    jg = fg.jit(fg.grad(f))
    assert prims_in(jg.trace(x).jaxpr, recurse=False) == ["jit_call"]
    close(jg(x), oracle(x))


def test_nested_jits_fuse_level_by_level():
    inner = fg.jit(lambda x: fnp.sum(fnp.tanh(x) * x))
    outer = fg.jit(lambda x: 2.0 * inner(x) + fnp.sum(x))
    x = np.linspace(-1, 1, 5)
    prog = fg.make_ir(fg.grad(outer))(x)
    prog.check()
    assert prims_in(prog, recurse=False) == ["jit_call"], str(prog)
    # inside the outer call, inner's forward and backward are one call as well
    assert prims_in(prog.eqns[0].params["program"], recurse=False).count("jit_call") == 1
    want = jo.grad(lambda x: 2.0 * jnp.sum(jnp.tanh(x) * x) + jnp.sum(x))(x)
    close(fg.grad(outer)(x), want)
    close(fg.jit(fg.grad(outer))(x), want)


def test_eager_loops_are_cached():
    f = lambda x: fg.fori_loop(0, 3, lambda i, c: c * 2.0, x)
    close(f(1.0), 8.0)
    close(f(2.0), 16.0)
    close(fg.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0))[0], 6.0)


def test_weak_typed_init_takes_body_dtype_and_programs_check():
    # a Python-scalar initial carry takes the dtype the body gives it, as in JAX
    out = fg.fori_loop(0, 3, lambda i, c: c + np.float32(1), 0.0)
    assert out.dtype == lax.fori_loop(0, 3, lambda i, c: c + np.float32(1), 0.0).dtype
    c, _ = fg.scan(lambda c, x: (c * x, None), 1.0, np.arange(1, 4, dtype=np.float32))
    assert c.dtype == np.float32 and float(c) == 6.0
    # transformed programs are well formed (single assignment, avals agree with the rules)
    g = lambda x: fg.fori_loop(0, 4, lambda i, c: fnp.sin(c) * x, x)
    w = lambda x: fg.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1]
    x, xs = np.array([0.3, 0.7]), np.ones((3, 2))
    for prog in [
        fg.make_ir(fg.grad(lambda x: fnp.sum(g(x))))(x),
        fg.make_ir(fg.vmap(fg.grad(lambda x: fnp.sum(g(x)))))(xs),
        fg.make_ir(fg.vmap(w))(xs),
        fg.make_ir(lambda x: fg.jvp(w, (x,), (x,)))(x),
        fg.make_ir(fg.vmap(lambda x: fg.cond(x[0] > 0, lambda x: x, lambda x: -x, x)))(xs),
        fg.make_ir(fg.hessian(lambda x: fnp.sum(g(x))))(x),
    ]:
        prog.check()
    close(
        fg.jacrev(g)(x),
        jo.jacrev(lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) * x, x))(x),
    )
    _, lin = fg.linearize(w, x)
    wj = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x))[1]
    close(lin(np.ones(2)), jo.jvp(wj, (x,), (np.ones(2),))[1])


def _same_value(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_forwarded_outputs_stay_unbatched_under_vmap():
    # an operand every branch returns unchanged (and a carry the body does not change)
    # is forwarded, as JAX: vmap's out_axes=None accepts it
    def cond_fwd(lib, m):
        def f(x, y):
            return lib.lax.cond(x < 3, lambda x, y: (x * 2, y), lambda x, y: (x * 3, y), x, y)

        return lib.vmap(f, in_axes=(0, None), out_axes=(0, None))(m.arange(3), m.array(3.0))

    def scan_fwd(lib, m):
        def f(x, y):
            def g(_, y):
                y, _ = lib.lax.scan(lambda y, _: (y, None), y, None, length=1)
                return y

            return lib.lax.cond(x < 0, g, g, x, y)

        return lib.vmap(f, (0, None), None)(m.arange(3.0), 3.0)

    for case in (cond_fwd, scan_fwd):
        got, want = case(fg, fnp), case(jax, jnp)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            _same_value(g, w)
            assert g.weak_type == w.weak_type
    # derivatives through forwarded outputs are unchanged
    h = lambda lib: (
        lambda x: lib.lax.cond(x > 0, lambda x, y: (x * 2, y), lambda x, y: (x, y), x, x)[1] * x
    )
    _same_value(fg.grad(h(fg))(2.0), jax.grad(h(jax))(2.0))


@pytest.mark.parametrize("pred", [True, False])
def test_cond_output_weak_type_as_jax(pred):
    # JAX's cond result is weakly typed where the first (false) branch's output is
    for args in ((0,), (4,)):
        for branches in (
            (lambda x: 5, lambda x: x),
            (lambda x: x, lambda x: 5),
        ):
            got = fg.jit(lambda p, x: fg.lax.cond(p, *branches, x))(pred, *args)
            want = jax.jit(lambda p, x: lax.cond(p, *branches, x))(pred, *args)
            _same_value(got, want)
            assert got.weak_type == want.weak_type, (branches, args)
