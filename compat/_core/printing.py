"""Tensor ``repr``/``str`` as PyTorch prints them, and ``torch.set_printoptions``.

Floating tensors are printed in one of three modes chosen from the finite nonzero
values (of the summarised data when the tensor is large): integer mode (all values
whole: ``1.``), fixed point with ``precision`` digits, or scientific notation when
the largest/smallest magnitude ratio exceeds 1000, the largest exceeds 1e8 or (not
in integer mode) the smallest is below 1e-4. Every element is right-aligned to the
widest one; rows wrap at ``linewidth``; tensors with more than ``threshold``
elements show ``edgeitems`` items at each end of every dimension.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from compat._core import dtypes as _dt
from funcgrad._compat_contract import MetaArray

__all__ = ["get_printoptions", "set_printoptions", "tensor_repr"]


class _Options:
    precision = 4
    threshold: float = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode: bool | None = None


OPTS = _Options()
_PROFILES = {
    "default": (4, 1000, 3, 80),
    "short": (2, 1000, 2, 80),
    "full": (4, math.inf, 3, 80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (``profile``: ``'default'``, ``'short'`` or ``'full'``, then the
    explicit arguments on top); ``sci_mode=None`` lets the values choose."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        OPTS.precision = precision
    if threshold is not None:
        OPTS.threshold = threshold
    if edgeitems is not None:
        OPTS.edgeitems = edgeitems
    if linewidth is not None:
        OPTS.linewidth = linewidth
    OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    return {
        "precision": OPTS.precision,
        "threshold": OPTS.threshold,
        "edgeitems": OPTS.edgeitems,
        "linewidth": OPTS.linewidth,
        "sci_mode": OPTS.sci_mode,
    }


class _Formatter:
    """Chooses a mode and a common width for the values of one (real) array."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = _dt.kind(values.dtype) == "f"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        p = OPTS.precision
        if not self.floating:
            for v in flat.tolist():
                self.width = max(self.width, len(str(v)))
        else:
            vals = flat[np.isfinite(flat) & (flat != 0)]
            if not vals.size:
                return  # only zeros and non-finite values: integer mode, whatever sci_mode says
            mags = np.abs(vals.astype(np.float64))
            hi, lo = float(mags.max()), float(mags.min())
            self.int_mode = bool(np.all(vals == np.ceil(vals)))
            spread = hi / lo > 1000.0 or hi > 1.0e8
            self.sci_mode = spread if self.int_mode else spread or lo < 1.0e-4
            if OPTS.sci_mode is not None:
                self.sci_mode = OPTS.sci_mode
            for v in vals.tolist():
                if self.sci_mode:
                    n = len(f"{v:.{p}e}")
                elif self.int_mode:
                    n = len(f"{v:.0f}") + 1
                else:
                    n = len(f"{v:.{p}f}")
                self.width = max(self.width, n)

    def format(self, v: Any) -> str:
        p = OPTS.precision
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return s.rjust(self.width)


def _summary(a: np.ndarray) -> np.ndarray:
    """The elements a summarised print shows (``edgeitems`` at each end of each dim)."""
    e = OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    if not e:
        return np.zeros((0,) * a.ndim, a.dtype)
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) if a.shape[0] > 2 * e else []
    picked = [a[i] for i in rows] if rows else list(a)
    return np.stack([_summary(r) for r in picked])


class _Printer:
    def __init__(self, fmt: _Formatter, imag: _Formatter | None, summarize: bool) -> None:
        self.fmt, self.imag, self.summarize = fmt, imag, summarize

    def value(self, v: Any) -> str:
        if self.imag is None:
            return self.fmt.format(v)
        re_s = self.fmt.format(v.real)
        im_s = (self.imag.format(v.imag) + "j").lstrip()
        return re_s + im_s if im_s[0] in "+-" else re_s + "+" + im_s

    def vector(self, a: np.ndarray, indent: int) -> str:
        e = OPTS.edgeitems
        elem = self.fmt.width + 2 + (self.imag.width + 1 if self.imag is not None else 0)
        per_line = max(1, (OPTS.linewidth - indent) // elem)
        if self.summarize and not e:
            items = ["..."]
        elif self.summarize and a.shape[0] > 2 * e:
            items = (
                [self.value(v) for v in a[:e].tolist()]
                + [" ..."]
                + [self.value(v) for v in a[-e:].tolist()]
            )
        else:
            items = [self.value(v) for v in a.tolist()]
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def array(self, a: np.ndarray, indent: int) -> str:
        if a.ndim == 0:
            return self.value(a.item())
        if a.ndim == 1:
            return self.vector(a, indent)
        e = OPTS.edgeitems
        n = a.shape[0]
        if self.summarize and n > 2 * e:
            parts = [self.array(a[i], indent + 1) for i in range(e)] + ["..."]
            parts += [self.array(a[i], indent + 1) for i in range(n - e, n)]
        else:
            parts = [self.array(a[i], indent + 1) for i in range(n)]
        sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
        return "[" + sep.join(parts) + "]"


def _body(a: np.ndarray, indent: int) -> str:
    summarize = a.size > OPTS.threshold
    if a.dtype == np.float16 or a.dtype == _dt.bfloat16.np:
        a = a.astype(np.float32)
    data = _summary(a) if summarize else a
    if _dt.kind(a.dtype) == "c":
        printer = _Printer(_Formatter(data.real), _Formatter(data.imag), summarize)
    else:
        printer = _Printer(_Formatter(data), None, summarize)
    return printer.array(a, indent)


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"


def tensor_repr(a: Any, device: Any, grad_fn_name: str | None, requires_grad: bool) -> str:
    """``tensor(...)`` for the values ``a`` with PyTorch's suffixes (device, size, dtype,
    ``grad_fn`` or ``requires_grad``); a meta array, which has no values, is ``...``."""
    meta = type(a) is MetaArray
    if not meta:
        a = np.asarray(a)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if str(device) != "cpu":
        suffixes.append(f"device='{device}'")
    default = _dt.get_default_dtype()
    dtype = _dt.from_np(a.dtype)
    cdefault = _dt.complex128 if default is _dt.float64 else _dt.complex64
    if meta:  # no values: the size always, the dtype unless it is the default
        suffixes.append(f"size={tuple(a.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        text = "..."
    elif a.size and not OPTS.edgeitems:
        suffixes.append(f"size={tuple(a.shape)}")  # no values are shown
    if meta:
        pass  # (its text and suffixes are made)
    elif a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        text = "[]"
    else:
        if dtype not in (default, cdefault, _dt.int64, _dt.bool):
            suffixes.append(f"dtype={dtype!r}")
        text = _body(a, indent)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + text, suffixes, indent)
