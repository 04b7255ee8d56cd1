"""``out=`` where PyTorch's ``torch.X`` has no ``out=`` overload for the call, against real
PyTorch.

Driven by the op table: every sample of every row with a ``torch.X`` function is called
with ``out=`` (empty tensors of the plain call's dtypes) in both libraries. Where PyTorch
accepts, compat must too (the values are ``test_compat_optable``'s); where PyTorch's
parser refuses (views, the split family, ``isnan``, ``sum`` without ``dim``: about 80
rows), compat must raise its ``TypeError`` with the same first line. The forms no sample
has (``sum(x, dtype=..., out=)``, ``argsort(x, stable=True, out=)``) are listed below.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from cases import sample as _sample
from optable_cases import arrays as _arrays
from optable_cases import call as _call
from optable_cases import call_with_out as _call_with_out
from optable_cases import empty_out as _empty_out
from optable_cases import flat as _flat
from optable_cases import function_of as _function
from optable_cases import to_lib as _to_lib

import compat.torch as ctorch
from compat._core.optable import REGISTRY

CASES = [
    pytest.param(name, i, id=f"{name}-{i}")
    for name, d in sorted(REGISTRY.items())
    if d.function and not d.random
    for i in range(len(d.samples))
]


def _public(d) -> str:
    """PyTorch's name of the op in its errors (``fft_fftshift`` for ``torch.fft.fftshift``)."""
    return d.name if d.module == "torch" else f"{d.module}_{d.name.rpartition('.')[2]}"


