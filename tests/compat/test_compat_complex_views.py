"""Complex views: ``view_as_real``, ``view_as_complex``, ``Tensor.real``/``.imag`` share
the complex storage (writes go through, versions bump, strides and offsets as PyTorch's),
and gradients flow through them. Oracle: the same code on real PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import compat.torch as ctorch


def _scenario(lib):
    z = lib.tensor([[1 + 2j, 3 - 1j, 0.5], [0.5j, 2, -1 - 1j]], dtype=lib.complex64)
    r = lib.view_as_real(z)
    out = {"r_shape": tuple(r.shape), "r_stride": r.stride(), "r_dtype": str(r.dtype)}
    r[0, 1, 0] = 9.0  # through the float view into the complex storage
    re, im = z.real, z.imag
    out["re_stride"], out["im_offset"] = re.stride(), im.storage_offset()
    re.mul_(2)
    im[1, 0] = 7.0
    out["z"] = z.tolist()
    out["version"] = z._version
    out["r_after"] = r.tolist()  # the first view sees the later writes
    c = lib.view_as_complex(r[1])
    out["c"] = c.tolist()
    c.mul_(1j)  # through the complex view of the float view
    out["z2"] = z.tolist()
    return out


def test_writes_strides_and_versions_match_pytorch(real_torch):
    assert _scenario(ctorch) == _scenario(real_torch)


def _grads(lib):
    f = lib.tensor([[0.5, -1.0], [2.0, 0.25], [1.5, 1.0]], requires_grad=True)
    c = lib.view_as_complex(f * 1)
    w = lib.tensor([1 + 1j, 2 - 1j, -0.5j], dtype=lib.complex64)
    loss = (c * w).real.sum() + (c.imag**2).sum() + lib.view_as_real(c * c).sum()
    loss.backward()
    return f.grad.tolist(), c.grad_fn.name()


def test_gradients_to_real_leaves_match_pytorch(real_torch):
    # (complex leaves' gradients: tests/compat/test_compat_complex_grad.py)
    got, want = _grads(ctorch), _grads(real_torch)
    np.testing.assert_allclose(np.array(got[0]), np.array(want[0]), rtol=1e-6)
    assert got[1] == want[1] == "ViewAsComplexBackward0"


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.randn(3, 4),  # last dim not 2
        lambda lib: lib.randn(4, 2).t().contiguous().t(),  # last stride not 1
        lambda lib: lib.randn(3, 3)[:, :2],  # odd stride
        lambda lib: lib.randn(7)[1:].view(3, 2),  # odd offset
        lambda lib: lib.randn(3, 2, dtype=lib.bfloat16),  # not float/double
    ],
    ids=["size", "stride1", "even-strides", "offset", "dtype"],
)
def test_view_as_complex_errors_match_pytorch(real_torch, make):
    msgs = []
    for lib in (ctorch, real_torch):
        with pytest.raises(RuntimeError) as e:
            lib.view_as_complex(make(lib))
        msgs.append(str(e.value).split("\n")[0])
    assert msgs[0] == msgs[1]


def test_real_and_imag_on_real_tensors_match_pytorch(real_torch):
    for lib in (ctorch, real_torch):
        x = lib.ones(3)
        assert x.real is x
        with pytest.raises(RuntimeError, match="imag is not implemented"):
            _ = x.imag
        with pytest.raises(RuntimeError, match="view_as_real is only supported for complex"):
            lib.view_as_real(x)
