"""Shape primitives: broadcasting, reshaping, transposing, slicing, padding,
reversing, concatenating, iota.

Every primitive here is linear in its array operand, so JVPs apply the
primitive to the tangents and VJPs are the transposed data movement:
``slice`` ↔ ``pad``, ``broadcast_in_dim`` ↔ ``reduce_sum``. The indexing
primitives (``gather``/``scatter_add``, ``dynamic_slice``/
``dynamic_update_slice``) live in :mod:`funcgrad.primitives.indexing`.
"""

from __future__ import annotations

import builtins
import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

from funcgrad.core import ad_util, dtypes, sharding_types
from funcgrad.core.axes import normalize_axes
from funcgrad.core.errors import user_frame, where
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.symbolic import SymDim, same_shape
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives.rules import rand
from funcgrad.primitives.sharding import split_dim_as

FAMILY = "shape"

_SCALARS = (bool, int, float, complex)


# --------------------------------------------------------------------------- helpers


def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    """``xs`` as ints; a symbolic dimension stays symbolic (its value is not read)."""
    if type(xs) is tuple:  # (the common case, a tuple of ints, as it is: no generator)
        for x in xs:
            if type(x) is not int:
                break
        else:
            return xs
    return tuple([x if type(x) is SymDim else operator.index(x) for x in xs])


def _fmt(*avals: Aval) -> str:
    return ", ".join(str(a) for a in avals)


def _check_axes(name: str, axes: tuple[int, ...], ndim: int, what: str, x: Aval) -> None:
    # TypeErrors, as lax's shape rules
    if any(not 0 <= a < ndim for a in axes):
        raise TypeError(f"{name}: {what} {axes} out of range for an operand of type {x}")
    if len(set(axes)) != len(axes):
        raise TypeError(f"{name}: {what} {axes} contain duplicates (operand {x})")


def _as_dtype(v: Any, dtype: np.dtype) -> Any:
    """(lowering) ``v`` as an array of ``dtype``."""
    if isinstance(v, _SCALARS):
        return np.asarray(v, dtype)
    return v if v.dtype == dtype else lax.convert_element_type(v, dtype)


def _index_dtype(n: int) -> np.dtype:
    """Index dtype for positions up to ``n``: int32 when it fits."""
    return np.dtype("int32") if n < 2**31 else dtypes.canonicalize(np.dtype("int64"))


def _c(v: int, dtype: np.dtype) -> np.ndarray:
    return np.asarray(v, dtype)


def _zeros(aval: Aval) -> Any:
    return rules.zeros_like_aval(aval.strip_weak())


def _zero_scalar(aval: Aval) -> np.ndarray:
    return np.asarray(0, aval.dtype)


def _bcast_batch(x: Any, d: int | None, size: int, bd: int) -> Any:
    """``x`` with its batch axis at ``bd`` (broadcast in one op if unbatched)."""
    if d is not None:
        return rules.moveaxis(x, d, bd)
    aval = to_aval(x)
    shape = (*aval.shape[:bd], size, *aval.shape[bd:])
    keep = tuple(i for i in range(len(shape)) if i != bd)
    return broadcast_in_dim(x, shape, keep)


# --------------------------------------------------------------------------- broadcast_in_dim

