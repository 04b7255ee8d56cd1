"""``torch.nn.utils.prune``: zeroing parts of a parameter by a mask, by magnitude, by the
norm of whole channels, at random, or from a given mask.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig`` (the same Parameter
object, so an optimizer holding it keeps working), stores the binary mask as the buffer
``<name>_mask``, and registers the pruning method itself as a forward pre-hook which sets
the plain attribute ``module.<name> = <name>_mask * <name>_orig`` before every call:
gradients reach ``<name>_orig``, zero where the mask is. Pruning the same tensor again
puts the methods in a :class:`PruningContainer`; each new method computes its mask only
on the entries (or the channels) the previous mask still keeps. :func:`remove` makes the
pruning permanent: ``<name>`` is a parameter again, holding the masked values.

The random methods draw from compat's generator exactly as PyTorch's draw from its own
(``rand_like`` over the tensor for unstructured pruning, ``rand`` over the channels for
structured), so a seed prunes the same entries in both.

Example:
    >>> import compat.torch as torch
    >>> from compat.torch.nn.utils import prune
    >>> m = prune.l1_unstructured(torch.nn.Linear(4, 3), "weight", amount=0.5)
    >>> int((m.weight_mask == 0).sum()), sorted(n for n, _ in m.named_parameters())
    (6, ['bias', 'weight_orig'])
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar, TypeVar

import compat.torch as torch
from compat.torch.nn.modules.module import Module
from compat.torch.nn.utils.convert_parameters import parameters_to_vector

__all__ = [
    "BasePruningMethod",
    "CustomFromMask",
    "Identity",
    "L1Unstructured",
    "LnStructured",
    "PruningContainer",
    "RandomStructured",
    "RandomUnstructured",
    "custom_from_mask",
    "global_unstructured",
    "identity",
    "is_pruned",
    "l1_unstructured",
    "ln_structured",
    "random_structured",
    "random_unstructured",
    "remove",
]

Tensor = Any
M = TypeVar("M", bound=Module)


class BasePruningMethod(ABC):
    """A way of choosing a mask; subclasses define :meth:`compute_mask` and
    ``PRUNING_TYPE`` (``"unstructured"``, ``"structured"`` with a ``dim``, or
    ``"global"``), which tells a :class:`PruningContainer` what part of the tensor a
    further pruning may still act on."""

    PRUNING_TYPE: ClassVar[str]
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        """The forward pre-hook: recompute ``module.<name>`` from its mask and original."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """A mask of ``t``'s shape: ``default_mask`` (the previous pruning's, ones at first)
        with this method's zeros added."""

    def apply_mask(self, module: Module) -> Tensor:
        """``<name>_mask * <name>_orig``, the mask cast to the original's dtype."""
        name = getattr(self, "_tensor_name", None)
        if name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, name + "_mask")
        orig = getattr(module, name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(
        cls,
        module: Module,
        name: str,
        *args: Any,
        importance_scores: Tensor | None = None,
        **kwargs: Any,
    ) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, ranking its entries by
        ``importance_scores`` (the parameter itself by default); returns the method now
        hooked on the module (a :class:`PruningContainer` when it was pruned before).

        The mask is computed before the module changes: a failure leaves it as it was."""
        old_keys = [
            k
            for k, hook in module._forward_pre_hooks.items()
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name
        ]
        if len(old_keys) > 1:
            raise AssertionError(
                f"Avoid adding multiple pruning hooks to the same tensor {name} of module "
                f"{module}. Use a PruningContainer."
            )
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        grown = None  # a container already hooked, to which ``method`` is appended
        if old_keys:
            old = module._forward_pre_hooks[old_keys[0]]
            grown = old if isinstance(old, PruningContainer) else None
            container = PruningContainer(old) if grown is None else grown
            container.add_pruning_method(method)
            method = container
        try:
            orig = getattr(module, name)
            if importance_scores is None:
                importance_scores = orig
            elif importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}"
                )
            if old_keys:
                default_mask = getattr(module, name + "_mask").detach().clone()
            else:
                default_mask = torch.ones_like(orig)
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
        except BaseException:
            if grown is not None:
                grown._pruning_methods = grown._pruning_methods[:-1]
            raise
        if not old_keys:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        for k in old_keys:
            del module._forward_pre_hooks[k]
        module.register_forward_pre_hook(method)
        return method

    def prune(
        self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None
    ) -> Tensor:
        """``t`` times the mask this method computes for it (from ``importance_scores``,
        ``t`` by default, on top of ``default_mask``, ones by default)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError(
                "importance_scores should have the same shape as tensor t, "
                f"got {importance_scores.shape} vs {t.shape}"
            )
        if default_mask is None:
            default_mask = torch.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes the ``<name>_orig`` Parameter
        again (the same object), holding the masked values; mask and hook go."""
        name = getattr(self, "_tensor_name", None)
        if name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight.data
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after the other to one tensor; its mask is the
    last method's, computed on what the earlier ones kept."""

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if args:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method``, which must act on the container's tensor."""
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        mine = getattr(self, "_tensor_name", None)
        if mine is None:
            self._tensor_name = mine = method._tensor_name
        if mine != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{mine}' to PruningContainer {self}. Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Iterator[BasePruningMethod]:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: Any) -> Any:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` (in ``t``'s dtype) with the last method's mask written over the
        part it may act on: the kept entries (unstructured), the channels along its
        ``dim`` with a kept entry (structured), or everything (global)."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype, copy=True)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            part: Any = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError(
                    'Pruning methods of PRUNING_TYPE "structured" need to have the attribute '
                    "`dim` defined."
                )
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            kept = default_mask.sum(dim=[d for d in range(ndim) if d != dim]) != 0
            part = tuple(kept if d == dim else slice(None) for d in range(ndim))
        elif kind == "global":
            part = (slice(None),) * t.dim()
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[part], default_mask=default_mask[part])
        new_mask[part] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the reparametrization with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` unchanged."""
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        """Reparametrize ``module.<name>`` with a mask of ones."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a fraction for a float, a count for an int) chosen
    uniformly at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with the entries of the ``k`` largest uniform draws zeroed."""
        size = t.nelement()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone(memory_format=torch.contiguous_format)
        if k != 0:
            draws = torch.rand_like(t).reshape(-1)
            mask.view(-1)[torch.topk(draws, k=k).indices] = 0
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``amount`` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest absolute value."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with the ``k`` entries of least ``|t|`` zeroed (exactly ``k``,
        ties broken by ``topk``)."""
        size = t.nelement()
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        mask = default_mask.clone(memory_format=torch.contiguous_format)
        if k != 0:
            smallest = torch.topk(torch.abs(t).reshape(-1), k=k, largest=False)
            mask.view(-1)[smallest.indices] = 0
        return mask

    @classmethod
    def apply(  # type: ignore[override]
        cls, module: Module, name: str, amount: float, importance_scores: Tensor | None = None
    ) -> BasePruningMethod:
        """Prune the ``amount`` entries of ``module.<name>`` (or of ``importance_scores``)
        of least magnitude."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t: Tensor, dim: int, index: Tensor) -> Tensor:
    """Zeros of ``t``'s shape and dtype with ones in the channels ``index`` (a boolean
    mask or positions) along ``dim``."""
    mask = torch.zeros_like(t)
    mask[tuple(index if d == dim % t.dim() else slice(None) for d in range(t.dim()))] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim``, chosen uniformly at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` with the channels of the ``k`` smallest uniform draws zeroed;
        ``IndexError`` for a ``dim`` beyond ``t``'s dimensions."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        if k == 0:
            return default_mask
        draws = torch.rand(size)
        kept = draws > torch.kthvalue(draws, k=k).values
        mask = _channel_mask(t, self.dim, kept)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, amount: float, dim: int = -1) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of least L\\ ``n``-norm (``n`` as
    ``torch.norm``'s ``p``: a number, ``inf``, ``-inf``, ``'fro'`` or ``'nuc'``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask`` times ones in the channels of the largest norms (all but
        ``k``)."""
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        size = t.shape[self.dim]
        k = _compute_nparams_toprune(self.amount, size)
        _validate_pruning_amount(k, size)
        norm = _compute_norm(t, self.n, self.dim)
        kept = torch.topk(norm, k=size - k, largest=True).indices
        if k == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, kept)
        return mask * default_mask.to(dtype=mask.dtype)

    @classmethod
    def apply(  # type: ignore[override]
        cls,
        module: Module,
        name: str,
        amount: float,
        n: Any,
        dim: int,
        importance_scores: Tensor | None = None,
    ) -> BasePruningMethod:
        """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of least
        L\\ ``n``-norm (of ``importance_scores`` when given)."""
        return super().apply(
            module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores
        )


class CustomFromMask(BasePruningMethod):
    """Prunes where a given ``mask`` is zero (on top of any earlier pruning)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """``default_mask * mask``, in ``default_mask``'s dtype."""
        if default_mask.shape != self.mask.shape:
            raise AssertionError(
                f"default_mask shape {default_mask.shape} must match self.mask shape "
                f"{self.mask.shape}"
            )
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        """Prune ``module.<name>`` where ``mask`` is zero."""
        return super().apply(module, name, mask=mask)


