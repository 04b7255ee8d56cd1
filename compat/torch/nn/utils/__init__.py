"""``torch.nn.utils``: gradient clipping, parameter/vector conversion, ``rnn`` packing,
``parametrize``, ``prune``, ``parametrizations.weight_norm``/``spectral_norm`` and the older
hook-based ``weight_norm``/``spectral_norm``, ``fusion`` (batch norm folded into the layer
before it) and ``skip_init``.

Example:
    >>> import compat.torch as torch
    >>> model = torch.nn.Linear(3, 2)
    >>> model(torch.ones(1, 3)).sum().backward()
    >>> norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
"""

from compat.torch.nn.utils import fusion, parametrizations, parametrize, prune, rnn
from compat.torch.nn.utils.clip_grad import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from compat.torch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from compat.torch.nn.utils.init import skip_init
from compat.torch.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from compat.torch.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "fusion",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "prune",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "skip_init",
    "spectral_norm",
    "vector_to_parameters",
    "weight_norm",
]
