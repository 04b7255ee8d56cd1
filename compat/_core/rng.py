"""compat's CPU random generator: PyTorch's mt19937 stream and its draw algorithms.

``Generator`` holds the same state as PyTorch's ``CPUGeneratorImpl`` (624 mt19937 words,
the ``left``/``next`` counters, the initial seed and the cached second normal sample), so
after the same ``manual_seed`` the functions below return PyTorch's numbers. Raw 32-bit
draws come from NumPy's MT19937 bit generator (same recurrence and tempering), which holds
the state between draws (handed over after a seed or ``set_state``, read back for
``get_state``); each draw function mirrors one PyTorch CPU kernel, vectorised:

* ``uniform``: one 32-bit draw per element (24-bit mantissa) for float32, one 64-bit draw
  (two 32-bit draws, the first one high, 53-bit mantissa) for float64; ``from + x * (to - from)``.
* ``normal``: contiguous tensors of >= 16 elements use the 16-block Box-Muller fill
  (uniforms first, the last block recomputed from 16 fresh uniforms); smaller ones the
  scalar Box-Muller in double precision that caches its second sample in the generator.
* ``random_from_to``: ``low + draw % range`` with a 64-bit draw when ``range >= 2**28``.
* ``randperm``: Fisher-Yates with ``random() % (n - i)``, the swaps' result computed by
  vectorised pointer jumping (``front_swaps``); inside-out with ``random64`` for huge ``n``
  (a Python loop over a list).
"""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

from compat._core import device as _dev
from compat._core import dtypes as _dt
from compat._core.tensor import Tensor
from compat._core.warn_once import warn_user

_N = 624
_STATE_BYTES = 5056
# PyTorch's CPUGeneratorImplState (legacy THGeneratorState plus the float normal cache).
_STATE_DTYPE = np.dtype(
    {
        "names": [
            "seed",
            "left",
            "seeded",
            "next",
            "state",
            "normal_x",
            "normal_y",
            "normal_rho",
            "normal_is_valid",
            "next_float",
            "float_valid",
        ],
        "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", _N), "<f8", "<f8", "<f8", "<i4"]
        + ["<f4", "u1"],
        "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
        "itemsize": _STATE_BYTES,
    }
)
DEFAULT_SEED = 67280421310721  # PyTorch's seed of a new generator


