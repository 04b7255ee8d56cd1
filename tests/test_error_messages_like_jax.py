"""Errors for bad arguments carry what JAX's say (same exception type, JAX's wording
first, funcgrad's context after): each case is checked on JAX and funcgrad alike."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

_STRUCT = np.zeros(2, dtype=[("a", "<i4"), ("b", "<i4")])

_CASES: list[tuple[str, type, str, Callable[[Any, Any], Any]]] = [
    (
        "broadcast_to fewer dims",
        ValueError,
        r"Cannot broadcast to shape with fewer dimensions",
        lambda lib, np_: np_.broadcast_to(np.ones((3, 4, 5)), (4, 5)),
    ),
    (
        "broadcast_to incompatible",
        ValueError,
        r"Incompatible.*broadcasting: .*",
        lambda lib, np_: np_.broadcast_to(np.ones((2, 3)), (1, 3)),
    ),
    (
        "take_along_axis float indices",
        TypeError,
        r"take_along_axis indices must be of integer type, got float32",
        lambda lib, np_: np_.take_along_axis(np.ones(3), np.ones(1, np.float32), axis=0),
    ),
    (
        "grad has_aux without a pair",
        TypeError,
        r"two-element tuple",
        lambda lib, np_: lib.grad(lambda x: (x, x, x), has_aux=True)(1.0),
    ),
    # the phrases JAX's own tests (api_test, lax_numpy_test) match
    (
        "jvp tangent tree",
        TypeError,
        r"primal and tangent arguments to jax.jvp must have the same tree structure",
        lambda lib, np_: lib.jvp(lambda x, y: x * y, (np.float32(2),), [np.float32(2)]),
    ),
    (
        "jvp tangent dtype",
        TypeError,
        r"primal and tangent arguments to jax.jvp do not match.",
        lambda lib, np_: lib.jvp(lambda x: -x, (np.float16(2),), (np.float32(4),)),
    ),
    (
        "jvp tangent shape",
        ValueError,
        r"jvp called with different primal and tangent shapes",
        lambda lib, np_: lib.jvp(lambda x: x + 1, (np.ones(3),), (np.ones(4),)),
    ),
    (
        "linearize tangent",
        ValueError,
        r"linearized function called on tangent values inconsistent with the original",
        lambda lib, np_: lib.linearize(np_.sum, np_.array([1, 2, 3]))[1](np.ones((3, 2))),
    ),
    (
        "grad too few positional arguments",
        TypeError,
        r"differentiating with respect to argnums=0 requires at least 1 positional "
        r"arguments to be passed by the caller, but got only 0 positional arguments.",
        lambda lib, np_: lib.grad(lambda x, y: x + y)(x=0.0, y=1.0),
    ),
    (
        "grad of an object array",
        TypeError,
        r".*is not a valid JAX type",
        lambda lib, np_: lib.grad(lambda x: x)(np.array([1, 2, 3], dtype=object)),
    ),
    (
        "grad of a str",
        TypeError,
        r".* 'foo' of type <.*'str'> is not a valid JAX type",
        lambda lib, np_: lib.grad(lambda x: x)("foo"),
    ),
    (
        "float() under jit",
        TypeError,
        r"[Tt]ry using `x.astype\(float\)`",
        lambda lib, np_: lib.jit(lambda x: float(x))(1.0),
    ),
    (
        "int() under jit",
        TypeError,
        r"[Tt]ry using `x.astype\(int\)`",
        lambda lib, np_: lib.jit(lambda x: int(x))(1.0),
    ),
    (
        "add of unbroadcastable shapes",
        TypeError,
        r"^add got incompatible shapes for broadcasting: \(3,\), \(4,\).",
        lambda lib, np_: np_.add(np.zeros(3), np.zeros(4)),
    ),
    (
        "grad of add of unbroadcastable shapes",
        TypeError,
        r"^add got incompatible shapes for broadcasting: \(3,\), \(4,\).",
        lambda lib, np_: lib.grad(lambda x, y: (x + y).sum())(np.zeros(3), np.zeros(4)),
    ),
    (
        "dot of mismatched vectors",
        TypeError,
        r"dot_general requires contracting dimensions to have the same shape, got "
        r"\(3L?,\) and \(4L?,\).",
        lambda lib, np_: lib.grad(lambda x, y: np_.dot(x, y))(np.zeros(3), np.zeros(4)),
    ),
    (
        "jit of a str argument",
        TypeError,
        r"Error interpreting argument to .* as an abstract array. The problematic value "
        r"is of type .* and was passed to the function at path x.",
        lambda lib, np_: lib.jit(lambda x: x)("foo"),
    ),
    (
        "jit of a scalar type",
        TypeError,
        r"Error interpreting argument to .* as an abstract array. The problematic value "
        r"is of type .* and was passed to the function at path x.",
        lambda lib, np_: lib.jit(lambda x: x)(np_.int32),
    ),
    (
        "scan unroll",
        ValueError,
        r"`unroll` must be",
        lambda lib, np_: lib.lax.scan(lambda x, _: (x, x), 0, np_.arange(5), unroll=-1),
    ),
    (
        "lax.add of a string array",
        TypeError,
        r"Error interpreting argument to .* as a JAX value. The problematic value is of "
        r"type .* and was passed to add at position 1.",
        lambda lib, np_: lib.lax.add(np_.array(7), np.array("hello")),
    ),
]


@pytest.mark.parametrize(("name", "exc", "pattern", "call"), _CASES, ids=[c[0] for c in _CASES])
def test_error_like_jax(name: str, exc: type, pattern: str, call: Callable) -> None:
    for lib, np_ in ((jax, jnp), (fg, fnp)):
        with pytest.raises(exc, match=pattern):
            call(lib, np_)


def test_unsupported_dtype_message() -> None:
    with pytest.raises(TypeError, match=r"JAX only supports number, bool, and string dtypes"):
        fnp.asarray(_STRUCT)
    with pytest.raises(TypeError):
        jnp.asarray(_STRUCT)


def test_enable_checks_context_and_decorator() -> None:
    """``fg.enable_checks`` sets JAX's option for a block or a call, as ``jax.enable_checks``."""
    before = jax.config.jax_enable_checks
    for lib in (jax, fg):
        with lib.enable_checks(not before):
            assert jax.config.jax_enable_checks is (not before)
        assert jax.config.jax_enable_checks is before
        seen = lib.enable_checks(True)(lambda: jax.config.jax_enable_checks)()
        assert seen is True and jax.config.jax_enable_checks is before


