"""The error cases of the compat issue, with PyTorch's exception types and message gist.

Each scenario runs on compat.torch and on real PyTorch (``lib`` fixture), so the
expected type and message are checked against the oracle too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import npv


def test_second_backward_through_freed_saved_tensors(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"Trying to backward through the graph a second time"):
        y.backward()


def test_graph_that_saved_nothing_can_be_backwarded_again_and_grad_doubles(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x.sum()
    y.backward()
    y.backward()
    assert npv(x.grad).tolist() == [2.0, 2.0]


def test_multiply_by_python_number_saves_the_wrapped_number(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_non_scalar_output_without_gradient(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        (x * 2).backward()


def test_gradient_of_the_wrong_shape(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"Mismatch in shape: grad_output\[0\] has a shape of torch.Size\(\[2\]\) and "
        r"output\[0\] has a shape of torch.Size\(\[3\]\)",
    ):
        (x * 2).backward(lib.ones(2))


def test_non_tensor_gradient_is_a_type_error(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got list"):
        lib.autograd.backward([x * 2], [[1.0, 2.0]])
    with pytest.raises(TypeError, match="but got float"):
        lib.autograd.backward([(x * 2).sum()], [1.0])


def test_output_that_does_not_require_grad(lib):
    with pytest.raises(
        RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"
    ):
        lib.ones(3).sum().backward()


def test_unused_input_in_grad(lib):
    x = lib.tensor([1.0], requires_grad=True)
    z = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"appears to not have been used in the graph\. Set allow_unused=True if this is the "
        r"desired behavior\.",
    ):
        lib.autograd.grad((x * 2).sum(), [x, z])


def test_input_with_requires_grad_false(lib):
    x = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError, match="One of the differentiated Tensors does not require grad"
    ):
        lib.autograd.grad((x * 2).sum(), [x, lib.ones(1)])


def test_materialize_grads_with_allow_unused_false_is_a_value_error_before_other_checks(lib):
    # even with a nonsense output, the ValueError comes first
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
        lib.autograd.grad(lib.ones(2), [lib.ones(2)], materialize_grads=True, allow_unused=False)


def test_backward_inputs_empty(lib):
    x = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError, match=r"`inputs` argument to `backward\(\)` cannot be empty\."
    ):
        (x * 2).sum().backward(inputs=[])


def test_grad_inputs_empty(lib):
    x = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"`inputs` argument to `grad\(\)` cannot be empty\."):
        lib.autograd.grad((x * 2).sum(), [])


def test_unused_backward_inputs_left_none_silently_other_leaves_untouched(lib):
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([1.0], requires_grad=True)
    c = lib.tensor([1.0], requires_grad=True)
    (a * 3).sum().backward(inputs=[a, c])
    assert npv(a.grad).tolist() == [3.0]
    assert b.grad is None and c.grad is None


def test_is_grads_batched_checks_only_trailing_shape(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"If `is_grads_batched=True`, we interpret the first"):
        lib.autograd.grad(x * 2, x, lib.ones(3, 3), is_grads_batched=True)
    (g,) = lib.autograd.grad(x * 2, x, lib.ones(7, 2), is_grads_batched=True)
    assert tuple(g.shape) == (7, 2)


def test_is_grads_batched_none_passes_through(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    z = lib.tensor([1.0], requires_grad=True)
    gx, gz = lib.autograd.grad(
        x * 2, [x, z], lib.ones(4, 2), is_grads_batched=True, allow_unused=True
    )
    assert gz is None and tuple(gx.shape) == (4, 2)


def test_is_grads_batched_mismatched_batch_sizes_value_error(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="Expected all tensors to have the same size"):
        lib.autograd.grad(
            [x * 2, x * 3], x, [lib.ones(3, 2), lib.ones(4, 2)], is_grads_batched=True
        )


def test_grad_of_non_leaf_without_retain_grad_warns_and_is_none(lib):
    x = lib.tensor([1.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf"):
        assert y.grad is None


def test_retain_grad_populates_non_leaf_grad_without_warning(lib):
    x = lib.tensor([1.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * 3).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert npv(y.grad).tolist() == [3.0]
    assert y.retains_grad


def test_backward_create_graph_warns_about_reference_cycle_grad_does_not(torch):
    from compat._core import engine

    engine._cycle_warned[0] = False
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="reference cycle between the parameter and its gradient"):
        (x * x).sum().backward(create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * x).sum().backward(create_graph=True)  # once per process
        torch.autograd.grad((x * x).sum(), x, create_graph=True)


def test_saved_tensor_modified_in_place_version_mismatch(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a.exp()  # saves its result
    b.add_(1)
    with pytest.raises(
        RuntimeError,
        match=r"one of the variables needed for gradient computation has been modified by an "
        r"inplace operation: \[torch.FloatTensor \[2\]\], which is output 0 of Exp\w*, is at "
        r"version 1; expected version 0 instead",
    ):
        b.sum().backward()


def test_saved_input_modified_in_place_twice(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a * a
    a.mul_(2)
    a.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 2; expected version 0 instead"):
        b.sum().backward()


def test_saved_leaf_constant_modified_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.ones(2)
    b = x * w
    w.add_(1)
    with pytest.raises(
        RuntimeError, match=r"\[torch.FloatTensor \[2\]\] is at version 1; expected version 0"
    ):
        b.sum().backward()


def test_in_place_on_unsaved_tensor_is_fine(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a + 1  # add saves nothing
    a.mul_(3)
    b.sum().backward()
    assert npv(x.grad).tolist() == [1.0, 1.0]


def test_in_place_on_leaf_requiring_grad(lib):
    x = lib.tensor([1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match=r"a leaf Variable that requires grad is being used in an in-place operation\.",
    ):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x += 1
    with lib.no_grad():
        x.add_(1)
    assert npv(x).tolist() == [2.0]


def test_grad_variables_is_deprecated(lib):
    x = lib.tensor([1.0], requires_grad=True)
    with pytest.warns(FutureWarning, match="`grad_variables` is deprecated"):
        lib.autograd.backward((x * 2).sum(), grad_variables=lib.tensor(1.0))
    assert npv(x.grad).tolist() == [2.0]


def test_grad_variables_conflicts_with_grad_tensors(lib):
    x = lib.tensor([1.0], requires_grad=True)
    with (
        pytest.warns(FutureWarning),
        pytest.raises(
            RuntimeError,
            match="`grad_tensors` and `grad_variables` \\(deprecated\\) arguments both",
        ),
    ):
        lib.autograd.backward(
            (x * 2).sum(), grad_tensors=lib.tensor(1.0), grad_variables=lib.tensor(1.0)
        )


def test_only_inputs_false_warns_and_is_ignored(lib):
    x = lib.tensor([1.0], requires_grad=True)
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        lib.autograd.grad((x * 2).sum(), x, only_inputs=False)
    assert x.grad is None


def test_requires_grad_on_integer_tensor(lib):
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require"):
        lib.ones(3, dtype=lib.int64).requires_grad_()
    with pytest.raises(
        RuntimeError, match="floating point and complex dtype can require gradients"
    ):
        lib.tensor([1, 2], requires_grad=True)


def test_shape_one_tensor_gets_implicit_ones(lib):
    x = lib.tensor([3.0], requires_grad=True)
    (x * 2).backward()
    assert npv(x.grad).tolist() == [2.0]


def test_leaf_grad_accumulates_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert g is x.grad
    assert npv(g).tolist() == [5.0, 5.0]


def test_hand_assigned_grad_accumulates_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    g = lib.tensor([10.0, 10.0])
    x.grad = g
    (x * 2).sum().backward()
    assert npv(g).tolist() == [12.0, 12.0]


def test_create_graph_accumulates_out_of_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (x * x).sum().backward(create_graph=True)
    assert g is not x.grad
    assert npv(g).tolist() == [2.0, 2.0]
    np.testing.assert_allclose(npv(x.grad), [4.0, 6.0])


def test_get_gradient_edge_requires_grad(lib):
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
        lib.autograd.graph.get_gradient_edge(lib.ones(2))


def test_assigning_grad_of_wrong_shape_or_type(lib):
    x = lib.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="assign"):
        x.grad = lib.ones(2)
    with pytest.raises(TypeError, match="expected to be a Tensor or None"):
        x.grad = [1.0, 2.0, 3.0]


def test_requires_grad_of_non_leaf_cannot_change(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False


def test_hooks_need_requires_grad(lib):
    with pytest.raises(
        RuntimeError, match="cannot register a hook on a tensor that doesn't require"
    ):
        lib.ones(2).register_hook(lambda g: g)
    with pytest.raises(
        RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"
    ):
        lib.ones(2).retain_grad()
    x = lib.ones(2, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="post accumulate grad hooks cannot be registered on non"
    ):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


@pytest.mark.parametrize("namespace", ["linalg", "special", "fft"])
def test_argument_errors_name_the_op_as_pytorch(torch, real_torch, namespace):
    """A ``torch.<namespace>.X`` given a string for its tensor names the op as PyTorch's
    argument parser does (``linalg_inv()``, ``special_erf()``, ``fft_fft()``), not compat's
    function."""
    mine, theirs = getattr(torch, namespace), getattr(real_torch, namespace)
    checked = 0
    for name in sorted(n for n in dir(mine) if not n.startswith("_")):
        if not callable(getattr(mine, name)) or not callable(getattr(theirs, name, None)):
            continue
        said = []
        for ns in (mine, theirs):
            try:
                getattr(ns, name)("x")
                said.append("")
            except TypeError as e:
                said.append(str(e).partition("(")[0] if "must be Tensor" in str(e) else "")
            except Exception:
                said.append("")
        if said[0] and said[1]:
            assert said[0] == said[1] == f"{namespace}_{name}", name
            checked += 1
    assert checked >= 5


def test_typename_as_pytorch(lib):
    """``torch.typename`` (and so ``nn.Module``'s and the optimizers' messages): a tensor's
    type string, a Python object's qualified type name."""
    assert lib.typename(lib.ones(2)) == "torch.FloatTensor"
    assert lib.typename(lib.ones(2, dtype=lib.float64)) == "torch.DoubleTensor"
    assert lib.typename(3) == "int" and lib.typename(None) == "NoneType"
    assert lib.typename(int) == "int"
    assert lib.typename(lib.nn.Parameter(lib.ones(1))) == "torch.FloatTensor"
    m = lib.nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"cannot assign 'torch\.FloatTensor' object to parameter"):
        m.register_parameter("w", lib.ones(2))
    with pytest.raises(TypeError, match=r"torch\.FloatTensor is not a Module subclass"):
        m.add_module("x", lib.ones(2))
    with pytest.raises(
        TypeError, match=r"iterable of Tensors or dicts, but got torch\.FloatTensor"
    ):
        lib.optim.SGD(lib.ones(2), lr=0.1)
