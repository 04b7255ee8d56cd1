"""One test per documented sentence of the reference API docs, named after it.

Sources (``shared/reference``): ``torch.autograd.backward``, ``torch.autograd.grad``,
``torch.Tensor.backward``, the C++ ``torch::autograd::backward`` (its sentences
mapped to the Python API: ``torch::Tensor()`` is ``None``) and OneFlow's
``oneflow.autograd.backward``. Every test taking ``lib`` runs on compat.torch and on
real PyTorch (the oracle) with the same hand-computed expectations.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_oracle import is_compat, npv

import compat.oneflow as flow

# =========================================================================== torch.autograd.backward


class TestAutogradBackward:
    def test_computes_the_sum_of_gradients_of_given_tensors_with_respect_to_graph_leaves(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y1 = (x * x).sum()
        y2 = (3 * x).sum()
        lib.autograd.backward([y1, y2])
        np.testing.assert_allclose(npv(x.grad), [2 * 1 + 3, 2 * 2 + 3])

    def test_the_graph_is_differentiated_using_the_chain_rule(self, lib):
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        y = lib.sin(x * x).sum()
        lib.autograd.backward(y)
        xv = np.array([0.5, -1.0])
        np.testing.assert_allclose(npv(x.grad), np.cos(xv * xv) * 2 * xv, rtol=1e-6)

    def test_non_scalar_tensors_require_grad_tensors(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            lib.autograd.backward(x * 2)

    def test_non_scalar_computes_the_jacobian_vector_product(self, lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        v = lib.tensor([1.0, 0.5, -1.0])
        lib.autograd.backward(y, grad_tensors=v)
        np.testing.assert_allclose(npv(x.grad), 2 * np.array([1.0, 2.0, 3.0]) * [1.0, 0.5, -1.0])

    def test_grad_tensors_is_a_sequence_of_matching_length(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = x * 2, x * 3
        lib.autograd.backward([a, b], [lib.tensor([1.0, 1.0]), lib.tensor([1.0, -1.0])])
        np.testing.assert_allclose(npv(x.grad), [5.0, -1.0])

    def test_none_is_acceptable_for_tensors_that_dont_need_gradient_tensors(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        s = (x * x).sum()  # scalar: None means ones
        v = x * 2  # non-scalar: needs a vector
        lib.autograd.backward([s, v], [None, lib.tensor([1.0, 1.0])])
        np.testing.assert_allclose(npv(x.grad), [2 + 2, 4 + 2])

    def test_a_gradient_of_another_float_dtype_is_cast_to_the_outputs(self, lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (x * 3).backward(lib.tensor([1.0, 0.5]))  # float32 gradient, float64 output
        assert x.grad.dtype == lib.float64 and npv(x.grad).tolist() == [3.0, 1.5]
        y = lib.tensor([1.0, 2.0], requires_grad=True)  # float32 output, float64 gradient
        (g,) = lib.autograd.grad(y.sin(), y, lib.tensor([1.0, 1.0], dtype=lib.float64))
        assert g.dtype == lib.float32
        np.testing.assert_allclose(npv(g), np.cos([1.0, 2.0]), rtol=1e-6)
        (g,) = lib.autograd.grad(x * x, x, lib.ones(2, dtype=lib.float16), create_graph=True)
        assert g.dtype == lib.float64 and g.requires_grad
        assert npv(g).tolist() == [2.0, 4.0]

    def test_this_function_accumulates_gradients_in_the_leaves(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.backward((x * 3).sum())
        lib.autograd.backward((x * 3).sum())
        np.testing.assert_allclose(npv(x.grad), [6.0, 6.0])

    def test_you_might_need_to_zero_grad_attributes_or_set_them_to_none(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.backward((x * 3).sum())
        x.grad.zero_()
        lib.autograd.backward((x * 5).sum())
        np.testing.assert_allclose(npv(x.grad), [5.0, 5.0])
        x.grad = None
        lib.autograd.backward((x * 7).sum())
        np.testing.assert_allclose(npv(x.grad), [7.0, 7.0])

    def test_see_default_gradient_layouts_grad_matches_the_leaf(self, lib):
        x = lib.zeros(2, 3, dtype=lib.float64, requires_grad=True)
        lib.autograd.backward((x * 2).sum())
        assert tuple(x.grad.shape) == (2, 3) and x.grad.dtype == lib.float64
        assert x.grad.requires_grad is False and x.grad.grad_fn is None

    def test_create_graph_true_creates_a_reference_cycle_warning(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        # PyTorch warns once per process; whether this is the first call depends on test order,
        # so only check that the warning, when emitted, is the documented one
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.autograd.backward((x * x).sum(), create_graph=True)
        for item in w:
            assert "reference cycle" in str(item.message)
            assert item.category is UserWarning
        assert x.grad.grad_fn is not None

    def test_we_recommend_using_autograd_grad_when_creating_the_graph(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            (g,) = lib.autograd.grad((x * x).sum(), x, create_graph=True)
        assert g.grad_fn is not None and x.grad is None

    def test_reset_the_grad_fields_to_none_after_use_to_break_the_cycle(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.backward((x * x * x).sum(), create_graph=True)
        g = x.grad
        (h,) = lib.autograd.grad(g.sum(), x)
        np.testing.assert_allclose(npv(h), 6 * np.array([1.0, 2.0]))
        x.grad = None
        assert x.grad is None

    def test_stream_semantics_note_backward_is_synchronous_on_cpu(self, lib):
        # compat has no CUDA streams: results are ready when backward returns
        x = lib.tensor([1.0], requires_grad=True)
        lib.autograd.backward((x * 2).sum())
        assert npv(x.grad).tolist() == [2.0]

    def test_when_inputs_are_provided_and_an_input_is_not_a_leaf(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 3
        y = (h * h).sum()
        lib.autograd.backward(y, inputs=[h])
        np.testing.assert_allclose(npv(h.grad), 2 * 3 * np.array([1.0, 2.0]))
        assert x.grad is None

    def test_tensors_sequence_or_tensor_of_which_the_derivative_will_be_computed(self, lib):
        x = lib.tensor(2.0, requires_grad=True)
        lib.autograd.backward(x * x)  # a Tensor
        lib.autograd.backward((x * x,))  # a sequence
        assert npv(x.grad).item() == 8.0

    def test_grad_tensors_none_values_for_scalar_tensors_or_ones_that_dont_require_grad(self, lib):
        x = lib.tensor(2.0, requires_grad=True)
        lib.autograd.backward([x * x], [None])
        assert npv(x.grad).item() == 4.0

    def test_if_a_none_value_would_be_acceptable_for_all_grad_tensors_it_is_optional(self, lib):
        x = lib.tensor(2.0, requires_grad=True)
        lib.autograd.backward([x * x, x * 3])
        assert npv(x.grad).item() == 7.0

    def test_retain_graph_false_frees_the_graph(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        lib.autograd.backward(y, retain_graph=False)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            lib.autograd.backward(y)

    def test_retain_graph_true_is_rarely_needed_but_allows_a_second_backward(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        lib.autograd.backward(y, retain_graph=True)
        lib.autograd.backward(y)
        np.testing.assert_allclose(npv(x.grad), [4.0, 8.0])

    def test_retain_graph_defaults_to_the_value_of_create_graph(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.backward(y, create_graph=True)  # retained
        x.grad = None
        lib.autograd.backward(y)  # create_graph False -> freed now
        with pytest.raises(RuntimeError, match="second time"):
            lib.autograd.backward(y)

    def test_create_graph_constructs_the_graph_of_the_derivative(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.backward((x**3).sum(), create_graph=True)
        g = x.grad
        assert g.requires_grad
        (h,) = lib.autograd.grad(g.sum(), x)
        np.testing.assert_allclose(npv(h), [6.0, 12.0])

    def test_create_graph_defaults_to_false(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        lib.autograd.backward((x**3).sum())
        assert not x.grad.requires_grad and x.grad.grad_fn is None

    def test_inputs_gradient_accumulated_only_into_inputs_others_ignored(self, lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        lib.autograd.backward((a * b).sum(), inputs=[a])
        assert npv(a.grad).tolist() == [2.0] and b.grad is None

    def test_inputs_not_provided_accumulates_into_all_leaves_used(self, lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        lib.autograd.backward((a * b).sum())
        assert npv(a.grad).tolist() == [2.0] and npv(b.grad).tolist() == [1.0]

    def test_inputs_may_be_gradient_edges(self, lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        lib.autograd.backward((a * b).sum(), inputs=[lib.autograd.graph.get_gradient_edge(a)])
        assert npv(a.grad).tolist() == [2.0] and b.grad is None


# =========================================================================== torch.autograd.grad


class TestAutogradGrad:
    def test_computes_and_returns_the_sum_of_gradients_of_outputs_wrt_inputs(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        gs = lib.autograd.grad([(x * x).sum(), (2 * x).sum()], [x])
        np.testing.assert_allclose(npv(gs[0]), [4.0, 6.0])
        assert x.grad is None

    def test_grad_outputs_is_the_vector_in_the_vector_jacobian_product(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad(x * x, x, grad_outputs=lib.tensor([1.0, -1.0]))
        np.testing.assert_allclose(npv(g), [2.0, -4.0])

    def test_if_an_output_doesnt_require_grad_the_gradient_can_be_none(self, lib):
        # _make_grads accepts None for it; the engine then reports the output, as PyTorch does
        x = lib.tensor([1.0], requires_grad=True)
        c = lib.tensor(1.0)
        with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
            lib.autograd.grad([(x * 2).sum(), c], x, [None, None])

    def test_stream_semantics_note_grad_is_synchronous_on_cpu(self, lib):
        x = lib.tensor([3.0], requires_grad=True)
        (g,) = lib.autograd.grad((x * x).sum(), x)
        assert npv(g).tolist() == [6.0]

    def test_only_inputs_argument_is_deprecated_and_ignored(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            (g,) = lib.autograd.grad((x * 2).sum(), x, only_inputs=False)
        assert npv(g).tolist() == [2.0] and x.grad is None

    def test_outputs_sequence_of_tensor(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        (g,) = lib.autograd.grad(((x * 2).sum(), (x * 3).sum()), (x,))
        assert npv(g).tolist() == [5.0]

    def test_inputs_gradient_returned_and_not_accumulated_into_grad(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        lib.autograd.grad((x * 2).sum(), [x])
        assert x.grad is None

    def test_grad_outputs_none_values_for_scalars_and_optional(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (g,) = lib.autograd.grad((x * x).sum(), x)
        (g2,) = lib.autograd.grad((x * x).sum(), x, grad_outputs=[None])
        np.testing.assert_allclose(npv(g), npv(g2))

    def test_retain_graph_false_frees_and_defaults_to_create_graph(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        lib.autograd.grad(y, x)
        with pytest.raises(RuntimeError, match="second time"):
            lib.autograd.grad(y, x)
        y = (x * x).sum()
        lib.autograd.grad(y, x, create_graph=True)
        lib.autograd.grad(y, x)  # retained because create_graph was True

    def test_create_graph_allows_higher_order_derivative_products(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        v = lib.tensor([1.0, 0.5])
        (g,) = lib.autograd.grad((x**3).sum(), x, create_graph=True)
        (hvp,) = lib.autograd.grad(g, x, grad_outputs=v)
        np.testing.assert_allclose(npv(hvp), 6 * np.array([1.0, 2.0]) * [1.0, 0.5])

    def test_allow_unused_false_unused_inputs_are_an_error(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        z = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            lib.autograd.grad((x * 2).sum(), [x, z])

    def test_allow_unused_defaults_to_materialize_grads(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        z = lib.tensor([1.0, 2.0], requires_grad=True)
        _, gz = lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
        assert npv(gz).tolist() == [0.0, 0.0]
        _, gz = lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
        assert gz is None

    def test_is_grads_batched_first_dimension_is_the_batch_dimension(self, lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        (jac,) = lib.autograd.grad(y, x, lib.eye(3), is_grads_batched=True)
        np.testing.assert_allclose(npv(jac), np.diag([2.0, 4.0, 6.0]))

    def test_is_grads_batched_computes_a_batch_of_vector_jacobian_products(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True, dtype=lib.float64)
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        y = lib.tanh(w @ x)
        vs = lib.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=lib.float64)
        (g,) = lib.autograd.grad(y, x, vs, is_grads_batched=True, retain_graph=True)
        for i in range(3):
            (gi,) = lib.autograd.grad(y, x, vs[i], retain_graph=True)
            np.testing.assert_allclose(npv(g[i]), npv(gi), rtol=1e-6)

    def test_is_grads_batched_vectorizes_calls_in_a_single_call(self, torch):
        # compat: one batched program (funcgrad.batching.batch_program), no Python loop
        from compat._core import assemble

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.tanh(x * 3)
        torch.autograd.grad(y, x, torch.ones(5, 2), is_grads_batched=True, retain_graph=True)
        n5 = len(assemble.last_backward_program.eqns)
        torch.autograd.grad(y, x, torch.ones(9, 2), is_grads_batched=True)
        assert len(assemble.last_backward_program.eqns) == n5

    def test_is_grads_batched_performance_cliffs_note_no_fallback_loop(self, torch):
        # there is no per-example fallback: every batched program has the batch in its avals
        from compat._core import assemble

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        torch.autograd.grad((x * x).exp(), x, torch.ones(4, 2), is_grads_batched=True)
        prog = assemble.last_backward_program
        assert all(v.aval.shape[0] == 4 for v in prog.outvars)

    def test_is_grads_batched_defaults_to_false(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="Mismatch in shape"):
            lib.autograd.grad(x * 2, x, lib.ones(3, 2))

    def test_materialize_grads_sets_unused_gradients_to_zero(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        z = lib.tensor([[1.0, 2.0]], requires_grad=True)
        _, gz = lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
        assert npv(gz).tolist() == [[0.0, 0.0]]

    def test_materialize_grads_is_useful_for_higher_order_derivatives(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        z = lib.tensor([1.0], requires_grad=True)
        (g,) = lib.autograd.grad((x * x).sum() + (z * 2).sum(), x, create_graph=True)
        h, hz = lib.autograd.grad(g.sum(), [x, z], materialize_grads=True)
        assert npv(h).tolist() == [2.0, 2.0] and npv(hz).tolist() == [0.0]

    def test_materialize_grads_true_and_allow_unused_false_is_an_error(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed"):
            lib.autograd.grad((x * 2).sum(), x, materialize_grads=True, allow_unused=False)

    def test_materialize_grads_defaults_to_false(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        z = lib.tensor([1.0], requires_grad=True)
        _, gz = lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
        assert gz is None

    def test_return_type_is_a_tuple_of_tensors(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        out = lib.autograd.grad((x * 2).sum(), [x])
        assert isinstance(out, tuple) and isinstance(out[0], lib.Tensor)


# =========================================================================== Tensor.backward


class TestTensorBackward:
    def test_computes_the_gradient_of_current_tensor_wrt_graph_leaves(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        np.testing.assert_allclose(npv(x.grad), [2.0, 4.0])

    def test_the_graph_is_differentiated_using_the_chain_rule(self, lib):
        x = lib.tensor([0.3], requires_grad=True)
        lib.exp(lib.sin(x)).sum().backward()
        np.testing.assert_allclose(npv(x.grad), np.exp(np.sin(0.3)) * np.cos(0.3), rtol=1e-6)

    def test_non_scalar_requires_specifying_a_gradient(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            (x * 2).backward()

    def test_gradient_should_be_a_tensor_of_matching_type_and_shape(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).backward(lib.tensor([1.0, 3.0]))
        np.testing.assert_allclose(npv(x.grad), [2.0, 6.0])
        with pytest.raises(RuntimeError, match="Mismatch in shape"):
            (x * 2).backward(lib.tensor([1.0, 3.0, 4.0]))

    def test_this_function_accumulates_gradients_in_the_leaves(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        (x * 2).sum().backward()
        (x * 2).sum().backward()
        assert npv(x.grad).tolist() == [4.0]

    def test_see_default_gradient_layouts(self, lib):
        x = lib.ones(3, 2, requires_grad=True)
        (x * 2).sum().backward()
        assert x.grad.shape == x.shape and x.grad.dtype == x.dtype

    def test_stream_semantics_note(self, lib):
        x = lib.ones(1, requires_grad=True)
        (x * 2).sum().backward()
        assert npv(x.grad).tolist() == [2.0]

    def test_when_inputs_are_provided_and_an_input_is_not_a_leaf(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        h = x * 2
        (h * h).sum().backward(inputs=[h])
        assert npv(h.grad).tolist() == [4.0] and x.grad is None

    def test_gradient_can_be_omitted_if_self_is_a_scalar(self, lib):
        x = lib.tensor(3.0, requires_grad=True)
        (x * x).backward()
        assert npv(x.grad).item() == 6.0

    def test_gradient_defaults_to_none(self, lib):
        x = lib.tensor([3.0], requires_grad=True)
        (x * x).backward()  # shape [1]: implicit ones
        assert npv(x.grad).tolist() == [6.0]

    def test_retain_graph_false_freed_true_retained(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward(retain_graph=False)
        with pytest.raises(RuntimeError, match="second time"):
            y.backward()

    def test_retain_graph_default_inferred_from_create_graph(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        y = (x * x).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y.backward(create_graph=True)
        y.backward()  # still there
        with pytest.raises(RuntimeError, match="second time"):
            y.backward()

    def test_create_graph_constructs_the_graph_of_the_derivative(self, lib):
        x = lib.tensor([2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x**3).sum().backward(create_graph=True)
        (h,) = lib.autograd.grad(x.grad.sum(), x)
        assert npv(h).tolist() == [12.0]

    def test_create_graph_defaults_to_false(self, lib):
        x = lib.tensor([2.0], requires_grad=True)
        (x**3).sum().backward()
        assert x.grad.grad_fn is None

    def test_inputs_wrt_which_the_gradient_will_be_accumulated(self, lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        (a * b).sum().backward(inputs=[b])
        assert a.grad is None and npv(b.grad).tolist() == [1.0]

    def test_inputs_all_other_tensors_will_be_ignored(self, lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        c = lib.tensor([3.0], requires_grad=True)
        (a * b * c).sum().backward(inputs=[a, c])
        assert b.grad is None
        assert npv(a.grad).tolist() == [6.0] and npv(c.grad).tolist() == [2.0]

    def test_inputs_not_provided_accumulates_into_all_leaves(self, lib):
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0], requires_grad=True)
        (a * b).sum().backward()
        assert npv(a.grad).tolist() == [2.0] and npv(b.grad).tolist() == [1.0]

    def test_inputs_defaults_to_none(self, lib):
        a = lib.tensor([1.0], requires_grad=True)
        (a * 4).sum().backward(inputs=None)
        assert npv(a.grad).tolist() == [4.0]


# =========================================================================== torch::autograd::backward (C++)


class TestCppBackward:
    """The C++ ``torch::autograd::backward`` documents the same semantics; in Python
    ``torch::Tensor()`` (an undefined tensor) is ``None``."""

    def test_computes_the_sum_of_gradients_of_given_tensors_with_respect_to_graph_leaves(self, lib):
        x = lib.tensor([1.0], requires_grad=True)
        lib.autograd.backward([(x * 2).sum(), (x * 5).sum()])
        assert npv(x.grad).tolist() == [7.0]

    def test_jacobian_vector_product_requires_grad_tensors_for_non_scalars(self, lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
            lib.autograd.backward([x * 2], [None])
        lib.autograd.backward([x * 2], [lib.tensor([1.0, 2.0])])
        assert npv(x.grad).tolist() == [2.0, 4.0]

    def test_undefined_tensor_acceptable_for_tensors_that_dont_need_gradient_tensors(self, lib):
        x = lib.tensor(1.0, requires_grad=True)
        lib.autograd.backward([x * 2], [None])
        assert npv(x.grad).item() == 2.0

    def test_this_function_accumulates_gradients_in_the_leaves(self, lib):
        x = lib.tensor(1.0, requires_grad=True)
        lib.autograd.backward([x * 2])
        lib.autograd.backward([x * 2])
        assert npv(x.grad).item() == 4.0

    def test_you_might_need_to_zero_them_before_calling_it(self, lib):
        x = lib.tensor(1.0, requires_grad=True)
        lib.autograd.backward([x * 2])
        x.grad.zero_()
        lib.autograd.backward([x * 2])
        assert npv(x.grad).item() == 2.0

    def test_grad_tensors_optional_if_undefined_acceptable_for_all(self, lib):
        x = lib.tensor(1.0, requires_grad=True)
        lib.autograd.backward([x * 2, x * 3])
        assert npv(x.grad).item() == 5.0

    def test_retain_graph_false_frees_defaults_to_create_graph(self, lib):
        x = lib.tensor(1.0, requires_grad=True)
        y = x * x
        lib.autograd.backward([y])
        with pytest.raises(RuntimeError, match="second time"):
            lib.autograd.backward([y])

    def test_create_graph_constructs_derivative_graph_defaults_false(self, lib):
        x = lib.tensor(1.0, requires_grad=True)
        lib.autograd.backward([x * x])
        assert x.grad.grad_fn is None

    def test_inputs_accumulated_into_grad_all_others_ignored(self, lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(2.0, requires_grad=True)
        lib.autograd.backward([a * b], inputs=[a])
        assert npv(a.grad).item() == 2.0 and b.grad is None

    def test_inputs_not_provided_accumulated_into_all_leaves_used(self, lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = lib.tensor(2.0, requires_grad=True)
        lib.autograd.backward([a * b])
        assert npv(a.grad).item() == 2.0 and npv(b.grad).item() == 1.0


# =========================================================================== oneflow.autograd.backward


class TestOneflowBackward:
    def test_computes_the_sum_of_gradients_of_given_tensors_with_respect_to_graph_leaves(self):
        x = flow.tensor([1.0, 2.0], requires_grad=True)
        flow.autograd.backward([(x * x).sum(), x.sum()])
        np.testing.assert_allclose(npv(x.grad), [3.0, 5.0])

    def test_the_graph_is_differentiated_using_the_chain_rule(self):
        x = flow.tensor([0.5], requires_grad=True)
        flow.autograd.backward(flow.tanh(x * 2).sum())
        np.testing.assert_allclose(npv(x.grad), 2 * (1 - np.tanh(1.0) ** 2), rtol=1e-6)

    def test_non_scalar_tensors_additionally_require_grad_tensors(self):
        x = flow.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
            flow.autograd.backward(x * 2)
        flow.autograd.backward(x * 2, flow.tensor([1.0, -1.0]))
        np.testing.assert_allclose(npv(x.grad), [2.0, -2.0])

    def test_none_is_an_acceptable_value_for_tensors_that_dont_need_gradient(self):
        x = flow.tensor(2.0, requires_grad=True)
        flow.autograd.backward([x * x], [None])
        assert npv(x.grad).item() == 4.0

    def test_this_function_accumulates_gradients_in_the_leaves(self):
        x = flow.tensor([1.0], requires_grad=True)
        flow.autograd.backward((x * 2).sum())
        flow.autograd.backward((x * 2).sum())
        assert npv(x.grad).tolist() == [4.0]

    def test_create_graph_true_creates_a_reference_cycle(self):
        x = flow.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            flow.autograd.backward((x * x).sum(), create_graph=True)
        assert x.grad.grad_fn is not None
        x.grad = None  # breaks the cycle, as the note recommends

    def test_tensors_tensor_or_sequence(self):
        x = flow.tensor(1.0, requires_grad=True)
        flow.autograd.backward(x * 3)
        flow.autograd.backward([x * 3])
        assert npv(x.grad).item() == 6.0

    def test_grad_tensors_the_vector_in_the_jacobian_vector_product(self):
        x = flow.tensor([1.0, 2.0], requires_grad=True)
        flow.autograd.backward([x * x], [flow.tensor([0.5, 2.0])])
        np.testing.assert_allclose(npv(x.grad), [1.0, 8.0])

    def test_retain_graph_false_resets_the_graph_after_backward(self):
        x = flow.tensor([1.0], requires_grad=True)
        y = (x * x).sum()
        flow.autograd.backward(y)
        with pytest.raises(RuntimeError, match="second time"):
            flow.autograd.backward(y)

    def test_retain_graph_defaults_to_false_even_with_create_graph(self):
        # OneFlow's signature: retain_graph=False (not create_graph, unlike PyTorch)
        x = flow.tensor([1.0], requires_grad=True)
        y = (x * x).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            flow.autograd.backward(y, create_graph=True)
        with pytest.raises(RuntimeError, match="second time"):
            flow.autograd.backward(y)

    def test_retain_graph_true_keeps_the_graph(self):
        x = flow.tensor([1.0], requires_grad=True)
        y = (x * x).sum()
        flow.autograd.backward(y, retain_graph=True)
        flow.autograd.backward(y)
        assert npv(x.grad).tolist() == [4.0]

    def test_create_graph_allows_higher_order_derivative_products(self):
        x = flow.tensor([2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            flow.autograd.backward((x**3).sum(), create_graph=True)
        (h,) = flow.autograd.grad(x.grad.sum(), x)
        assert npv(h).tolist() == [12.0]

    def test_create_graph_defaults_to_false(self):
        x = flow.tensor([2.0], requires_grad=True)
        flow.autograd.backward((x**3).sum())
        assert x.grad.grad_fn is None

    def test_oneflow_grad_signature_defaults(self):
        x = flow.tensor([2.0], requires_grad=True)
        y = (x * x).sum()
        (g,) = flow.autograd.grad(y, x)
        assert npv(g).tolist() == [4.0]
        with pytest.raises(RuntimeError, match="second time"):
            flow.autograd.grad(y, x)


def test_compat_flavours_share_one_core():
    import compat.torch as ctorch

    assert flow.Tensor is ctorch.Tensor
    assert is_compat(ctorch) and is_compat(flow)
