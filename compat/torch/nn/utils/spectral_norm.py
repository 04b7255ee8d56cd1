"""``nn.utils.spectral_norm``: the older, hook-based spectral normalisation.

``spectral_norm(module, "weight")`` keeps the parameter as ``weight_orig``, two buffers
``weight_u`` and ``weight_v`` (left and right singular-vector estimates of the weight
viewed as a ``(shape[dim], -1)`` matrix) and a forward pre-hook setting the plain
attribute ``module.weight = weight_orig / sigma``, ``sigma = u . (W v)``; in training
mode the hook first runs ``n_power_iterations`` steps of power iteration, updating the
buffers in place. A state-dict hook records the layout's version in ``_metadata``
(``spectral_norm: {"weight.version": 1}``) and a load pre-hook migrates a version-less
checkpoint (``weight`` saved, ``weight_v`` not: ``v`` is solved for from ``u`` and the
saved ``sigma``), as PyTorch's. The random start of ``u``/``v`` differs from PyTorch's
(compat's generator).

Example:
    >>> import compat.torch as torch
    >>> m = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
    >>> sorted(m.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
"""

from __future__ import annotations

from typing import Any, TypeVar

import compat.torch as torch
from compat.torch.nn import functional as F
from compat.torch.nn.modules.conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from compat.torch.nn.modules.module import Module
from compat.torch.nn.parameter import Parameter, UninitializedParameter

__all__ = [
    "SpectralNorm",
    "SpectralNormLoadStateDictPreHook",
    "SpectralNormStateDictHook",
    "remove_spectral_norm",
    "spectral_norm",
]

T = TypeVar("T", bound=Module)
Tensor = Any


class SpectralNorm:
    """The forward pre-hook computing ``module.<name>`` from ``<name>_orig`` and the
    power-iteration buffers ``<name>_u``/``<name>_v``."""

    #: the layout's version recorded in ``state_dict()._metadata``
    _version: int = 1

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but "
                f"got n_power_iterations={n_power_iterations}"
            )
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """The weight as a ``(shape[dim], -1)`` matrix."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """``weight_orig / sigma``; with ``do_power_iteration`` the buffers are first
        refined in place (without recording gradients)."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with torch.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(torch.mv(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(torch.mv(mat, v), dim=0, eps=self.eps))
                u = u.clone()
                v = v.clone()
        sigma = torch.dot(u, torch.mv(mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Make ``module.<name>`` a parameter again (its current normalised value)."""
        with torch.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    def _solve_v_and_rescale(self, mat: Tensor, u: Tensor, target_sigma: Tensor) -> Tensor:
        """The ``v`` with ``u . (W v) == target_sigma`` nearest ``W``'s row space (the
        least-squares solution of ``W v = u``, rescaled)."""
        v = torch.mv(torch.linalg.pinv(mat.t().mm(mat)), torch.mv(mat.t(), u))
        return v * (target_sigma / torch.dot(u, torch.mv(mat, v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> Any:
        """Move ``module.<name>`` to ``<name>_orig``, add the buffers and the hooks."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `SpectralNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying spectral normalization"
            )
        with torch.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Migrates a version-less checkpoint (``weight`` saved, ``weight_v`` not)."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version")
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if (
            version is None
            and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))
            and weight_key not in state_dict
        ):
            return  # the current layout saved without metadata
        missing = [weight_key + s for s in ("_orig", "", "_u") if weight_key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with torch.no_grad():
            weight_orig = _tensor(state_dict[weight_key + "_orig"])
            weight = _tensor(state_dict.pop(weight_key))
            sigma = (weight_orig / weight).mean()
            mat = fn.reshape_weight_to_matrix(weight_orig)
            u = _tensor(state_dict[weight_key + "_u"])
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``{"<name>.version": 1}`` under ``spectral_norm`` in the module's
    ``state_dict`` metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict: dict, prefix: str, local_metadata: dict) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def _tensor(value: Any) -> Tensor:
    return value if isinstance(value, torch.Tensor) else torch.as_tensor(value)


def spectral_norm(
    module: T,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> T:
    """Divide ``module.<name>`` by its largest singular value (power-iteration estimate,
    refreshed by a forward pre-hook); ``dim`` defaults to 1 for transposed
    convolutions, else 0. Returns ``module``."""
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T, name: str = "weight") -> T:
    """Undo ``spectral_norm``: ``module.<name>`` a parameter again; returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in (
        (module._state_dict_hooks, SpectralNormStateDictHook),
        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook),
    ):
        for key, hook in hooks.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[key]
                break
    return module