def _with_out(lib, d, sample, data):
    """The row's ``torch.X`` call with ``out=``: the exception it raised, or ``None``;
    ``False`` where the op returns no tensor (``allclose``) or the plain call fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            plain, _ = _call(lib, d, sample, data, "function")
        except Exception:
            return False
    out = _empty_out(lib, plain)
    if out is None:
        return False
    try:
        _call_with_out(lib, d, sample, data, out)
    except Exception as e:
        return e
    return None


def _first_line(e: BaseException) -> str:
    return str(e).split("\n")[0]


def test_the_table_has_refusals():
    # the rows the test must reach: a view, a split, a test, an overload-dependent one
    ids = {c.id for c in CASES}
    assert {"reshape-0", "tensor_split-0", "isnan-0", "sum-0", "sum-1", "median-0"} <= ids


@pytest.mark.parametrize(
    ("name", "i"),
    _sample(CASES, salt="test_out_refusal_matches_pytorch", group=lambda c: c.values[0]),
)
def test_out_refusal_matches_pytorch(name, i, real_torch):
    d = REGISTRY[name]
    sample = d.samples[i]
    data = _arrays(sample, seed=i)
    theirs = _with_out(real_torch, d, sample, data)
    if theirs is False or (theirs is not None and not isinstance(theirs, TypeError)):
        return  # no tensor result, or a value error: test_compat_optable's
    ours = _with_out(ctorch, d, sample, data)
    if theirs is None:
        assert ours is None, (name, ours)
        return
    assert isinstance(ours, TypeError), (name, ours)
    public = _public(d)
    if _first_line(theirs).startswith(f"{public}("):
        assert _first_line(ours) == _first_line(theirs), name
    else:  # PyTorch's Python-level op: its message names a private helper (``unique``'s)
        assert _first_line(ours) == f"{public}() got an unexpected keyword argument 'out'"


#: ``(label, call)``: forms no sample has, ``call(lib, x, o, i)`` with ``x`` a 3x4 float64
#: tensor, ``o`` an empty float64 tensor and ``i`` an empty int64 one
FORMS = [
    ("sum", lambda lib, x, o, i: lib.sum(x, out=o)),
    ("sum dtype", lambda lib, x, o, i: lib.sum(x, dtype=lib.float64, out=o)),
    ("sum keepdim", lambda lib, x, o, i: lib.sum(x, keepdim=True, out=o)),
    ("sum None", lambda lib, x, o, i: lib.sum(x, None, out=o)),
    ("sum dim=None", lambda lib, x, o, i: lib.sum(x, dim=None, out=o)),
    ("sum axis", lambda lib, x, o, i: lib.sum(x, axis=1, out=o)),
    ("prod dtype", lambda lib, x, o, i: lib.prod(x, dtype=lib.float64, out=o)),
    ("prod dim", lambda lib, x, o, i: lib.prod(x, 1, True, out=o)),
    ("median keepdim", lambda lib, x, o, i: lib.median(x, keepdim=True, out=(o, i))),
    ("nanmedian", lambda lib, x, o, i: lib.nanmedian(x, out=(o, i))),
    ("median dim", lambda lib, x, o, i: lib.median(x, 1, out=(o, i))),
    ("argsort", lambda lib, x, o, i: lib.argsort(x, out=i)),
    ("argsort descending", lambda lib, x, o, i: lib.argsort(x, descending=True, dim=0, out=i)),
    ("argsort stable", lambda lib, x, o, i: lib.argsort(x, stable=True, out=i)),
    ("argsort stable dim", lambda lib, x, o, i: lib.argsort(x, dim=0, stable=True, out=i)),
    ("argsort positional", lambda lib, x, o, i: lib.argsort(x, 0, stable=True, out=i)),
    ("squeeze dim", lambda lib, x, o, i: lib.squeeze(x, 0, out=o)),
    ("squeeze axis", lambda lib, x, o, i: lib.squeeze(x, axis=0, out=o)),
    ("argsort dim", lambda lib, x, o, i: lib.argsort(x, dim=0, out=i)),
    ("rsub alpha", lambda lib, x, o, i: lib.rsub(x, x, alpha=2, out=o)),
    ("movedim keywords", lambda lib, x, o, i: lib.movedim(x, source=0, destination=1, out=o)),
    ("moveaxis", lambda lib, x, o, i: lib.moveaxis(x, 0, 1, out=o)),
    ("swapaxes", lambda lib, x, o, i: lib.swapaxes(x, 0, 1, out=o)),
    ("isnan NumPy name", lambda lib, x, o, i: lib.isnan(x=x, out=o)),
    ("reshape NumPy name", lambda lib, x, o, i: lib.reshape(x, (4, 3), out=o)),
    ("fftshift", lambda lib, x, o, i: lib.fft.fftshift(x, out=o)),
    ("special.softmax", lambda lib, x, o, i: lib.special.softmax(x, 1, out=o)),
    ("softmax", lambda lib, x, o, i: lib.softmax(x, 1, out=o)),
    ("count_nonzero", lambda lib, x, o, i: lib.count_nonzero(x, 1, out=i)),
]


@pytest.mark.parametrize(("label", "form"), FORMS, ids=[f[0] for f in FORMS])
def test_out_forms_match_pytorch(label, form, real_torch):
    def run(lib):
        x = lib.tensor(np.arange(12.0).reshape(3, 4))
        return form(lib, x, lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int64))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = run(real_torch)
        except TypeError as e:
            with pytest.raises(TypeError) as info:
                run(ctorch)
            assert _first_line(info.value) == _first_line(e), label
            return
        got = run(ctorch)
    for a, b in zip(_flat(got), _flat(expected)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), err_msg=label)


def _takes_dtype(d) -> bool:
    try:
        return "dtype" in inspect.signature(d.fn).parameters
    except (TypeError, ValueError):
        return False


DTYPE_CASES = [
    pytest.param(name, want, got, id=f"{name}-{want}-{got}")
    for name, d in sorted(REGISTRY.items())
    if d.function and d.out and not d.random and d.samples and _takes_dtype(d)
    for want, got in (("float64", "float32"), ("float32", "float64"))
]


def test_the_table_has_dtype_rows():
    names = {c.values[0] for c in DTYPE_CASES}
    assert {"sum", "cumsum", "mean", "nansum", "linalg.vector_norm", "fft.fftfreq"} <= names


def _dtype_call(lib, d, data, want, got):
    """The row's first sample with ``dtype=want`` and ``out`` of dtype ``got``: the plain
    call's failure (``"plain"``), the ``out=`` call's exception, or ``None``."""
    sample = d.samples[0]
    tensors, args, kwargs = data
    ts = [_to_lib(lib, a, False, []) for a in tensors]
    args = [_to_lib(lib, a, False, []) for a in args]
    kwargs = {k: _to_lib(lib, v, False, []) for k, v in kwargs.items()}
    if d.name in ("sum", "prod") and not args and "dim" not in kwargs:
        args = [0]  # (their out= overload wants a dim)
    kwargs["dtype"] = getattr(lib, want)
    fn = _function(lib, d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(*sample.prefix, *ts, *args, **kwargs)
        except Exception:
            return "plain"
        try:
            fn(*sample.prefix, *ts, *args, out=lib.empty(0, dtype=getattr(lib, got)), **kwargs)
        except Exception as e:
            return e
    return None


@pytest.mark.parametrize(("name", "want", "got"), DTYPE_CASES)
def test_out_of_another_dtype_than_dtype_matches_pytorch(name, want, got, real_torch):
    """``torch.X(..., dtype=d, out=o)`` with ``o`` of another dtype: PyTorch's error."""
    d = REGISTRY[name]
    if d.samples[0].dtype not in ("float32", "float64"):
        return
    data = _arrays(d.samples[0], seed=0)
    theirs = _dtype_call(real_torch, d, data, want, got)
    if theirs == "plain":
        return  # PyTorch refuses the dtype itself (a narrowing norm): not this test's
    ours = _dtype_call(ctorch, d, data, want, got)
    if theirs is None:
        assert ours is None, (name, ours)
        return
    assert type(ours) is type(theirs), (name, ours, theirs)
    assert _first_line(ours) == _first_line(theirs), name
