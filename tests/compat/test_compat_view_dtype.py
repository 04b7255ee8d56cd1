"""``Tensor.view(dtype)`` shares its input's memory as PyTorch 2.13's does: writes through
the dtype view reach the input and the reverse, through slices, diagonals, expands and
transposes; sizes, strides and storage offsets scale by the element-size ratio; the
result never requires grad, has no ``_base`` and shares the version counter; the layout
errors are PyTorch's. (compat made a copy: writes were lost, and strides were those of a
contiguous tensor.) Each case runs the same script on both libraries and compares.
"""

from __future__ import annotations

import pytest

import compat.torch as ctorch


def _err(f):
    try:
        f()
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "no error"


def _layout(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


def _write_through(t):
    x = t.arange(12, dtype=t.float32).reshape(3, 4)
    v = x.view(t.int32)
    v[0, 1] = 1065353216  # the bits of 1.0
    out = [x.tolist()]
    x[2, 2] = 2.0
    out.append(v[2, 2].item())
    return out


def _narrower(t):
    x = t.arange(12, dtype=t.float32).reshape(3, 4)
    s = x[:, 1:].view(t.int16)
    out = [_layout(s)]
    s[1].zero_()
    out.append(x.tolist())
    return out


def _wider(t):
    x = t.arange(16, dtype=t.int16).reshape(2, 8)
    w = x[:, 2:].view(t.int32)
    out = [_layout(w), w.tolist()]
    w.fill_(65537)
    out.append(x.tolist())
    return out


def _complex(t):
    c = t.tensor([1 + 2j, 3 - 4j])
    f = c.view(t.float64)
    f[1] = 7.0
    return [_layout(f), c.tolist(), _layout(c.view(t.float32))]


def _bool(t):
    b = t.tensor([True, False, True])
    u = b.view(t.uint8)
    u[1] = 1
    return [b.tolist(), t.tensor([2, 0], dtype=t.uint8).view(t.bool).tolist()]


def _diagonal(t):
    x = t.zeros(3, 3)
    x.diagonal().view(t.int32).fill_(5)
    return x.view(t.int32).tolist()


def _expanded(t):
    e = t.zeros(3).expand(2, 3).view(t.int32)
    return [_layout(e), e.tolist()]


def _transposed_same_size(t):
    x = t.arange(6, dtype=t.float32).reshape(2, 3).t()
    v = x.view(t.int32)
    v[0, 1] = 0
    return [_layout(v), x.tolist()]


def _autograd(t):
    r = t.ones(3, requires_grad=True)
    q = r.view(t.float32)
    i = r.view(t.int32)
    out = [q.requires_grad, q.grad_fn is None, q is r, q._base is None, i.requires_grad]
    q.add_(1)
    out.append((r._version, q._version))
    y = r * 2
    w = y.view(t.float32)
    w.mul_(3)
    y.sum().backward()
    out.append(r.grad.tolist())
    return out


def _errors(t):
    return [
        _err(lambda: t.zeros(2, 3).t().view(t.int16)),
        _err(lambda: t.zeros(2, 4, dtype=t.int16)[:, 1:3].view(t.int32)),
        _err(
            lambda: t.zeros(4, 4, 2, dtype=t.int16).as_strided((4, 4, 2), (2, 1, 1)).view(t.int32)
        ),
        _err(lambda: t.zeros(4, 4, 3, dtype=t.int16).view(t.int32)),
        _err(lambda: t.tensor(1.0).view(t.int16)),
        _err(lambda: t.zeros(3).expand(2, 3)[:, :1].expand(2, 4).view(t.int16)),
    ]


CASES = [
    _write_through,
    _narrower,
    _wider,
    _complex,
    _bool,
    _diagonal,
    _expanded,
    _transposed_same_size,
    _autograd,
    _errors,
]


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__.strip("_"))
def test_view_dtype_as_torch(real_torch, case):
    assert case(ctorch) == case(real_torch)
