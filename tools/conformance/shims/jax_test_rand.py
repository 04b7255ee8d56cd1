"""Random test inputs for the ``jtu`` shim: JAX's sampler names and distributions
(``rand_default``, ``rand_some_nan``...), the scalar-shape markers and case-name
strings, written with NumPy (no upstream code)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

bfloat16 = np.dtype(ml_dtypes.bfloat16)


class ScalarShape:
    def __len__(self) -> int:
        return 0

    def __getitem__(self, i: int) -> int:
        raise IndexError(i)


class _NumpyScalar(ScalarShape):
    pass


class _PythonScalar(ScalarShape):
    pass


NUMPY_SCALAR_SHAPE = _NumpyScalar()
PYTHON_SCALAR_SHAPE = _PythonScalar()


def is_valid_shape(shape: Any, dtype: Any) -> bool:
    if shape is PYTHON_SCALAR_SHAPE:
        return np.dtype(dtype) == np.dtype(type(np.array(0, dtype=dtype).item()))
    return True


def _dims_of_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (list, tuple)):
        return tuple(shape)
    if isinstance(shape, ScalarShape):
        return ()
    return (int(shape),)


def _as_shape(value: Any, shape: Any, dtype: Any) -> Any:
    if shape is NUMPY_SCALAR_SHAPE:
        return np.dtype(dtype).type(value)
    if shape is PYTHON_SCALAR_SHAPE:
        return np.asarray(value).item()
    return np.asarray(value, dtype)


def dtype_str(dtype: Any) -> str:
    return np.dtype(dtype).name


def format_shape_dtype_string(shape: Any, dtype: Any) -> str:
    """``float32[2,3]``-style names, as case names in JAX's test files spell them."""
    if shape is NUMPY_SCALAR_SHAPE:
        return dtype_str(dtype)
    if shape is PYTHON_SCALAR_SHAPE:
        return "py" + dtype_str(dtype)
    if isinstance(shape, np.ndarray):
        return f"{dtype_str(dtype)}[{shape}]"
    if isinstance(shape, (list, tuple)):
        return f"{dtype_str(dtype)}[{','.join(str(d) for d in shape)}]"
    return f"{dtype_str(dtype)}[{shape},]"


def _sampler(draw: Callable[[tuple[int, ...]], np.ndarray], post: Callable | None = None):
    def gen(shape: Any, dtype: Any) -> Any:
        dims = _dims_of_shape(shape)
        dt = np.dtype(dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            # as JAX's sampler: each draw cast to the dtype first, then ``post`` (so an
            # integer rand_nonzero replaces the zeros the cast makes)
            vals = np.asarray(draw(dims))
            vals = (np.abs(vals) if dt.kind == "u" else vals).astype(dt)
            if dt.kind == "c":
                vals = vals + 1j * np.asarray(draw(dims)).astype(dt)
            if post is not None:
                vals = post(vals)
            return _as_shape(np.asarray(vals).astype(dt), shape, dt)

    return gen


def rand_default(rng: np.random.RandomState, scale: float = 3) -> Callable:
    return _sampler(lambda d: scale * rng.randn(*d))


def rand_nonzero(rng: np.random.RandomState) -> Callable:
    return _sampler(lambda d: 3 * rng.randn(*d), lambda x: np.where(x == 0, 1, x))


def rand_positive(rng: np.random.RandomState) -> Callable:
    return _sampler(lambda d: 2 * rng.rand(*d), lambda x: x + 1)


def rand_small(rng: np.random.RandomState) -> Callable:
    return _sampler(lambda d: 1e-3 * rng.randn(*d))


def rand_not_small(rng: np.random.RandomState, offset: float = 10.0) -> Callable:
    return _sampler(lambda d: 3 * rng.randn(*d), lambda x: x + np.where(x > 0, offset, -offset))


def rand_small_positive(rng: np.random.RandomState) -> Callable:
    return _sampler(lambda d: 2e-5 * rng.rand(*d))


def rand_uniform(rng: np.random.RandomState, low: float = 0.0, high: float = 1.0) -> Callable:
    return _sampler(lambda d: rng.rand(*d), lambda x: x * (high - low) + low)


def rand_some_equal(rng: np.random.RandomState) -> Callable:
    def post(x: np.ndarray) -> np.ndarray:
        flat = np.ravel(x)
        if flat.size == 0:
            return x
        return np.where(rng.rand(*np.shape(x)) < 0.5, flat[0], x)

    return _sampler(lambda d: 100 * rng.randn(*d), post)


def _with_specials(rng: np.random.RandomState, specials: Sequence[float]) -> Callable:
    base = rand_default(rng)

    def gen(shape: Any, dtype: Any) -> Any:
        dt = np.dtype(dtype)
        if dt.kind not in "fc" and dt != bfloat16:
            return base(shape, dtype)
        vals = np.asarray(base(_dims_of_shape(shape), dtype))
        for s in specials:
            vals = np.where(rng.rand(*vals.shape) < 0.1, np.array(s, dt), vals)
        return _as_shape(vals, shape, dt)

    return gen


def rand_some_inf(rng: np.random.RandomState) -> Callable:
    return _with_specials(rng, [np.inf, -np.inf])


def rand_some_nan(rng: np.random.RandomState) -> Callable:
    return _with_specials(rng, [np.nan])


def rand_some_inf_and_nan(rng: np.random.RandomState) -> Callable:
    return _with_specials(rng, [np.inf, -np.inf, np.nan])


def rand_some_zero(rng: np.random.RandomState) -> Callable:
    base = rand_default(rng)

    def gen(shape: Any, dtype: Any) -> Any:
        vals = np.asarray(base(_dims_of_shape(shape), dtype))
        vals = np.where(rng.rand(*vals.shape) < 0.5, np.array(0, vals.dtype), vals)
        return _as_shape(vals, shape, dtype)

    return gen


def rand_int(rng: np.random.RandomState, low: int = 0, high: int | None = None) -> Callable:
    def gen(shape: Any, dtype: Any) -> Any:
        dt = np.dtype(dtype)
        hi = high
        if hi is None and low == 0:
            if dt.kind not in "iu":
                raise ValueError("rand_int needs `high` for non-integer dtypes")
            hi = np.iinfo(dt).max
        kind = dt if dt.kind in "iu" else np.int64
        # NumPy's convention: randint(low) alone draws from [0, low)
        return rng.randint(low, hi, size=shape, dtype=kind).astype(dt)

    return gen


def rand_unique_int(rng: np.random.RandomState, high: int | None = None) -> Callable:
    def gen(shape: Any, dtype: Any) -> Any:
        pool = np.arange(high or math.prod(shape), dtype=dtype)
        return rng.choice(pool, size=shape, replace=False)

    return gen


def rand_bool(rng: np.random.RandomState) -> Callable:
    return _sampler(lambda d: rng.rand(*d) < 0.5)


def rand_fullrange(rng: np.random.RandomState, standardize_nans: bool = False) -> Callable:
    def gen(shape: Any, dtype: Any) -> Any:
        dt = np.dtype(dtype)
        dims = _dims_of_shape(shape)
        raw = rng.randint(0, 255, size=dt.itemsize * math.prod(dims), dtype=np.uint8)
        vals = raw.view(dt).reshape(dims)
        if standardize_nans and dt.kind == "f":
            vals = np.where(np.isnan(vals), np.nan, vals).astype(dt)
        return _as_shape(vals, shape, dt)

    return gen
