"""Helpers for the ``funcgrad.numpy`` tests: oracle comparison against ``jax.numpy``.

* ``check(f_fnp, f_jnp, *args)`` runs the funcgrad function eagerly and (for the
  first example of every test) under ``funcgrad.jit``, and compares values, dtypes,
  shapes and weak types with ``jax.numpy``'s result; it also traces the function
  with ``funcgrad.make_ir`` and checks the traced avals.
* ``check_abstract(f_fnp, f_jnp, *args)`` compares only the traced result avals
  (shape, dtype, weak type) with ``jax.eval_shape`` of the ``jax.numpy`` function:
  no XLA compilation, so whole dtype x shape tables are cheap to check.
* ``fg_call(name, args, kw)`` runs ``fnp.<name>`` under one ``fg.jit`` and
  ``assert_same_leaves(got, want)`` compares it leaf by leaf with ``jax.numpy``'s result
  (the table tests of test_numpy_gaps.py and test_statistics.py).

XLA compiles every new (primitive, shape, dtype) signature, which dominates the
runtime of these tests; the value tests therefore draw random *values* for a
small shared set of shapes and dtypes.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Sequence
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationTypeError

# dtypes (after canonicalisation with jax_enable_x64, which tests/conftest.py turns on)
BOOL = np.dtype("bool")
I8, U8, I16, I32, I64, U32 = (
    np.dtype(n) for n in ("int8", "uint8", "int16", "int32", "int64", "uint32")
)
F16, F32, F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
BF16 = np.dtype(jnp.bfloat16)

FLOATS = [F32, F64, F16]
INTS = [I32, I64, I8, U8]
NUMERIC = [F32, I32, F64, F16, I64, U8]
ALL = [F32, I32, BOOL, F64, F16, I64, U8]

#: shapes used by the randomized tests: a small set, so XLA's per-shape caches stay warm
SHAPES = [(), (3,), (2, 3), (1, 3), (4, 1), (2, 1, 3), (0,), (2, 0)]
NONEMPTY = [s for s in SHAPES if 0 not in s]
ND = [s for s in NONEMPTY if s]

#: examples per test that also run under funcgrad.jit (each one compiles through XLA)
JIT_EXAMPLES = int(os.environ.get("FG_NUMPY_JIT_EXAMPLES", "1"))
_jit_counts: collections.Counter = collections.Counter()

seeds = st.integers(0, 2**32 - 1)


def rand(
    rng: np.random.Generator,
    shape: Sequence[int],
    dtype: Any,
    lo: float = -3.0,
    hi: float = 3.0,
    nonzero: bool = False,
) -> np.ndarray:
    """Random values of ``dtype`` in ``[lo, hi]`` (integers and bools too)."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        a, b = max(int(np.floor(lo)), int(info.min)), min(int(np.ceil(hi)), int(info.max))
        x = rng.integers(a, b + 1, shape).astype(dtype)
        if nonzero:
            x = np.where(x == 0, np.asarray(1, dtype), x)
        return x
    x = rng.uniform(lo, hi, shape)
    if nonzero:
        x = np.where(np.abs(x) < 0.25, 0.5, x)
    return np.asarray(x, dtype)


def tol(dtype: np.dtype, scale: float = 1.0) -> dict:
    """rtol/atol for comparing results of ``dtype``."""
    dtype = np.dtype(dtype)
    if dtype in (F16, BF16):
        t = 2e-2 if dtype == BF16 else 4e-3
        return {"rtol": t * scale, "atol": t * scale}
    if dtype == F32:
        return {"rtol": 2e-5 * scale, "atol": 2e-5 * scale}
    if dtype == F64:
        return {"rtol": 1e-10 * scale, "atol": 1e-10 * scale}
    return {"rtol": 0, "atol": 0}


def _leaves(x: Any) -> list:
    return jax.tree_util.tree_leaves(x)


def assert_same(
    got: Any, want: Any, *, weak: bool = True, scale: float = 1.0, what: str = ""
) -> None:
    """Equal structure, shapes, dtypes, weak types (non-bool results) and values."""
    # jax.numpy hands some NumPy inputs back as NumPy arrays (e.g. jnp.reshape): strong arrays
    want = jax.tree_util.tree_map(
        lambda w: jnp.asarray(w) if isinstance(w, np.ndarray) else w, want
    )
    gl, wl = _leaves(got), _leaves(want)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want), (
        f"{what}: structure {jax.tree_util.tree_structure(got)} != "
        f"{jax.tree_util.tree_structure(want)}"
    )
    for g, w in zip(gl, wl):
        assert isinstance(g, jax.Array), f"{what}: result is a {type(g).__name__}, not a jax.Array"
        assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
        assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != {w.dtype}"
        if weak and w.dtype != BOOL:
            assert g.weak_type == w.weak_type, (
                f"{what}: weak_type {g.weak_type} != {w.weak_type} (dtype {w.dtype})"
            )
        if w.dtype.kind in "biu":
            chex.assert_trees_all_equal(np.asarray(g), np.asarray(w))
        else:
            chex.assert_trees_all_close(
                np.asarray(g, np.float64), np.asarray(w, np.float64), **tol(w.dtype, scale)
            )