broadcast_in_dim_p = Primitive("broadcast_in_dim", family=FAMILY)


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract_eval(
    x: Aval, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]
) -> Aval:
    bd = broadcast_dimensions
    # JAX's checks, words and order (then funcgrad's own: dimensions in increasing order);
    # the operand is formatted only for a message (every broadcast traced runs this)
    if any(s < 0 for s in shape):
        raise TypeError(
            f"broadcast_in_dim shape must have every element be nonnegative, got {shape} (operand {x})"
        )
    if len(bd) != x.ndim:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {bd} for operand ndim {x.ndim}. (operand {x})"
        )
    if len(shape) < x.ndim:
        raise TypeError(
            "broadcast_in_dim target broadcast shape must have equal or higher rank to the "
            f"operand shape; got operand ndim {x.ndim} and target broadcast ndim {len(shape)}."
            f" (operand {x})"
        )
    if any(not 0 <= d < len(shape) for d in bd):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got "
            f"{bd} for operand ndim {x.ndim} and shape {shape}. (operand {x})"
        )
    if any(x.shape[i] not in (shape[d], 1) for i, d in enumerate(bd)):
        raise TypeError(
            "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
            "corresponding dimensions in the target broadcast shape; got operand of shape "
            f"{x.shape}, target broadcast shape {shape}, broadcast_dimensions {bd} (operand {x})"
        )
    if len(set(bd)) != len(bd):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must not contain duplicates, got "
            f"broadcast_dimensions {bd} (operand {x})"
        )
    if any(a >= b for a, b in itertools.pairwise(bd)):
        raise TypeError(
            f"broadcast_in_dim: broadcast_dimensions {bd} must be strictly increasing "
            f"(operand {x}, target shape {shape})"
        )
    return Aval(shape, x.dtype, x.weak_type)


broadcast_in_dim_p.lower = lambda x, *, shape, broadcast_dimensions: lax.broadcast_in_dim(
    x, shape, broadcast_dimensions
)
rules.def_linear(broadcast_in_dim_p)


def _host_spread(x: Any, shape: tuple, dims: Sequence[int]) -> np.ndarray:
    """(host rules) ``x``'s dim ``i`` broadcast to dim ``dims[i]`` of a new array of ``shape``
    (written out: for small arrays faster than ``np.broadcast_to``'s view)."""
    x = np.asarray(x)
    out = np.empty(shape, x.dtype)
    nd, j = len(shape), len(shape) - x.ndim
    for d in dims:  # x's dims the trailing ones, in order (a 0-d x too): NumPy's own rule
        if d != j:
            break
        j += 1
    else:  # (no reshape: a quarter of a small broadcast's time)
        out[...] = x
        return out
    sizes = [1] * nd
    for i, d in enumerate(dims):
        sizes[d] = x.shape[i]
    out[...] = x.reshape(sizes)
    return out


broadcast_in_dim_p.sharding_rule = sharding_types.broadcast_rule
broadcast_in_dim_p.host = lambda x, *, shape, broadcast_dimensions: _host_spread(
    x, shape, broadcast_dimensions
)


def _spread_view(x_shape: tuple, *, shape: tuple, broadcast_dimensions: Sequence[int]) -> tuple:
    """(host plans) the shape of ``x`` with the result's size-1 dimensions inserted."""
    sizes = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        sizes[d] = x_shape[i]
    return tuple(sizes)


broadcast_in_dim_p.host_view = _spread_view


@broadcast_in_dim_p.def_vjp
def _broadcast_in_dim_vjp(ct: Any, x: Any, *, out: Any, shape: tuple, broadcast_dimensions: tuple):
    xa = to_aval(x)
    bd = broadcast_dimensions
    expanded = {d for i, d in enumerate(bd) if xa.shape[i] != shape[d]}
    # dims of size 1 need no sum: the final reshape drops or inserts them
    sum_dims = tuple(
        d for d in range(len(shape)) if (d not in bd or d in expanded) and shape[d] != 1
    )
    g = ad_util.reduce_sum(ct, sum_dims)
    return (reshape(g, xa.shape),)


@broadcast_in_dim_p.def_batch
def _broadcast_in_dim_batch(args: list, dims: list, *, shape: tuple, broadcast_dimensions: tuple):
    (x,), (d,) = args, dims
    bd = broadcast_dimensions
    size = to_aval(x).shape[d]
    # put the batch axis right after the output position of operand dim d-1, so the
    # broadcast dimensions stay increasing and no transpose is needed
    pos = bd[d - 1] + 1 if d > 0 else 0
    new_bd = tuple(b if i < d else b + 1 for i, b in enumerate(bd))
    new_bd = (*new_bd[:d], pos, *new_bd[d:])
    new_shape = (*shape[:pos], size, *shape[pos:])
    return broadcast_in_dim(x, new_shape, new_bd), pos