def identity(module: M, name: str) -> M:
    """Reparametrize ``module.<name>`` as ``<name>_orig * <name>_mask`` with a mask of
    ones; returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module: M, name: str, amount: float) -> M:
    """Prune ``amount`` random entries of ``module.<name>`` not pruned yet (a fraction
    for a float, a count for an int); returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(
    module: M, name: str, amount: float, importance_scores: Tensor | None = None
) -> M:
    """Prune the ``amount`` entries of ``module.<name>`` not pruned yet of least absolute
    value (of ``importance_scores`` when given); returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: M, name: str, amount: float, dim: int) -> M:
    """Prune ``amount`` random channels of ``module.<name>`` along ``dim``; returns
    ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(
    module: M, name: str, amount: float, n: Any, dim: int, importance_scores: Tensor | None = None
) -> M:
    """Prune the ``amount`` channels of ``module.<name>`` along ``dim`` of least
    L\\ ``n``-norm; returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(
    parameters: Iterable[tuple[Module, str]],
    pruning_method: type[BasePruningMethod],
    importance_scores: dict[tuple[Module, str], Tensor] | None = None,
    **kwargs: Any,
) -> None:
    """Prune the ``(module, name)`` tensors together: ``pruning_method(**kwargs)`` (an
    unstructured method, e.g. ``amount=``) ranks all their entries at once, and each
    tensor gets its slice of the joint mask (:func:`custom_from_mask`)."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector(
        [importance_scores.get((m, n), getattr(m, n)) for m, n in parameters]
    )
    default_mask = parameters_to_vector([_mask_or_ones(m, n) for m, n in parameters])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(
            'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found '
            f"method {pruning_method} of type {method.PRUNING_TYPE}"
        )
    method._tensor_name = "temp"
    final_mask = PruningContainer(method).compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        end = start + param.numel()
        custom_from_mask(module, name, mask=final_mask[start:end].view_as(param))
        start = end


