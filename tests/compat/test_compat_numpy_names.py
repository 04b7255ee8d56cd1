"""NumPy's keyword names (``axis=``, ``keepdims=``, ``x=``/``a=``/``x1=``, ``x2=``) on
every op-table row, against real PyTorch.

Driven by the table: for each row's samples, each parameter the sample gives that
PyTorch's argument parser also takes under a NumPy name (``dim``, ``keepdim``, ``input``,
``other``; given by keyword or as the last positional argument) is passed under each of
its NumPy names instead, in the ``torch.X`` and ``Tensor.X`` forms. Where PyTorch
accepts the call compat must give its values; where PyTorch refuses it (ops PyTorch
writes in Python: ``torch.norm``, ``Tensor.split``), compat must refuse it with the same
error type. The same parameter given twice (by its name or position and by a NumPy name)
is a ``TypeError`` in both (compat's names the NumPy keyword, as PyTorch's does where
one signature remains; its overloaded ops word it per overload).
"""

from __future__ import annotations

import inspect
import warnings

import pytest
from cases import sample as _sample
from optable_cases import arrays as _arrays
from optable_cases import assert_same as _assert_same
from optable_cases import function_of as _function
from optable_cases import gauged as _gauged
from optable_cases import to_lib as _to_lib

import compat.torch as ctorch
from compat._core.optable import REGISTRY

NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1")}
NUMPY_NAMES["other"] = ("x2",)


def _params(fn) -> list[str]:
    try:
        return list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []


def _renamings(d, sample, form):
    """``(param, alias, index)`` for each parameter of the sample that has NumPy names:
    ``index`` its position among the call's positional arguments (``None``: a keyword)."""
    fn = d.fn if form == "function" else d.method_impl()
    params = _params(fn)
    if form == "function":
        n_pos = len(sample.prefix) + len(sample.tensors) + len(sample.args)
    else:
        n_pos = len(sample.tensors) + len(sample.args)  # (``self`` is the first)
    out = []
    for p, aliases in NUMPY_NAMES.items():
        if p not in params or (form == "method" and p == "input"):
            continue
        i = params.index(p)
        if p in dict(sample.kwargs):
            index = None
        elif i == n_pos - 1 and not (form == "method" and i == 0):
            index = i
        else:
            continue
        out += [(p, a, index) for a in aliases if a not in params]
    return out


def _forms(d, sample):
    forms = ["function"] if d.function else []
    if d.method_impl() is not None and sample.method:
        forms.append("method")
    return forms


CASES = [
    pytest.param(name, i, form, p, a, index, id=f"{name}-{i}-{form}-{a}")
    for name, d in sorted(REGISTRY.items())
    if not d.random
    for i, sample in enumerate(d.samples)
    for form in _forms(d, sample)
    for p, a, index in _renamings(d, sample, form)
]


def _call(lib, d, sample, data, form, p, alias, index, twice=False):
    """The row's call with parameter ``p`` passed as keyword ``alias`` (and under its own
    name or position too when ``twice``)."""
    tensors, args, kwargs = data
    leaves: list = []
    ts = [_to_lib(lib, a, False, leaves) for a in tensors]
    args = [_to_lib(lib, a, False, leaves) for a in args]
    kwargs = {k: _to_lib(lib, v, False, leaves) for k, v in kwargs.items()}
    if form == "function":
        positional, fn = [*sample.prefix, *ts, *args], _function(lib, d)
    else:
        positional, fn = [*ts[1:], *args], getattr(ts[0], d.name)
    if index is None:
        value = kwargs[p] if twice else kwargs.pop(p)
    else:
        at = index - 1 if form == "method" else index
        value = positional[at] if twice else positional.pop(at)
    return fn(*positional, **kwargs, **{alias: value})


def test_the_table_has_numpy_names():
    # NumPy-ported code's calls are among the table's (the cases come from the samples)
    ids = {c.id for c in CASES}
    for case in ("sum-1-function-keepdims", "mean-1-method-axis", "std-2-method-keepdims"):
        assert case in ids
    assert "norm-1-function-axis" in ids  # (which PyTorch refuses: a Python function)


@pytest.mark.parametrize(
    ("name", "i", "form", "p", "alias", "index"),
    _sample(CASES, salt="test_numpy_name_matches_pytorch", group=lambda c: c.values[0]),
)
def test_numpy_name_matches_pytorch(name, i, form, p, alias, index, real_torch):
    d = REGISTRY[name]
    sample = d.samples[i]
    data = _arrays(sample, seed=i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            theirs = _call(real_torch, d, sample, data, form, p, alias, index)
        except Exception as e:  # PyTorch refuses the name here: compat must too
            with pytest.raises(type(e)):
                _call(ctorch, d, sample, data, form, p, alias, index)
            return
        ours = _call(ctorch, d, sample, data, form, p, alias, index)
    _assert_same(_gauged(d, ours), _gauged(d, theirs), f"{name} ({form}, {alias}=)")


@pytest.mark.parametrize(
    ("name", "i", "form", "p", "alias", "index"),
    _sample(CASES, salt="test_numpy_name_twice_is_refused", group=lambda c: c.values[0]),
)
def test_numpy_name_twice_is_refused(name, i, form, p, alias, index, real_torch):
    d = REGISTRY[name]
    sample = d.samples[i]
    data = _arrays(sample, seed=i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (its deprecation, once per process)
        try:
            _call(real_torch, d, sample, data, form, p, alias, index, twice=True)
        except TypeError:
            pass
        else:  # only PyTorch's deprecated ``add(input, Number alpha, Tensor other)``
            # (compat has not got it) takes ``add(x, 1.5, x2=y)``: a number before ``x2``
            assert (name, p) == ("add", "other") and isinstance(sample.args[-1], float)
    with pytest.raises(TypeError, match=f"'{alias}'"):
        _call(ctorch, d, sample, data, form, p, alias, index, twice=True)
