"""Boolean indices as PyTorch 2.13 reads them: a ``uint8`` tensor is a mask (compat took
it for integer positions: silently other elements), with PyTorch's deprecation warning
once per index; a bool scalar (``True``/``False``, a 0-d bool or ``uint8`` tensor) adds a
dim of size 1 or 0 at its place, a copy (compat refused them); and an assigned value's
leading dims of size 1 are dropped before it is broadcast (compat refused ``c[0] =
ones(1, 4)``). Each case runs the same script on both libraries and compares."""

from __future__ import annotations

import warnings

import pytest

import compat.torch as ctorch


def _uint8_get(t):
    v = t.tensor([True, False, True])
    u = t.tensor([1, 0, 0], dtype=t.uint8)
    a = t.arange(24.0).reshape(4, 6)
    m = t.tensor([0, 1, 1, 0], dtype=t.uint8)
    return [
        v[u].tolist(),
        a[m].tolist(),
        a[:, t.tensor([1, 0, 0, 0, 0, 1], dtype=t.uint8)].tolist(),
    ]


def _uint8_set(t):
    x = t.arange(0.0, 16).view(4, 4)
    x[t.ByteTensor([1, 0, 1, 0])] = t.tensor([3.0, 4.0, 5.0, 6.0])
    return x.tolist()


def _uint8_index_put_accumulate(t):
    y = t.ones(10, 10)
    m = t.zeros(10, dtype=t.uint8)
    m[0] = 1
    m[7] = 1
    y.index_put_((m,), t.ones(10) * 10, accumulate=True)
    return y.tolist()


def _uint8_warnings(t):
    v = t.tensor([True, False, True])
    u = t.tensor([1, 0, 0], dtype=t.uint8)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        v[u]
        v[t.tensor([True, False, False])]
        v[t.tensor([1, 0, 1], dtype=t.uint8)] = t.tensor([False, False])
    # (PyTorch may name the C++ line that warned: not compared)
    return [(type(x.message).__name__, str(x.message).split("(Triggered")[0]) for x in w]


INDICES = {
    "true": lambda t: True,
    "false": lambda t: False,
    "true_true": lambda t: (True, True),
    "false_true_ellipsis": lambda t: (False, True, Ellipsis),
    "ellipsis_true": lambda t: (Ellipsis, True),
    "int_true": lambda t: (0, True),
    "true_int": lambda t: (True, 0),
    "none_true_int": lambda t: (None, True, 1),
    "true_array": lambda t: (True, t.tensor([0, 1])),
    "array_true_int": lambda t: (t.tensor([1, 0]), True, 2),
    "tensor_true": lambda t: t.tensor(True),
    "uint8_one": lambda t: t.tensor(1, dtype=t.uint8),
    "uint8_zero": lambda t: t.tensor(0, dtype=t.uint8),
    "slice_true_slice": lambda t: (slice(None), True, slice(1, 3)),
    "ellipsis_false_int": lambda t: (Ellipsis, False, 1),
}


