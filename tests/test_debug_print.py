"""funcgrad.debug.print/callback against jax.debug: the same output eagerly, under jit,
vmap, grad and jvp; never removed by dead-code elimination; not differentiated."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import passes
from funcgrad.primitives.effects import debug_callback_p

X = np.array([0.5, 1.0, 2.0])


def _body(np_mod, dbg):
    def f(x):
        dbg.print("x={x} total={}", np_mod.sum(x), x=x)
        dbg.print("plain", x[0], 3, skip_format_check=True)
        return np_mod.sum(np_mod.sin(x) ** 2)

    return f


F = _body(fnp, fg.debug)
J = _body(jnp, jax.debug)


def _out(capsys, run):
    run()
    jax.effects_barrier()
    return capsys.readouterr().out


CASES = {
    "eager": lambda f, t: f(X),
    "jit": lambda f, t: t.jit(f)(X),
    "vmap": lambda f, t: t.vmap(f)(np.stack([X, 2 * X])),
    "grad": lambda f, t: t.grad(f)(X),
    "jit_grad": lambda f, t: t.jit(t.grad(f))(X),
    "jvp": lambda f, t: t.jvp(f, (X,), (X,)),
    "vmap_grad": lambda f, t: t.vmap(t.grad(f))(np.stack([X, 2 * X])),
}


@pytest.mark.parametrize("case", list(CASES))
def test_print_matches_jax(capsys, case):
    run = CASES[case]
    got = _out(capsys, lambda: run(F, fg))
    want = _out(capsys, lambda: run(J, jax))
    assert got == want
    assert got


def test_gradient_unaffected():
    np.testing.assert_allclose(
        np.asarray(fg.grad(F)(X)), np.asarray(jax.grad(J)(X)), rtol=1e-12, atol=1e-12
    )


def test_callback_with_statics_and_kwargs():
    seen = []
    fg.jit(
        lambda x: fg.debug.callback(
            lambda a, tag, k: seen.append((np.asarray(a), tag, k)), x, "t", k=x * 2
        )
    )(X)
    jax.effects_barrier()
    ((a, tag, k),) = seen
    np.testing.assert_array_equal(a, X)
    assert tag == "t"
    np.testing.assert_array_equal(np.asarray(k), 2 * X)


def test_two_call_forms(capsys):
    got = _out(capsys, lambda: fg.debug.print(ordered=True)("v {}", X[0]))
    want = _out(capsys, lambda: jax.debug.print(ordered=True)("v {}", X[0]))
    assert got == want
    seen = []
    fg.debug.callback(ordered=True)(seen.append, 1.5)
    assert [float(v) for v in seen] == [1.5]


def test_kept_by_dce_and_not_merged():
    def f(x):
        fg.debug.print("a {}", x)
        fg.debug.print("a {}", x)
        return x * 2

    prog = fg.make_ir(f)(X)
    simplified = passes.simplify(prog)
    assert sum(e.prim is debug_callback_p for e in simplified.eqns) == 2
    # under grad the forward keeps the print; the backward has none
    gprog = fg.make_ir(fg.grad(lambda x: fnp.sum(f(x))))(X)
    assert sum(e.prim is debug_callback_p for e in passes.simplify(gprog).eqns) == 2


def test_print_inside_unused_jit_call_is_kept(capsys):
    inner = fg.jit(lambda x: (fg.debug.print("inner {}", x), x + 1)[1])

    def f(x):
        inner(x)  # result unused
        return x * 3

    got = _out(capsys, lambda: fg.jit(f)(X[:1]))
    assert got == "inner [0.5]\n"


def test_ordered_prints_in_order(capsys):
    def f(x):
        for i in range(3):
            fg.debug.print("step {i} {x}", i=i, x=x + i, ordered=True)
        return x

    assert _out(capsys, lambda: fg.jit(f)(1.0)) == "step 0 1.0\nstep 1 2.0\nstep 2 3.0\n"


def test_errors():
    with pytest.raises(TypeError, match="must be callable"):
        fg.debug.callback(3, X)
    with pytest.raises(IndexError):
        fg.debug.print("{} {}", X)
    with pytest.raises(KeyError):
        fg.debug.print("{y}", x=X)
    with pytest.raises(ValueError, match="Unused positional"):
        fg.debug.print("x", X)
    with pytest.raises(TypeError, match="unexpected arguments"):
        fg.debug.print(None, X)


def _branch_prints(lax_mod, dbg):
    """Branches that print and return their operand unchanged (every output forwarded)."""

    def t(x):
        dbg.print("true: {}", x)
        return x

    def f(x):
        dbg.print("false: {}", x)
        return x

    return t, f


BRANCH_CASES = {
    "cond_eager": lambda lx, t, f, tr: lx.cond(5 < 5, t, f, 5),
    "cond_jit": lambda lx, t, f, tr: tr.jit(lambda x: lx.cond(x < 5, t, f, x))(4),
    "switch_jit": lambda lx, t, f, tr: tr.jit(lambda i: lx.switch(i, [t, f, t], 7))(1),
    "cond_grad": lambda lx, t, f, tr: tr.grad(lambda x: lx.cond(x < 5.0, t, f, x))(3.0),
}


@pytest.mark.parametrize("case", list(BRANCH_CASES))
def test_print_in_branches_that_forward_their_operand(capsys, case):
    # the cond has no outputs of its own left, but its branch's print still runs
    run = BRANCH_CASES[case]
    ours = _out(capsys, lambda: run(fg.lax, *_branch_prints(fg.lax, fg.debug), fg))
    theirs = _out(capsys, lambda: run(jax.lax, *_branch_prints(jax.lax, jax.debug), jax))
    assert ours == theirs
    assert ours.strip() != ""


def test_fstring_hint_as_jax():
    x = np.arange(2)
    for dbg, jit in ((fg.debug, fg.jit), (jax.debug, jax.jit)):
        with pytest.raises(ValueError, match="You may be passing an f-string"):
            jit(lambda x: dbg.print(f"hello: {x}", x=x))(x)
            jax.effects_barrier()
