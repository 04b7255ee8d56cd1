"""funcgrad.debug.breakpoint: eagerly and under jit, vmap (once per element) and grad
the debugger gets the caller's locals at their runtime values (numpy as the oracle);
the default pdb backend reads commands from stdin and prints them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.debug import _breakpoint

X = np.array([0.5, 1.0, 2.0], np.float32)

#: JAX's own breakpoint, recording instead of stopping (its registry is internal API).
_JAX_SEEN: list = []
pytest.importorskip("jax._src.debugger.core").register_debugger(
    "record", lambda frames, tid, **kw: _JAX_SEEN.append(frames), -10
)


@pytest.fixture
def seen():
    calls: list = []

    def record(frames, thread_id, **kwargs):
        calls.append((frames, kwargs))

    fg.debug.register_debugger("record", record, -10)
    yield calls
    del _breakpoint._DEBUGGERS["record"]


def _f(x):
    y = fnp.sin(x) * 2.0
    n = 3
    pair = (x, "tag")  # noqa: F841 (read by the debugger)
    fg.debug.breakpoint(backend="record", flag=1)
    return fnp.sum(y * n)


def _check(frames, x):
    loc = frames[0].locals
    np.testing.assert_allclose(np.asarray(loc["x"]), x, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(loc["y"]), np.sin(x) * 2.0, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(loc["pair"][0]), x, rtol=1e-6)
    assert loc["n"] == 3 and loc["pair"][1] == "tag"
    assert frames[0].function == "_f" and frames[0].filename == __file__
    assert not any(isinstance(v, fg.core.interp.Tracer) for v in loc.values())


@pytest.mark.parametrize(
    "run",
    [lambda: _f(X), lambda: fg.jit(_f)(X), lambda: fg.grad(_f)(X)],
    ids=["eager", "jit", "grad"],
)
def test_concrete_locals(seen, run):
    run()
    fg.effects_barrier()
    assert len(seen) == 1
    frames, kwargs = seen[0]
    _check(frames, X)
    assert kwargs == {"flag": 1}
    # the caller of _f is captured too (this test's frame), funcgrad's frames are not
    assert any(f.function == "test_concrete_locals" for f in frames)
    assert not any("/funcgrad/" in f.filename for f in frames)


@pytest.mark.parametrize("wrap", [fg.vmap, lambda f: fg.jit(fg.vmap(f))], ids=["vmap", "jit_vmap"])
def test_vmap_fires_once_per_element(seen, wrap):
    xs = np.stack([X, X + 1.0, X * 3.0])
    wrap(_f)(xs)
    fg.effects_barrier()
    assert len(seen) == 3
    got = sorted((np.asarray(fr[0].locals["x"]) for fr, _ in seen), key=lambda a: tuple(a.tolist()))
    for frames, _ in seen:
        _check(frames, np.asarray(frames[0].locals["x"]))
    np.testing.assert_allclose(np.stack(got), xs, rtol=1e-6)


def test_jit_refires_on_each_call(seen):
    g = fg.jit(_f)
    g(X)
    g(X + 1.0)
    fg.effects_barrier()
    assert len(seen) == 2
    _check(seen[1][0], X + 1.0)


def test_num_frames_and_filter(seen):
    def inner(x):
        z = x + 1.0
        fg.debug.breakpoint(backend="record", num_frames=1)
        return z

    fg.jit(inner)(X)
    fg.effects_barrier()
    ((frames, _),) = seen
    assert len(frames) == 1 and frames[0].function == "inner"
    np.testing.assert_allclose(np.asarray(frames[0].locals["z"]), X + 1.0)


def test_token_is_returned(seen):
    tok = object()
    assert fg.debug.breakpoint(backend="record", token=tok) is tok
    assert len(seen) == 1


def test_bad_arguments():
    with pytest.raises(ValueError, match="Unknown debugger backend"):
        fg.debug.breakpoint(backend="nope")
    with pytest.raises(TypeError, match="ordered"):
        fg.debug.breakpoint(ordered=1)
    with pytest.raises(ValueError, match="num_frames"):
        fg.debug.breakpoint(num_frames=0)
    with pytest.raises(TypeError, match="callable"):
        fg.debug.register_debugger("x", 3, 0)


def test_default_is_pdb_reading_stdin():
    """A real pdb session in a subprocess: ``p x`` prints the concrete value under jit."""
    src = textwrap.dedent(
        """
        import numpy as np
        import funcgrad as fg
        import funcgrad.numpy as fnp

        @fg.jit
        def f(x):
            y = fnp.sin(x) * 0 + 7.0
            fg.debug.breakpoint()
            return y

        f(np.array([1.0, 2.0], np.float32))
        print("DONE")
        """
    )
    res = subprocess.run(
        [sys.executable, "-c", src],
        input="p x\np y.sum()\nc\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert "Entering funcgrad.debug.breakpoint" in res.stdout
    assert "(Pdb)" in res.stdout
    assert "Array([1., 2.], dtype=float32)" in res.stdout
    assert "Array(14., dtype=float32)" in res.stdout
    assert res.stdout.rstrip().endswith("DONE")


def _body(np_mod, dbg):
    def h(x):
        y = np_mod.cos(x) + x
        k = 2
        dbg.breakpoint(backend="record")
        return np_mod.sum(y * k)

    return h


@pytest.mark.parametrize("transform", ["eager", "jit", "vmap", "grad", "jit_grad"])
def test_same_locals_as_jax(seen, transform):
    """JAX's own breakpoint (its debugger registry) is the oracle: the innermost frame's
    locals have the same names and values, and it fires as many times."""
    jseen = _JAX_SEEN
    jseen.clear()
    wrap = {
        "eager": lambda m: lambda f: f,
        "jit": lambda m: m.jit,
        "vmap": lambda m: m.vmap,
        "grad": lambda m: m.grad,
        "jit_grad": lambda m: lambda f: m.jit(m.grad(f)),
    }[transform]
    x = np.stack([X, X * 2.0]) if transform == "vmap" else X
    wrap(fg)(_body(fnp, fg.debug))(x)
    wrap(jax)(_body(jnp, jax.debug))(x)
    fg.effects_barrier()
    jax.effects_barrier()
    assert len(seen) == len(jseen) > 0

    def key(d):
        return tuple(np.asarray(d["x"]).tolist())

    ours = sorted((fr[0].locals for fr, _ in seen), key=key)
    theirs = sorted((fr[0].locals for fr in jseen), key=key)
    for a, b in zip(ours, theirs):
        assert set(a) == set(b) >= {"x", "y", "k"}
        assert a["k"] == b["k"]
        for name in ("x", "y"):
            np.testing.assert_allclose(np.asarray(a[name]), np.asarray(b[name]), rtol=1e-6)
