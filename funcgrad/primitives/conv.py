"""Convolution: ``conv_general_dilated``, as ``jax.lax.conv_general_dilated``.

Params are normalised (``funcgrad.lax`` resolves padding strings and dimension-number
strings): explicit ``(lo, hi)`` padding pairs and a :class:`ConvDimensionNumbers` of
index tuples. The JVP is bilinear. The VJP is two convolutions: for ``lhs``, the
cotangent convolved with the spatially reversed kernel (in/out features swapped,
strides and lhs dilation exchanged, padding chosen so the result has ``lhs``'s size);
for ``rhs``, ``lhs`` convolved with the cotangent (batch and feature roles swapped,
feature groups becoming batch groups and vice versa). Batching folds a batch axis
into the lhs batch dimension, the rhs output features (group-major), or both with
one more feature group, so a batched convolution is still one convolution.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec

from funcgrad.core import dtypes, sharding_types
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.conv_host import Padding, conv_host
from funcgrad.primitives.conv_host import dilate as _dilate
from funcgrad.primitives.rules import rand

FAMILY = "linalg"


class ConvDimensionNumbers(NamedTuple):
    """Where each role sits: ``lhs_spec``/``out_spec`` are (batch, feature, *spatial),
    ``rhs_spec`` is (out feature, in feature, *spatial), as in ``jax.lax``."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


# --------------------------------------------------------------------------- helpers


class _desc:
    """The operands and params of a convolution, formatted only when an error shows them
    (abstract evaluation runs for every traced convolution)."""

    __slots__ = ("lhs", "params", "rhs")

    def __init__(self, lhs: Aval, rhs: Aval, params: dict) -> None:
        self.lhs, self.rhs, self.params = lhs, rhs, params

    def __str__(self) -> str:
        return _describe(self.lhs, self.rhs, self.params)


def _describe(lhs: Aval, rhs: Aval, params: dict) -> str:
    dn = params["dimension_numbers"]
    return (
        f"lhs {lhs}, rhs {rhs} (window_strides={params['window_strides']}, "
        f"padding={params['padding']}, lhs_dilation={params['lhs_dilation']}, "
        f"rhs_dilation={params['rhs_dilation']}, dimension_numbers=({dn[0]}, {dn[1]}, {dn[2]}), "
        f"feature_group_count={params['feature_group_count']}, "
        f"batch_group_count={params['batch_group_count']})"
    )


def _join_dtype(lhs: Aval, rhs: Aval, desc: _desc | str) -> tuple[np.dtype, bool]:
    return rules.join_dtypes("conv_general_dilated", lhs, rhs, described=desc.__str__)


def _check_preferred(dtype: np.dtype, pet: np.dtype, desc: str) -> None:
    """JAX's rule: same category (int → float allowed), same signedness, not narrower;
    booleans count as integers of either signedness."""
    k, kp = dtypes.kind(dtype), dtypes.kind(pet)
    if k == 0 and kp <= 2:
        return
    ok = k == kp or (k == 1 and kp == 2)
    if ok and k == 1 and kp == 1:
        ok = (dtype.kind == "i") == (pet.kind == "i")
    if not ok or pet.itemsize < dtype.itemsize:
        raise TypeError(
            f"conv_general_dilated: preferred_element_type={pet} is incompatible with "
            f"operands of dtype {dtype} (it must be of the same kind — or floating for "
            f"integer operands — with the same signedness and not narrower), got {desc}"
        )


def _as_dtype(v: Any, dtype: np.dtype) -> Any:
    return v if v.dtype == dtype else lax.convert_element_type(v, dtype)


