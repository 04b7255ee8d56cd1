"""The ``torch`` -> ``compat.torch`` swap for PyTorch's test files.

``torch.X`` resolves to ``compat.torch.X`` name for name; the modules of
``torch.testing._internal`` the test file imports resolve to
:mod:`tools.conformance.shims.torch_test_util`; ``torch._C``, ``torch._dynamo``,
``torch._functorch`` and the other private packages are PyTorch's implementation:
names looked up there are recorded as internals.
"""

from __future__ import annotations

import importlib
import unittest.mock
from collections.abc import Callable
from typing import Any

from tools.conformance.shims.swap import Swap, _record

SHIM = "tools.conformance.shims.torch_test_util"
#: the shims standing in for ``torch.testing._internal`` modules, by upstream module
SHIMS = {
    "common_device_type": "tools.conformance.shims.torch_device_type",
    "common_dtype": "tools.conformance.shims.torch_dtype_lists",
    "common_nn": "tools.conformance.shims.torch_nn_util",
}

#: public PyTorch names whose tests are out of scope, and why
SCOPE: dict[str, str] = {
    "torch.cuda.is_available": "CUDA",
    "torch.cuda.Stream": "CUDA",
    "torch.compile": "torch.compile / dynamo",
    "torch.jit.script": "TorchScript",
    "torch.jit.trace": "TorchScript",
    "torch.autograd.profiler": "the profiler",
    "torch.profiler": "the profiler",
    "torch.sparse_coo_tensor": "sparse tensors",
    "torch.sparse_csr_tensor": "sparse tensors",
    "torch.optim.SparseAdam": "sparse tensors (an optimizer of sparse gradients)",
    **{
        f"torch.{n}": "quantized tensors"
        for n in (
            "qint8",
            "quint8",
            "qint32",
            "quint4x2",
            "quint2x4",
            "quantize_per_tensor",
            "quantize_per_channel",
        )
    },
    "torch.nested": "nested tensors",
    "torch.utils.cpp_extension": "C++ extensions",
    "torch.multiprocessing": "several processes",
    "torch.utils.flop_counter": "FLOP counting",
    "torch.library": "custom operator registration",
    # (test_functional_optim.py's set-up decorator; the distributed optimizers' functional
    # forms are TorchScript-compatible stand-ins for DDP's communication hooks)
    "torch._disable_dynamo": "torch.compile / dynamo",
    "torch.distributed.optim": "distributed optimizers (torch.distributed.optim)",
    "torch.onnx": "ONNX export",
}


def make_swap() -> Swap:
    """The swap, with the helper shims registered as importers of swapped names."""
    swap: Swap

    def shim() -> Any:
        return importlib.import_module(SHIM)

    def part(name: str, names: str) -> Any:
        return lambda: shim().submodule(name, getattr(shim(), names))

    def own(module: str) -> Any:
        return lambda: importlib.import_module(module)

    base = "torch.testing._internal"
    swap = Swap(
        root="torch",
        target="compat.torch",
        overrides={
            f"{base}.common_utils": shim,
            **{f"{base}.{name}": own(module) for name, module in SHIMS.items()},
            f"{base}.common_cuda": part(f"{base}.common_cuda", "COMMON_CUDA"),
            f"{base}.common_methods_invocations": part(
                f"{base}.common_methods_invocations", "COMMON_METHODS"
            ),
            "torch._dynamo": lambda: shim().dynamo_module(),
            # the module itself, not an alias caching its attributes: ``_current_level``
            # is a module global that changes (read live, as PyTorch's is)
            "torch.autograd.forward_ad": lambda: importlib.import_module(
                "compat.torch.autograd.forward_ad"
            ),
        },
        internal=(
            "torch._C",
            "torch._dynamo",
            "torch._functorch",
            "torch._subclasses",
            "torch._inductor",
            "torch._higher_order_ops",
            "torch._prims",
            "torch._refs",
            "torch.fx",
            "torch.utils._python_dispatch",
            "torch.utils._mode_utils",
            "torch.utils._pytree",
            "torch.testing._internal",
            "torch._utils",
            "torch.utils._device",
            "torch.utils._traceback",
        ),
        internal_modules=("torch.utils._device", "torch.utils._traceback"),
        scope=SCOPE,
        noops=(
            "torch.autograd._force_original_view_tracking",  # test_autograd's tearDown
            # nn/test_convolution.py's ``skipIf(not torch._nnpack_available())``, read as
            # the file loads: compat has no NNPACK (its test is out of scope by its id)
            "torch._nnpack_available",
        ),
    )
    for module in (SHIM, *SHIMS.values()):  # before any of them is imported
        swap.add_importer(module)
    import compat.torch  # loaded before any swapped import

    _scope_methods(compat.torch.Tensor)
    _swap_mock_targets(swap)
    return swap


def _swap_mock_targets(swap: Swap) -> None:
    """``mock.patch("torch.nn.utils.prune.L1Unstructured.compute_mask")`` in a swapped
    test patches compat's name: ``unittest.mock`` finds its target with ``importlib``,
    which the import hook does not see (it patched the real ``torch``, which the test
    does not run). The swapped run's process runs no real ``torch`` code."""
    original: Callable[[str], tuple[Callable[[], Any], str]] = unittest.mock._get_target  # type: ignore[attr-defined]

    def get_target(target: Any) -> tuple[Callable[[], Any], str]:
        getter, attribute = original(target)
        owner = target.rpartition(".")[0]
        if owner != swap.root and not owner.startswith(swap.root + "."):
            return getter, attribute

        def swapped() -> Any:
            obj = swap.module(swap.root)
            for part in owner.split(".")[1:]:
                obj = getattr(obj, part)
            return obj

        return swapped, attribute

    unittest.mock._get_target = get_target  # type: ignore[attr-defined]


#: Tensor methods of out-of-scope features compat lacks: a test calling one is out of
#: scope (the swap sees module attributes only, so these record it themselves)
SCOPE_METHODS: dict[str, str] = {
    "to_sparse": "sparse tensors",
    "to_sparse_coo": "sparse tensors",
    "to_sparse_csr": "sparse tensors",
    "to_mkldnn": "MKL-DNN tensors",
}


def _scope_methods(tensor_cls: type) -> None:
    """Give the swapped run's ``Tensor`` the :data:`SCOPE_METHODS` compat lacks, each
    recording its reason and raising ``NotImplementedError``."""
    for name, why in SCOPE_METHODS.items():
        if hasattr(tensor_cls, name):
            continue

        def method(self: Any, *args: Any, _name: str = name, _why: str = why, **kw: Any) -> Any:
            _record("scope", f"{_why} (Tensor.{_name})")
            raise NotImplementedError(f"Tensor.{_name}: {_why} are out of scope")

        setattr(tensor_cls, name, method)