@pytest.mark.parametrize("name", INDICES)
def test_bool_scalar_get_and_set_like_torch(real_torch, name):
    outs = []
    for t in (ctorch, real_torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = t.arange(24.0).reshape(2, 3, 4)
            idx = INDICES[name](t)
            r = a[idx]
            b = a.clone()
            b[idx] = -1.0
            outs.append((tuple(r.shape), r.tolist(), r.data_ptr() == a.data_ptr(), b.tolist()))
    assert outs[0] == outs[1]


def _bool_scalar_grad(t):
    d = t.ones(3, requires_grad=True)
    (d[True] * t.arange(3.0)).sum().backward()
    s = t.tensor(3.0)
    return [d.grad.tolist(), tuple(s[True].shape), tuple(s[False].shape)]


def _leading_ones(t):
    c = t.zeros(4, 4)
    c[0] = t.ones(1, 4)
    c[1:3] = t.ones(1, 1, 2, 4) * 2
    b = t.zeros(2, 3)
    b[True] = t.ones(1, 1, 2, 3) * 5
    col_max = t.arange(4.0).reshape(1, 4)
    k = col_max.T * col_max
    k[k.argmax(0), t.arange(4)] = col_max  # (test_indexing's leading-1s case)
    return [c.tolist(), b.tolist(), k.tolist()]


@pytest.mark.parametrize(
    "case",
    [
        _uint8_get,
        _uint8_set,
        _uint8_index_put_accumulate,
        _uint8_warnings,
        _bool_scalar_grad,
        _leading_ones,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_like_torch(real_torch, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (``_uint8_warnings`` records its own)
        assert case(ctorch) == case(real_torch)


def _uint8_fill_error(t, how):
    v = t.zeros(3)
    u = t.tensor([1, 0, 1], dtype=t.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if how == "index_put_":
                v.index_put_((u,), t.tensor(5.0))
            else:
                v[u] = t.tensor(1.0) if how == "tensor" else 2.0
        except RuntimeError as e:
            return str(e)
    return v.tolist()


@pytest.mark.parametrize("how", ["number", "tensor", "index_put_"])
def test_uint8_mask_with_one_value_is_refused_like_torch(real_torch, how):
    assert _uint8_fill_error(ctorch, how) == _uint8_fill_error(real_torch, how)


def _index_outcome(t, idx, value=None):
    a = t.arange(25.0).reshape(5, 5)
    try:
        if value is None:
            r = a[idx(t)]
            return tuple(r.shape), str(r.dtype), r.tolist()
        a[idx(t)] = value(t)
        return a.tolist()
    except IndexError as e:
        return "IndexError", str(e)


MISMATCHED = {
    "lists": (lambda t: ([0, 1, 2, 3, 4], [0, 1]), None),
    "tensors_2d": (lambda t: (t.tensor([0, 1]), t.tensor([[0, 1, 2]])), None),
    "set_lists": (lambda t: ([0, 1, 2], [0, 1]), lambda t: t.tensor(1.0)),
    "set_tensors": (lambda t: (t.tensor([0, 1]), t.tensor([[0, 1, 2]])), lambda t: t.ones(5)),
    "broadcasting": (lambda t: (t.tensor([[0], [1]]), t.tensor([0, 1, 2])), None),
    "empty_list": (lambda t: [], None),
    "empty_list_2d": (lambda t: (slice(None), []), None),
}


@pytest.mark.parametrize("name", MISMATCHED)
def test_index_arrays_broadcast_like_torch(real_torch, name):
    """Index arrays that do not broadcast raise PyTorch's IndexError (compat raised a
    RuntimeError of its broadcasting); an empty list is an empty integer index."""
    idx, value = MISMATCHED[name]
    assert _index_outcome(ctorch, idx, value) == _index_outcome(real_torch, idx, value)


def _uint8_warnings_per_line(t):
    # (Python's default filter shows a warning once per line: compat's came from one line
    # of its own, so the second statement's was swallowed; PyTorch's come from the caller's)
    v = t.randn(5, 7, 3)
    mask = t.ByteTensor([1, 0, 1, 1, 0])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("default")
        first = v[mask]
        second = v[mask]
        n = (len(w), tuple(first.shape) == tuple(second.shape))
    m2 = t.zeros(size=(10,), dtype=t.uint8)
    y = t.ones(10, 10)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y.index_put_((m2,), y[m2], accumulate=True)
        return [n, len(w), [x.filename == __file__ for x in w]]


def _size_zero_and_del(t):
    x = t.empty(10, 0)
    out = [tuple(x[[1, 2]].shape), tuple(x[[], []].shape)]
    try:
        x[:, [0, 1]]
    except IndexError as e:
        out.append(str(e))
    try:
        del x[0]
    except TypeError as e:
        out.append(str(e))
    return out


@pytest.mark.parametrize(
    "case", [_uint8_warnings_per_line, _size_zero_and_del], ids=lambda f: f.__name__.strip("_")
)
def test_more_like_torch(real_torch, case):
    assert case(ctorch) == case(real_torch)
