"""``select_n``: pick elementwise among cases by an integer or boolean selector."""

from __future__ import annotations

from typing import Any

import numpy as np
from jax import lax

from funcgrad.core import dtypes
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import rules
from funcgrad.primitives.elementwise.base import _cast, _fmt, _join_avals
from funcgrad.primitives.elementwise.convert import unbroadcast
from funcgrad.primitives.rules import rand
from funcgrad.primitives.sharding import sharding_constraint

FAMILY = "elementwise"


# --------------------------------------------------------------------------- select_n

select_n_p = Primitive("select_n", family=FAMILY)


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which: Aval, *cases: Aval) -> Aval:
    if not cases:
        raise TypeError("select_n requires at least one case")
    if which.dtype != np.dtype("bool") and dtypes.kind(which.dtype) != 1:
        raise TypeError(f"select_n predicate must be bool or int32, got {which}")
    if which.dtype == np.dtype("bool") and len(cases) > 2:
        raise TypeError("select_n with a bool predicate takes at most two cases")
    out = _join_avals("select_n", cases, "any")
    if which.shape not in ((), out.shape):
        raise TypeError(
            f"select_n predicate shape {which} must be 0-d or match the cases {_fmt(cases)}"
        )
    if any(c.shape != out.shape for c in cases):
        cs = [c for c in cases if c.shape != out.shape]
        raise TypeError(f"select_n cases must have equal shapes, got {_fmt(cases)} ({cs})")
    return out


def _select_n_lower(which: Any, *cases: Any) -> Any:
    out = _join_avals("select_n", tuple(to_aval(c) for c in cases), "any")
    return lax.select_n(which, *_cast(cases, out.dtype, out.weak_type))


select_n_p.lower = _select_n_lower


#: unsigned integer types by item size: a two-way select done on the cases' bits
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: below this many elements ``np.where``'s one call is the cheaper
_BITS_MIN_SIZE = 256


