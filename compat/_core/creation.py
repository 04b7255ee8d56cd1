"""Tensor factories (``tensor``, ``from_numpy``, the random ones, ``torch.FloatTensor`` & co)
and the global random generator; ``zeros``, ``arange`` & co are generated from their
creation rows (``compat/_core/creation_rows.py``)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from compat._core import device as _dev
from compat._core import dtypes as _dt
from compat._core import out_arg as _out_arg
from compat._core import rng as _rng
from compat._core import tensor_checks as _tc
from compat._core.float_to_int import to_integer, wants_torch_cast
from compat._core.tensor import Size, Tensor
from compat._core.warn_once import warn_once
from funcgrad._compat_contract import MetaArray


def is_meta(device: Any) -> bool:
    """Whether a factory's ``device=`` (``None``: the thread's default) is ``meta`` (a
    factory bound there makes no values: a ``MetaArray`` of its shape and dtype)."""
    d = _dev.default_device() if device is None else device
    if d is None:
        return False
    if type(d) is str:
        return d.startswith("meta")
    return isinstance(d, _dev.device) and d.type == "meta"


def _leaf(arr: np.ndarray, requires_grad: bool, device: Any = "cpu") -> Tensor:
    """A new leaf holding ``arr`` on ``device``: ``None`` (a factory's ``device=None``) is
    the thread's default device (``torch.set_default_device``, ``with torch.device``),
    the CPU unless set, as PyTorch's factories; internal leaves are made on the CPU."""
    if device is None:
        device = _dev.default_device()
    return Tensor._make(_dev.place(arr, device), requires_grad)


def _size_args(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            if s.numel() != 1 or _dt.kind(s._npdtype) not in "iu":
                raise TypeError(
                    "size must be a tuple of ints, but got an element of type Tensor (of "
                    f"{s.numel()} {s.dtype} elements)"
                )
            s = int(s.item())
        elif isinstance(s, np.ndarray) and s.ndim == 0 and s.dtype.kind in "iu":
            s = int(s)  # a 0-d NumPy integer array, as PyTorch's (it has ``__index__``)
        if not isinstance(s, (int, np.integer)):
            raise TypeError(
                f"size must be a tuple of ints, but got an element of type {type(s).__name__}"
            )
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _np_dtype(dtype: Any, default: np.dtype | None = None) -> np.dtype:
    if dtype is None:
        return default if default is not None else _dt.get_default_dtype().np
    return _dt.np_dtype(dtype)


def _is_sequence(x: Any) -> bool:
    """Nested data PyTorch walks: any sequence (list, tuple, deque, range, a class with
    ``__len__`` and ``__getitem__``: Python's sequence protocol), not str/bytes, a tensor,
    an array or a mapping."""
    if isinstance(x, Sequence):
        return not isinstance(x, (str, bytes, bytearray))
    t = type(x)
    return (
        hasattr(t, "__getitem__")
        and hasattr(t, "__len__")
        and not isinstance(x, (Tensor, np.ndarray, Mapping))
    )


def _items(data: Any) -> list:
    """The items of a sequence, or PyTorch's error for one whose items cannot be read."""
    try:
        return list(data)
    except Exception:
        raise ValueError(
            f"could not determine the shape of object type '{type(data).__name__}'"
        ) from None


def _infer_dtype(data: Any, within: tuple = ()) -> np.dtype:
    """PyTorch's dtype inference for nested data: a tensor, NumPy array or NumPy scalar
    gives its own dtype, a Python float the default dtype, an int ``int64``, a complex the
    default complex dtype, a bool ``bool``; a sequence promotes its items' dtypes as
    ``torch.promote_types`` does (an empty one: the default dtype); a list holding itself
    (``within``: the sequences around ``data``) is PyTorch's ``TypeError``."""
    if isinstance(data, Tensor):
        return data._npdtype
    if isinstance(data, (np.ndarray, np.generic)):
        return _dt.np_dtype(_dt.from_np(data.dtype))  # (a dtype compat lacks: its error)
    if isinstance(data, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(data, int):
        return np.dtype(np.int64)
    if isinstance(data, float):
        return _dt.get_default_dtype().np
    if isinstance(data, complex):  # the complex counterpart of the default dtype
        wide = _dt.get_default_dtype().np == np.float64
        return np.dtype(np.complex128 if wide else np.complex64)
    if _is_sequence(data):
        if any(data is w for w in within):
            raise TypeError("new(): self-referential lists are incompatible")
        out: np.dtype | None = None
        for e in _items(data):
            d = _infer_dtype(e, (*within, data))
            out = d if out is None else _dt.promote(out, d)
        return out if out is not None else _dt.get_default_dtype().np
    if isinstance(data, (str, bytes)):  # (PyTorch's wording: a TypeError, not inference's)
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _scalar_fill_dtype(value: Any) -> np.dtype:
    """The dtype ``torch.full`` gives a fill value: by its kind alone, as PyTorch's Scalar
    (a Python bool ``bool``, an integer ``int64``, a float the default dtype, a complex
    the default complex dtype; a NumPy or 0-d tensor's width is not kept)."""
    if isinstance(value, Tensor):
        k = _dt.kind(value._npdtype)
    elif isinstance(value, bool):
        k = "b"
    elif isinstance(value, (int, np.integer)):
        k = "i"
    elif isinstance(value, (complex, np.complexfloating)):
        k = "c"
    else:
        k = "f"  # (NumPy's bool_ too, as PyTorch's)
    if k == "b":
        return np.dtype(np.bool_)
    if k in "iu":
        return np.dtype(np.int64)
    return _infer_dtype(1j if k == "c" else 1.0)


def _unwrap_nested(data: Any) -> Any:
    """Nested data as NumPy takes it. A tensor inside a sequence is one number, as in
    PyTorch (which does not walk into tensors): one element of any shape, else PyTorch's
    error."""
    if isinstance(data, Tensor):
        arr = np.asarray(data._st.array)
        if arr.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return arr.reshape(())
    if _is_sequence(data):
        return [_unwrap_nested(e) for e in _items(data)]
    return data


def _scalars(data: Any) -> Iterator[Any]:
    """The numbers of nested Python data, tensors inside it included (element by element)."""
    if isinstance(data, Tensor):
        yield from np.asarray(data._st.array).ravel().tolist()
    elif isinstance(data, np.ndarray):
        yield from data.ravel().tolist()
    elif _is_sequence(data):
        for e in _items(data):
            yield from _scalars(e)
    else:
        yield data


def _check_fits(data: Any, npd: np.dtype) -> None:
    """PyTorch's overflow check of the numbers written into an integer tensor: a float
    outside the type's range (NaN and infinities too) is refused, and so is an integer,
    but for an unsigned type a negative integer wraps as two's complement while its
    magnitude fits (``torch.tensor([-1], dtype=torch.uint8)`` is 255)."""
    info = np.iinfo(npd)
    if type(data) in _FLAT and all(type(v) is int for v in data):  # (the common case, at once)
        try:
            a = np.asarray(data, dtype=np.int64)
        except OverflowError:  # (an integer beyond int64: compared exactly)
            a = np.asarray(data, dtype=object)
        low = info.min if npd.kind == "i" else -info.max
        if a.size and (a.max() > info.max or a.min() < low):
            raise RuntimeError(f"value cannot be converted to type {npd.name} without overflow")
        return
    for v in _scalars(data):
        if isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, (int, np.integer)):
            v = int(v)
            bad = v > info.max or (v < info.min if npd.kind == "i" else -v > info.max)
        elif isinstance(v, (float, np.floating)):
            bad = not info.min <= float(v) <= info.max
        else:
            continue
        if bad:
            raise RuntimeError(f"value cannot be converted to type {npd.name} without overflow")


def _ragged(data: Any, dim: int) -> None:
    """PyTorch's ``ValueError`` for the first nested sequence in ``data`` (at ``dim``)
    whose length differs from its siblings'."""
    items = (
        [d for d in data if isinstance(d, (list, tuple))] if isinstance(data, (list, tuple)) else []
    )
    if not items:
        return
    expected = len(items[0])
    for item in data:
        got = len(item) if isinstance(item, (list, tuple)) else None
        if got != expected:
            if got is None:
                raise TypeError("not a sequence")
            raise ValueError(f"expected sequence of length {expected} at dim {dim + 1} (got {got})")
    for item in data:
        _ragged(item, dim + 1)


#: ``tensor()`` called without data
_NO_DATA = object()


def tensor(
    data: Any = _NO_DATA,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (Python data, NumPy array or Tensor)."""
    if data is _NO_DATA:  # (PyTorch's parser's words)
        raise TypeError('tensor() missing 1 required positional arguments: "data"')
    if isinstance(data, Tensor):
        arr = np.asarray(data._st.array)
        npd = _np_dtype(dtype, arr.dtype)
    elif isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
        npd = _np_dtype(dtype, arr.dtype)
    elif type(data) in _FLAT and _PLAIN.issuperset(map(type, data)):
        # a flat list/tuple of Python numbers: the walks below have nothing to unwrap
        npd = _np_dtype(dtype, _plain_dtype(data))
        if npd.kind in "iu":
            _check_fits(data, npd)
        arr = np.asarray(data)
    else:
        npd = _np_dtype(dtype, _infer_dtype(data))
        if npd.kind in "iu":
            _check_fits(data, npd)
        try:
            arr = np.asarray(_unwrap_nested(data))
        except ValueError:
            _ragged(data, 0)  # PyTorch's words for nested sequences of unequal lengths
            raise
    if wants_torch_cast(arr.dtype, npd):  # (PyTorch's CPU conversion, not NumPy's)
        return _leaf(to_integer(arr, npd, np), requires_grad, device)
    with np.errstate(over="ignore", invalid="ignore"):  # (PyTorch casts without a warning)
        out = np.array(arr, dtype=npd)
    return _leaf(out, requires_grad, device)


_FLAT = (list, tuple)
_PLAIN = frozenset((bool, int, float))


def _plain_dtype(data: Sequence[Any]) -> np.dtype:
    """:func:`_infer_dtype` of a flat sequence of Python bools, ints and floats."""
    types = set(map(type, data))
    if float in types or not types:
        return _dt.get_default_dtype().np
    return np.dtype(np.int64) if int in types else np.dtype(np.bool_)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(a: np.ndarray) -> Tensor:
    """A tensor with the array's values and dtype (compat copies: jax arrays are immutable)."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    if not a.flags.writeable:
        warn_once("non-writable numpy", _NON_WRITABLE)
    return _leaf(np.array(a), False)


#: PyTorch's warning (once per process) for ``from_numpy`` of a read-only array
_NON_WRITABLE = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable "
    "tensors. This means writing to this tensor will result in undefined behavior. You may "
    "want to copy the array to protect its data or make it writable before converting it to "
    "a tensor. This type of warning will be suppressed for the rest of this program."
)


def _size_kw(name: str, size: tuple, kw: dict) -> tuple:
    """The positional ``size``, or PyTorch's ``size=`` keyword (not both)."""
    if not kw:
        return size
    if set(kw) != {"size"}:
        raise TypeError(
            f"{name}() got an unexpected keyword argument '{next(k for k in kw if k != 'size')}'"
        )
    if size:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (kw["size"],)


def _factory(fill: Any, size: tuple, dtype: Any, requires_grad: bool, device: Any = None) -> Tensor:
    shape = _size_args(size)
    npd = _np_dtype(dtype)
    made = MetaArray(shape, npd) if is_meta(device) else np.full(shape, fill, npd)
    return _leaf(made, requires_grad, device)


#: PyTorch's one layout (``torch.strided``), the only one a form takes
_STRIDED = (None, "torch.strided")


def _out_dtype(name: str, dtype: Any, out: Any, default: Any) -> np.dtype:
    """The result's dtype: ``dtype``, else ``out``'s, else ``default``; ``dtype`` and
    ``out``'s must agree (PyTorch's ``RuntimeError``)."""
    if out is None:
        return default if dtype is None else _dt.np_dtype(dtype)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if dtype is None:
        return out._npdtype
    npd = _dt.np_dtype(dtype)
    if npd != out._npdtype:
        raise RuntimeError(
            f"dtype {_dt.scalar_type_name(npd)} does not match dtype of out parameter "
            f"({_dt.scalar_type_name(out._npdtype)})"
        )
    return npd


def _layout(name: str, layout: Any) -> None:
    if layout not in _STRIDED:
        raise RuntimeError(f"{name}(...) is not implemented for {layout} layout")


def _finish(name: str, result: Tensor, out: Any) -> Tensor:
    """``result``, or ``out`` holding it (resized without PyTorch's warning for other
    ops' outs: a creation op's ``out`` takes any shape)."""
    if out is None:
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return _out_arg.write_out(name, result, out)


# --------------------------------------------------------------------------- randomness


Generator = _rng.Generator
default_generator = Generator().manual_seed(np.random.SeedSequence().entropy % (2**63))


def manual_seed(seed: int) -> Generator:
    """Seed the global generator used by ``rand``, ``randn``, ``randint``, dropout, init."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Reseed the global generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The global generator's seed."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The global generator's state (PyTorch's 5056-byte ``ByteTensor`` layout)."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the global generator from ``get_rng_state`` (or PyTorch's own)."""
    default_generator.set_state(new_state)


def _gen(generator: Any) -> Generator:
    """``generator`` or the global one."""
    return default_generator if generator is None else generator


def _random_factory(
    name: str, draw: Any, size: tuple, kw: dict, generator: Any, out: Any, dtype: Any,
    layout: Any, device: Any, requires_grad: bool,
) -> Tensor:  # fmt: skip
    """``rand``/``randn``: ``draw(generator, shape, npd)`` in ``dtype`` (``out``'s, else the
    default dtype), written into ``out`` if given (``draw`` refuses other dtypes than
    floating and complex ones, as PyTorch's kernels)."""
    kw.pop("pin_memory", None)  # (no pinned memory on the CPU; PyTorch ignores False)
    shape = _size_args(_size_kw(name, size, kw))
    _layout(name, layout)
    npd = _out_dtype(name, dtype, out, _dt.get_default_dtype().np)
    if is_meta(device):  # no values: nothing drawn, the generator stays (as PyTorch's)
        return _finish(name, _leaf(MetaArray(shape, npd), requires_grad, device), out)
    result = _leaf(draw(_gen(generator), shape, npd), requires_grad, device)
    return _finish(name, result, out)


def rand(
    *size: Any,
    generator: Any = None,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **kw: Any,
) -> Tensor:
    """Uniform draws in ``[0, 1)`` of ``size`` (PyTorch's numbers after the same seed)."""
    return _random_factory(
        "rand", _rng.uniform, size, kw, generator, out, dtype, layout, device,
        requires_grad,
    )  # fmt: skip


def randn(
    *size: Any,
    generator: Any = None,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    **kw: Any,
) -> Tensor:
    """Standard normal draws of ``size`` (PyTorch's numbers after the same seed)."""
    return _random_factory(
        "randn", _rng.normal, size, kw, generator, out, dtype, layout, device,
        requires_grad,
    )  # fmt: skip


def randint(
    *args: Any,
    size: Any = None,
    generator: Any = None,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    low: Any = None,
    high: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """Integers drawn from ``[low, high)`` (``low`` 0 unless given) of ``size``, in
    ``dtype`` (``out``'s, else int64), as PyTorch's ``randint(low=0, high, size)``."""
    given = [v for v in (low, high) if v is not None]
    if len(args) + len(given) + (size is not None) > 3 or (
        len(args) == 3 and (given or size is not None)
    ):
        raise TypeError("randint() received an invalid combination of arguments")
    vals = list(args)
    if size is None and vals and isinstance(vals[-1], (tuple, list, Size)):
        size = vals.pop()
    if size is None:
        raise TypeError('randint() missing 1 required positional arguments: "size"')
    if len(vals) == 2:
        low, high = vals
    elif len(vals) == 1:
        if high is None:
            high = vals[0]
        else:
            low = vals[0]
    if high is None:
        raise TypeError('randint() missing 1 required positional arguments: "high"')
    low = 0 if low is None else low
    _layout("randint", layout)
    shape = _size_args((size,))
    npd = _out_dtype("randint", dtype, out, np.dtype(np.int64))
    arr = _rng.random_from_to(_gen(generator), shape, npd, int(low), int(high))
    return _finish("randint", _leaf(arr, requires_grad, device), out)


def randperm(
    n: int,
    *,
    generator: Any = None,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """A random permutation of ``0 .. n-1`` in ``dtype`` (``out``'s, else int64), PyTorch's
    numbers after the same seed; ``n`` must fit the dtype's exact integers."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    _layout("randperm", layout)
    npd = _out_dtype("randperm", dtype, out, np.dtype(np.int64))
    _check_randperm_n(int(n), npd)
    arr = _rng.randperm(_gen(generator), int(n))
    return _finish("randperm", _leaf(arr.astype(npd), requires_grad, device), out)


def _check_randperm_n(n: int, npd: np.dtype) -> None:
    """PyTorch's refusals of ``randperm(n)`` by dtype: ``bool``, ``n - 1`` beyond an
    integer type, more values than float16/float32/float64 hold exactly (bfloat16: none)."""
    if npd.kind == "b":
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if npd.kind in "iu" and n - 1 > np.iinfo(npd).max:
        raise RuntimeError(f"value cannot be converted to type {npd.name}_t without overflow")
    if npd == np.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    for float_type, digits, name in ((np.float32, 24, "Float"), (np.float64, 53, "Double")):
        if npd == float_type and n > 2**digits + 1:
            raise RuntimeError(f"n cannot be greater than 2^{digits}+1 for {name} type.")


def rand_like(
    input: Tensor,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return rand(
        *input.shape,
        dtype=dtype or input.dtype,
        device=input.device if device is None else device,
        requires_grad=requires_grad,
    )


def randn_like(
    input: Tensor,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return randn(
        *input.shape,
        dtype=dtype or input.dtype,
        device=input.device if device is None else device,
        requires_grad=requires_grad,
    )


def bernoulli(
    input: Tensor, p: float | None = None, generator: Any = None, *, out: Tensor | None = None
) -> Tensor:
    """0/1 draws with the probabilities ``input`` (or ``p``), of ``input``'s dtype, or of
    ``out``'s when given (written there, resized: any dtype, ``bool`` too, as PyTorch's)."""
    if p is None:
        draw = _rng.bernoulli_tensor(_gen(generator), np.asarray(input._st.array))
    else:
        draw = _rng.bernoulli_scalar(_gen(generator), tuple(input.shape), p)
    if out is None:
        return _leaf(draw.astype(input._npdtype), False)
    return _out_arg.write_out("bernoulli", _leaf(draw.astype(out._npdtype), False), out)


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
) -> Tensor:
    """Normal draws of mean ``mean`` and standard deviation ``std``: numbers with a ``size``
    (then ``dtype``, ``device``, ``requires_grad`` apply), or tensors broadcast together
    with PyTorch's error; written into ``out`` if given (PyTorch's numbers after the same
    seed)."""
    tensors = isinstance(mean, Tensor) or isinstance(std, Tensor)
    if isinstance(std, Tensor):
        if _dt.kind(std._npdtype) == "c":
            raise RuntimeError("normal expects standard deviation to be non-complex")
        s_arr = np.asarray(std._st.array)
        if s_arr.size and not s_arr.min() >= 0:
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if tensors:
        if size is not None or dtype is not None or requires_grad:
            raise TypeError("normal() received an invalid combination of arguments")
        npd = None if out is None else _out_dtype("normal", None, out, None)
        result = _normal_tensors(mean, std, _gen(generator), npd)
        # (PyTorch resizes this form's out with its warning, unlike the factories')
        return result if out is None else _out_arg.write_out("normal", result, out)
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments")
    _layout("normal", layout)
    shape = _size_args((size,))
    npd = _out_dtype("normal", dtype, out, _dt.get_default_dtype().np)
    arr = _rng.normal(_gen(generator), shape, npd, mean, std)
    return _finish("normal", _leaf(arr, requires_grad, device), out)


def _normal_tensors(mean: Any, std: Any, gen: Generator, npd: np.dtype | None) -> Tensor:
    """``normal`` with a tensor mean and/or std, as PyTorch's: ``normal_(0, std) + mean``
    for a number std, ``normal_(0, 1) * std + mean`` for a tensor one, drawn in ``npd``
    (``out``'s) or the tensor's dtype (the mean's when both are tensors)."""
    m = np.asarray(mean._st.array) if isinstance(mean, Tensor) else mean
    s = np.asarray(std._st.array) if isinstance(std, Tensor) else std
    shape = _tc._infer_size(np.shape(m), np.shape(s))
    if isinstance(shape, str):
        raise RuntimeError(shape)
    if npd is None:
        npd = (mean if isinstance(mean, Tensor) else std)._npdtype
    if isinstance(std, Tensor):
        arr = _rng.normal(gen, shape, npd) * s.astype(npd) + m
    else:
        arr = _rng.normal(gen, shape, npd, 0.0, s) + m
    device = (mean if isinstance(mean, Tensor) else std).device
    return _leaf(np.asarray(arr, npd), False, device)


def randint_like(
    input: Tensor,
    low: int = 0,
    high: int | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """``randint`` with ``input``'s shape (and dtype unless given); ``randint_like(x, high)``."""
    if high is None:
        low, high = 0, low
    return randint(
        low,
        high,
        tuple(input.shape),
        dtype=dtype or input.dtype,
        device=input.device if device is None else device,
        requires_grad=requires_grad,
    )


def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Tensor:
    """Indices drawn from the categorical distribution(s) in ``input``'s last dim
    (unnormalised non-negative weights), without replacement unless asked."""
    p = np.asarray(input._st.array)
    if _dt.kind(p.dtype) != "f":
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            + _dt.scalar_type_name(p.dtype)
        )
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    rows = p.reshape(-1, p.shape[-1])
    n = rows.shape[-1]
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    sums = rows.sum(-1)
    if np.any(sums <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    out = _rng.multinomial(_gen(generator), rows, num_samples, replacement)
    return _leaf(out.reshape(p.shape[:-1] + (num_samples,)), False)


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson draws with rates ``input`` (same shape and dtype)."""
    lam = np.asarray(input._st.array)
    if np.any(lam < 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _leaf(_gen(generator).numpy().poisson(lam).astype(input._npdtype), False)


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor) and obj._npdtype == cls._npd


def _legacy(name: str, npd: Any) -> type:
    """``torch.FloatTensor`` & co: ``FloatTensor([1, 2])`` makes a tensor of that dtype
    from data, ``FloatTensor(2, 3)`` an uninitialised (here: zero) one of that size;
    ``isinstance(t, torch.FloatTensor)`` tests the dtype."""

    def __new__(cls: type, *args: Any, device: Any = None) -> Tensor:
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            data = args[0]
            if isinstance(data, Size):
                return _leaf(np.zeros(tuple(data), npd), False, device)
            return tensor(data, dtype=_dt.from_np(npd), device=device)
        if len(args) > 1 and not all(isinstance(a, (int, np.integer)) for a in args):
            got = ", ".join(type(a).__name__ for a in args)
            raise TypeError(
                f"new() received an invalid combination of arguments - got ({got}), but "
                "expected one of:\n * (*, torch.device device = None)\n * (torch.Storage "
                "storage)\n * (Tensor other)\n * (tuple of ints size, *, torch.device device "
                "= None)\n * (object data, *, torch.device device = None)\n"
            )
        # (no size at all: an empty 1-d tensor, as PyTorch's, not a 0-d one)
        return _leaf(np.zeros(_size_args(args) if args else (0,), npd), False, device)

    attrs = {"__new__": __new__, "_npd": np.dtype(npd), "dtype": _dt.from_np(npd)}
    # (CPU dense tensors: PyTorch's torch.cuda.* and torch.sparse.* classes say otherwise)
    attrs.update(is_cuda=False, is_sparse=False, is_xpu=False)
    return _LegacyTensorType(name, (), attrs)


FloatTensor = _legacy("FloatTensor", np.float32)
DoubleTensor = _legacy("DoubleTensor", np.float64)
HalfTensor = _legacy("HalfTensor", np.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", _dt.bfloat16.np)
LongTensor = _legacy("LongTensor", np.int64)
IntTensor = _legacy("IntTensor", np.int32)
ShortTensor = _legacy("ShortTensor", np.int16)
CharTensor = _legacy("CharTensor", np.int8)
ByteTensor = _legacy("ByteTensor", np.uint8)
BoolTensor = _legacy("BoolTensor", np.bool_)

#: ``torch._tensor_classes``: the legacy tensor classes (compat's are the CPU dense ones)
TENSOR_CLASSES = set(
    (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor)
    + (ShortTensor, CharTensor, ByteTensor, BoolTensor)
)
