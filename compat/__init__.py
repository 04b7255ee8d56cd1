"""compat: PyTorch-style stateful autograd on funcgrad's IR.

``import compat.torch as torch`` (or ``import compat.oneflow as flow``) gives a
``Tensor`` with mutable ``.grad``, recorded ops and ``autograd.backward`` /
``autograd.grad`` whose gradients come from funcgrad's VJP transform of the
recorded graph. See ``compat/README.md`` for what is supported.

Importing compat enables ``jax_enable_x64`` (PyTorch has float64/int64 tensors);
compat keeps PyTorch's default dtype float32 for Python floats.
"""