def _where(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``np.where(pred, on_true, on_false)`` for a bool ``pred``, computed on the bits as
    ``f ^ ((f ^ t) & -pred)`` where the cases share a dtype of 1-8 bytes: three integer
    passes NumPy vectorizes, where ``np.where``'s loop is not (a 64x256 float32 select:
    ~13 against ~30 us). Bit for bit the same values (NaN payloads and signed zeros
    included)."""
    t, f, pred = np.asarray(on_true), np.asarray(on_false), np.asarray(pred)
    u = _BITS.get(t.dtype.itemsize)
    if (
        u is None
        or t.dtype != f.dtype
        or t.dtype.kind not in "biufcV"
        or t.shape != f.shape  # (equal shapes: the select's cases; else NumPy's rule)
        or t.size < _BITS_MIN_SIZE
        or pred.shape not in ((), t.shape)
    ):
        return np.where(pred, t, f)
    mask = pred.astype(u)
    np.negative(mask, out=mask)  # (1 -> all ones, 0 -> 0)
    fb = f.view(u)
    out = np.bitwise_xor(fb, t.view(u))
    np.bitwise_and(out, mask, out=out)
    np.bitwise_xor(out, fb, out=out)
    return out.view(t.dtype)


def _select_n_host(which: Any, *cases: Any) -> Any:
    """(host tier) ``cases[which]`` elementwise; the plan casts the cases to one dtype."""
    if len(cases) == 1:
        return cases[0]
    which = np.asarray(which)  # (a Python bool or int predicate, e.g. a weak literal)
    if which.dtype == np.bool_:
        return _where(which, cases[1], cases[0])
    ids = [id(c) for c in cases]
    odd = [i for i, c in enumerate(ids) if ids.count(c) == 1]
    if len(odd) == 1 and len(set(ids)) == 2:  # one case among copies of another (the VJP's
        i = odd[0]  # cotangent among zeros): one comparison, 4x faster than np.choose
        return _where(which == i, cases[i], cases[1 - min(i, 1)])
    if len(cases) > _CHOOSE_MAX:  # (np.choose's limit on arrays)
        shape = np.broadcast_shapes(which.shape, *(np.shape(c) for c in cases))
        out = np.array(np.broadcast_to(cases[0], shape))
        for i in range(1, len(cases)):
            np.copyto(out, cases[i], where=which == i)
        return out
    return np.choose(which, np.broadcast_arrays(*cases))


#: the most cases given to ``np.choose``: NumPy's ``NPY_MAXARGS`` arrays, the selector
#: among them (64 in NumPy 2, 32 in NumPy 1, which pyproject still allows)
_CHOOSE_MAX = 31


select_n_p.host = _select_n_host


def _select_zero_host(keep: int) -> Any:
    """The two-way select of a value and zeros (``relu``, ``threshold_backward``): the
    value's bits kept where the predicate is ``keep``, else cleared; two integer passes
    over the mask and one over the value, where the general select wrote the zeros out
    and took five (a 64x256 float32 select: ~4 against ~15 us)."""

    def rule(which: Any, x: Any) -> Any:
        which, x = np.asarray(which), np.asarray(x)
        u = _BITS.get(x.dtype.itemsize)
        if (
            u is None
            or which.dtype != np.bool_
            or which.shape != x.shape
            or x.dtype.kind not in "biufcV"
            or x.size < _BITS_MIN_SIZE
        ):
            zeros = np.zeros(x.shape, x.dtype)
            return np.where(which, x, zeros) if keep else np.where(which, zeros, x)
        mask = which.astype(u)
        # (keep where true: 1 -> all ones; keep where false: 1 -> 0, 0 -> all ones)
        np.negative(mask, out=mask) if keep else np.subtract(mask, 1, out=mask)
        np.bitwise_and(mask, x.view(u), out=mask)
        return mask.view(x.dtype)

    return rule


def _select_n_host_splat(uniform: list, **params: Any) -> Any:
    """(host tier) ``select_n(which, x, zeros)`` or ``select_n(which, zeros, x)`` with a
    boolean ``which`` and cases of one dtype: :func:`_select_zero_host`."""
    if len(uniform) != 3 or uniform[0] is not None:
        return None
    z = [i for i in (1, 2) if uniform[i] is not None]
    if len(z) != 1:
        return None
    u = uniform[z[0]]
    if u.dtype.itemsize not in _BITS or u.reshape(1).view(_BITS[u.dtype.itemsize])[0] != 0:
        return None  # (only zero bits: +0.0, 0, False)
    return _select_zero_host(keep=1 if z[0] == 1 else 0)


select_n_p.host_splat = _select_n_host_splat


@select_n_p.def_batch
def _select_n_batch(args: list, dims: list) -> tuple:
    which, *cases = args
    wd, *cds = dims
    size = rules.batch_size(args, dims)
    case_aval = next(to_aval(c) for c in cases)
    if wd is None and to_aval(which).ndim == 0:
        # scalar predicate: batch the cases only
        bd = next(d for d in cds if d is not None)
        cs = [
            rules.moveaxis(c, d, bd) if d is not None else _bcast_batch(c, size, bd)
            for c, d in zip(cases, cds)
        ]
        return select_n(which, *cs), bd
    # move everything to the front, broadcasting the predicate and unbatched cases
    shape = list(to_aval(cases[0]).shape)
    if cds[0] is not None:
        shape.pop(cds[0])
    full_shape = (size, *shape)
    if wd is None:
        which = rules.broadcast(
            which, full_shape, tuple(range(1, len(full_shape))) if to_aval(which).ndim else ()
        )
    else:
        which = rules.moveaxis(which, wd, 0)
        if to_aval(which).ndim == 1 and len(full_shape) > 1:
            which = rules.broadcast(which, full_shape, (0,))
    cs = [rules.bdim_to_front(c, d, size) for c, d in zip(cases, cds)]
    del case_aval
    return select_n(which, *cs), 0


def _bcast_batch(x: Any, size: int, bd: int) -> Any:
    return rules.moveaxis(rules.bdim_to_front(x, None, size), 0, bd)


@select_n_p.def_jvp
def _select_n_jvp(primals: list, tangents: list) -> tuple:
    which, *cases = primals
    out = select_n(which, *cases)
    tcases = tangents[1:]
    if all(is_zero(t) for t in tcases):
        return out, Zero(to_aval(out).strip_weak())
    aval = to_aval(out).strip_weak()
    ts = [rules.instantiate(t, aval) for t in tcases]
    return out, select_n(which, *ts)


@select_n_p.def_vjp
def _select_n_vjp(ct: Any, which: Any, *cases: Any, out: Any) -> tuple:
    aval = to_aval(out).strip_weak()
    zero = rules.zeros_like_aval(aval)
    held = to_aval(ct).sharding
    if held is not None and (held.spec.unreduced or held.spec.reduced):
        # (a partial sum's zeros typed alike: JAX's select takes cases of one type)
        zero = sharding_constraint(zero, held, "reshard")
    n = len(cases)
    res: list[Any] = [None]
    for i in range(n):
        branches = [zero] * n
        branches[i] = ct
        res.append(unbroadcast(select_n(which, *branches), to_aval(cases[i])))
    return tuple(res)


@select_n_p.def_examples
def _select_n_examples(rng: np.random.Generator) -> list[Example]:
    return [
        Example([rand(rng, (3,), "bool"), rand(rng, (3,)), rand(rng, (3,))], diff_argnums=(1, 2)),
        Example(
            [rand(rng, (2, 3), "bool"), rand(rng, (2, 3)), rand(rng, (2, 3))], diff_argnums=(1, 2)
        ),
        Example(
            [np.asarray(rng.integers(0, 3, (2, 3)), np.int32)]
            + [rand(rng, (2, 3)) for _ in range(3)],
            diff_argnums=(1, 2, 3),
        ),
        # one case among copies of one array (the host rule's comparison path; the VJP's
        # cotangent among zeros)
        Example(
            [np.asarray(rng.integers(0, 4, (2, 3)), np.int32), z := rand(rng, (2, 3))]
            + [rand(rng, (2, 3)), z, z],
            diff_argnums=(1, 2, 3, 4),
        ),
    ]


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise (``which`` bool: False picks ``cases[0]``)."""
    return bind(select_n_p, which, *cases)
