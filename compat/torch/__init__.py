"""``import compat.torch as torch``: PyTorch's tensor and autograd API on funcgrad.

Porting code means changing the import. Tensors, ops, grad mode and
``torch.autograd`` follow PyTorch (documented semantics and error messages);
gradients come from funcgrad's VJP transform of the recorded graph. ``torch.nn``,
``torch.optim`` and ``torch.utils`` (``torch.utils.data``) are imported lazily on
first access.
"""

from __future__ import annotations

import importlib
from typing import Any

import compat._core  # noqa: F401  (installs Tensor methods)
from compat._core.namespace import *  # noqa: F403
from compat._core.namespace import __dict__ as _ns
from compat.torch import _inplace, _sparse_ops, autograd  # noqa: F401

for _k, _v in _ns.items():
    if not _k.startswith("__"):
        globals()[_k] = _v
del _k, _v, _ns

# devices, runtime switches, parallel stand-ins, serialization, printing
from compat._core.creation import TENSOR_CLASSES as _tensor_classes  # noqa: E402, F401
from compat._core.overlap import (  # noqa: E402, F401  (torch._debug_has_internal_overlap)
    debug_has_internal_overlap as _debug_has_internal_overlap,
)
from compat._core.printing import get_printoptions as get_printoptions  # noqa: E402
from compat._core.printing import set_printoptions as set_printoptions  # noqa: E402
from compat._core.storage_types import *  # noqa: E402, F403
from compat._core.tensor_copies import narrow_copy as narrow_copy  # noqa: E402
from compat._core.tensor_copies import split_copy as split_copy  # noqa: E402
from compat._core.tensor_copies import split_with_sizes_copy as split_with_sizes_copy  # noqa: E402
from compat._core.tensor_copies import unbind_copy as unbind_copy  # noqa: E402
from compat.torch._checks import *  # noqa: E402, F403
from compat.torch._checks import _assert as _assert  # noqa: E402
from compat.torch._checks import _assert_async as _assert_async  # noqa: E402
from compat.torch._checks import _check as _check  # noqa: E402
from compat.torch._checks import _check_index as _check_index  # noqa: E402
from compat.torch._checks import _check_not_implemented as _check_not_implemented  # noqa: E402
from compat.torch._checks import _check_tensor_all as _check_tensor_all  # noqa: E402
from compat.torch._checks import _check_tensor_all_with as _check_tensor_all_with  # noqa: E402
from compat.torch._checks import _check_type as _check_type  # noqa: E402
from compat.torch._checks import _check_value as _check_value  # noqa: E402
from compat.torch._checks import _check_with as _check_with  # noqa: E402
from compat.torch._compile import compile as compile  # noqa: E402
from compat.torch._grad_scaler import (  # noqa: E402
    _amp_foreach_non_finite_check_and_unscale_ as _amp_foreach_non_finite_check_and_unscale_,
)
from compat.torch._grad_scaler import _amp_update_scale_ as _amp_update_scale_  # noqa: E402
from compat.torch._gradient import gradient as gradient  # noqa: E402
from compat.torch._runtime import *  # noqa: E402, F403
from compat.torch.amp import GradScaler as GradScaler  # noqa: E402
from compat.torch.amp import autocast as autocast  # noqa: E402

_LAZY_DEVICES = (
    "accelerator",
    "amp",
    "backends",
    "cpu",
    "cuda",
    "distributed",
    "jit",
    "onnx",
    "serialization",
)

__version__ = "2.13.0+compat"
#: submodules imported on first attribute access (``torch.nn``, ``torch.cuda``, ...)
_LAZY = (
    "nn",
    "optim",
    "utils",
    "distributions",
    "func",
    "linalg",
    "special",
    "fft",
    "multiprocessing",
    "random",
    "quasirandom",
    "ops",
    "_vmap_internals",
    "_VF",
    "__future__",
    "__config__",
    "testing",
    "sparse",
    *_LAZY_DEVICES,
)


globals().update(_inplace.FUNCTIONS)  # torch.abs_(x), torch.relu_(x), ...


def _method_of(name: str) -> Any:
    """``Tensor.<name>`` as ``torch.<name>(self, ...)`` (a function loaded on first use)."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return __getattr__(name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``torch.{name}(self, ...)``."
    return method


for _name in ("stft", "istft", "histogram", "prelu", "hardshrink"):
    setattr(globals()["Tensor"], _name, _method_of(_name))
del _name

# sparse COO tensors: torch.sparse_coo_tensor, torch.spmm, sparse operands of mm/matmul/addmm/add
globals().update(_sparse_ops.torch_functions(globals()))
_sparse_ops.install()


#: ``torch.X`` that is ``torch.nn.functional.X`` (the same ATen op in PyTorch, under the
#: same signature; ``compat/torch/_aten_forms.py`` has those whose signatures differ)
_FUNCTIONAL_ALIASES = (
    "pairwise_distance",
    "cosine_similarity",
    "pdist",
    "channel_shuffle",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "avg_pool1d",
    "adaptive_avg_pool1d",
    "pixel_shuffle",
    "pixel_unshuffle",
    "prelu",
    "selu",
    "celu",
    "threshold",
    "hardshrink",
    "bilinear",
    "rms_norm",
)


def __getattr__(name: str) -> Any:
    if name in _inplace.FUNCTIONAL_NAMES or name in _FUNCTIONAL_ALIASES:
        # torch.selu_ is nn.functional.selu_, torch.pairwise_distance its namesake
        return getattr(importlib.import_module("compat.torch.nn.functional"), name)
    if name == "constant_pad_nd":  # (no nn.functional name in PyTorch)
        return importlib.import_module("compat.torch.nn.functional.padding").constant_pad_nd
    if name in _LAZY:
        return importlib.import_module(f"compat.torch.{name}")
    if name in ("save", "load"):
        return getattr(importlib.import_module("compat.torch.serialization"), name)
    if name == "vmap":  # torch.vmap is torch.func.vmap
        return importlib.import_module("compat.torch.func").vmap
    if name in ("from_dlpack", "to_dlpack"):  # torch.X is torch.utils.dlpack.X
        return getattr(importlib.import_module("compat.torch.utils.dlpack"), name)
    if not name.startswith("__"):  # torch.conv2d, torch.hann_window, torch.stft, ...
        for module in (
            "compat.torch._aten_forms",
            "compat.torch._stft",
            "compat.torch._range",
            "compat.torch._masked_softmax_op",
        ):
            forms = importlib.import_module(module)
            if name in forms.NAMES:
                return getattr(forms, name)
    raise AttributeError(f"module 'compat.torch' has no attribute {name!r}")


# the objects compat's import left alive join funcgrad's out of the full collections
from funcgrad._compat_contract import freeze_gc  # noqa: E402

freeze_gc()
