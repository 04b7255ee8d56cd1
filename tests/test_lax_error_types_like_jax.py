"""``funcgrad.lax``'s refusals raise JAX 0.10.2's exception type with JAX's sentence
(funcgrad's context around it), for the cases ``jax``'s own ``lax_test`` checks: each
case runs under both and the exception types and JAX's phrase are compared."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.lax as fl

F2 = np.zeros(2, np.float32)
ONES = np.ones((1,), np.float32)
X3 = np.ones((1, 2, 3), np.float32)


def _conv_ranks(lax_: Any) -> Any:
    dn = lax_.ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
    return lax_.conv_general_dilated(
        np.ones((1, 1, 1)), np.ones((1, 1, 1, 1)), (1,), ((0, 0),), dimension_numbers=dn
    )


def _top_k_overflow(lax_: Any, eval_shape: Any) -> Any:
    x = jax.ShapeDtypeStruct((2**31 + 1,), np.dtype("bfloat16"))
    return eval_shape(lambda x: lax_.top_k(x, 100), x)


CASES = {
    "pad_value_not_scalar": (
        lambda L: L.pad(F2, F2, [(0, 0, 0)]),
        "padding_value must be a scalar",
    ),
    "pad_config_length": (lambda L: L.pad(F2, 0.0, [(0, 1, 0), (0, 1, 0)]), "padding_config"),
    "pad_negative_interior": (
        lambda L: L.pad(F2, 0.0, [(0, 1, -1)]),
        "interior padding in padding_config must be nonnegative",
    ),
    "pad_negative_size": (
        lambda L: L.pad(F2, 0.0, [(-4, 0, 1)]),
        "Dimension size after padding is not at least 0",
    ),
    "reduce_window_empty_window": (
        lambda L: L.reduce_window(ONES, 0.0, L.add, (0,), (1,), "VALID"),
        "must have every element be",
    ),
    "reduce_window_zero_stride": (
        lambda L: L.reduce_window(ONES, 0.0, L.add, (1,), (0,), "VALID"),
        "must have every element be",
    ),
    "reduce_window_output_tree": (
        lambda L: L.reduce_window(ONES, 0.0, lambda x, y: [x + y], (1,), (1,), "VALID"),
        "reduce_window output must have the same tree structure as the operands",
    ),
    "conv_ranks": (_conv_ranks, "lhs and rhs must have the same number of dimensions"),
    "reduce_nonscalar_init": (
        lambda L: L.reduce({"x": np.ones(5)}, {"x": np.ones(5)}, lambda x, y: x, [0]),
        "reduce found non-scalar initial value",
    ),
    "reduce_tree_mismatch": (
        lambda L: L.reduce({"x": np.ones(5)}, {"y": 0.0}, lambda x, y: x, [0]),
        "Operands must have the same tree structure as init_values",
    ),
    "reduce_repeated_axes": (
        lambda L: L.reduce(np.arange(3), 0, L.add, (0, 0)),
        "duplicate value in 'axes'",
    ),
    "dynamic_slice_index_types": (
        lambda L: L.dynamic_slice(np.ones((3, 4)), (np.int32(1), np.int16(2)), (2, 2)),
        "index arguments to dynamic_slice must be integers of the same type",
    ),
    "dynamic_update_slice_index_types": (
        lambda L: L.dynamic_update_slice(
            np.ones((3, 4)), np.zeros((2, 2)), (np.int32(1), np.int16(2))
        ),
        "index arguments to dynamic_update_slice must be integers of the same type",
    ),
    "argmax_negative_axis": (
        lambda L: L.argmax(np.ones((2, 3)), -1, np.int32),
        "Invalid axis -1 for operand",
    ),
    "argmin_empty": (
        lambda L: L.argmin(np.ones((0, 2)), 0, np.int32),
        "require non-empty reduced dimension",
    ),
    "argmax_index_dtype": (
        lambda L: L.argmax(np.ones((2,)), 0, np.float32),
        "index_dtype must be an integer type",
    ),
    "split_negative": (lambda L: L.split(np.arange(5), [-1]), "Sizes passed to split"),
    "split_sum": (lambda L: L.split(np.arange(5), [6]), "Sum of sizes 6 must be equal"),
    "split_axis": (lambda L: L.split(np.arange(5), (), 1), "axis 1 is out of bounds"),
    "squeeze_repeated": (lambda L: L.squeeze(X3, (0, 0)), "dimensions are not unique"),
    "squeeze_axis": (lambda L: L.squeeze(X3, (3,)), "axis 3 is out of bounds"),
    "squeeze_negative_axis": (lambda L: L.squeeze(X3, (-4,)), "axis -4 is out of bounds"),
    "squeeze_size": (lambda L: L.squeeze(X3, (1,)), "cannot select an axis to squeeze out"),
    "squeeze_none": (lambda L: L.squeeze(X3, (None,)), "cannot be interpreted as an integer"),
    "reshape_array_size": (
        lambda L: L.reshape(np.ones(3), (np.array([3, 1]),)),
        "Shapes must be 1D sequences of concrete values of integer type",
    ),
    "reshape_float_sizes": (
        lambda L: L.reshape(np.ones(3), (1.5, 2.0)),
        "Shapes must be 1D sequences of concrete values of integer type",
    ),
    "conv_padding": (
        lambda L: L.conv_general_dilated_patches(np.ones((1, 6, 6, 2)), (3, 3), (1, 1), (3, 3)),
        "padding argument to conv_general_dilated should be a string",
    ),
    "broadcast_in_dim_length": (
        lambda L: L.broadcast_in_dim(F2, (2, 2), (0, 1)),
        "broadcast_dimensions must have length equal to operand ndim",
    ),
    "broadcast_in_dim_rank": (
        lambda L: L.broadcast_in_dim(np.zeros((2, 2)), (2,), (0, 1)),
        "target broadcast shape must have equal or higher rank to the operand shape",
    ),
    "broadcast_in_dim_subset": (
        lambda L: L.broadcast_in_dim(F2, (2, 3), (2,)),
        "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions",
    ),
    "broadcast_in_dim_sizes": (
        lambda L: L.broadcast_in_dim(F2, (3,), (0,)),
        "operand dimension sizes must either be 1, or be equal to their corresponding",
    ),
    "broadcast_in_dim_duplicates": (
        lambda L: L.broadcast_in_dim(np.zeros((2, 2)), (2, 2), (0, 0)),
        "broadcast_in_dim broadcast_dimensions must not contain duplicates",
    ),
    "broadcast_in_dim_negative": (
        lambda L: L.broadcast_in_dim(F2, (2, -1), (0,)),
        "must have every element be nonnegative",
    ),
    "compare_complex": (lambda L: L.gt(2 + 3j, 4 + 5j), "does not accept dtype complex"),
    "population_count_bool": (
        lambda L: L.population_count(True),
        "population_count does not accept dtype bool",
    ),
    "conv_window_strides_rank": (
        lambda L: L.conv_general_dilated(
            np.ones((1, 1, 4, 4)), np.ones((1, 1, 2, 2)), window_strides=(1,), padding="VALID"
        ),
        "window and window_strides must have the same number of dimensions, but got 2 and 1",
    ),
    "reduce_window_init_not_scalar": (
        lambda L: L.reduce_window(F2, ONES, jax.lax.add, (1,), (1,), "VALID"),
        "reduce_window expected init_values to be scalars but init_values have shapes [(1,)]",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_type_and_words_as_jax(case: str) -> None:
    f, phrase = CASES[case]
    with pytest.raises(Exception) as want:
        f(jax.lax)
    with pytest.raises(Exception) as got:
        f(fl)
    assert type(got.value) is type(want.value) or isinstance(got.value, type(want.value))
    assert phrase in str(want.value)
    assert phrase in str(got.value)


def test_top_k_overflow_abstractly() -> None:
    with pytest.raises(ValueError, match="top_k returns int32 indices, which will overflow"):
        _top_k_overflow(jax.lax, jax.eval_shape)
    with pytest.raises(ValueError, match="top_k returns int32 indices, which will overflow"):
        _top_k_overflow(fl, fg.eval_shape)


def test_accepted_forms_still_work() -> None:
    x = np.arange(12.0).reshape(3, 4)
    for L in (jax.lax, fl):
        np.testing.assert_array_equal(
            L.dynamic_slice(x, (np.int32(1), np.int32(2)), (2, 2)), x[1:3, 2:4]
        )
    np.testing.assert_array_equal(fl.argmax(x, 1, np.int32), jax.lax.argmax(x, 1, np.int32))
    np.testing.assert_array_equal(
        fl.reduce(x, 0.0, fl.add, (0, 1)), jax.lax.reduce(x, 0.0, jax.lax.add, (0, 1))
    )
