"""``pad`` with a function as the mode and JAX's errors for unknown pad modes,
``tensordot``'s ``axes`` and ``interp``'s arguments, against JAX."""

import jax.numpy as jnp
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _pad_with(vector, pad_width, iaxis, kwargs):
    value = kwargs.get("padder", 10)
    vector = vector.at[: pad_width[0]].set(value)
    return vector.at[vector.shape[0] - pad_width[1] :].set(value)


@pytest.mark.parametrize("shape, width, kw", [((2, 3), 2, {}), ((2, 3, 4), 1, {"padder": 100}),
                                              ((4,), (1, 2), {})])  # fmt: skip
def test_pad_function_mode(shape, width, kw):
    a = np.arange(np.prod(shape)).reshape(shape)
    want = jnp.pad(a, width, _pad_with, **kw)
    np.testing.assert_array_equal(fnp.pad(a, width, _pad_with, **kw), want)
    np.testing.assert_array_equal(fg.jit(lambda a: fnp.pad(a, width, _pad_with, **kw))(a), want)


@pytest.mark.parametrize("mode", [1, None, "foo"])
def test_pad_unknown_mode(mode):
    for np_ in (fnp, jnp):
        with pytest.raises(NotImplementedError, match=f"Unimplemented padding mode '{mode}'"):
            np_.pad(jnp.arange(3), 1, mode)


@pytest.mark.parametrize("axes, pattern", [
    (2, "Number of tensordot axes.*exceeds input ranks"),
    (([0], [0, 1]), "tensordot requires axes lists to have equal length"),
    (("bad", "axes"), "tensordot requires both axes lists to be either ints, tuples or lists"),
    ("badaxes", "tensordot axes argument must be an int, a pair of ints, or a pair of lists"),
])  # fmt: skip
def test_tensordot_axes_errors(axes, pattern):
    a, b = np.ones((3, 2, 2)), np.ones((2,))
    for np_ in (fnp, jnp):
        with pytest.raises(TypeError, match=pattern):
            np_.tensordot(a, b, axes=axes)


@pytest.mark.parametrize("axes", [(1, 0), ([1], [0]), [[1, 2], [0, 1]], np.array([[2], [0]])])
def test_tensordot_axes_forms(axes):
    a, b = np.arange(12.0).reshape(3, 2, 2), np.arange(4.0).reshape(2, 2)
    # funcgrad also takes an array of axes (compat passes them); JAX wants lists
    listed = axes.tolist() if isinstance(axes, np.ndarray) else axes
    np.testing.assert_allclose(fnp.tensordot(a, b, axes=axes), jnp.tensordot(a, b, axes=listed))


@pytest.mark.parametrize("args, kw, message", [
    ((0.0, np.arange(3.0), np.arange(3.0)), {"left": "interpolate"},
     "the only valid string value of `left` is 'extrapolate', but got: 'interpolate'"),
    ((0.0, np.arange(3.0), np.arange(3.0)), {"right": "interpolate"},
     "the only valid string value of `right` is 'extrapolate', but got: 'interpolate'"),
    ((1j, 1j * np.arange(3.0), np.arange(3.0)), {}, "jnp.interp: complex x values not supported."),
])  # fmt: skip
def test_interp_errors(args, kw, message):
    for np_ in (fnp, jnp):
        with pytest.raises(ValueError) as info:
            np_.interp(*args, **kw)
        assert str(info.value) == message
