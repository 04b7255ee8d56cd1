"""``nn.AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016) for
large vocabularies.

The classes are split by ``cutoffs`` into a shortlist (the frequent ones) and clusters.
The ``head`` (a linear layer) scores the shortlist and one entry per cluster; cluster
``i``'s ``tail`` (two linear layers through a ``in_features // div_value**(i + 1)`` wide
projection) scores the classes inside it. A class's log-probability is the head's
log-softmax at the class (shortlist) or at its cluster plus the tail's log-softmax at
the class. ``forward(input, target)`` returns ``(output, loss)``: each row's target
log-probability and the mean negative of them; ``log_prob`` gives every class's,
``predict`` the most probable class. Gradients flow through compat's ops.

Example:
    >>> import compat.torch as torch
    >>> asm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 8], div_value=2.0)
    >>> out, loss = asm(torch.randn(3, 8), torch.tensor([0, 5, 9]))
    >>> tuple(out.shape), tuple(asm.log_prob(torch.randn(3, 8)).shape)
    ((3,), (3, 10))
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import compat.torch as torch
from compat.torch.nn import functional as F
from compat.torch.nn.modules.container import ModuleList, Sequential
from compat.torch.nn.modules.linear import Linear
from compat.torch.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

Tensor = Any

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over ``n_classes`` split at ``cutoffs`` (module docstring)."""

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (
            cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **kw),
                    Linear(hidden, size, bias=False, **kw),
                )
            )

    def reset_parameters(self) -> None:
        """Re-draw the head's and the tails' weights."""
        self.head.reset_parameters()
        for projection, out in self.tail:
            projection.reset_parameters()
            out.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        """``(output, loss)``: each row's log-probability of its target, and the mean of
        their negatives."""
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size",
                    input_.size(),
                )
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size",
                    input_.size(),
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        bounds = [0, *self.cutoffs]
        covered = ((target >= 0) & (target < self.n_classes)).all()
        if not bool(covered):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        # the head's index of each row: the class (shortlist) or its cluster's entry
        head_index = target.clone()
        output = input.new_zeros(target.size(0))
        for i in range(1, len(bounds) - 1):
            mask = (target >= bounds[i]) & (target < bounds[i + 1])
            rows = mask.nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            head_index = torch.where(mask, self.shortlist_size + i - 1, head_index)
            logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            local = logprob.gather(1, (target[mask] - bounds[i]).unsqueeze(1)).squeeze(1)
            output = output.index_add(0, rows, local)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return torch.cat(parts, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Every class's log-probability: ``(N, n_classes)`` (or ``(n_classes,)``)."""
        batched = input.dim() > 1
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        """The most probable class of each row (the argmax of ``log_prob``: a shortlist
        class the head prefers beats every cluster's classes, whose log-probabilities are
        at most their cluster's)."""
        batched = input.dim() > 1
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        best = head_output.argmax(dim=1)
        if not bool((best >= self.shortlist_size).any()):
            out = best
        else:
            out = self._get_full_log_prob(x, head_output).argmax(dim=1)
        return out if batched else out.squeeze(0)
