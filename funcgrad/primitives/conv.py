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

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from jax import lax
from numpy.lib.stride_tricks import as_strided

from funcgrad.core import dtypes, sharding_types
from funcgrad.core.interp import bind, to_aval
from funcgrad.core.ir import Aval
from funcgrad.core.primitive import Example, Primitive
from funcgrad.core.zeros import Zero, is_zero
from funcgrad.primitives import elementwise as ew
from funcgrad.primitives import rules
from funcgrad.primitives import shape as sh
from funcgrad.primitives.linalg import host_compute_dtype
from funcgrad.primitives.rules import rand
from funcgrad.primitives.windowed import host_pad

FAMILY = "linalg"


class ConvDimensionNumbers(NamedTuple):
    """Where each role sits: ``lhs_spec``/``out_spec`` are (batch, feature, *spatial),
    ``rhs_spec`` is (out feature, in feature, *spatial), as in ``jax.lax``."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


Padding = tuple[tuple[int, int], ...]


# --------------------------------------------------------------------------- helpers


def _dilate(n: int, d: int) -> int:
    """Size of ``n`` elements with ``d - 1`` holes between neighbours."""
    return 0 if n == 0 else (n - 1) * d + 1


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
        out = conv_general_dilated(lhs, rhs, **p)
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
        out = conv_general_dilated(lhs, rhs, **p)
        return _split_out(out, ospec[0], size), ospec[0]
    groups = max(fgc, bgc)
    o = rspec[0]
    if groups == 1:
        rhs = _merge_into(rhs, rd, o)
        out = conv_general_dilated(lhs, rhs, **p)
        return _split_out(out, ospec[1], size), ospec[1]
    # output features are group-major: (groups, size * per-group features)
    rhs = _split_out(rhs, o + (rd <= o), groups)
    rhs = _merge_into(rhs, rd + (o < rd), o + 1)
    rhs = _merge_into(rhs, o, o)
    out = conv_general_dilated(lhs, rhs, **p)
    f = ospec[1]
    out = _split_out(_split_out(out, f, groups), f + 1, size)  # (groups, size, per-group)
    return _merge_into(out, f, f + 1), f


# --------------------------------------------------------------------------- host rule


def _conv_host(
    lhs: np.ndarray,
    rhs: np.ndarray,
    *,
    window_strides: tuple[int, ...],
    padding: Padding,
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    preferred_element_type: Any,
) -> np.ndarray:
    """``conv_general_dilated`` on host arrays: BLAS GEMMs on strided views of the lhs.

    The lhs in ``(N, C, *spatial)`` order is dilated and padded (one copy, skipped when
    there is nothing to do); its windows are a strided view ``(N, C, *out, *window)``
    (the window strides and the rhs dilation are strides of the view). Three ways to
    contract it with the kernel, chosen by shape:

    * im2col, ``(C * K, N * out)``: the view copied once into a patch matrix per group
      and multiplied with the ``(O, C * K)`` kernel matrix; the copy runs along the
      output's last spatial dimension or, when that has stride 1 and the window adds
      little to a row ("whole rows"), along whole padded rows: the output is computed
      for every start in a row and the columns past the last valid start dropped;
    * im2col, ``(N * out, C * K)``, when windows are wider than the output (the kernel
      gradient convolutions): the copy runs along the window's last dimension;
    * direct, with fewer output than input features per group (input gradients), unit
      strides and a window small against the padded lhs: no patch matrix; the padded lhs
      is copied once channel-major, ``(C, N * spatial)``, and for each window offset a
      shifted slice of it (outputs computed at every position, those past the last valid
      start dropped) is multiplied with the offset's ``(O, C)`` kernel slice by one GEMM,
      accumulated.
    """
    lspec, rspec, ospec = dimension_numbers
    bgc, fgc = batch_group_count, feature_group_count
    dt = host_compute_dtype(np.result_type(lhs, rhs), preferred_element_type)
    x = np.asarray(lhs).transpose(lspec).astype(dt, copy=False)  # (N, C, *spatial)
    w = np.asarray(rhs).transpose(rspec).astype(dt, copy=False)  # (O, I, *window)
    if any(d > 1 for d in lhs_dilation) and all(
        s == 1 and r == 1 for s, r in zip(window_strides, rhs_dilation)
    ):
        return _conv_host_layout(_conv_host_phases(x, w, padding, lhs_dilation, bgc, fgc), ospec)
    tmp = _conv_host_core(x, w, window_strides, padding, lhs_dilation, rhs_dilation, bgc, fgc)
    return _conv_host_layout(tmp, ospec)


def _conv_host_core(
    x: np.ndarray,
    w: np.ndarray,
    window_strides: Sequence[int],
    padding: Padding,
    lhs_dilation: Sequence[int],
    rhs_dilation: Sequence[int],
    bgc: int,
    fgc: int,
) -> np.ndarray:
    """:func:`_conv_host` on ``x`` ``(N, C, *spatial)`` and ``w`` ``(O, I, *window)`` of
    one dtype; ``(O, N, *out_spatial)``."""
    dt = x.dtype
    nsp = x.ndim - 2
    groups = fgc * bgc  # (at most one of them exceeds 1)
    n, i, o, ksz = x.shape[0] // bgc, w.shape[1], w.shape[0], w.shape[2:]
    og = o // groups
    padded = [
        _dilate(size, d) + lo + hi for size, (lo, hi), d in zip(x.shape[2:], padding, lhs_dilation)
    ]
    eff = [_dilate(k, d) for k, d in zip(ksz, rhs_dilation)]
    strides = window_strides
    out_sp = tuple((p - e) // s + 1 if p >= e else 0 for p, e, s in zip(padded, eff, strides))
    rows, cols = n * math.prod(out_sp), i * math.prod(ksz)
    if rows == 0 or cols == 0 or o == 0:
        return np.zeros((o, n, *out_sp), dt)
    config = [(0, 0, 0)] * 2 + [(lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation)]
    unit = all(s == 1 for s in strides)
    wide = 2 * math.prod(ksz) >= math.prod(padded) and rows * cols >= 1 << 15  # (small: loop)
    if groups == 1 and 4 * o <= n and unit and wide and all(r == 1 for r in rhs_dilation):
        return _conv_host_placed(x, w, config, out_sp)
    if og < i and unit and 2 * rows >= n * math.prod(padded):
        return _conv_host_direct(x, w, config, out_sp, bgc, fgc, rhs_dilation)
    # whole rows: a stride-1 last dimension whose window adds little to the row
    full = nsp >= 2 and strides[-1] == 1 and 4 * (eff[-1] - 1) <= out_sp[-1]
    if full:  # one more zero row: the last row's starts read past its end
        lo, hi, it = config[-2]
        config[-2] = (lo, hi + 1, it)
    x = host_pad(x, np.zeros((), dt), config)
    if full and not x.flags.c_contiguous:  # (rows run on into the next)
        x = np.ascontiguousarray(x)
    st = x.strides
    outv = (*out_sp[:-1], x.shape[-1]) if full else out_sp
    win = as_strided(
        x,
        (bgc, n, fgc, i, *outv, *ksz),
        (
            n * st[0],
            st[0],
            i * st[1],
            st[1],
            *(s * st[2 + d] for d, s in enumerate(strides)),
            *(r * st[2 + d] for d, r in enumerate(rhs_dilation)),
        ),
        writeable=False,
    )
    sp = tuple(range(4, 4 + nsp))
    ks = tuple(range(4 + nsp, 4 + 2 * nsp))
    kern = w.reshape(groups, og, cols)
    run_out = out_sp[-1] if nsp and strides[-1] == 1 else 1  # (nsp 0: a matrix product)
    run_win = ksz[-1] if nsp and rhs_dilation[-1] == 1 else 1
    if full or run_out >= run_win:  # patches (C * K, N * out)
        a = win.transpose(0, 2, 3, *ks, 1, *sp).reshape(groups, cols, -1)
        tmp = (kern[0] @ a[0] if groups == 1 else np.matmul(kern, a)).reshape(o, n, *outv)
    else:  # patches (N * out, C * K)
        a = win.transpose(0, 2, 1, *sp, 3, *ks).reshape(groups, rows, cols)
        if groups == 1:
            tmp = (a[0] @ kern[0].T).reshape(n, *out_sp, o)
        else:
            prod = np.matmul(a, kern.transpose(0, 2, 1)).reshape(groups, n, *out_sp, og)
            tmp = prod.transpose(1, *range(2, 2 + nsp), 0, 2 + nsp).reshape(n, *out_sp, o)
        tmp = tmp.transpose(nsp + 1, *range(nsp + 1))
    if full:
        tmp = tmp[..., : out_sp[-1]]
    return tmp


def _conv_host_placed(
    x: np.ndarray, w: np.ndarray, config: list, out_sp: tuple[int, ...]
) -> np.ndarray:
    """A window over most of the padded lhs (kernel gradients), ``4 O <= N``: per output
    position the kernel placed in a zero ``(O, C, *padded)`` frame times the lhs ``(N, C *
    padded)`` (copies ``O * C * padded``, patches ``N * C * window``); ``(O, N, *out)``."""
    n, c, o, ksz = x.shape[0], x.shape[1], w.shape[0], w.shape[2:]
    xp = host_pad(x, np.zeros((), x.dtype), config)
    flat = np.ascontiguousarray(xp).reshape(n, -1)
    frame = np.zeros((o, c, *xp.shape[2:]), x.dtype)
    rows, out = frame.reshape(o, -1), np.empty((o, n, *out_sp), x.dtype)
    for pos in itertools.product(*(range(size) for size in out_sp)):
        at = (slice(None), slice(None), *(slice(q, q + k) for q, k in zip(pos, ksz)))
        frame[at] = w
        out[(slice(None), slice(None), *pos)] = rows @ flat.T
        frame[at] = 0
    return out


def _conv_host_phases(
    x: np.ndarray,
    w: np.ndarray,
    padding: Padding,
    lhs_dilation: Sequence[int],
    bgc: int,
    fgc: int,
) -> np.ndarray:
    """A unit-stride, undilated-kernel convolution of a dilated lhs (transposed
    convolutions, input and kernel gradients of strided ones) without the holes:
    ``(O, N, *out_spatial)``.

    Per spatial dimension, with lhs dilation ``d`` and low padding ``lo``, output ``p``
    reads the kernel at offsets ``k`` with ``p + k - lo`` a multiple of ``d``. The outputs
    ``p = p0 + m * d`` of one phase ``p0`` read the kernel taps ``k0, k0 + d, ...``
    (``k0 = (lo - p0) mod d``) against consecutive undilated inputs from
    ``(p0 + k0 - lo) / d + m``: a plain convolution of the undilated lhs with that
    sub-kernel, written to every ``d``-th output. The phases together do the work of the
    lhs's elements only, where the dilated lhs is mostly holes."""
    nsp = x.ndim - 2
    sizes, ksz = x.shape[2:], w.shape[2:]
    out_sp = []
    for q, k, (lo, hi), d in zip(sizes, ksz, padding, lhs_dilation):
        padded = _dilate(q, d) + lo + hi
        out_sp.append(padded - k + 1 if padded >= k else 0)
    n = x.shape[0] // bgc
    out = np.zeros((w.shape[0], n, *out_sp), x.dtype)
    if 0 in out_sp:
        return out
    per_dim = []  # each dimension's phases: (out slice, kernel slice, sub-padding)
    for q, k, (lo, _), d, size in zip(sizes, ksz, padding, lhs_dilation, out_sp):
        phases = []
        for p0 in range(min(d, size)):
            k0 = (lo - p0) % d
            taps = len(range(k0, k, d))
            m = len(range(p0, size, d))
            if taps == 0:
                continue  # outputs of this phase read holes only: zeros
            base = (p0 + k0 - lo) // d
            sub_lo = -base
            sub_hi = m - 1 + taps - q - sub_lo
            phases.append((slice(p0, None, d), slice(k0, None, d), (sub_lo, sub_hi)))
        per_dim.append(phases)
    ones = (1,) * nsp
    for combo in itertools.product(*per_dim):
        wk = w[(slice(None), slice(None), *(c[1] for c in combo))]
        pads = tuple(c[2] for c in combo)
        part = _conv_host_core(x, wk, ones, pads, ones, ones, bgc, fgc)
        out[(slice(None), slice(None), *(c[0] for c in combo))] = part
    return out