def _out_spatial(
    lhs_sp: Sequence[int], rhs_sp: Sequence[int], params: dict, desc: str
) -> tuple[int, ...]:
    out = []
    for i, (n, k, s, (lo, hi), ld, rd) in enumerate(_per_dim(params, lhs_sp, rhs_sp)):
        padded = _dilate(n, ld) + lo + hi
        window = _dilate(k, rd)
        if padded < 0:
            raise ValueError(
                f"conv_general_dilated: negative padding {(lo, hi)} removes more than the "
                f"{_dilate(n, ld)} elements of spatial dimension {i}, got {desc}"
            )
        if window > padded:
            raise ValueError(
                f"conv_general_dilated: non-positive output size in spatial dimension {i}: "
                f"the (dilated) window of size {window} is larger than the padded input of "
                f"size {padded}, got {desc}"
            )
        out.append((padded - window) // s + 1)
    return tuple(out)


# --------------------------------------------------------------------------- primitive

conv_general_dilated_p = Primitive("conv_general_dilated", family=FAMILY)


@conv_general_dilated_p.def_abstract_eval
def _conv_abstract_eval(lhs: Aval, rhs: Aval, **params: Any) -> Aval:
    desc = _desc(lhs, rhs, params)
    lspec, rspec, ospec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"conv_general_dilated: lhs and rhs must have the same rank, got {desc}")
    if lhs.ndim < 2:
        raise TypeError(
            f"conv_general_dilated: operands need a batch and a feature dimension "
            f"(rank >= 2), got {desc}"
        )
    nd = lhs.ndim
    for name, spec in (("lhs_spec", lspec), ("rhs_spec", rspec), ("out_spec", ospec)):
        if sorted(spec) != list(range(nd)):
            raise ValueError(
                f"conv_general_dilated: dimension_numbers.{name}={spec} is not a permutation "
                f"of the {nd} operand dimensions, got {desc}"
            )
    nsp = nd - 2
    for name in ("window_strides", "padding", "lhs_dilation", "rhs_dilation"):
        if len(params[name]) != nsp:
            raise ValueError(
                f"conv_general_dilated: {name} needs one entry per spatial dimension "
                f"({nsp}), got {desc}"
            )
    for name in ("window_strides", "lhs_dilation", "rhs_dilation"):
        if any(v < 1 for v in params[name]):
            raise ValueError(f"conv_general_dilated: {name} must be positive, got {desc}")
    if fgc < 1 or bgc < 1:
        raise ValueError(
            f"conv_general_dilated: feature_group_count and batch_group_count must be "
            f"positive, got {desc}"
        )
    if fgc > 1 and bgc > 1:
        raise ValueError(
            f"conv_general_dilated: at most one of feature_group_count and "
            f"batch_group_count may exceed 1, got {desc}"
        )
    batch, lhs_feat = lhs.shape[lspec[0]], lhs.shape[lspec[1]]
    rhs_out, rhs_in = rhs.shape[rspec[0]], rhs.shape[rspec[1]]
    if lhs_feat % fgc:
        raise ValueError(
            f"conv_general_dilated: feature_group_count={fgc} does not divide the lhs "
            f"feature count {lhs_feat}, got {desc}"
        )
    if lhs_feat // fgc != rhs_in:
        raise ValueError(
            f"conv_general_dilated: in-feature mismatch: lhs features {lhs_feat} / "
            f"feature_group_count {fgc} = {lhs_feat // fgc} but rhs has {rhs_in} input "
            f"features, got {desc}"
        )
    if rhs_out % fgc:
        raise ValueError(
            f"conv_general_dilated: feature_group_count={fgc} does not divide the rhs "
            f"output feature count {rhs_out}, got {desc}"
        )
    if batch % bgc:
        raise ValueError(
            f"conv_general_dilated: batch_group_count={bgc} does not divide the lhs batch "
            f"size {batch}, got {desc}"
        )
    if rhs_out % bgc:
        raise ValueError(
            f"conv_general_dilated: batch_group_count={bgc} does not divide the rhs output "
            f"feature count {rhs_out}, got {desc}"
        )
    dtype, weak = _join_dtype(lhs, rhs, desc)
    pet = params["preferred_element_type"]
    if pet is not None:
        _check_preferred(dtype, pet, desc)
        dtype, weak = pet, False
    spatial = _out_spatial(
        [lhs.shape[d] for d in lspec[2:]], [rhs.shape[d] for d in rspec[2:]], params, desc
    )
    shape = [0] * nd
    for d, size in zip(ospec, (batch // bgc, rhs_out, *spatial)):
        shape[d] = size
    return Aval(tuple(shape), dtype, weak)


def _conv_lower(lhs: Any, rhs: Any, **params: Any) -> Any:
    dtype, _ = _join_dtype(to_aval(lhs), to_aval(rhs), "")
    return lax.conv_general_dilated(
        _as_dtype(lhs, dtype),
        _as_dtype(rhs, dtype),
        window_strides=params["window_strides"],
        padding=params["padding"],
        lhs_dilation=params["lhs_dilation"],
        rhs_dilation=params["rhs_dilation"],
        dimension_numbers=lax.ConvDimensionNumbers(*params["dimension_numbers"]),
        feature_group_count=params["feature_group_count"],
        batch_group_count=params["batch_group_count"],
        preferred_element_type=params["preferred_element_type"],
        out_sharding=params.get("out_sharding"),
    )


conv_general_dilated_p.lower = _conv_lower
conv_general_dilated_p.sharding_rule = sharding_types.conv_rule


@conv_general_dilated_p.def_jvp
def _conv_jvp(primals: list, tangents: list, **params: Any) -> tuple:
    (lhs, rhs), (t_lhs, t_rhs) = primals, tangents
    out = conv_general_dilated(lhs, rhs, **params)
    t: Any = Zero(to_aval(out).strip_weak())
    if not is_zero(t_lhs):
        t = rules.add_tangents(t, conv_general_dilated(t_lhs, rhs, **params))
    if not is_zero(t_rhs):
        t = rules.add_tangents(t, conv_general_dilated(lhs, t_rhs, **params))
    return out, t


# --------------------------------------------------------------------------- reshapes


def _merge_into(x: Any, src: int, dst: int) -> Any:
    """Fold axis ``src`` into axis ``dst`` (numbered with ``src`` removed), ``src`` major."""
    shape = to_aval(x).shape
    x = rules.moveaxis(x, src, dst)
    rest = [s for i, s in enumerate(shape) if i != src]
    rest[dst] *= shape[src]
    return sh.reshape(x, rest)


def _split_out(x: Any, axis: int, major: int) -> Any:
    """Split axis ``axis`` into ``(major, size // major)``."""
    shape = list(to_aval(x).shape)
    shape[axis : axis + 1] = [major, shape[axis] // major]
    return sh.reshape(x, shape)


def _swap(spec: tuple[int, ...]) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])


# --------------------------------------------------------------------------- VJP


def _per_dim(params: dict, *sizes: Sequence[int]) -> zip:
    """Per spatial dimension: the given sizes, then stride, padding, lhs and rhs dilation."""
    keys = ("window_strides", "padding", "lhs_dilation", "rhs_dilation")
    return zip(*sizes, *(params[k] for k in keys))


def _lhs_transpose_padding(
    lhs_sp: Sequence[int], rhs_sp: Sequence[int], out_sp: Sequence[int], params: dict
) -> Padding:
    pads = []
    for n, k, o, s, (lo, _), ld, rd in _per_dim(params, lhs_sp, rhs_sp, out_sp):
        kd = _dilate(k, rd)
        before = kd - lo - 1
        after = _dilate(n, ld) + kd - 1 - _dilate(o, s) - before
        pads.append((before, after))
    return tuple(pads)


def _rhs_transpose_padding(
    lhs_sp: Sequence[int], rhs_sp: Sequence[int], out_sp: Sequence[int], params: dict
) -> Padding:
    return tuple(
        (lo, _dilate(o, s) - _dilate(n, ld) + _dilate(k, rd) - lo - 1)
        for n, k, o, s, (lo, _), ld, rd in _per_dim(params, lhs_sp, rhs_sp, out_sp)
    )


def _cast(x: Any, dtype: np.dtype) -> Any:
    return x if to_aval(x).dtype == dtype else ew.convert_element_type(x, dtype)


def _typed_as_primal(primal: Aval, ct: Any, other: Any, regrouped: bool = False) -> Any:
    """The ``out_sharding`` of a transposed convolution: its primal's sharding (replicated
    where the primal is untyped), as JAX's transposes give it, when a mesh types the
    operands (a contraction over a split batch has no type JAX can infer); ``None``
    without one, or where the result is regrouped afterwards (``regrouped``)."""
    mesh = sharding_types.mesh_of([primal, to_aval(ct), to_aval(other)])
    if mesh is None or regrouped:
        return None
    if primal.sharding is not None:
        return primal.sharding
    return NamedSharding(mesh, PartitionSpec(*([None] * primal.ndim)))


def _transpose_lhs(ct: Any, lhs: Aval, rhs: Any, params: dict) -> Any:
    """Cotangent of ``lhs``: ``ct`` convolved with the reversed, in/out-swapped kernel."""
    lspec, rspec, ospec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    rhs_shape = to_aval(rhs).shape
    ct_shape = to_aval(ct).shape
    groups = max(fgc, bgc)
    if groups > 1:
        # move the group factor of the kernel's out features onto its in features, so that
        # after swapping O and I the groups sit where a feature-grouped conv expects them
        rhs = _merge_into(_split_out(rhs, rspec[0], groups), rspec[0], rspec[1])
    pad = _lhs_transpose_padding(
        [lhs.shape[d] for d in lspec[2:]],
        [rhs_shape[d] for d in rspec[2:]],
        [ct_shape[d] for d in ospec[2:]],
        params,
    )
    kernel = _cast(sh.rev(rhs, rspec[2:]), to_aval(ct).dtype)
    g = conv_general_dilated(
        ct,
        kernel,
        window_strides=params["lhs_dilation"],
        padding=pad,
        lhs_dilation=params["window_strides"],
        rhs_dilation=params["rhs_dilation"],
        dimension_numbers=ConvDimensionNumbers(ospec, _swap(rspec), lspec),
        feature_group_count=groups,
        batch_group_count=1,
        preferred_element_type=params["preferred_element_type"],
        out_sharding=_typed_as_primal(lhs, ct, rhs, bgc > 1),
    )
    if bgc > 1:
        # the batch groups came out as feature groups: move them back onto the batch
        g = _merge_into(_split_out(g, lspec[1], bgc), lspec[1], lspec[0])
    return _cast(g, lhs.dtype)


def _transpose_rhs(ct: Any, lhs: Any, rhs: Aval, params: dict) -> Any:
    """Cotangent of ``rhs``: ``lhs`` convolved with ``ct`` (batch and feature roles swapped)."""
    lspec, rspec, ospec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    lhs_shape = to_aval(lhs).shape
    ct_shape = to_aval(ct).shape
    pad = _rhs_transpose_padding(
        [lhs_shape[d] for d in lspec[2:]],
        [rhs.shape[d] for d in rspec[2:]],
        [ct_shape[d] for d in ospec[2:]],
        params,
    )
    g = conv_general_dilated(
        _cast(lhs, to_aval(ct).dtype),
        ct,
        window_strides=params["rhs_dilation"],
        padding=pad,
        lhs_dilation=params["lhs_dilation"],
        rhs_dilation=params["window_strides"],
        dimension_numbers=ConvDimensionNumbers(_swap(lspec), _swap(ospec), _swap(rspec)),
        feature_group_count=bgc,
        batch_group_count=fgc,
        preferred_element_type=params["preferred_element_type"],
        out_sharding=_typed_as_primal(rhs, ct, lhs),
    )
    return _cast(g, rhs.dtype)


@conv_general_dilated_p.def_vjp
def _conv_vjp(ct: Any, lhs: Any, rhs: Any, *, out: Any, **params: Any) -> tuple:
    la, ra = to_aval(lhs).strip_weak(), to_aval(rhs).strip_weak()
    empty = to_aval(ct).size == 0
    g_lhs: Any = None
    g_rhs: Any = None
    if dtypes.is_inexact(la.dtype):
        # an empty operand or cotangent makes degenerate transposed convolutions
        g_lhs = Zero(la) if empty or la.size == 0 else _transpose_lhs(ct, la, rhs, params)
    if dtypes.is_inexact(ra.dtype):
        g_rhs = Zero(ra) if empty or ra.size == 0 else _transpose_rhs(ct, lhs, ra, params)
    return g_lhs, g_rhs


# --------------------------------------------------------------------------- batching


@conv_general_dilated_p.def_batch
def _conv_batch(args: list, dims: list, **params: Any) -> tuple:
    (lhs, rhs), (ld, rd) = args, dims
    lspec, rspec, ospec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if ld is None and rd is None:
        return conv_general_dilated(lhs, rhs, **params), None
    size = rules.batch_size(args, dims)
    if size == 0:  # the folds below divide by the batch size
        return rules.empty_batch(conv_general_dilated_p, args, dims, params)
    p = dict(params)
    placed = p.pop("out_sharding", None)

    def at(axis: int) -> dict:
        # (JAX's: the result's batch or feature dimension, where the batch is folded,
        # split as the vmap's mapped dimensions are)
        if placed is None:
            return p
        entry = sharding_types.vmap_entry(placed.mesh)
        parts = list(placed.spec.partitions) + [None] * (len(ospec) - len(placed.spec))
        if entry is not None:
            if parts[axis] is not None:
                raise NotImplementedError(
                    "conv_general_dilated: vmap of an out_sharding split along the "
                    "dimension the batch is folded into"
                )
            parts[axis] = entry
        spec = placed.spec.update(partitions=tuple(parts))
        return {**p, "out_sharding": NamedSharding(placed.mesh, spec)}

    if ld is not None and rd is not None:
        if bgc > 1:
            # each example's batch groups become groups of their own
            lhs = _merge_into(lhs, ld, lspec[0])
            p["batch_group_count"] = bgc * size
        else:
            # each example's features become feature groups of their own
            lhs = _merge_into(lhs, ld, lspec[1])
            p["feature_group_count"] = fgc * size
        rhs = _merge_into(rhs, rd, rspec[0])
        out = conv_general_dilated(lhs, rhs, **at(ospec[1]))
        return _split_out(out, ospec[1], size), ospec[1]
    if ld is not None:
        if bgc == 1:
            lhs = _merge_into(lhs, ld, lspec[0])
        else:
            # keep batch groups outermost: (groups, size * per-group batch)
            b = lspec[0]
            lhs = _split_out(lhs, b + (ld <= b), bgc)
            lhs = _merge_into(lhs, ld + (b < ld), b + 1)
            lhs = _merge_into(lhs, b, b)
        out = conv_general_dilated(lhs, rhs, **at(ospec[0]))
        return _split_out(out, ospec[0], size), ospec[0]
    groups = max(fgc, bgc)
    o = rspec[0]
    if groups == 1:
        rhs = _merge_into(rhs, rd, o)
        out = conv_general_dilated(lhs, rhs, **at(ospec[1]))
        return _split_out(out, ospec[1], size), ospec[1]
    # output features are group-major: (groups, size * per-group features)
    rhs = _split_out(rhs, o + (rd <= o), groups)
    rhs = _merge_into(rhs, rd + (o < rd), o + 1)
    rhs = _merge_into(rhs, o, o)
    out = conv_general_dilated(lhs, rhs, **at(ospec[1]))
    f = ospec[1]
    out = _split_out(_split_out(out, f, groups), f + 1, size)  # (groups, size, per-group)
    return _merge_into(out, f, f + 1), f


# --------------------------------------------------------------------------- host rule

conv_general_dilated_p.host = conv_host
conv_general_dilated_p.host_join = True


# --------------------------------------------------------------------------- examples


@conv_general_dilated_p.def_examples
def _conv_examples(rng: np.random.Generator) -> list[Example]:
    def ex(xs: tuple, ws: tuple, dn: tuple | None = None, **kw: Any) -> Example:
        nsp = len(xs) - 2
        if dn is None:
            dn = (tuple(range(nsp + 2)),) * 3
        params = {
            "window_strides": (1,) * nsp,
            "padding": ((0, 0),) * nsp,
            "lhs_dilation": (1,) * nsp,
            "rhs_dilation": (1,) * nsp,
            "dimension_numbers": ConvDimensionNumbers(*dn),
            "feature_group_count": 1,
            "batch_group_count": 1,
            "preferred_element_type": None,
        }
        params.update(kw)
        return Example([rand(rng, xs), rand(rng, ws)], params)

    nhwc = ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))  # ('NHWC', 'HWIO', 'NHWC')
    return [
        ex((2, 3, 7), (4, 3, 3)),  # 1-D
        ex((2, 2, 8), (3, 2, 2), window_strides=(3,), padding=((1, 2),)),  # stride > kernel
        ex((1, 2, 6), (2, 2, 3), lhs_dilation=(2,), rhs_dilation=(2,), padding=((2, -1),)),
        ex((2, 2, 5, 6), (3, 2, 3, 2), window_strides=(2, 1), padding=((1, 0), (0, 2))),
        ex((1, 2, 4, 5), (2, 2, 2, 2), lhs_dilation=(2, 1), rhs_dilation=(1, 2)),
        ex((2, 4, 5, 4), (6, 2, 2, 3), feature_group_count=2, padding=((1, 1), (0, 1))),
        ex((4, 3, 5, 4), (4, 3, 2, 2), batch_group_count=2, window_strides=(2, 1)),
        ex((2, 5, 6, 3), (2, 3, 3, 4), nhwc, window_strides=(1, 2), rhs_dilation=(2, 1)),
        # permuted layouts and 3 feature groups with strides and lhs dilation
        ex(
            (5, 2, 4, 6),
            (3, 2, 6, 2),
            ((1, 3, 0, 2), (2, 1, 3, 0), (3, 0, 2, 1)),
            feature_group_count=3,
            window_strides=(2, 1),
            lhs_dilation=(1, 2),
            padding=((0, 1), (1, 0)),
        ),
        # the host rule's ways (funcgrad.core.host): per window offset on whole rows
        # (fewer output than input features), without and with batch groups, and in 1-D
        ex((2, 4, 6, 10), (2, 4, 2, 3), padding=((1, 1), (2, 2))),
        ex((4, 6, 5, 12), (4, 6, 2, 3), batch_group_count=2),
        ex((2, 4, 7), (2, 4, 3), padding=((1, 1),)),
        # im2col on whole rows with feature groups; windows wider than the output
        ex((2, 4, 5, 11), (6, 2, 3, 2), feature_group_count=2, rhs_dilation=(1, 2)),
        ex((4, 2, 8, 8), (4, 2, 6, 6), batch_group_count=2),
        # a dilated lhs at unit strides, by phases: a transposed convolution (kernel 4,
        # stride 2, padding 1), a dilation past the kernel (phases reading holes only),
        # cropping, feature groups, and a transposed convolution's kernel gradient
        # (batch groups, a window wider than the output)
        ex((2, 3, 4, 5), (2, 3, 4, 4), lhs_dilation=(2, 2), padding=((2, 2), (2, 2))),
        ex((1, 2, 5), (3, 2, 2), lhs_dilation=(3,), padding=((1, 0),)),
        ex((2, 2, 6, 4), (2, 2, 3, 2), lhs_dilation=(2, 3), padding=((-1, 2), (0, -2))),
        ex((2, 4, 3, 3), (6, 2, 3, 3), feature_group_count=2, lhs_dilation=(2, 1)),
        ex(
            (2, 3, 4, 4),
            (2, 4, 8, 8),
            ((1, 0, 2, 3), (1, 0, 2, 3), (1, 0, 2, 3)),
            lhs_dilation=(2, 2),
            padding=((2, 2), (2, 2)),
        ),
        ex((4, 2, 3, 3), (4, 2, 2, 2), batch_group_count=2, lhs_dilation=(2, 2)),
        # a window over most of the lhs, fewer output features than images: placed kernels
        ex((8, 4, 16, 16), (2, 4, 14, 13), padding=((1, 0), (0, 1))),
    ]


# --------------------------------------------------------------------------- wrapper


def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    *,
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int],
    rhs_dilation: Sequence[int],
    dimension_numbers: Sequence[Sequence[int]],
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Bind ``conv_general_dilated`` with explicit (already resolved) parameters; the
    user-facing wrapper (padding and layout strings) is :func:`funcgrad.lax.conv_general_dilated`.
    ``out_sharding`` types the result over explicit mesh axes (a param only when given)."""

    def ints(xs: Sequence[int]) -> tuple[int, ...]:
        return tuple(operator.index(x) for x in xs)

    lspec, rspec, ospec = dimension_numbers
    pet = None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)
    placed = {} if out_sharding is None else {"out_sharding": sharding_types.named(out_sharding)}
    return bind(
        conv_general_dilated_p,
        lhs,
        rhs,
        window_strides=ints(window_strides),
        padding=tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding),
        lhs_dilation=ints(lhs_dilation),
        rhs_dilation=ints(rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(ints(lspec), ints(rspec), ints(ospec)),
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        preferred_element_type=pet,
        **placed,
    )