def test_linear_transpose_of_an_integer_function() -> None:
    for f, x in [
        (lambda x: 2 * x, 1),
        (lambda x: (x * 3, x - 2 * x[::-1]), np.arange(3, dtype=np.int32)),
    ]:
        ct = jax.tree.map(lambda s: np.full(s.shape, 2, s.dtype), jax.eval_shape(f, x))
        got = fg.linear_transpose(f, x)(ct)
        want = jax.linear_transpose(f, x)(ct)
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    # a reduction's transpose too (JAX 0.10 drops that cotangent for integers: 6, not 8)
    ct = (np.full(3, 2, np.int32), np.asarray(2, jax.eval_shape(jnp.sum, np.int32(0)).dtype))
    (got,) = fg.linear_transpose(lambda x: (x * 3, x.sum()), np.arange(3, dtype=np.int32))(ct)
    np.testing.assert_array_equal(got, np.full(3, 8, np.int32))


def test_lax_conj_of_a_real_operand() -> None:
    for x in (3.0, np.float32(3), np.arange(3.0, dtype=np.float32)):
        got, want = fg.lax.conj(x), jax.lax.conj(x)
        assert got.dtype == want.dtype and got.weak_type == want.weak_type
        np.testing.assert_array_equal(got, want)

    def f(lib):
        return lambda x: lib.jit(lambda x, y: (x, y))(x, lib.lax.conj(x))[0]

    assert fg.grad(f(fg))(3.0) == jax.grad(f(jax))(3.0) == 1.0


def test_jit_takes_compiler_options_inline_and_copies() -> None:
    import copy

    f = lambda x: fnp.sqrt(x**2) + 1.0
    assert fg.jit(f, compiler_options={"xla_cpu_use_fusion_emitters": False})(1.0) == 2.0
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such"):
        fg.jit(f, compiler_options={"no_such_option_here": 0.0})(1.0)
    twice = fg.jit(lambda x: (x + 1, x + 1), inline=True)
    assert fg.eval_shape(twice, 0) == jax.eval_shape(jax.jit(lambda x: (x + 1, x + 1)), 0)
    x = jnp.ones(3)
    for cp in (copy.copy, copy.deepcopy, lambda v: v.copy()):
        y = fg.jit(cp)(x)
        np.testing.assert_array_equal(y, x)
        assert y.unsafe_buffer_pointer() != x.unsafe_buffer_pointer()
