"""Leaf rules and safety errors of a tensor's autograd attributes (``requires_grad``,
``grad``, ``data``, ``detach_``), each run on compat.torch and on real PyTorch."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from torch_oracle import npv

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


# ------------------------------------------------------------------ error types of ops

_BCAST = (
    r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 1"
)


@pytest.mark.parametrize(
    "op",
    [
        lambda L, a, b: a + b,
        lambda L, a, b: a - b,
        lambda L, a, b: a * b,
        lambda L, a, b: a / b,
        lambda L, a, b: a**b,
        lambda L, a, b: a == b,
        lambda L, a, b: a < b,
        lambda L, a, b: L.add(a, b, alpha=2),
        lambda L, a, b: L.maximum(a, b),
        lambda L, a, b: L.atan2(a, b),
        lambda L, a, b: L.where(a > 0, a, b),
        lambda L, a, b: L.lerp(a, b, 0.5),
        lambda L, a, b: L.addcmul(a, a, b),
        lambda L, a, b: L.nn.functional.mse_loss(a, b),
        lambda L, a, b: L.nn.functional.l1_loss(a, b),
    ],
)
def test_broadcast_mismatch_is_a_runtime_error(lib, op):
    a, b = lib.ones(2, 3, requires_grad=True), lib.ones(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the losses' target-size warning
        with pytest.raises(RuntimeError, match=_BCAST):
            op(lib, a, b)


def test_broadcast_mismatch_reports_the_rightmost_dimension(lib):
    with pytest.raises(
        RuntimeError,
        match=r"size of tensor a \(4\) must match the size of tensor b \(3\) at "
        "non-singleton dimension 1",
    ):
        lib.where(lib.ones(4) > 0, lib.ones(2, 3), lib.ones(2, 3))
    with pytest.raises(
        RuntimeError,
        match=r"size of tensor a \(2\) must match the size of tensor b \(3\) at "
        "non-singleton dimension 1",
    ):
        lib.ones(2, 3).add_(lib.ones(2, 3, 1))
    with pytest.raises(
        RuntimeError, match=r"tensor a \(5\) .* tensor b \(2\) at non-singleton dimension 0"
    ):
        lib.ones(5, 1) * lib.ones(2, 7)


def test_linear_with_wrong_in_features(lib):
    m = lib.nn.Linear(5, 2)
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 5x2\)"
    ):
        m(lib.ones(2, 3))
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(8x3 and 5x2\)"
    ):
        m(lib.ones(4, 2, 3))
    with pytest.raises(
        RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(1x3 and 5x2\)"
    ):
        m(lib.ones(3))


@pytest.mark.parametrize("conv", [float, int, complex])
def test_python_scalar_of_a_multi_element_tensor(lib, conv):
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python"):
        conv(lib.ones(3))
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python"):
        conv(lib.ones(0))
    assert conv(lib.tensor([[2.0]])) == conv(2.0)
    with pytest.raises(
        RuntimeError, match="a Tensor with 3 elements cannot be converted to Scalar"
    ):
        lib.ones(3).item()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda L: L.exp(None),
            "exp(): argument 'input' (position 1) must be Tensor, not NoneType",
        ),
        (lambda L: L.sin("a"), "sin(): argument 'input' (position 1) must be Tensor, not str"),
        (lambda L: L.exp(1), "exp(): argument 'input' (position 1) must be Tensor, not int"),
        (lambda L: L.sum([1.0]), "sum(): argument 'input' (position 1) must be Tensor, not list"),
        (
            lambda L: L.abs(np.ones(2)),
            "abs(): argument 'input' (position 1) must be Tensor, not numpy.ndarray",
        ),
        (lambda L: L.relu(None), "relu(): argument 'input' (position 1) must be Tensor"),
        (lambda L: L.softmax(None, 0), "softmax(): argument 'input' (position 1) must be Tensor"),
        (lambda L: L.add(None, 1), "add(): argument 'input' (position 1) must be Tensor"),
        (
            lambda L: L.add(L.ones(2), None),
            "add(): argument 'other' (position 2) must be Tensor, not NoneType",
        ),
        (
            lambda L: L.mul(L.ones(2), None),
            "mul(): argument 'other' (position 2) must be Tensor, not NoneType",
        ),
        (
            lambda L: L.matmul(L.ones(2), None),
            "matmul(): argument 'other' (position 2) must be Tensor, not NoneType",
        ),
        (lambda L: L.exp(input=None), "exp(): argument 'input' must be Tensor, not NoneType"),
        (
            lambda L: L.add(L.ones(2), other=[1.0]),
            "add(): argument 'other' must be Tensor, not list",
        ),
        (lambda L: L.where(None), "where(): argument 'condition' (position 1) must be Tensor"),
    ],
)
def test_non_tensor_argument_is_a_type_error(lib, call, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        call(lib)


def test_number_first_where_pytorch_has_a_scalar_overload(lib):
    t = lib.full((2,), 2.0)
    assert npv(lib.add(1.5, t)).tolist() == [3.5, 3.5]
    assert npv(lib.pow(2, t)).tolist() == [4.0, 4.0]
    assert npv(lib.sub(1.0, t)).tolist() == [-1.0, -1.0]
    assert npv(lib.mul(3, t)).tolist() == [6.0, 6.0]


@pytest.mark.parametrize("other", [None, [1.0, 2.0], "a", (1.0, 2.0), object()])
def test_operators_with_unsupported_operands(lib, other):
    t = lib.ones(2)
    name = type(other).__name__
    with pytest.raises(
        TypeError, match=re.escape(f"unsupported operand type(s) for +: 'Tensor' and '{name}'")
    ):
        t + other
    # a sequence's own __rmul__ then asks for an index: the same TypeError in both
    mul = "only integer tensors of a single element can be converted to an index"
    if other is None or type(other) is object:
        mul = f"unsupported operand type(s) for *: 'Tensor' and '{name}'"
    with pytest.raises(TypeError, match=re.escape(mul)):
        t * other
    with pytest.raises(
        TypeError, match=re.escape(f"'<' not supported between instances of 'Tensor' and '{name}'")
    ):
        _ = t < other
    assert (t == other) is False and (t != other) is True


@pytest.mark.parametrize(
    "make",
    [
        lambda L, b: b[0:1],
        lambda L, b: b.view(2),
        lambda L, b: b.t(),
        lambda L, b: b.detach()[1:],
    ],
)
@pytest.mark.parametrize("requires_grad", [True, False])
def test_detach_inplace_of_a_view(lib, make, requires_grad):
    x = lib.ones(2, 1, requires_grad=requires_grad)
    b = x * 1
    v = make(lib, b)
    with pytest.raises(RuntimeError, match=r"Can't detach views in-place\. Use detach\(\) instead"):
        v.detach_()
    assert npv(v.detach()).shape == tuple(v.shape)


def test_inplace_add_of_a_grad_tensor_makes_a_non_leaf(lib):
    a, b = lib.ones(5, 5), lib.ones(5, 5, requires_grad=True)
    a += b
    assert a.requires_grad and a.grad_fn is not None
    c = lib.ones(5, 5)[:]
    c += b
    assert c.requires_grad


def test_detached_alias_shares_storage_and_version(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    yd = y.detach()
    yd.add_(1)
    assert npv(y).tolist() == [3.0] * 3 and y._version == 1 and yd._version == 1
    y.sum().backward()  # mul saved nothing of y: fine
    assert npv(x.grad).tolist() == [2.0] * 3
    e = x.exp()
    e.detach().zero_()  # exp saved its result: the shared version makes backward fail
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()


def test_data_assignment_keeps_the_grad_and_leaf_flags(lib):
    a = lib.ones(2, requires_grad=True)
    (a * 2).sum().backward()
    a.data = lib.zeros(3)
    assert npv(a.grad).tolist() == [2.0, 2.0] and a.is_leaf and a.requires_grad
    with lib.no_grad():
        a.requires_grad_(False)
    assert not a.requires_grad