def _mask_or_ones(module: Module, name: str) -> Tensor:
    """``module.<name>_mask`` when it is pruned already, else ones like the tensor."""
    mask = getattr(module, name + "_mask", None)
    return torch.ones_like(getattr(module, name)) if mask is None else mask


def custom_from_mask(module: M, name: str, mask: Tensor) -> M:
    """Prune ``module.<name>`` where ``mask`` is zero; returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: M, name: str) -> M:
    """Make the pruning of ``module.<name>`` permanent and drop its reparametrization:
    ``<name>`` a parameter again holding the pruned values; returns ``module``."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(
        f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed"
    )


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or one of its submodules has a pruning hook."""
    return any(
        isinstance(hook, BasePruningMethod)
        for _, sub in module.named_modules()
        for hook in sub._forward_pre_hooks.values()
    )


def _validate_pruning_amount_init(amount: Any) -> None:
    """``TypeError`` unless ``amount`` is a real number, ``ValueError`` for a negative int
    or a float outside [0, 1]."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
        not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0
    ):
        raise ValueError(
            f"amount={amount} should either be a float in the range [0, 1] or a "
            "non-negative integer"
        )


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    """``ValueError`` for a count of units larger than the tensor's."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(
            f"amount={amount} should be smaller than the number of parameters to "
            f"prune={tensor_size}"
        )


def _validate_structured_pruning(t: Tensor) -> None:
    """``ValueError`` for a tensor of fewer than two dimensions (no channels)."""
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. Found "
            f"tensor of shape {shape} with {len(shape)} dims"
        )


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    """The number of units to prune: ``amount`` itself for an int, the rounded fraction
    of ``tensor_size`` for a float."""
    if isinstance(amount, numbers.Integral):
        return int(amount)
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    """``IndexError`` for a ``dim`` at or past ``t``'s number of dimensions."""
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    """The L\\ ``n``-norm of each channel along ``dim``, over all other dimensions
    (``'nuc'``: the nuclear norm of the two others, as ``torch.norm`` computes it)."""
    dims = [d for d in range(t.dim()) if d != dim % t.dim()]
    if n == "nuc":
        return torch.linalg.matrix_norm(t, ord="nuc", dim=tuple(dims))
    return torch.norm(t, p=n, dim=dims)
