"""Every argument of every transform honoured as JAX does (issue 12, point 3):
``vmap`` keyword arguments, ``in_axes``/``out_axes`` rules and errors, ``jit``
static/donated arguments through the signature, methods, partials and callable
objects, the shared trace cache, early rejection of what JAX rejects,
``stop_gradient`` on pytrees, ``vjp``/``linearize`` functions as pytrees,
``fori_loop`` bounds, and one run of the user function per transform call.
JAX, run in the same test, is the oracle."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

X = np.arange(6.0).reshape(3, 2)


def _run(call):
    """``("ok", value)`` or ``("err", exception type)`` of ``call()``."""
    try:
        return "ok", call()
    except Exception as e:  # the type is what is compared
        return "err", type(e)


def _same(fg_call, jax_call, rtol=1e-6):
    """Both succeed with equal values, or both raise the same exception type."""
    (kf, vf), (kj, vj) = _run(fg_call), _run(jax_call)
    assert kf == kj, (vf, vj)
    if kf == "err":
        assert vf is vj or issubclass(vf, vj), (vf, vj)
        return vf
    lf, tf = jax.tree_util.tree_flatten(vf)
    lj, tj = jax.tree_util.tree_flatten(vj)
    assert tf == tj
    for a, b in zip(lf, lj):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol)
    return vf


def _lib(m):
    """``(transforms, numpy, control-flow namespace)`` of funcgrad or JAX."""
    return (fg, fnp, fg) if m == "fg" else (jax, jnp, jax.lax)


# --------------------------------------------------------------------------- vmap


@pytest.mark.parametrize(
    "in_axes, args, kwargs",
    [
        (0, (X,), {"b": X}),
        (1, (X.T,), {"b": X}),
        ((1,), (X.T,), {"b": X}),
        (None, (X[0],), {"b": X}),
        ((None,), (2.0,), {"b": X}),
        (0, (), {"a": X, "b": X}),
    ],
)
def test_vmap_maps_keyword_arguments_over_axis_0(in_axes, args, kwargs):
    def f(a, b):
        return a * 2 + b

    _same(
        lambda: fg.vmap(f, in_axes=in_axes)(*args, **kwargs),
        lambda: jax.vmap(f, in_axes=in_axes)(*args, **kwargs),
    )


def test_vmap_keyword_arguments_under_jit_and_grad():
    def f(m):
        return lambda a, b: m.sum(m.sin(a) * b)

    _same(
        lambda: fg.jit(fg.vmap(fg.grad(f(fnp))))(X, b=X + 1),
        lambda: jax.jit(jax.vmap(jax.grad(f(jnp))))(X, b=X + 1),
    )
    _same(
        lambda: fg.grad(lambda a: fnp.sum(fg.vmap(f(fnp))(a, b=X)))(X),
        lambda: jax.grad(lambda a: jnp.sum(jax.vmap(f(jnp))(a, b=X)))(X),
    )


def test_vmap_keyword_arguments_size_mismatch_and_tuple_length():
    f = lambda a, b: a + b
    # kwargs are mapped even with in_axes=None: axis_size must agree with them
    _same(
        lambda: fg.vmap(f, in_axes=None, axis_size=2)(X, b=X),
        lambda: jax.vmap(f, in_axes=None, axis_size=2)(X, b=X),
    )
    # a tuple in_axes never covers keyword arguments
    t = _same(
        lambda: fg.vmap(f, in_axes=(0, 0))(X, b=X),
        lambda: jax.vmap(f, in_axes=(0, 0))(X, b=X),
    )
    assert t is ValueError
    with pytest.raises(ValueError, match="keyword arguments"):
        fg.vmap(f, in_axes=(0, 0))(X, b=X)


@pytest.mark.parametrize("m", ["fg", "jax"])
def test_vmap_in_axes_none_keeps_python_scalars_and_objects(m):
    T, _, _ = _lib(m)
    seen = []

    def f(a, n, fn):
        seen.append(type(n))
        return fn(a) * n

    out = T.vmap(f, in_axes=(0, None, None))(X, 3, lambda v: v + 1)
    np.testing.assert_allclose(np.asarray(out), (X + 1) * 3)
    assert seen == [int]


@pytest.mark.parametrize(
    "case",
    ["const", "input", "cond", "scan_carry", "while_batched_pred", "fori", "while_fwd_carry"],
)
def test_vmap_out_axes_none_accepts_unbatched_outputs(case):
    def make(m):
        T, _, L = _lib(m)
        fns = {
            "const": lambda a, c: (a * 2, 1.0),
            "input": lambda a, c: (a, c * 2),
            "cond": lambda a, c: (a, L.cond(c > 1, lambda: c, lambda: -c)),
            "scan_carry": lambda a, c: L.scan(lambda k, x: (k, x * 2), c, a)[::-1],
            "while_batched_pred": lambda a, c: L.while_loop(
                lambda s: s[0] < a[0], lambda s: (s[0] + 1, s[1]), (0.0, c)
            ),
            "fori": lambda a, c: L.fori_loop(0, 3, lambda i, s: (s[0] * 2, s[1]), (a, c)),
            "while_fwd_carry": lambda a, c: L.while_loop(
                lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 2.0, s[2]), (0, a, c)
            )[1:],
        }
        return T.vmap(fns[case], in_axes=(0, None), out_axes=(0, None))

    _same(lambda: make("fg")(X, 2.0), lambda: make("jax")(X, 2.0))


@pytest.mark.parametrize("out_axes", [None, (0, None)])
def test_vmap_out_axes_none_on_a_batched_output_raises(out_axes):
    f = lambda a: (a, a * 2)
    _same(lambda: fg.vmap(f, out_axes=out_axes)(X), lambda: jax.vmap(f, out_axes=out_axes)(X))
    with pytest.raises(ValueError, match="out_axes"):
        fg.vmap(f, out_axes=out_axes)(X)


@pytest.mark.parametrize("out_axes", [0, 1, 2, -1, -2, -3, 5])
def test_vmap_out_axes_range(out_axes):
    _same(
        lambda: fg.vmap(lambda a: a * 2, out_axes=out_axes)(X),
        lambda: jax.vmap(lambda a: a * 2, out_axes=out_axes)(X),
    )


@pytest.mark.parametrize(
    "in_axes",
    [False, True, {"a": 0}, 0.0, "a", (False,), ([0],), ({"a": 0},), (0, 0), [0], (jnp.zeros(2),)],
)
def test_vmap_malformed_in_axes_rejected_as_jax(in_axes):
    def make(T):
        return lambda: T.vmap(lambda a: a * 2, in_axes=in_axes)(X)

    _same(make(fg), make(jax))


@pytest.mark.parametrize("out_axes", [False, 0.5, (jnp.zeros(2),), "x"])
def test_vmap_malformed_out_axes_rejected_as_jax(out_axes):
    def make(T):
        return lambda: T.vmap(lambda a: a * 2, out_axes=out_axes)(X)

    assert _same(make(fg), make(jax)) is TypeError


def test_vmap_docstring_names_the_function():
    def superfun(a):
        """Does things with stuff."""

    for T in (fg, jax):
        doc = T.vmap(superfun).__doc__
        assert doc.startswith("Vectorized version of superfun")
        assert doc.endswith("Original documentation:\n\n" + superfun.__doc__)


def _gen(x):
    yield x


class _Callable:
    def __call__(self, x):
        return x * 3.0


@pytest.mark.parametrize("bad", [3, "f", None, _gen, staticmethod(lambda x: x)])
@pytest.mark.parametrize(
    "name", ["vmap", "jit", "grad", "value_and_grad", "jacfwd", "jacrev", "hessian"]
)
def test_non_callables_rejected_early(bad, name):
    # early: when the transform is applied, before any call
    t = _same(lambda: getattr(fg, name)(bad), lambda: getattr(jax, name)(bad))
    assert t is TypeError


@pytest.mark.parametrize("bad", [3, _gen])
def test_non_callables_rejected_by_vjp_jvp_linearize(bad):
    for fgc, jc in [
        (lambda: fg.vjp(bad, 1.0), lambda: jax.vjp(bad, 1.0)),
        (lambda: fg.jvp(bad, (1.0,), (1.0,)), lambda: jax.jvp(bad, (1.0,), (1.0,))),
        (lambda: fg.linearize(bad, 1.0), lambda: jax.linearize(bad, 1.0)),
    ]:
        assert _same(fgc, jc) is TypeError


# --------------------------------------------------------------------------- jit


def _g(x, y, flag=False):
    return x * 10.0 if flag else x + y


@pytest.mark.parametrize(
    "kw, args, kwargs",
    [
        ({"static_argnames": "flag"}, (1.0, 2.0, True), {}),
        ({"static_argnames": "flag"}, (1.0, 2.0), {"flag": True}),
        ({"static_argnums": 2}, (1.0, 2.0), {"flag": True}),
        ({"static_argnums": 2}, (1.0, 2.0, True), {}),
        ({"static_argnums": -1}, (1.0, 2.0, True), {}),
        ({"static_argnums": 2, "static_argnames": ()}, (1.0, 2.0, True), {}),
        ({"static_argnums": (), "static_argnames": "flag"}, (1.0, 2.0), {"flag": True}),
    ],
)
def test_jit_static_argnums_and_argnames_resolve_through_signature(kw, args, kwargs):
    _same(lambda: fg.jit(_g, **kw)(*args, **kwargs), lambda: jax.jit(_g, **kw)(*args, **kwargs))


def test_jit_static_argument_passed_positionally_is_not_traced():
    seen = []

    def f(x, mode):
        seen.append(mode)
        return x * 2 if mode == "double" else x

    jf = fg.jit(f, static_argnames="mode")
    np.testing.assert_allclose(jf(3.0, "double"), 6.0)
    np.testing.assert_allclose(jf(3.0, mode="double"), 6.0)
    np.testing.assert_allclose(jf(3.0, "id"), 3.0)
    assert seen == ["double", "double", "id"]  # positional and keyword are separate keys
    np.testing.assert_allclose(jf(4.0, "double"), jax.jit(f, static_argnames="mode")(4.0, "double"))
    assert len(seen) == 4  # the JAX call traced once; funcgrad's cache hit


def _f3(a, b, c): ...
def _posonly(a, /, b, *, c): ...
def _varargs(a, *args): ...
def _kwargs(a, b, **kwargs): ...
def _mixed(a, /, b, c, *args, **kwargs): ...


@pytest.mark.parametrize("what", ["static_argnums", "donate_argnums"])
@pytest.mark.parametrize(
    "fun, nums",
    [
        (_f3, (0, 1)),
        (_f3, (0, 1, -3)),
        (_f3, (0, 1, 3)),
        (_f3, (0, 1, -4)),
        (_posonly, (0, 1)),
        (_posonly, (0, 1, 3)),
        (_posonly, (0, 1, -3)),
        (_varargs, (0, 999)),
        (_varargs, (0, -999)),
    ],
)
def test_jit_argnums_range_checked_as_jax(what, fun, nums):
    _same(
        lambda: fg.jit(fun, **{what: nums}) and None, lambda: jax.jit(fun, **{what: nums}) and None
    )


@pytest.mark.parametrize(
    "fun, names",
    [
        (_f3, ("b", "c")),
        (_f3, ("b", "c", "nope")),
        (_kwargs, ("a", "b", "nope")),
        (_mixed, ("b", "c")),
        (_mixed, ("b", "c", "nope")),
        (_mixed, ("a", "c")),
        (_mixed, ("args", "c")),
    ],
)
def test_jit_static_argnames_checked_as_jax(fun, names):
    _same(
        lambda: fg.jit(fun, static_argnames=names) and None,
        lambda: jax.jit(fun, static_argnames=names) and None,
    )


def test_jit_keyword_static_defaults():
    _same(lambda: fg.jit(lambda x=4: x, static_argnums=0)(), lambda: 4)
    _same(
        lambda: fg.jit(lambda x: x, static_argnums=0)(x=4),
        lambda: jax.jit(lambda x: x, static_argnums=0)(x=4),
    )


@pytest.mark.parametrize("m", ["fg", "jax"])
def test_jit_method_decorator_partial_and_callable_objects(m):
    T, np_, _ = _lib(m)

    class Scaled:
        k = 5.0

        @functools.partial(T.jit, static_argnums=0)
        def static_self(self, x):
            return x * self.k

        @T.jit
        def plain(self, x):
            return x + 1.0

    s = Scaled()
    np.testing.assert_allclose(s.static_self(2.0), 10.0)
    with pytest.raises(TypeError):  # bound: self is a (non-array) dynamic argument
        s.plain(2.0)
    np.testing.assert_allclose(Scaled.plain(None, 2.0), 3.0)
    np.testing.assert_allclose(T.jit(functools.partial(_g, flag=True))(1.0, 2.0), 10.0)
    np.testing.assert_allclose(T.jit(functools.partial(_g, 1.0))(2.0), 3.0)
    np.testing.assert_allclose(T.jit(_Callable())(2.0), 6.0)
    np.testing.assert_allclose(T.jit(np_.sin)(1.0), np.sin(1.0))


@pytest.mark.parametrize("m", ["fg", "jax"])
def test_jit_fresh_wrapper_of_a_seen_function_does_not_retrace(m):
    T, _, _ = _lib(m)
    calls = []

    def f(x):
        calls.append(1)
        return x * 2

    for v in (1.0, 2.0, 3.0):
        np.testing.assert_allclose(T.jit(f)(v), 2 * v)
    assert len(calls) == 1
    T.jit(f, static_argnums=0)(1.0)  # another configuration traces again
    assert len(calls) == 2


def test_jit_shared_cache_does_not_keep_functions_alive():
    import gc
    import weakref

    def f(x):
        return x + 1

    fg.jit(f)(1.0)
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize(
    "args, kwargs",
    [(("a",), {}), (({"k": ["a"]},), {}), ((1.0,), {"y": "s"}), ((object(),), {})],
)
def test_jit_rejects_non_array_dynamic_arguments(args, kwargs):
    def f(x, y=0.0):
        return x

    t = _same(lambda: fg.jit(f)(*args, **kwargs), lambda: jax.jit(f)(*args, **kwargs))
    assert t is TypeError
    with pytest.raises(TypeError) as want:
        jax.jit(f)(*args, **kwargs)
    with pytest.raises(TypeError, match=r"jit-compiled function f: .* dynamic arguments") as info:
        fg.jit(f)(*args, **kwargs)
    # JAX's sentence (which names the argument's path and type) comes first
    head = str(want.value).split("\n")[0]
    assert str(info.value).startswith(head.replace(repr(jax.jit(f)), repr(f))) or (
        str(info.value).split(" as an abstract array.")[1].split("\n")[0]
        == head.split(" as an abstract array.")[1]
    ), (str(info.value), head)
    # funcgrad's error alone: no JAX error chained to it
    assert info.value.__context__ is None or info.value.__suppress_context__
    # under another transform too (funcgrad's own dispatch)
    with pytest.raises(TypeError, match="abstract array"):
        fg.grad(lambda z: fg.jit(f)(*args, **kwargs) * z)(1.0)
    # as a static argument a str is fine
    _same(
        lambda: fg.jit(lambda x, s: x * len(s), static_argnums=1)(2.0, "abc"),
        lambda: jax.jit(lambda x, s: x * len(s), static_argnums=1)(2.0, "abc"),
    )


# --------------------------------------------------------------------------- stop_gradient


def test_stop_gradient_takes_pytrees():
    tree = {"a": 1.5, "b": (np.ones(2), np.arange(3))}
    _same(lambda: fg.stop_gradient(tree), lambda: jax.lax.stop_gradient(tree))

    def loss(m, L):
        def f(x):
            s = L.stop_gradient({"p": x * x, "q": [m.sin(x)]})
            return s["p"] * x + s["q"][0] + x * x

        return f

    _same(lambda: fg.grad(loss(fnp, fg))(1.3), lambda: jax.grad(loss(jnp, jax.lax))(1.3))
    _same(lambda: fg.stop_gradient("s"), lambda: jax.lax.stop_gradient("s"))


# --------------------------------------------------------------------------- vjp/linearize functions


@pytest.mark.parametrize("m", ["fg", "jax"])
def test_vjp_and_linearize_functions_pass_through_jit(m):
    T, np_, _ = _lib(m)
    f = lambda x: np_.sin(x) * x

    @functools.partial(T.jit, static_argnums=0)
    def vjp_of(f, x):
        return T.vjp(f, x)[1]

    @functools.partial(T.jit, static_argnums=0)
    def lin_of(f, x):
        return T.linearize(f, x)[1]

    x = np.linspace(0.1, 1.0, 4)
    apply = T.jit(lambda fn, v: fn(v))
    ct = np.ones(4)
    ref = np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(apply(vjp_of(f, x), ct)[0], ref, rtol=1e-6)
    np.testing.assert_allclose(apply(lin_of(f, x), ct), ref, rtol=1e-6)
    # eager functions are pytrees too: their leaves are arrays
    _, vjp_fn = T.vjp(f, x)
    _, jvp_fn = T.linearize(f, x)
    for fn in (vjp_fn, jvp_fn):
        leaves = jax.tree_util.tree_leaves(fn)
        assert leaves and all(hasattr(leaf, "shape") for leaf in leaves)
        np.testing.assert_allclose(apply(fn, ct)[0] if fn is vjp_fn else apply(fn, ct), ref)


def test_vjp_function_pytree_roundtrip_and_has_aux():
    def f(x, y):
        return {"s": fnp.sum(x * y)}, x * 2

    out, vjp_fn, aux = fg.vjp(f, np.ones(3), np.arange(3.0), has_aux=True)
    leaves, tree = jax.tree_util.tree_flatten(vjp_fn)
    rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
    jout, jvjp, jaux = jax.vjp(
        lambda x, y: ({"s": jnp.sum(x * y)}, x * 2), np.ones(3), np.arange(3.0), has_aux=True
    )
    _same(lambda: rebuilt({"s": 2.0}), lambda: jvjp({"s": 2.0}))
    _same(lambda: (out, aux), lambda: (jout, jaux))


# --------------------------------------------------------------------------- fori_loop


@pytest.mark.parametrize(
    "lo, hi",
    [
        (0.0, 3.5),
        (-1.5, 2.5),
        (np.float32(0), np.float32(2.9)),
        (0, 3.0),
        (np.int16(0), 3),
        (np.uint32(0), 3),
        (np.uint32(0), np.uint32(3)),
        (False, True),
        (np.int32(1), np.int64(4)),
        (0j, 3j),
        (2, 1),
    ],
)
def test_fori_loop_bounds_follow_jax(lo, hi):
    def make(m):
        _, _, L = _lib(m)
        return lambda: L.fori_loop(lo, hi, lambda i, c: c * 2.0 + i, 1.0)

    _same(make("fg"), make("jax"))


@pytest.mark.parametrize("lo, hi", [(0.5, 3.0), (np.float32(0.25), np.float32(2.0)), (1, 4)])
def test_fori_loop_traced_float_bounds(lo, hi):
    def make(m):
        T, _, L = _lib(m)
        return lambda: T.jit(lambda a, b: L.fori_loop(a, b, lambda i, c: c + i, 0.0))(lo, hi)

    _same(make("fg"), make("jax"))


def test_fori_loop_float_bounds_grad_and_unroll():
    def make(m):
        T, _, L = _lib(m)
        return lambda: T.grad(lambda x: L.fori_loop(0.0, 3.0, lambda i, c: c * x, 1.0, unroll=2))(
            2.0
        )

    _same(make("fg"), make("jax"))

    def traced(m):
        T, _, L = _lib(m)
        return lambda: T.jit(lambda n: L.fori_loop(0, n, lambda i, c: c + 1.0, 0.0, unroll=2))(3)

    assert _same(traced("fg"), traced("jax")) is ValueError


# --------------------------------------------------------------------------- one run per call


@pytest.mark.parametrize(
    "name",
    ["grad", "value_and_grad", "vjp", "jvp", "linearize", "grad_aux", "vjp_aux", "jvp_aux"],
)
def test_primal_function_runs_once_per_call(name):
    def count(m):
        T, np_, _ = _lib(m)
        n = [0]

        def f(x):
            n[0] += 1
            y = np_.sin(x) * 2.0
            return (y, x) if name.endswith("aux") else y

        calls = {
            "grad": lambda: T.grad(f)(1.0),
            "value_and_grad": lambda: T.value_and_grad(f)(1.0),
            "vjp": lambda: T.vjp(f, 1.0)[1](1.0),
            "jvp": lambda: T.jvp(f, (1.0,), (1.0,)),
            "linearize": lambda: T.linearize(f, 1.0)[1](1.0),
            "grad_aux": lambda: T.grad(f, has_aux=True)(1.0),
            "vjp_aux": lambda: T.vjp(f, 1.0, has_aux=True),
            "jvp_aux": lambda: T.jvp(f, (1.0,), (1.0,), has_aux=True),
        }
        out = []
        for _ in range(2):
            n[0] = 0
            calls[name]()
            out.append(n[0])
        return out

    assert count("fg") == count("jax") == [1, 1]


def test_vmap_inconsistent_sizes_message_as_jax():
    """Each size, how many axes have it and an example argument, in JAX's words."""
    x = np.ones((10, 4), np.float32)
    u = np.ones((10, 2), np.float32)
    calls = [
        lambda lib, m: lib.vmap(lambda a, b: m.sum(a) + m.sum(b), in_axes=(0, 1))(x, u),
        lambda lib, m: lib.vmap(lambda x, y, z: None, in_axes=(0, 1, 0))(x, u, x),
        lambda lib, m: lib.vmap(lambda a, b: None, in_axes=((0, 1), 0))((x, u), u),
        lambda lib, m: lib.vmap(lambda x, y: x)(m.ones(1), y=m.ones(2)),
    ]
    for call in calls:
        with pytest.raises(ValueError) as want:
            call(jax, jax.numpy)
        with pytest.raises(ValueError) as got:
            call(fg, fnp)
        assert str(got.value) == str(want.value)


def test_vmap_returns_a_forwarded_unmapped_input_itself():
    def f(lib):
        def g(x, y):
            return lib.lax.cond(x < 3, lambda x, y: (x * 2, y), lambda x, y: (x * 3, y), x, y)

        return g

    for lib, m in ((jax, jax.numpy), (fg, fnp)):
        y = m.array(3.0)
        _, y2 = lib.vmap(f(lib), in_axes=(0, None), out_axes=(0, None))(m.arange(3), y)
        assert y2 is y