def _test_id() -> str:
    return os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]


def check(
    f: Callable[..., Any],
    g: Callable[..., Any],
    *args: Any,
    weak: bool = True,
    scale: float = 1.0,
    jit: bool = True,
    static: Sequence[int] = (),
) -> Any:
    """``f`` (funcgrad) against ``g`` (jax.numpy): eager, traced avals, and under ``fg.jit``.

    ``static``: positions of ``args`` passed as static values (closed over) when tracing.
    """
    want = jax.tree_util.tree_map(
        lambda w: jnp.asarray(w) if isinstance(w, np.ndarray) else w, g(*args)
    )
    got = f(*args)
    assert_same(got, want, weak=weak, scale=scale, what="eager")
    dyn = [i for i in range(len(args)) if i not in static]

    def traced(*dargs: Any) -> Any:
        full = list(args)
        for i, a in zip(dyn, dargs):
            full[i] = a
        return f(*full)

    dargs = [args[i] for i in dyn]
    prog = fg.make_ir(traced)(*dargs)
    want_leaves = _leaves(want)
    assert len(prog.outvars) == len(want_leaves)
    for v, w in zip(prog.outvars, want_leaves):
        assert v.aval.shape == w.shape, f"traced: shape {v.aval.shape} != {w.shape}"
        assert v.aval.dtype == w.dtype, f"traced: dtype {v.aval.dtype} != {w.dtype}"
        if weak and w.dtype != BOOL:
            assert v.aval.weak_type == w.weak_type, (
                f"traced: weak_type {v.aval.weak_type} != {w.weak_type}"
            )
    if jit:
        key = _test_id()
        if _jit_counts[key] < JIT_EXAMPLES:
            _jit_counts[key] += 1
            assert_same(fg.jit(traced)(*dargs), want, weak=weak, scale=scale, what="jit")
    return got


_ORACLES: dict = {}


def check_batch(
    cases: Sequence[tuple[str, Callable[..., Any], Callable[..., Any], tuple]],
    *,
    key: Any = None,
    jit: bool = True,
    weak: bool = True,
    scale: float = 1.0,
) -> None:
    """Many ``(label, f_fnp, g_jnp, args)`` cases at once, for a fraction of the compiles.

    The ``jax.numpy`` oracle runs as one ``jax.jit`` over all cases (cached under ``key``,
    so examples with the same signatures reuse it); each funcgrad function runs eagerly
    and is traced; the first example of a test also runs all of them in one ``fg.jit``.
    Cases whose oracle raises (checked abstractly) must raise in funcgrad too. The
    functions must not close over per-example arrays (pass those in ``args``): the cached
    oracle would keep the first example's.
    """
    live = []
    for label, f, g, args in cases:
        try:
            jax.eval_shape(g, *args)
        except Exception:
            try:
                fg.make_ir(f)(*args)
            except Exception:
                continue
            raise AssertionError(f"{label}: jax.numpy raised but funcgrad.numpy did not") from None
        live.append((label, f, g, args))
    if not live:
        return
    labels = tuple(c[0] for c in live)
    okey = (_test_id(), key, labels)
    oracle = _ORACLES.get(okey)
    if oracle is None:
        gs = [c[2] for c in live]
        oracle = _ORACLES[okey] = jax.jit(lambda all_args: [g(*a) for g, a in zip(gs, all_args)])
    all_args = [c[3] for c in live]
    wants = oracle(all_args)
    for (label, f, _, args), want in zip(live, wants):
        got = f(*args)
        assert_same(got, want, weak=weak, scale=scale, what=f"eager {label}")
        prog = fg.make_ir(f)(*args)
        for v, w in zip(prog.outvars, _leaves(want)):
            assert (v.aval.shape, v.aval.dtype) == (w.shape, w.dtype), f"traced {label}"
            if weak and w.dtype != BOOL:
                assert v.aval.weak_type == w.weak_type, f"traced {label}: weak_type"
    if jit and _jit_counts[_test_id()] < JIT_EXAMPLES:
        _jit_counts[_test_id()] += 1
        fs = [c[1] for c in live]
        gots = fg.jit(lambda all_args: [f(*a) for f, a in zip(fs, all_args)])(all_args)
        for label, got, want in zip(labels, gots, wants):
            assert_same(got, want, weak=weak, scale=scale, what=f"jit {label}")


