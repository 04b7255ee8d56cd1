"""Leaf rules and safety errors of a tensor's autograd attributes (``requires_grad``,
``grad``, ``data``, ``detach_``), each run on compat.torch and on real PyTorch."""

from __future__ import annotations

import pytest
from compat_helpers import npv

_LEAF_ONLY = "you can only change requires_grad flags of leaf variables"


def test_requires_grad_on_non_leaf(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    assert y.requires_grad_() is y  # accepted: it already requires grad
    assert y.requires_grad_(True) is y
    with pytest.raises(RuntimeError, match=_LEAF_ONLY + r"\.$"):
        y.requires_grad = True
    long_msg = _LEAF_ONLY + r"\. If you want to use a computed variable in a subgraph"
    with pytest.raises(RuntimeError, match=long_msg):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match=long_msg):
        y.requires_grad = False
    assert y.requires_grad and y.grad_fn is not None


def test_requires_grad_on_integer_tensors(lib):
    i = lib.ones(2, dtype=lib.long)
    with pytest.raises(RuntimeError, match=r"^only Tensors of floating point dtype can require"):
        i.requires_grad_()
    with pytest.raises(
        RuntimeError, match=r"^only Tensors of floating point and complex dtype can require"
    ):
        i.requires_grad = True
    assert i.requires_grad_(False) is i and not i.requires_grad
    c = lib.ones(2, dtype=lib.complex64).requires_grad_()
    assert c.requires_grad


@pytest.mark.parametrize("bad", [1, None])
def test_requires_grad_must_be_a_bool(lib, bad):
    t = lib.ones(2)
    with pytest.raises(
        TypeError,
        match=r"requires_grad_\(\): argument 'requires_grad' \(position 1\) must be bool, "
        rf"not {type(bad).__name__}",
    ):
        t.requires_grad_(bad)
    with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
        t.requires_grad = bad
    with pytest.raises(RuntimeError, match="requires_grad must be a bool"):
        del t.requires_grad
    assert not t.requires_grad


def test_read_only_autograd_attributes(lib):
    x = lib.ones(2, requires_grad=True)
    for name in ("grad_fn", "is_leaf", "_version"):
        with pytest.raises(AttributeError):
            setattr(x, name, None)
        with pytest.raises(AttributeError):
            delattr(x, name)


def test_assigning_grad(lib):
    x = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="can't assign Variable as its own grad"):
        x.grad = x
    with pytest.raises(
        RuntimeError,
        match=r"attempting to assign a gradient of size '\[3\]' to a tensor of size '\[2\]'\. "
        "Please ensure that the gradient and the tensor are the same size",
    ):
        x.grad = lib.ones(3)
    with pytest.raises(
        TypeError, match="assigned grad expected to be a Tensor or None but got grad of type list"
    ):
        x.grad = [1.0, 2.0]
    x.grad = lib.full((2,), 3.0)
    assert npv(x.grad).tolist() == [3.0, 3.0]
    (x * 2).sum().backward()  # accumulates into the assigned gradient
    assert npv(x.grad).tolist() == [5.0, 5.0]
    del x.grad
    assert x.grad is None
    i = lib.ones(2, dtype=lib.long)
    i.grad = lib.ones(2, dtype=lib.long)  # integer tensors may hold an integer .grad
    assert i.grad.dtype == lib.long


@pytest.mark.parametrize(
    ("grad_dtype", "tensor_dtype", "names"),
    [
        ("float64", "float32", ("double", "Float")),
        ("int64", "float32", ("long int", "Float")),
        ("float16", "float32", (r"c10::Half", "Float")),
        ("complex64", "float32", (r"c10::complex<float>", "Float")),
        ("bool", "float32", ("bool", "Float")),
        ("int32", "float64", ("int", "Double")),
        ("float32", "int8", ("float", "Char")),
        ("float32", "uint8", ("float", "Byte")),
        ("float32", "complex128", ("float", "ComplexDouble")),
    ],
)
def test_assigning_grad_of_another_dtype(lib, grad_dtype, tensor_dtype, names):
    t = lib.ones(3, dtype=getattr(lib, tensor_dtype))
    g = lib.ones(3, dtype=getattr(lib, grad_dtype))
    gname, tname = names
    with pytest.raises(
        RuntimeError,
        match=rf"attempting to assign a gradient with dtype '{gname}' to a tensor with "
        rf"grad_dtype '{tname}'\. The gradient must match the tensor's grad_dtype",
    ):
        t.grad = g


def test_dtype_is_checked_before_size(lib):
    x = lib.ones(2)
    with pytest.raises(RuntimeError, match="with dtype 'double'"):
        x.grad = lib.ones(3, dtype=lib.float64)


def test_assigning_data(lib):
    a = lib.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="data set to a tensor that requires gradients must be floating point or complex",
    ):
        a.data = lib.ones(2, dtype=lib.long)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        a.data = [1.0]
    a.data = lib.zeros(3, dtype=lib.float64)  # another shape and float dtype: allowed
    assert a.dtype == lib.float64 and tuple(a.shape) == (3,) and a.requires_grad
    c = lib.ones(2)
    c.data = lib.ones(2, dtype=lib.long)  # no grad required: any dtype
    assert c.dtype == lib.long
    with pytest.raises(RuntimeError, match="Deleting tensor data is not allowed"):
        del a.data


def test_data_shares_storage_both_ways(lib):
    a = lib.ones(2, requires_grad=True)
    src = lib.full((2,), 4.0)
    a.data = src
    src.add_(1)
    assert npv(a).tolist() == [5.0, 5.0]
    a.data.mul_(2)
    assert npv(src).tolist() == [10.0, 10.0]


def test_detach_inplace_of_a_saved_input_fails_at_backward(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 1
    w = y.sin()
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    with pytest.raises(
        RuntimeError, match=r"Trying to use a saved tensor that has been detached in-place"
    ):
        w.sum().backward()


def test_detach_inplace_of_unsaved_or_own_output_is_fine(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 1
    w = y + 1  # add saves nothing
    y.detach_()
    w.sum().backward()
    assert npv(x.grad).tolist() == [1.0, 1.0]

    x = lib.ones(2, requires_grad=True)
    y = x.exp()  # exp saves its own output
    z = y * 2
    y.detach_()
    z.sum().backward()
    assert npv(x.grad) == pytest.approx([2 * 2.718281828] * 2)

    a = lib.ones(2, requires_grad=True)
    w = a * a  # a saved leaf detached in place: PyTorch keeps the saved value
    a.detach_()
    w.sum().backward()
    assert a.grad is None and not a.requires_grad


def test_detach_inplace_of_a_retained_non_leaf(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.detach_()
    assert not y.requires_grad and y.is_leaf
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        y.sum().backward()
