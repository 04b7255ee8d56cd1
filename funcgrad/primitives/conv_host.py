"""The host-tier rule of ``conv_general_dilated`` (:mod:`funcgrad.primitives.conv`): the
convolution on NumPy arrays, by BLAS GEMMs on strided views of the lhs (see
:func:`conv_host`), with the compiled tier's dtypes."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from funcgrad.primitives.linalg import host_compute_dtype
from funcgrad.primitives.windowed import host_pad

Padding = tuple[tuple[int, int], ...]


def dilate(n: int, d: int) -> int:
    """Size of ``n`` elements with ``d - 1`` holes between neighbours."""
    return 0 if n == 0 else (n - 1) * d + 1


def conv_host(
    lhs: np.ndarray,
    rhs: np.ndarray,
    *,
    window_strides: tuple[int, ...],
    padding: Padding,
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: Sequence[Sequence[int]],
    feature_group_count: int,
    batch_group_count: int,
    preferred_element_type: Any,
    out_sharding: Any = None,
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
        dilate(size, d) + lo + hi for size, (lo, hi), d in zip(x.shape[2:], padding, lhs_dilation)
    ]
    eff = [dilate(k, d) for k, d in zip(ksz, rhs_dilation)]
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
        padded = dilate(q, d) + lo + hi
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