def check_abstract(
    f: Callable[..., Any], g: Callable[..., Any], *args: Any, weak: bool = True, what: str = ""
) -> None:
    """Traced result avals of ``f`` equal ``jax.eval_shape(g)``'s (errors must agree)."""
    try:
        want = jax.eval_shape(g, *args)
    except Exception:
        try:
            fg.make_ir(f)(*args)
        except Exception:
            return
        raise AssertionError(f"{what}: jax.numpy raised but funcgrad.numpy did not") from None
    prog = fg.make_ir(f)(*args)
    wl = _leaves(want)
    assert len(prog.outvars) == len(wl), f"{what}: {len(prog.outvars)} outputs != {len(wl)}"
    for v, w in zip(prog.outvars, wl):
        got = (v.aval.shape, v.aval.dtype)
        assert got == (w.shape, w.dtype), f"{what}: {got} != {(w.shape, w.dtype)}"
        if weak and w.dtype != BOOL:
            assert v.aval.weak_type == w.weak_type, (
                f"{what}: weak_type {v.aval.weak_type} != {w.weak_type} ({w.dtype})"
            )


def raises_same(f: Callable[[], Any], g: Callable[[], Any]) -> bool:
    """True if ``g`` (the oracle) raises; then ``f`` must raise too."""
    try:
        g()
    except Exception:
        try:
            f()
        except Exception:
            return True
        raise AssertionError("jax.numpy raised but funcgrad.numpy did not") from None
    return False


def tail(f: Callable[..., Any], *args: Any, **kw: Any) -> Callable[..., Any]:
    """``f`` with trailing positional and keyword arguments bound: ``tail(f, 1)(x) == f(x, 1)``."""
    return lambda *a: f(*a, *args, **kw)


def summed(f: Callable[..., Any]) -> Callable[..., Any]:
    """``lambda x: f(x).sum()``."""
    return lambda x: f(x).sum()


def operand(kind: Any, shape: Sequence[int]) -> Any:
    """An operand of ``kind``: a dtype, ``"py_bool"``/``"py_int"``/``"py_float"`` (Python
    scalars) or ``"weak_f32"``/``"weak_i32"`` (weakly typed arrays); values are ones."""
    if kind == "py_bool":
        return True
    if kind == "py_int":
        return 2
    if kind == "py_float":
        return 1.5
    if kind == "weak_f32":
        return weak_array(np.ones(shape, np.float32))
    if kind == "weak_i32":
        return weak_array(np.ones(shape, np.int32))
    return np.ones(shape, kind)


def weak_array(x: Any) -> jax.Array:
    """A weakly typed jax array holding ``x`` (as an all-Python-scalar computation makes)."""
    from jax._src.lax.lax import _convert_element_type

    x = np.asarray(x)
    return _convert_element_type(x, x.dtype, weak_type=True)


def assert_same_leaves(got: Any, want: Any, what: str = "") -> None:
    """Every leaf of ``got`` is a ``jax.Array`` with ``want``'s shape, dtype and weak type
    and values to 1e-7 (NaNs equal); tuples and named tuples on both sides alike."""
    gl, wl = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(gl) == len(wl), (what, got, want)
    assert isinstance(got, tuple) == isinstance(want, tuple), what
    assert getattr(got, "_fields", None) == getattr(want, "_fields", None), what
    for g, w in zip(gl, wl):
        assert isinstance(g, jax.Array), what
        assert (g.shape, g.dtype, g.weak_type) == (w.shape, w.dtype, w.weak_type), (
            what,
            g.shape,
            w.shape,
            g.dtype,
            w.dtype,
            g.weak_type,
            w.weak_type,
        )
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9, equal_nan=True, err_msg=what)


def fg_call(name: str, args: Sequence[Any], kw: dict) -> Any:
    """``fnp.<name>(*args, **kw)`` under one ``fg.jit`` (array arguments traced, the rest
    closed over): one compilation per case instead of one per operation. Functions whose
    output shape depends on values (no ``size=``) run eagerly."""
    f = getattr(fnp, name)
    pos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def g(*arrs):
        full = list(args)
        for i, a in zip(pos, arrs):
            full[i] = a
        return f(*full, **kw)

    try:
        return fg.jit(g)(*[args[i] for i in pos])
    except ConcretizationTypeError:
        return f(*args, **kw)