def _conv_host_direct(
    x: np.ndarray,
    w: np.ndarray,
    config: list,
    out_sp: tuple[int, ...],
    bgc: int,
    fgc: int,
    rhs_dilation: tuple[int, ...],
) -> np.ndarray:
    """The direct contraction of :func:`_conv_host`; ``(O, N, *out_sp)``.

    The lhs, ``(groups, C/groups, N + 1, *padded)`` (one zero image more: the shifted
    slices of the last image read into it), flattened to ``(groups, C/groups, length)``:
    the window offset ``k`` reads it shifted by ``sum_d k_d * dilation_d * step_d``
    (``step_d`` the flat stride of spatial dimension ``d``), one GEMM per offset."""
    groups = bgc * fgc
    nsp = x.ndim - 2
    n, i, o, ksz = x.shape[0] // bgc, w.shape[1], w.shape[0], w.shape[2:]
    og = o // groups
    xt = x.reshape(bgc, n, fgc, i, *x.shape[2:])
    xt = xt.transpose(0, 2, 3, 1, *range(4, 4 + nsp)).reshape(groups, i, n, *x.shape[2:])
    buf = host_pad(xt, np.zeros((), x.dtype), [(0, 0, 0), (0, 0, 0), (0, 1, 0), *config[2:]])
    padded = buf.shape[3:]
    plane = math.prod(padded)
    length = n * plane
    flat = buf.reshape(groups, i, (n + 1) * plane)
    steps = [math.prod(padded[d + 1 :]) for d in range(nsp)]
    # the kernel offset-major and contiguous: (K, groups, O/groups, C/groups) (BLAS takes
    # a strided slice through a slow path)
    kern = np.ascontiguousarray(np.moveaxis(w.reshape(groups, og, i, -1), -1, 0))
    acc = None
    for kk, k in enumerate(itertools.product(*(range(size) for size in ksz))):
        shift = sum(j * r * step for j, r, step in zip(k, rhs_dilation, steps))
        xk = flat[:, :, shift : shift + length]
        wk = kern[kk]
        r = (wk[0] @ xk[0])[None] if groups == 1 else np.matmul(wk, xk)
        acc = r if acc is None else np.add(acc, r, out=acc)
    # (groups, O/groups, N * padded) -> (O, N, *out_sp)
    out = acc.reshape(o, n, *padded)
    return out[(slice(None), slice(None), *(slice(0, size) for size in out_sp))]


def _conv_host_layout(tmp: np.ndarray, ospec: Sequence[int]) -> np.ndarray:
    """``(O, N, *out_spatial)`` in the output layout ``out_spec``."""
    nsp = tmp.ndim - 2
    roles = (1, 0, *range(2, nsp + 2))
    perm = [0] * (nsp + 2)
    for role, d in enumerate(ospec):
        perm[d] = roles[role]
    return tmp.transpose(perm)


conv_general_dilated_p.host = _conv_host
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
) -> Any:
    """Bind ``conv_general_dilated`` with explicit (already resolved) parameters; the
    user-facing wrapper (padding and layout strings) is :func:`funcgrad.lax.conv_general_dilated`."""

    def ints(xs: Sequence[int]) -> tuple[int, ...]:
        return tuple(operator.index(x) for x in xs)

    lspec, rspec, ospec = dimension_numbers
    pet = None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)
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
    )