@broadcast_in_dim_p.def_examples
def _broadcast_in_dim_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (3,))], {"shape": (2, 3), "broadcast_dimensions": (1,)}),
        Example([rand(rng, (3,))], {"shape": (3, 2), "broadcast_dimensions": (0,)}),
        Example([rand(rng, (1, 3))], {"shape": (4, 2, 3), "broadcast_dimensions": (1, 2)}),
        Example([rand(rng, (2, 1))], {"shape": (2, 1, 3), "broadcast_dimensions": (0, 1)}),
        Example([rand(rng, ())], {"shape": (2, 3), "broadcast_dimensions": ()}),
    ]


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """Broadcast ``x`` to ``shape``; operand dim ``i`` maps to ``broadcast_dimensions[i]``.

    Example:
        >>> broadcast_in_dim(np.ones(3), (2, 3), (1,)).shape
        (2, 3)
    """
    shape, bd = _ints(shape), _ints(broadcast_dimensions)
    aval = to_aval(x)
    if (
        same_shape(aval.shape, shape)
        and bd == tuple(range(len(shape)))
        and not isinstance(x, _SCALARS)
    ):
        return x
    return bind(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=bd)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (``broadcast_in_dim`` of a 0-d literal).

    Example:
        >>> full((2,), 1.5, np.float32).tolist()
        [1.5, 1.5]
    """
    shape = _ints(shape)
    if isinstance(fill_value, (*_SCALARS, np.ndarray, np.generic)):
        if dtype is None:
            dtype = (
                dtypes.python_scalar_dtype(fill_value)
                if isinstance(fill_value, _SCALARS)
                else fill_value.dtype
            )
        v = np.asarray(fill_value, dtypes.canonicalize(dtype))
    else:
        v = fill_value if dtype is None else ew.convert_element_type(fill_value, dtype)
    if to_aval(v).shape != ():
        raise ValueError(f"full: fill_value must be a scalar, got {to_aval(v)}")
    return bind(broadcast_in_dim_p, v, shape=shape, broadcast_dimensions=())


def expand_dims(x: Any, dimensions: Sequence[int] | int) -> Any:
    """Insert size-1 axes at ``dimensions`` (positions in the result); a ``broadcast_in_dim``."""
    aval = to_aval(x)
    out_nd = aval.ndim + (1 if isinstance(dimensions, (int, np.integer)) else len(dimensions))
    dims = set(normalize_axes(dimensions, out_nd, "expand_dims"))
    it = iter(aval.shape)
    shape = tuple(1 if i in dims else next(it) for i in range(out_nd))
    keep = tuple(i for i in range(out_nd) if i not in dims)
    return broadcast_in_dim(x, shape, keep)


# --------------------------------------------------------------------------- reshape

reshape_p = Primitive("reshape", family=FAMILY)


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(
    x: Aval, *, new_sizes: tuple[int, ...], out_sharding: Any = None
) -> Aval:
    if any(s < 0 for s in new_sizes):
        raise ValueError(f"reshape: negative size in new_sizes {new_sizes} (operand {x})")
    if math.prod(new_sizes) != x.size:  # (exact ints; np.prod costs ~3 us a call)
        raise TypeError(
            f"reshape: cannot reshape an operand of type {x} ({x.size} elements) to shape "
            f"{new_sizes}"
        )
    return Aval(new_sizes, x.dtype, x.weak_type)


reshape_p.lower = lambda x, *, new_sizes, out_sharding=None: lax.reshape(
    x, new_sizes, out_sharding=out_sharding
)
reshape_p.sharding_rule = sharding_types.reshape_rule
rules.def_linear(reshape_p)
reshape_p.host = lambda x, *, new_sizes, out_sharding=None: np.asarray(x).reshape(new_sizes)
reshape_p.host_reshape = lambda x_shape, *, new_sizes, out_sharding=None: tuple(new_sizes)


@reshape_p.def_vjp
def _reshape_vjp(ct: Any, x: Any, *, out: Any, new_sizes: tuple, out_sharding: Any = None):
    # (over explicit axes, back to the operand's split: what JAX's transpose gives)
    xa, ca = to_aval(x), to_aval(ct)
    back = xa.sharding
    if back is None and ca.sharding is not None:  # (an unsplit operand: replicated)
        back = NamedSharding(ca.sharding.mesh, PartitionSpec())
    if back is not None and (back.spec.unreduced or back.spec.reduced or ca.sharding is not None):
        # (the cotangent's own unreduced and reduced axes: a reshape keeps them)
        held = ca.sharding.spec if ca.sharding is not None else PartitionSpec()
        spec = back.spec.update(unreduced=held.unreduced, reduced=held.reduced)
        back = NamedSharding(back.mesh, spec)
    return (reshape(ct, xa.shape, out_sharding=back),)


@reshape_p.def_batch
def _reshape_batch(args: list, dims: list, *, new_sizes: tuple, out_sharding: Any = None):
    (x,), (d,) = args, dims
    x = rules.moveaxis(x, d, 0)
    if out_sharding is not None:
        out_sharding = sharding_types.batched(out_sharding, len(new_sizes), 0)
    return reshape(x, (to_aval(x).shape[0], *new_sizes), out_sharding=out_sharding), 0


@reshape_p.def_examples
def _reshape_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (2, 3))], {"new_sizes": (3, 2)}),
        Example([rand(rng, (2, 3, 2))], {"new_sizes": (6, 2)}),
        Example([rand(rng, (6,))], {"new_sizes": (1, 2, 3)}),
        Example([rand(rng, (1,))], {"new_sizes": ()}),
    ]


def infer_minus_one(sizes: Sequence[int], size: int) -> tuple[int, ...] | None:
    """``sizes`` with its one ``-1`` entry (if any) resolved so the total is ``size``;
    ``None`` when no such value exists. Callers reject several ``-1``s themselves."""
    if -1 not in sizes:
        return tuple(sizes)
    known = math.prod([s for s in sizes if s != -1])
    if known == 0 or size % known:
        return None
    return tuple(size // known if s == -1 else s for s in sizes)


def reshape(x: Any, new_sizes: Sequence[int] | int, *, out_sharding: Any = None) -> Any:
    """Row-major reshape; one entry of ``new_sizes`` may be ``-1`` (inferred);
    ``out_sharding`` (a ``NamedSharding`` or a ``PartitionSpec`` over the current mesh)
    types the result over explicit mesh axes where JAX cannot infer it."""
    aval = to_aval(x)
    if isinstance(new_sizes, (int, np.integer)):
        new_sizes = (new_sizes,)
    sizes = list(_ints(new_sizes))
    if sum(1 for s in sizes if type(s) is int and s == -1) > 1:
        raise ValueError(f"reshape: only one -1 allowed in {tuple(sizes)}{where(user_frame())}")
    shape = infer_minus_one(sizes, aval.size)
    if shape is None:
        raise TypeError(
            f"reshape: cannot reshape an operand of type {aval} to shape {tuple(sizes)}"
            f"{where(user_frame())}"
        )
    if out_sharding is not None:
        return bind(reshape_p, x, new_sizes=shape, out_sharding=sharding_types.named(out_sharding))
    if shape == aval.shape and not isinstance(x, _SCALARS):
        return x
    return bind(reshape_p, x, new_sizes=shape)


def squeeze(x: Any, dimensions: Sequence[int] | int) -> Any:
    """Remove size-1 axes ``dimensions`` (a ``reshape``)."""
    aval = to_aval(x)
    dims = set(normalize_axes(dimensions, aval.ndim, "squeeze"))
    bad = [d for d in dims if aval.shape[d] != 1]
    if bad:
        raise ValueError(
            f"squeeze: cannot squeeze dimensions {tuple(sorted(bad))} of an operand of type "
            f"{aval}: their sizes are not 1{where(user_frame())}"
        )
    return reshape(x, tuple(s for i, s in enumerate(aval.shape) if i not in dims))


# --------------------------------------------------------------------------- transpose

transpose_p = Primitive("transpose", family=FAMILY)


@transpose_p.def_abstract_eval
def _transpose_abstract_eval(x: Aval, *, permutation: tuple[int, ...]) -> Aval:
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(
            f"transpose: permutation {permutation} is not a permutation of the dimensions "
            f"of an operand of type {x}"
        )
    return Aval(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p.lower = lambda x, *, permutation: lax.transpose(x, permutation)
rules.def_linear(transpose_p)
transpose_p.sharding_rule = sharding_types.transpose_rule
transpose_p.host = lambda x, *, permutation: np.asarray(x).transpose(permutation)
transpose_p.vjp = lambda ct, x, *, out, permutation: (
    transpose(ct, tuple(int(i) for i in np.argsort(permutation))),
)


@transpose_p.def_batch
def _transpose_batch(args: list, dims: list, *, permutation: tuple) -> tuple:
    (x,), (d,) = args, dims
    perm = (d, *(p + (p >= d) for p in permutation))
    return transpose(x, perm), 0


@transpose_p.def_examples
def _transpose_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (2, 3))], {"permutation": (1, 0)}),
        Example([rand(rng, (2, 3, 4))], {"permutation": (2, 0, 1)}),
        Example([rand(rng, (2, 3, 4))], {"permutation": (0, 2, 1)}),
    ]


def transpose(x: Any, permutation: Sequence[int]) -> Any:
    """Permute axes: output dim ``i`` is operand dim ``permutation[i]``."""
    perm = _ints(permutation)
    if perm == tuple(range(len(perm))) and to_aval(x).ndim == len(perm):
        return x
    return bind(transpose_p, x, permutation=perm)


# --------------------------------------------------------------------------- slice

slice_p = Primitive("slice", family=FAMILY)


def _slice_shape(start: tuple, limit: tuple, strides: tuple | None) -> tuple[int, ...]:
    strides = strides or (1,) * len(start)
    return tuple((hi - lo + s - 1) // s for lo, hi, s in zip(start, limit, strides))


@slice_p.def_abstract_eval
def _slice_abstract_eval(
    x: Aval, *, start_indices: tuple, limit_indices: tuple, strides: tuple | None
) -> Aval:
    n = x.ndim
    desc = f"start_indices={start_indices}, limit_indices={limit_indices}, strides={strides}"
    if len(start_indices) != n or len(limit_indices) != n or (strides and len(strides) != n):
        raise TypeError(f"slice: need one index per dimension of an operand of type {x}; {desc}")
    for lo, hi, s in zip(start_indices, limit_indices, x.shape):
        if not 0 <= lo <= hi <= s:
            raise TypeError(f"slice: indices out of range for an operand of type {x}; {desc}")
    if strides and any(s < 1 for s in strides):
        raise ValueError(f"slice: strides must be positive, got {desc} (operand {x})")
    return Aval(_slice_shape(start_indices, limit_indices, strides), x.dtype, x.weak_type)


slice_p.lower = lambda x, *, start_indices, limit_indices, strides: lax.slice(
    x, start_indices, limit_indices, strides
)
rules.def_linear(slice_p)
slice_p.sharding_rule = sharding_types.slice_rule
slice_p.host = lambda x, *, start_indices, limit_indices, strides: np.asarray(x)[
    tuple(
        map(builtins.slice, start_indices, limit_indices, strides or (None,) * len(limit_indices))
    )
]


@slice_p.def_vjp
def _slice_vjp(ct: Any, x: Any, *, out: Any, start_indices, limit_indices, strides) -> tuple:
    xa = to_aval(x)
    strides = strides or (1,) * xa.ndim
    out_shape = _slice_shape(start_indices, limit_indices, strides)
    config = []
    for lo, s, n, size in zip(start_indices, strides, out_shape, xa.shape):
        hi = size - (lo + (n - 1) * s + 1) if n else size - lo
        config.append((lo, hi, s - 1))
    return (pad(ct, _zero_scalar(to_aval(ct)), config),)


@slice_p.def_batch
def _slice_batch(args: list, dims: list, *, start_indices, limit_indices, strides) -> tuple:
    (x,), (d,) = args, dims
    size = to_aval(x).shape[d]
    start = (*start_indices[:d], 0, *start_indices[d:])
    limit = (*limit_indices[:d], size, *limit_indices[d:])
    st = None if strides is None else (*strides[:d], 1, *strides[d:])
    return bind(slice_p, x, start_indices=start, limit_indices=limit, strides=st), d


@slice_p.def_examples
def _slice_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (5,))], {"start_indices": (1,), "limit_indices": (4,), "strides": None}),
        Example(
            [rand(rng, (4, 6))],
            {"start_indices": (1, 0), "limit_indices": (3, 6), "strides": (1, 2)},
        ),
        Example(
            [rand(rng, (5, 7))],
            {"start_indices": (0, 1), "limit_indices": (5, 6), "strides": (3, 2)},
        ),
        Example(
            [rand(rng, (3, 4))], {"start_indices": (1, 2), "limit_indices": (1, 4), "strides": None}
        ),
    ]


def slice(
    x: Any,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Any:
    """Static slice ``x[start:limit:stride]`` per dimension (as ``lax.slice``)."""
    st = None if strides is None else _ints(strides)
    if st is not None and all(s == 1 for s in st):
        st = None
    start, limit = _ints(start_indices), _ints(limit_indices)
    if st is None and start == (0,) * len(start) and limit == to_aval(x).shape:
        return x
    return bind(slice_p, x, start_indices=start, limit_indices=limit, strides=st)


# --------------------------------------------------------------------------- pad

pad_p = Primitive("pad", family=FAMILY)


@pad_p.def_abstract_eval
def _pad_abstract_eval(x: Aval, padding_value: Aval, *, padding_config: tuple) -> Aval:
    # (JAX's sentences, with the operand)
    if padding_value.shape != ():
        raise ValueError(f"pad: padding_value must be a scalar; got {padding_value} (operand {x})")
    dtype, weak = rules.join_dtypes("pad", x, padding_value)
    if len(padding_config) != x.ndim:
        raise ValueError(
            "pad: length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand {x}"
        )
    shape = []
    for (lo, hi, interior), n in zip(padding_config, x.shape):
        if interior < 0:
            raise ValueError(
                "pad: interior padding in padding_config must be nonnegative, got "
                f"padding_config {padding_config} (operand {x})"
            )
        size = lo + hi + n + max(n - 1, 0) * interior
        if size < 0:
            raise ValueError(
                "pad: Dimension size after padding is not at least 0, for padding_config "
                f"{padding_config} and operand {x}"
            )
        shape.append(size)
    return Aval(tuple(shape), dtype, weak)


def _pad_lower(x: Any, padding_value: Any, *, padding_config: tuple) -> Any:
    dtype, _ = rules.join_dtypes("pad", to_aval(x), to_aval(padding_value))
    return lax.pad(_as_dtype(x, dtype), _as_dtype(padding_value, dtype), padding_config)


pad_p.lower = _pad_lower
pad_p.sharding_rule = sharding_types.pad_rule


@pad_p.def_host
def _pad_host(x: Any, padding_value: Any, *, padding_config: tuple) -> Any:
    # fill the padding with lo/hi clipped at 0 and place x every interior+1 elements,
    # then crop what negative lo/hi remove
    x = np.asarray(x)
    dtype = np.result_type(x, padding_value)
    shape, place, crop = [], [], []
    for (lo, hi, interior), n in zip(padding_config, x.shape):
        lo_, spread = max(lo, 0), n + max(n - 1, 0) * interior
        shape.append(lo_ + spread + max(hi, 0))
        place.append(builtins.slice(lo_, lo_ + spread, interior + 1))
        crop.append(builtins.slice(max(-lo, 0), shape[-1] - max(-hi, 0)))
    out = np.empty(shape, dtype)
    out.fill(padding_value)
    out[tuple(place)] = x
    return out[tuple(crop)]


rules.def_linear(pad_p)  # (linear in the operand and the padding value jointly)


@pad_p.def_vjp
def _pad_vjp(ct: Any, x: Any, pv: Any, *, out: Any, padding_config: tuple) -> tuple:
    ca = to_aval(ct)
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    g = ct
    if any(lo or hi for lo, hi, _ in padding_config):
        g = pad(ct, _zero_scalar(ca), unpad)
    if any(interior for _, _, interior in padding_config):
        ga = to_aval(g)
        g = slice(g, (0,) * ga.ndim, ga.shape, tuple(i + 1 for _, _, i in padding_config))
    gpv = ew.sub(
        ad_util.reduce_sum(ct, tuple(range(ca.ndim))), ad_util.reduce_sum(g, tuple(range(ca.ndim)))
    )
    return g, gpv


@pad_p.def_batch
def _pad_batch(args: list, dims: list, *, padding_config: tuple) -> tuple:
    (x, pv), (xd, pd) = args, dims
    if pd is None:
        config = (*padding_config[:xd], (0, 0, 0), *padding_config[xd:])
        return pad(x, pv, config), xd
    # batched padding value: pad with zero, then select the padding value where the mask is off
    size = to_aval(pv).shape[pd]
    x = rules.bdim_to_front(x, xd, size)
    xa = to_aval(x)
    y = pad(x, _zero_scalar(xa), ((0, 0, 0), *padding_config))
    ya = to_aval(y)
    mask = pad(full(xa.shape[1:], True, np.bool_), np.asarray(False), padding_config)
    mask = broadcast_in_dim(mask, ya.shape, tuple(range(1, ya.ndim)))
    pvb = broadcast_in_dim(pv, ya.shape, (0,))
    return ew.select_n(mask, ew.convert_element_type(pvb, ya.dtype), y), 0


@pad_p.def_examples
def _pad_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (3,)), rand(rng, ())], {"padding_config": ((1, 2, 0),)}),
        Example([rand(rng, (2, 3)), rand(rng, ())], {"padding_config": ((0, 1, 1), (2, 0, 2))}),
        Example([rand(rng, (4, 5)), rand(rng, ())], {"padding_config": ((-1, 2, 0), (1, -2, 1))}),
        Example([rand(rng, (3, 2)), rand(rng, ())], {"padding_config": ((-1, -1, 0), (0, 0, 0))}),
    ]


def pad(x: Any, padding_value: Any, padding_config: Sequence[Sequence[int]]) -> Any:
    """Pad with ``padding_value``: ``(lo, hi, interior)`` per dimension; negative lo/hi crop."""
    config = tuple(_ints(c) for c in padding_config)
    return bind(pad_p, x, padding_value, padding_config=config)


# --------------------------------------------------------------------------- rev

rev_p = Primitive("rev", family=FAMILY)


@rev_p.def_abstract_eval
def _rev_abstract_eval(x: Aval, *, dimensions: tuple[int, ...]) -> Aval:
    _check_axes("rev", dimensions, x.ndim, "dimensions", x)
    return x


rev_p.lower = lambda x, *, dimensions: lax.rev(x, dimensions)
rev_p.sharding_rule = sharding_types.same_size_rule
rules.def_linear(rev_p)
rev_p.vjp = lambda ct, x, *, out, dimensions: (rev(ct, dimensions),)
rev_p.host = lambda x, *, dimensions: x[
    tuple(builtins.slice(None, None, -1 if d in dimensions else 1) for d in range(x.ndim))
]
rev_p.batch = lambda args, dims, *, dimensions: (
    rev(args[0], tuple(a + (a >= dims[0]) for a in dimensions)),
    dims[0],
)


@rev_p.def_examples
def _rev_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (4,))], {"dimensions": (0,)}),
        Example([rand(rng, (2, 3, 4))], {"dimensions": (0, 2)}),
    ]


def rev(x: Any, dimensions: Sequence[int]) -> Any:
    """Reverse ``x`` along ``dimensions``."""
    dims = _ints(dimensions)
    if not dims:
        return x
    return bind(rev_p, x, dimensions=dims)


# --------------------------------------------------------------------------- concatenate

concatenate_p = Primitive("concatenate", family=FAMILY)


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*xs: Aval, dimension: int) -> Aval:
    if not xs:
        raise TypeError("concatenate: needs at least one operand")
    nd = xs[0].ndim
    if any(x.ndim != nd for x in xs):
        raise TypeError(f"concatenate: operands must have equal ranks, got {_fmt(*xs)}")
    if not 0 <= dimension < nd:
        raise TypeError(f"concatenate: dimension {dimension} out of range for {_fmt(*xs)}")
    for x in xs:
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != dimension):
            raise TypeError(
                f"concatenate: operands must have equal shapes except in dimension {dimension}, "
                f"got {_fmt(*xs)}"
            )
    dtype, weak = rules.join_dtypes("concatenate", *xs)
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return Aval(tuple(shape), dtype, weak)


def _concatenate_lower(*xs: Any, dimension: int) -> Any:
    dtype, _ = rules.join_dtypes("concatenate", *(to_aval(x) for x in xs))
    return lax.concatenate([_as_dtype(x, dtype) for x in xs], dimension)


concatenate_p.lower = _concatenate_lower
concatenate_p.sharding_rule = sharding_types.concatenate_rule
concatenate_p.host = lambda *xs, dimension: np.concatenate(xs, axis=dimension)


rules.def_linear(concatenate_p)


@concatenate_p.def_vjp
def _concatenate_vjp(ct: Any, *xs: Any, out: Any, dimension: int) -> tuple:
    shape = to_aval(ct).shape
    res, off = [], 0
    for x in xs:
        n = to_aval(x).shape[dimension]
        start = tuple(off if i == dimension else 0 for i in range(len(shape)))
        limit = tuple(off + n if i == dimension else s for i, s in enumerate(shape))
        res.append(slice(ct, start, limit))
        off += n
    return tuple(res)


@concatenate_p.def_batch
def _concatenate_batch(args: list, dims: list, *, dimension: int) -> tuple:
    size = rules.batch_size(args, dims)
    bd = next(d for d in dims if d is not None)
    xs = [_bcast_batch(x, d, size, bd) for x, d in zip(args, dims)]
    # (JAX's: an unbatched operand's new batch axis split as the batched ones' is)
    split = next((to_aval(x).sharding for x, d in zip(xs, dims) if d is not None), None)
    if split is not None:
        xs = [x if d is not None else split_dim_as(x, bd, split) for x, d in zip(xs, dims)]
    return concatenate(*xs, dimension=dimension + (dimension >= bd)), bd


@concatenate_p.def_examples
def _concatenate_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (2,)), rand(rng, (3,))], {"dimension": 0}),
        Example([rand(rng, (2, 3)), rand(rng, (2, 1)), rand(rng, (2, 2))], {"dimension": 1}),
        Example([rand(rng, (1, 3)), rand(rng, (2, 3))], {"dimension": 0}),
    ]


def concatenate(*xs: Any, dimension: int) -> Any:
    """Join arrays along an existing ``dimension``."""
    if len(xs) == 1:
        return xs[0]
    return bind(concatenate_p, *xs, dimension=operator.index(dimension))


# --------------------------------------------------------------------------- iota

iota_p = Primitive("iota", family=FAMILY, differentiable=False)


@iota_p.def_abstract_eval
def _iota_abstract_eval(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int) -> Aval:
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota: dimension {dimension} out of range for shape {shape}")
    if dtypes.kind(dtype) not in (1, 2, 3):
        raise TypeError(f"iota: dtype must be numeric, got {dtype}")
    return Aval(shape, dtype)


iota_p.lower = lambda *, dtype, shape, dimension: lax.broadcasted_iota(dtype, shape, dimension)
iota_p.host = lambda *, dtype, shape, dimension: _host_spread(
    np.arange(shape[dimension]).astype(dtype), shape, (dimension,)
)
# never called (iota has no operands to batch); present so the registry is complete
iota_p.batch = lambda args, dims, **params: (bind(iota_p, **params), None)
iota_p.examples = lambda rng: [
    Example([], {"dtype": np.dtype("int32"), "shape": (4,), "dimension": 0}),
    Example([], {"dtype": np.dtype("float64"), "shape": (2, 3), "dimension": 1}),
]


def iota(dtype: Any, shape: Sequence[int] | int, dimension: int = 0) -> Any:
    """``0, 1, 2, ...`` along ``dimension`` of an array of ``shape``."""
    shape = (operator.index(shape),) if isinstance(shape, (int, np.integer)) else _ints(shape)
    return bind(
        iota_p, dtype=dtypes.canonicalize(dtype), shape=shape, dimension=operator.index(dimension)
    )