def _init_words(seed: int) -> np.ndarray:
    """mt19937's ``init_genrand`` on the low 32 bits of ``seed``."""
    words = np.empty(_N, np.uint32)
    x = seed & 0xFFFFFFFF
    words[0] = x
    for j in range(1, _N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
        words[j] = x
    return words


#: the device types a generator can be made for: the CPU's, and compat's ``cuda`` stand-in
_GENERATOR_DEVICES = ("cpu", "cuda")


def _generator_device(device: Any) -> Any:
    """``device`` checked as PyTorch's ``Generator(device)`` checks it: a valid device name
    (PyTorch's error otherwise), of a type that has generators ("X device type not an
    accelerator.")."""
    d = _dev.device(device)
    if d.type not in _GENERATOR_DEVICES:
        raise RuntimeError(f"{d.type.upper()} device type not an accelerator.")
    return d


class Generator:
    """``torch.Generator``: PyTorch's CPU mt19937 state, to pass as ``generator=``.

    ``rand``/``randn``/``randint``/``randperm``/``bernoulli``/dropout/``nn.init`` draw from it
    (or from ``default_generator``, which ``torch.manual_seed`` seeds) exactly as PyTorch's
    CPU kernels do, so a seed gives PyTorch's values; ``get_state`` is PyTorch's 5056-byte
    ``ByteTensor`` layout, interchangeable with ``torch.Generator.get_state()``.
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = _generator_device(device)
        self._bits = np.random.MT19937()
        #: whether ``_bits`` holds the current state (``_words``/``_left``/``_next`` may
        #: be behind it); else those hold it. Handing NumPy's bit generator the state
        #: through its ``state`` dict costs ~100-250 us each way: the state stays in it
        #: between draws and is read back only for ``get_state``.
        self._live = False
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Reseed (negative seeds wrap to uint64, as PyTorch; a seed outside the int64 and
        uint64 ranges is PyTorch's ``ValueError``); returns ``self``."""
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        seed %= 2**64
        self._seed = seed
        self._words = _init_words(seed)
        self._left, self._next = 1, 0
        self._live = False
        self._double_normal: float | None = None
        self._float_normal: float | None = None
        return self

    def seed(self) -> int:
        """Reseed from OS entropy and return the new seed."""
        s = int(np.random.SeedSequence().entropy % 2**63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed last given to ``manual_seed`` (or chosen by ``seed``)."""
        return self._seed

    def get_state(self) -> Any:
        """PyTorch's 5056-byte state as a ``uint8`` tensor."""
        arr = np.frombuffer(self._state_bytes(), np.uint8).copy()
        return Tensor._make(_dev.place(arr, None), False)

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state from ``get_state`` (this library's or PyTorch's)."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        arr = np.asarray(new_state._st.array)
        if arr.dtype != np.uint8:
            raise TypeError(f"expected a torch.ByteTensor, but got {new_state.dtype}")
        self._set_state_bytes(arr.reshape(-1).tobytes())
        return self

    def _state_bytes(self) -> bytes:
        self._read_back()
        rec = np.zeros((), _STATE_DTYPE)
        rec["seed"], rec["left"], rec["seeded"] = self._seed, self._left, 1
        rec["next"], rec["state"] = self._next, self._words
        if self._double_normal is not None:
            rec["normal_is_valid"], rec["normal_y"] = 1, self._double_normal
        if self._float_normal is not None:
            rec["float_valid"], rec["next_float"] = 1, self._float_normal
        return rec.tobytes()

    def _set_state_bytes(self, raw: bytes) -> None:
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                "Expected either a THGeneratorState of size 5048 or a CPUGeneratorImplState "
                f"of size 5056 but found the input RNG state size to be {len(raw)}"
            )
        rec = np.frombuffer(raw, _STATE_DTYPE)[0]
        self._seed = int(rec["seed"])
        self._left, self._next = int(rec["left"]), int(rec["next"])
        self._words = rec["state"].astype(np.uint32)
        self._live = False
        self._double_normal = float(rec["normal_y"]) if rec["normal_is_valid"] else None
        self._float_normal = float(rec["next_float"]) if rec["float_valid"] else None

    # ------------------------------------------------------------------ raw draws

    def _u32(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit outputs (PyTorch's ``random()``), as uint64."""
        if n == 0:
            return np.zeros(0, np.uint64)
        if not self._live:
            # PyTorch twists when ``--left`` hits 0; NumPy when ``pos`` reaches 624.
            self._bits.state = {
                "bit_generator": "MT19937",
                "state": {"key": self._words, "pos": _N + 1 - self._left},
            }
            self._live = True
        return self._bits.random_raw(n)

    def _read_back(self) -> None:
        """Bring ``_words``/``_left``/``_next`` up to the bit generator's state."""
        if self._live:
            st = self._bits.state["state"]
            self._words = st["key"].astype(np.uint32)
            self._next = int(st["pos"])
            self._left = _N + 1 - self._next

    def _u64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit draws (PyTorch's ``random64()``: first 32-bit draw high)."""
        r = self._u32(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    def numpy(self) -> np.random.Generator:
        """A NumPy generator seeded from one 64-bit draw, for samplers PyTorch's stream
        is not reproduced for (seeded runs stay reproducible, values differ from PyTorch)."""
        return np.random.default_rng(int(self._u64(1)[0]))


# --------------------------------------------------------------------------- draws


_LIBM_MAX = 4096


def _libm(name: str, x: np.ndarray) -> np.ndarray:
    """``math.<name>`` elementwise: the C library's function, as PyTorch's scalar kernels
    call it (NumPy's vectorised versions differ in the last bit now and then); arrays above
    ``_LIBM_MAX`` elements take NumPy's (equal within 1 ulp) to stay vectorised."""
    if x.size > _LIBM_MAX:
        return getattr(np, name)(x)
    fn = getattr(math, name)
    return np.array([fn(v) for v in x.reshape(-1).tolist()], np.float64).reshape(x.shape)


_MASK53, _MASK24 = np.uint64(2**53 - 1), np.uint64(2**24 - 1)
_ULP24 = np.float32(2.0**-24)


def _real(gen: Generator, n: int, npd: np.dtype) -> np.ndarray:
    """``n`` uniforms in [0, 1) as PyTorch's ``uniform_real_distribution<npd>`` (a new,
    writable array)."""
    if np.dtype(npd) == np.float64:
        return (gen._u64(n) & _MASK53).astype(np.float64) * 2.0**-53
    vals = (gen._u32(n) & _MASK24).astype(np.float32) * _ULP24
    return vals.astype(npd, copy=False)


def _work_dtype(npd: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if np.dtype(npd) == np.float64 else np.dtype(np.float32)


def _complex_parts(npd: np.dtype) -> np.dtype | None:
    """The real dtype of a complex ``npd``'s parts (``None`` for a real one): PyTorch draws
    a complex tensor as its real view (``view_as_real``), the parts of each element one
    after the other."""
    return np.dtype(np.float32 if npd == np.complex64 else np.float64) if npd.kind == "c" else None


def _check_uniform(npd: np.dtype, a: float, b: float) -> None:
    """PyTorch's checks of ``uniform_``'s bounds: floating dtypes only, ``a`` and ``b``
    values of the dtype, ``a <= b``, ``b - a`` within its range."""
    if _dt.kind(npd) != "f":
        name = _dt.scalar_type_name(npd)
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for '{name}'")
    lo, hi, _ = _float_limits(npd)
    where = _CPP_NAMES[npd.name]
    for v, what in ((a, "from"), (b, "to")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{what} is out of bounds for {where}")
    if not a <= b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}"
        )
    if not b - a <= hi:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{_dt.scalar_type_name(npd)}>"
            f"::max(), but found to={b:g} and from={a:g} which result in to-from to exceed "
            "the limit"
        )


def uniform(gen: Generator, shape: tuple, npd: Any, a: float = 0.0, b: float = 1.0) -> np.ndarray:
    """``Tensor.uniform_(a, b)`` / ``rand``: ``a + x * (b - a)`` in the tensor's precision
    (a complex tensor: both parts so drawn)."""
    npd = np.dtype(npd)
    part = _complex_parts(npd)
    if part is not None:
        return uniform(gen, (*shape, 2), part, a, b).view(npd).reshape(shape)
    _check_uniform(npd, a, b)
    wd = _work_dtype(npd)
    x = _real(gen, math.prod(shape), wd)
    lo, hi = wd.type(a), wd.type(b)
    if wd == np.float64:
        return _fma(x, float(hi - lo), float(lo)).astype(npd).reshape(shape)
    # float32: PyTorch's kernel contracts to a fused multiply-add (one rounding)
    out = (x.astype(np.float64) * float(hi - lo) + float(lo)).astype(np.float32).astype(npd)
    if npd != np.float32:  # float16: a draw that rounds up to ``b`` becomes ``a`` (PyTorch)
        out[out == npd.type(b)] = npd.type(a)
    return out.reshape(shape)


def _fma(a: np.ndarray, b: float, c: float) -> np.ndarray:
    """``a * b + c`` with (nearly always) one rounding, as the fused multiply-add PyTorch's
    compiled kernel uses: Dekker's exact product, then an exact sum of the parts."""
    split = 134217729.0  # 2**27 + 1
    prod = a * b
    ta = a * split
    a_hi = ta - (ta - a)
    a_lo = a - a_hi
    tb = b * split
    b_hi = tb - (tb - b)
    b_lo = b - b_hi
    prod_err = ((a_hi * b_hi - prod) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    total = prod + c
    bv = total - prod
    sum_err = (prod - (total - bv)) + (c - bv)
    return total + (prod_err + sum_err)


def _fill16(d: np.ndarray) -> np.ndarray:
    """Box-Muller over rows of 16 uniforms: the first 8 give radii, the last 8 angles.

    float32 mirrors PyTorch's vectorised kernel (float angle, float results) with double
    log/sqrt/cos/sin rounded once, so values agree with PyTorch's within about 1 ulp."""
    if d.dtype == np.float64:
        theta = 2.0 * math.pi * d[:, 8:]
    else:
        theta = (np.float32(2 * math.pi) * d[:, 8:]).astype(np.float64)
    rows = d.shape[0]
    if rows * 8 > _LIBM_MAX:
        if d.dtype == np.float64:
            u1 = 1.0 - d[:, :8]
        else:
            u1 = (np.float32(1) - d[:, :8]).astype(np.float64)
        radius = np.sqrt(-2.0 * _libm("log", u1))
    else:
        # ``1 - u`` is exact in double for a float32 uniform (a multiple of 2**-24 in
        # [0, 1)) as in float32, and ``sqrt`` is correctly rounded in both libraries: the
        # radii as PyTorch's (and ``_libm``'s) C ``log`` gives them, in one Python pass
        log, sqrt = math.log, math.sqrt
        radius = np.array(
            [sqrt(-2.0 * log(1.0 - u)) for u in d[:, :8].ravel().tolist()], np.float64
        ).reshape(rows, 8)
    both = np.empty((rows, 16), np.float64)
    np.multiply(radius, np.cos(theta), out=both[:, :8])
    np.multiply(radius, np.sin(theta), out=both[:, 8:])
    return both.astype(d.dtype)


def _normal_scalar(gen: Generator, n: int) -> np.ndarray:
    """``n`` standard normals from PyTorch's scalar ``normal_distribution<double>``,
    which draws pairs and keeps the second sample in the generator for the next call."""
    out = np.empty(n)
    i = 0
    if n and gen._double_normal is not None:
        out[0], gen._double_normal, i = gen._double_normal, None, 1
    pairs = (n - i + 1) // 2
    if pairs:  # at most 8 pairs (larger tensors take the fill path): libm, as PyTorch
        u = _real(gen, 2 * pairs, np.dtype(np.float64)).tolist()
        both = []
        for k in range(pairs):
            r = math.sqrt(-2.0 * math.log1p(-u[2 * k + 1]))
            theta = 2.0 * math.pi * u[2 * k]
            both += [r * math.cos(theta), r * math.sin(theta)]
        out[i:] = both[: n - i]
        if (n - i) % 2:
            gen._double_normal = both[-1]
    return out


def normal(
    gen: Generator, shape: tuple, npd: Any, mean: float = 0.0, std: float = 1.0
) -> np.ndarray:
    """``Tensor.normal_(mean, std)`` / ``randn`` for a contiguous tensor of ``shape`` (a
    complex one: both parts drawn with ``mean`` and ``std / sqrt(2)``, as PyTorch's)."""
    npd = np.dtype(npd)
    part = _complex_parts(npd)
    if part is not None:
        parts = normal(gen, (*shape, 2), part, mean, std / math.sqrt(2))
        return parts.view(npd).reshape(shape)
    if _dt.kind(npd) != "f":
        name = _dt.scalar_type_name(npd)
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{name}'")
    n = math.prod(shape)
    if n < 16:
        return (_normal_scalar(gen, n) * std + mean).astype(npd).reshape(shape)
    wd = _work_dtype(npd)
    full = n // 16 * 16
    # float32/float64 draw all n uniforms first; float16/bfloat16 draw per block of 16
    # (in float32), none for the elements the recomputed last block covers
    d = _real(gen, n if npd == wd else full, wd)
    if d.size < n:
        d = np.concatenate([d, np.zeros(n - d.size, wd)])
    d[:full] = _fill16(d[:full].reshape(-1, 16)).reshape(-1)
    if n % 16:
        d[n - 16 :] = _fill16(_real(gen, 16, wd).reshape(1, 16)).reshape(-1)
    if npd == wd and std == 1.0 and mean == 0.0 and type(std) is type(mean) is float:
        # ``d * 1 + 0`` in double, rounded back: ``d`` itself but ``-0.0``, which the
        # ``+ 0`` makes ``+0.0`` (as ``d + 0`` in ``d``'s own dtype does)
        return (d + wd.type(0.0)).reshape(shape)
    # float32: one rounding of ``n * std + mean`` (PyTorch's kernel uses a fused multiply-add)
    out = d.astype(np.float64) * float(wd.type(std)) + float(wd.type(mean))
    return out.astype(npd).reshape(shape)


#: the C++ names PyTorch's random bounds errors give a dtype
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "uint16": "short unsigned int",
    "uint32": "unsigned int", "uint64": "long unsigned int", "float16": "c10::Half",
    "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
}  # fmt: skip
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _float_limits(npd: np.dtype) -> tuple[float, float, int]:
    """A float dtype's lowest and largest values and its significand digits."""
    info = ml_dtypes.finfo(npd)
    return float(info.min), float(info.max), _DIGITS[npd.name]


def _as_float(v: int, npd: np.dtype) -> int:
    """``static_cast<int64_t>(static_cast<scalar_t>(v))`` as on x86 (a value beyond
    int64's range, infinities and NaN give int64's lowest)."""
    with np.errstate(over="ignore"):
        src = np.asarray(v, np.int64) if _I64_MIN <= v <= _I64_MAX else np.float64(v)
        f = float(src.astype(npd).astype(np.float64))
    return int(f) if -(2.0**63) <= f < 2.0**63 else _I64_MIN


def _update_from(v: int, npd: np.dtype) -> int:
    """PyTorch's ``update_from``: the nearest ``from`` whose draws, rounded to ``npd``,
    stay at or above it."""
    up = _as_float(v + 1, npd)
    if up < v:
        v = up + (1 << (abs(v + 1).bit_length() - 1 - _DIGITS[npd.name] + 1))
    return v


def _update_to(v: int, npd: np.dtype) -> int:
    """PyTorch's ``update_to``: the nearest ``to`` whose draws, rounded to ``npd``, stay
    below it."""
    down = _as_float(v - 1, npd)
    if down >= v:
        v = down - (1 << (abs(v - 1).bit_length() - 1 - _DIGITS[npd.name] + 1))
    return v


def _check_in_range(low: int, top: int, npd: np.dtype) -> None:
    """PyTorch's ``check_from_to_in_range``: ``low`` and ``top`` (``to - 1``) must be values
    of ``npd`` (a float dtype's significand range is only warned about)."""
    name = _CPP_NAMES.get(npd.name, npd.name)
    if _dt.kind(npd) == "f":
        lo, hi, digits = _float_limits(npd)
    elif npd.kind == "b":
        lo, hi, digits = 0, 1, None
    else:
        info = np.iinfo(npd)
        lo, hi, digits = int(info.min), min(int(info.max), _I64_MAX), None
    for v, what in ((low, "from"), (top, "to - 1")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if digits is not None:
        for v, what in ((low, "from"), (top, "to - 1")):
            if not -(2**digits) <= v <= 2**digits:
                warn_user(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only "
                    "within this range. This warning will become an error in version 1.7 "
                    "release, please fix the code in advance"
                )


def from_to(npd: Any, low: int, high: int | None) -> tuple[int, int]:
    """``random_(low, high)``'s base and range (``high=None``: up to the dtype's largest
    value, its significand's for a float; ``low`` int64's lowest: all 2**64 values), with
    PyTorch's checks and errors."""
    npd = np.dtype(npd)
    if npd.kind == "c":
        raise RuntimeError(
            "check_random_bounds handles only integral, floating-point and boolean types"
        )
    low = int(low)
    is_float = _dt.kind(npd) == "f"
    if high is not None:
        high = int(high)
        if low >= high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        if is_float:
            low, high = _update_from(low, npd), _update_to(high, npd)
            if low >= high:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than 'to' casted to "
                    f"dtype, but got from={low} >= to={high}"
                )
        _check_in_range(low, high - 1, npd)
        return low, high - low
    if low == _I64_MIN:
        if npd.kind in "iu" and npd != np.int64:
            raise RuntimeError(
                "random_full_64_bits_range_kernel_cpu handles only int64, double, float and "
                "bfloat16"
            )
        if npd.name not in ("int64", "float64", "float32", "bfloat16"):
            raise NotImplementedError(
                '"random_full_64_bits_range_kernel_cpu" not implemented for '
                f"'{_dt.scalar_type_name(npd)}'"
            )
        return low, 2**64
    if is_float:
        top = min(2 ** _DIGITS[npd.name], _I64_MAX)
        low = _update_from(low, npd)
        if low >= top:
            raise RuntimeError(
                "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                f"casted to dtype, but got from={low} > to_inc={top}"
            )
    else:
        top = 1 if npd.kind == "b" else min(int(np.iinfo(npd).max), _I64_MAX)
    _check_in_range(low, top, npd)
    return low, top - low + 1


def random_from_to(
    gen: Generator, shape: tuple, npd: Any, low: int, high: int | None
) -> np.ndarray:
    """``random_(low, high)`` / ``randint``: ``low + draw % (high - low)`` after PyTorch's
    bounds checks (:func:`from_to`); a 64-bit draw for a range of 2**28 or more."""
    npd = np.dtype(npd)
    low, rng = from_to(npd, low, high)
    n = math.prod(shape)
    wide = rng >= 2**28  # (PyTorch 2.13's threshold, every dtype: at most ~5% skew)
    draws = gen._u64(n) if wide else gen._u32(n)
    if rng == 2**64:  # the whole int64 range: the draw itself, as a signed integer
        vals = draws.view(np.int64)
    else:
        vals = (draws % np.uint64(rng)).view(np.int64) + np.int64(low)
    return vals.astype(npd).reshape(shape)


#: significand digits (with the implicit bit) per float dtype
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def random_full(gen: Generator, shape: tuple, npd: Any) -> np.ndarray:
    """``random_()``: ``[0, 2**mantissa]`` for floats, ``[0, max]`` for integers."""
    npd = np.dtype(npd)
    if npd.kind == "c":
        name = _dt.scalar_type_name(npd)
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{name}'")
    n = math.prod(shape)
    wide = npd in (np.int64, np.float64)
    draws = gen._u64(n) if wide else gen._u32(n)
    if _dt.kind(npd) == "f":
        top = 2 ** _DIGITS[npd.name] + 1
    elif npd.kind == "b":
        top = 2
    else:
        top = int(np.iinfo(npd).max) + 1
    return (draws % np.uint64(top)).astype(npd).reshape(shape)


def randperm(gen: Generator, n: int) -> np.ndarray:
    """PyTorch's CPU ``randperm``: Fisher-Yates from the front with ``random() % (n - i)``
    (the swaps' result computed at once: :func:`front_swaps`); for ``n >= 2**32 / 20`` the
    inside-out shuffle with ``random64() % (i + 1)`` (a Python loop)."""
    if n < (2**32 - 1) // 20:
        if n <= 1:
            return np.arange(n, dtype=np.int64)
        picks = gen._u32(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
        return front_swaps(np.arange(n - 1, dtype=np.int64) + picks.astype(np.int64))
    picks = (gen._u64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()
    out = [0] * n
    for i, z in enumerate(picks):
        out[i] = out[z]
        out[z] = i
    return np.asarray(out, np.int64)


def front_swaps(j: np.ndarray) -> np.ndarray:
    """``arange(len(j) + 1)`` after swapping positions ``i`` and ``j[i] >= i`` for
    ``i = 0, 1, ...`` in turn, without the sequential loop.

    Position ``i`` is final after step ``i``: it receives the value then at ``j[i]``, which
    is what the latest earlier step with the same target left there (that step's own
    position's value at its time), else ``j[i]`` itself. The value at position ``i`` at
    step ``i`` is likewise that of the latest earlier step targeting ``i``, else ``i``:
    those links only point back, so pointer jumping resolves every chain in log-many
    vectorised passes."""
    n = j.size + 1
    j = np.append(j, n - 1).astype(np.int32)  # (n < 2**31: 32-bit gathers)
    idx = np.arange(n, dtype=np.int32)
    # steps grouped by target, in step order: one sort of unique (target, step) keys
    shift = max(int(n - 1).bit_length(), 1)
    order = (np.sort((j.astype(np.int64) << shift) | idx) & ((1 << shift) - 1)).astype(np.int32)
    tj = j[order]
    same = tj[1:] == tj[:-1]
    prev = np.full(n, -1, dtype=np.int32)  # the previous step with the same target
    prev[order[1:][same]] = order[:-1][same]
    last = np.full(n, -1, dtype=np.int32)  # the latest step targeting each position
    end = np.append(~same, True)  # each group's latest step
    last[tj[end]] = order[end]
    # the latest step before ``i`` that targets ``i`` (``i`` itself targets ``i`` last)
    parent = np.where(last == idx, prev, last)
    root = np.where(parent < 0, idx, parent)
    todo = np.flatnonzero(parent >= 0)  # (links to follow; each pass halves the chains)
    while todo.size:
        up = root[todo]
        nxt = root[up]
        root[todo] = nxt
        todo = todo[nxt != up]
    return np.where(prev < 0, j, root[np.maximum(prev, 0)]).astype(np.int64)


def bernoulli_scalar(gen: Generator, shape: tuple, p: float) -> np.ndarray:
    """``bernoulli_(p)`` with a float ``p``: a double uniform per element, ``u < p``."""
    return (_real(gen, math.prod(shape), np.dtype(np.float64)) < p).reshape(shape)


def bernoulli_tensor(gen: Generator, probs: np.ndarray) -> np.ndarray:
    """``bernoulli(probs)``: per element a uniform in ``probs``' precision (double for
    float64, float otherwise), ``u < p``."""
    wd = np.dtype(np.float64) if probs.dtype == np.float64 else np.dtype(np.float32)
    u = _real(gen, probs.size, wd).reshape(probs.shape)
    return u < probs.astype(wd)


def exponential(gen: Generator, shape: tuple, lambd: float) -> np.ndarray:
    """``exponential_(lambd)``: ``-log1p(-u) / lambd`` from double uniforms."""
    u = _real(gen, math.prod(shape), np.dtype(np.float64)).reshape(shape)
    return (-1.0 / lambd) * _libm("log1p", -u)


def cauchy(gen: Generator, shape: tuple, median: float, sigma: float) -> np.ndarray:
    """``cauchy_(median, sigma)``: ``median + sigma * tan(pi * (u - 1/2))``."""
    u = _real(gen, math.prod(shape), np.dtype(np.float64)).reshape(shape)
    return median + sigma * _libm("tan", math.pi * (u - 0.5))


def geometric(gen: Generator, shape: tuple, p: float) -> np.ndarray:
    """``geometric_(p)``: ``ceil(log(u) / log1p(-p))`` from double uniforms."""
    u = _real(gen, math.prod(shape), np.dtype(np.float64)).reshape(shape)
    return np.ceil(_libm("log", u) / math.log1p(-p))


def log_normal(gen: Generator, shape: tuple, mean: float, std: float) -> np.ndarray:
    """``log_normal_(mean, std)``: ``exp`` of the scalar normal path (always, any size)."""
    return _libm("exp", _normal_scalar(gen, math.prod(shape)) * std + mean).reshape(shape)


def rrelu_slopes(gen: Generator, x: np.ndarray, lower: float, upper: float) -> np.ndarray:
    """``rrelu`` training slopes: a double uniform in ``[lower, upper)`` for each element
    ``<= 0`` in order (none drawn for positive ones), cast to ``x``'s dtype; 1 elsewhere."""
    neg = x <= 0
    u = _real(gen, int(np.count_nonzero(neg)), np.dtype(np.float64))
    out = np.ones(x.shape, x.dtype)
    out[neg] = (u * (upper - lower) + lower).astype(x.dtype)
    return out


def multinomial(gen: Generator, rows: np.ndarray, n_sample: int, replacement: bool) -> np.ndarray:
    """PyTorch's CPU ``multinomial`` over the rows of a 2-D weight array.

    Without replacement (or one sample): ``argmax``/``topk`` of ``w / q`` with
    ``q = exponential_(1)`` drawn like ``rows``. With replacement: per row, ``n_sample``
    double uniforms located by binary search in the normalised cumulative weights."""
    if not replacement or n_sample == 1:
        q = exponential(gen, rows.shape, 1.0).astype(rows.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = rows / q
        if n_sample == 1:
            return np.argmax(keys, axis=-1)[:, None]
        return np.argsort(-keys, axis=-1, kind="stable")[:, :n_sample]
    u = _real(gen, rows.shape[0] * n_sample, np.dtype(np.float64)).reshape(-1, n_sample)
    out = np.empty(u.shape, np.int64)
    for i, row in enumerate(rows):
        cum = np.cumsum(row, dtype=row.dtype)
        total = cum[-1]
        if total > 0:
            cum = cum / total
        cum[-1] = 1
        out[i] = np.searchsorted(cum.astype(np.float64), u[i], side="left")
    return out
