"""Python lists and tuples where ``jax.numpy`` wants an array: ``funcgrad.numpy`` refuses
them where JAX refuses them, with JAX's ``TypeError`` and message ("sum requires ndarray or
scalar arguments, got <class 'list'> at position 0."), and accepts them where JAX does,
with JAX's values. JAX itself is the oracle: every case below calls both libraries.

The table holds every public function of ``jax.numpy``, ``jax.numpy.linalg`` and
``jax.numpy.fft`` that a template call below fits (341 of them); each case replaces one
array argument of the template (or one element of a sequence argument) by a list.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

ENV = {
    "v": np.array([1.5, 2.0, 3.0], np.float32),
    "w": np.array([0.5, 0.25, 2.0], np.float32),
    "m": np.array([[2.0, 0.5, 0.1], [0.5, 3.0, 0.2], [0.1, 0.2, 4.0]], np.float32),
    "vi": np.array([1, 2, 3], np.int32),
    "wi": np.array([0, 1, 2], np.int32),
    "vb": np.array([True, False, True]),
    "c": np.array([1 + 1j, 2, 3], np.complex64),
}

#: template call (its arguments, as Python source over ``ENV``) -> the functions it fits
TEMPLATES = {
    "v": (
        "abs absolute acos acosh all amax amin angle any arccos arccosh arcsin arcsinh "
        "arctan arctanh argmax argmin argsort argwhere around array asarray asin asinh "
        "atan atanh average cbrt ceil clip conj conjugate copy corrcoef cos cosh "
        "count_nonzero cov cumprod cumsum cumulative_prod cumulative_sum deg2rad degrees "
        "diag diagflat diff ediff1d empty_like exp exp2 expm1 fabs fft.fft fft.fftn "
        "fft.fftshift fft.hfft fft.ifft fft.ifftn fft.ifftshift fft.ihfft fft.irfft "
        "fft.irfftn fft.rfft fft.rfftn flatnonzero flip flipud floor frexp gradient "
        "histogram histogram_bin_edges i0 imag iscomplex iscomplexobj isfinite isinf "
        "isnan isneginf isposinf isreal isrealobj isscalar iterable linalg.matrix_rank "
        "linalg.norm linalg.vector_norm log log10 log1p log2 logical_not max mean median "
        "min modf nan_to_num nanargmax nanargmin nancumprod nancumsum nanmax nanmean "
        "nanmedian nanmin nanprod nanstd nansum nanvar ndim negative nonzero ones_like "
        "poly polyder polyint positive prod ptp rad2deg radians ravel real reciprocal "
        "rint round shape sign signbit sin sinc sinh size sort sort_complex spacing sqrt "
        "square squeeze std sum tan tanh transpose trapezoid trim_zeros trunc unique "
        "unique_all unique_counts unique_inverse unique_values unstack unwrap vander var "
        "zeros_like"
    ),
    "v, v": (
        "add allclose append arctan2 array_equal array_equiv atan2 compress convolve "
        "copysign correlate digitize divide divmod dot equal extract float_power "
        "floor_divide fmax fmin fmod full_like geomspace greater greater_equal heaviside "
        "hypot inner intersect1d isclose isin kron less less_equal linalg.cross "
        "linalg.matmul linalg.outer linalg.vecdot linspace logaddexp logaddexp2 "
        "logical_and logical_or logical_xor logspace matmul maximum minimum mod multiply "
        "nanpercentile nanquantile nextafter not_equal outer percentile polyadd polydiv "
        "polymul polysub pow power quantile remainder searchsorted setdiff1d setxor1d "
        "subtract true_divide union1d vdot vecdot"
    ),
    "m": (
        "diag_indices_from diagonal fft.fft2 fft.ifft2 fft.irfft2 fft.rfft2 fliplr "
        "histogramdd linalg.cholesky linalg.cond linalg.det linalg.diagonal linalg.eig "
        "linalg.eigh linalg.eigvals linalg.eigvalsh linalg.inv linalg.matrix_norm "
        "linalg.matrix_transpose linalg.pinv linalg.qr linalg.slogdet linalg.svd "
        "linalg.svdvals linalg.trace matrix_transpose rot90 trace tril tril_indices_from "
        "triu triu_indices_from"
    ),
    "vi, wi": (
        "array_split bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift "
        "bitwise_xor delete expand_dims full gcd hsplit ix_ lcm ldexp left_shift repeat "
        "right_shift split take tile vsplit"
    ),
    "vi": (
        "bincount bitwise_count bitwise_invert bitwise_not broadcast_shapes empty indices "
        "invert ones packbits zeros"
    ),
    "[v, w]": "block column_stack concat concatenate dstack hstack lexsort stack vstack",
    "v, w": (
        "atleast_1d atleast_2d atleast_3d broadcast_arrays cross histogram2d meshgrid "
        "polyval result_type"
    ),
    "m, m": "linalg.lstsq linalg.solve linalg.tensordot matvec tensordot vecmat",
    "v, 1": "argpartition pad partition resize",
    "m, 1": "linalg.matrix_power linalg.tensorinv rollaxis",
    "'i,i', v, w": "einsum",
    "(wi, wi), (3, 3)": "ravel_multi_index",
    "[m, m]": "linalg.multi_dot",
    "[vb], [v]": "select",
    "m, v": "linalg.tensorsolve",
    "v, [vb], [1.0, 2.0]": "piecewise",
    "v, v, 1": "polyfit",
    "v, v, w": "interp",
    "v, vi": "broadcast_to",
    "v, wi, 0": "take_along_axis",
    "vb, v, w": "where",
    "wi, (3, 3)": "unravel_index",
    "wi, [v, w, v]": "choose",
}

#: funcgrad names a different function than JAX in the message (its position is JAX's):
#: the ufunc aliases are one function object in funcgrad named after the NumPy spelling
#: (``acos is arccos``); ``jnp.linalg``'s array-API twins are funcgrad's ``numpy`` functions
#: themselves; JAX misspells ``extract``'s name.
OTHER_NAME = {
    "acos": "arccos",
    "acosh": "arccosh",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "bitwise_invert": "invert",
    "bitwise_not": "invert",
    "bitwise_left_shift": "left_shift",
    "concat": "concatenate",
    "extract": "extract",
    "linalg.cross": "cross",
    "linalg.matmul": "matmul",
    "linalg.matrix_transpose": "matrix_transpose",
    "linalg.outer": "outer",
    "linalg.tensordot": "tensordot",
    "linalg.vecdot": "jnp.vecdot",
}

#: JAX fails on a list here with another ``TypeError`` (a list reaching its own dtype
#: inference or a trace), not its check: funcgrad refuses with its message (TypeError too)
OTHER_TYPEERROR = {"average", "geomspace", "gradient", "logspace", "result_type"}


def _lists(x: Any) -> Any:
    return x.tolist() if isinstance(x, np.ndarray) else x


def _cases() -> list[Any]:
    out = []
    for src, names in TEMPLATES.items():
        args = eval(f"({src},)", dict(ENV))  # the table above
        for name in names.split():
            for i, a in enumerate(args):
                if isinstance(a, np.ndarray):
                    label = f"arg{i}"
                    new = _lists(a)
                elif isinstance(a, (list, tuple)) and any(isinstance(e, np.ndarray) for e in a):
                    label = f"arg{i}[*]"  # a sequence argument whose elements are lists
                    new = type(a)(_lists(e) for e in a)
                else:
                    continue
                case = tuple(new if j == i else b for j, b in enumerate(args))
                out.append(pytest.param(name, case, id=f"{name}-{label}"))
    return out


def _get(mod: Any, name: str) -> Any:
    for part in name.split("."):
        mod = getattr(mod, part)
    return mod


def _call(f: Any, args: tuple) -> tuple[Any, BaseException | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ndim/shape/size of a list
        try:
            return f(*args), None
        except Exception as e:  # the outcome is compared below
            return None, e


def _first_line(e: BaseException) -> str:
    return str(e).split("\n")[0]


@pytest.mark.parametrize(("name", "args"), _cases())
def test_list_argument_as_jax(name: str, args: tuple) -> None:
    want, jerr = _call(_get(jnp, name), args)
    got, ferr = _call(_get(fnp, name), args)
    if jerr is None:
        assert ferr is None, f"JAX accepts the list, funcgrad raised {ferr!r}"
        wl, gl = jax.tree.leaves(want), jax.tree.leaves(got)
        assert len(wl) == len(gl)
        for a, b in zip(wl, gl):
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-6)
        return
    assert isinstance(jerr, TypeError), jerr
    assert type(ferr) is TypeError, f"JAX raises {jerr!r}; funcgrad: {ferr!r} ({got!r})"
    if name in OTHER_TYPEERROR:
        assert "requires ndarray or scalar arguments" in str(ferr)
        return
    expect = _first_line(jerr)
    if name in OTHER_NAME:
        expect = OTHER_NAME[name] + expect[expect.index(" requires ") :]
    assert _first_line(ferr) == expect


def test_notebook_sum_of_a_list() -> None:
    """The *Common Gotchas* notebook's example, and JAX's ``testNonArrayErrorMessage``
    (eagerly: a list's elements become tracers under a transform)."""
    with pytest.raises(TypeError) as e:
        fnp.sum([1, 2, 3])
    assert _first_line(e.value) == (
        "sum requires ndarray or scalar arguments, got <class 'list'> at position 0."
    )
    y = np.array([3.0, 4.0])
    for f in (fnp.add, fnp.dot):
        with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
            f([1.0, 2.0], y)
    assert float(fnp.sum(fnp.asarray([1, 2, 3]))) == 6.0


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.concatenate([m.ones(2), m.zeros(2)]),
        lambda m: m.concatenate((m.ones(2), m.zeros(2))),
        lambda m: m.stack([m.ones(2), m.zeros(2)]),
        lambda m: m.block([[m.ones(2)], [m.zeros(2)]]),
        lambda m: m.block([[1.0, 2.0], [3.0, 4.0]]),
        lambda m: m.select([m.arange(3) > 0], [m.ones(3)], 5.0),
        lambda m: m.choose(m.array([0, 1, 0]), [m.ones(3), m.zeros(3)]),
        lambda m: m.piecewise(m.ones(3), [[True, False, True]], [1.0, 2.0]),
        lambda m: m.lexsort((m.ones(3), m.arange(3))),
        lambda m: m.ravel_multi_index((m.array([0]), m.array([1])), (2, 2)),
        lambda m: m.unravel_index(m.array([1]), (2, 2)),
        lambda m: m.reshape(m.ones(6), [2, 3]),
        lambda m: m.ones(6).reshape([3, 2]),
        lambda m: m.transpose(m.ones((2, 3)), [1, 0]),
        lambda m: m.sum(m.ones((2, 3)), axis=[0, 1]),
        lambda m: m.broadcast_to(m.ones(3), [2, 3]),
        lambda m: m.zeros([2, 3]),
        lambda m: m.full([2], 2.0),
        lambda m: m.pad(m.ones(3), [(1, 1)]),
        lambda m: m.pad(m.ones(3), 1, constant_values=[1.0, 2.0]),
        lambda m: m.split(m.ones(4), [1]),
        lambda m: m.tile(m.ones(2), [2]),
        lambda m: m.roll(m.ones(3), [1], [0]),
        lambda m: m.ones(3).at[m.array([0, 1])].set([1.0, 2.0]),
        lambda m: m.ones(3).at[m.array([0, 1])].add((1.0, 2.0)),
        lambda m: m.array_equal([1, 2], m.array([1, 2])),
        lambda m: m.iscomplexobj([1.0]),
        lambda m: m.fft.ihfft([1.0, 2.0]),
    ],
)
def test_sequences_jax_accepts(call: Any) -> None:
    """Sequences of arrays, shapes, axes and the few list arguments JAX takes."""
    want, got = call(jnp), call(fnp)
    wl, gl = jax.tree.leaves(want), jax.tree.leaves(got)
    assert len(wl) == len(gl)
    for a, b in zip(wl, gl):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.sum(m.ones(3), where=[True, False, True]), None),
        (lambda m: m.full(3, [1.0, 2.0, 3.0]), None),
        (lambda m: m.full_like(m.ones(3), [1.0, 2.0, 3.0]), None),
        (lambda m: m.take(m.ones(3), [0, 1]), None),
        (lambda m: m.repeat(m.ones(3), [1, 2, 3]), None),
        (lambda m: m.delete(m.ones(3), (0,)), None),
        (lambda m: m.insert(m.ones(3), [0], 5.0), None),
        (lambda m: m.insert(m.ones(3), 1, [5.0, 6.0]), None),
        (lambda m: m.percentile(m.ones(3), [50.0]), None),
        (lambda m: m.searchsorted(m.ones(3), [0.5]), None),
        (lambda m: m.isin(m.ones(3), [1.0]), None),
        (lambda m: m.interp(m.ones(3), [0.0, 1.0], [1.0, 2.0]), None),
        (lambda m: m.polyval([1.0, 2.0], m.ones(3)), None),
        (lambda m: m.einsum("i,i", [1.0, 2.0, 3.0], m.ones(3)), None),
        (lambda m: m.select([m.ones(1) > 0], [m.ones(1)], [5.0]), None),
        (lambda m: m.concatenate([[1.0], [2.0]]), None),
        (lambda m: m.where([True, False], 1.0, 0.0), None),
        (lambda m: m.sum((1.0, 2.0)), None),
    ],
)
def test_keyword_and_sequence_refusals(call: Any, message: Any) -> None:
    """Lists in keyword arguments, values and elements of sequence arguments."""
    _, jerr = _call(call, (jnp,))
    _, ferr = _call(call, (fnp,))
    assert isinstance(jerr, TypeError) and type(ferr) is TypeError, (jerr, ferr)
    assert _first_line(ferr) == _first_line(jerr)


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: x.at[m.array([0, 1])].set([1.0, 2.0]),
        lambda m, x: x.at[m.array([0, 1])].add((1.0, 2.0)),
        lambda m, x: x.at[m.array([0, 1])].subtract([1.0, 2.0]),
        lambda m, x: x.reshape([3, 1]).transpose([1, 0]),
        lambda m, x: m.reshape(x, [3, 1])[[0, 1], [0, 0]],
        lambda m, x: m.concatenate([x, x]),
        lambda m, x: m.sum(m.asarray([x, x, 2 * x]), axis=[0]),
        lambda m, x: m.select([x > 1.6], [x], 0.0),
    ],
)
def test_sequences_jax_accepts_traced(f: Any) -> None:
    """Under ``jit``, where the array is a tracer and its methods are funcgrad's."""
    x = np.array([1.5, 2.0, 3.0], np.float32)
    with warnings.catch_warnings():
        # JAX with x64 on: a float list is float64, which it warns about scattering into
        # float32 (funcgrad casts as JAX does, without the deprecation warning)
        warnings.simplefilter("ignore", FutureWarning)
        want = jax.jit(lambda x: f(jnp, x))(x)
        got = fg.jit(lambda x: f(fnp, x))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize(
    "f",
    [
        lambda m, x: m.sum([x, x]),
        lambda m, x: m.add(x, [1.0, 2.0, 3.0]),
        lambda m, x: m.dot([1.0, 2.0, 3.0], x),
        lambda m, x: m.where(x > 2, [1.0, 2.0, 3.0], x),
    ],
)
def test_refusals_traced(f: Any) -> None:
    """Under ``jit`` too (a list of tracers is still a list)."""
    x = np.array([1.5, 2.0, 3.0], np.float32)
    _, jerr = _call(jax.jit(lambda x: f(jnp, x)), (x,))
    _, ferr = _call(fg.jit(lambda x: f(fnp, x)), (x,))
    assert isinstance(jerr, TypeError) and type(ferr) is TypeError, (jerr, ferr)
    assert _first_line(ferr) == _first_line(jerr)
