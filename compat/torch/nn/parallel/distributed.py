"""``DistributedDataParallel``: one model replica per process, gradients averaged.

At construction rank 0's parameters and buffers are broadcast to every process. Each
parameter gets a post-accumulate-grad hook; when the last expected parameter's
gradient has been accumulated, one collective per gradient dtype averages all gradients
across the processes (compat's backward is one compiled program, so there is no
backward left to overlap the communication with). Each is a
:class:`funcgrad.distributed.Bucket` made at the first average and reused every step
(signature checked and executables built once). Under ``no_sync()`` the hooks only
let gradients accumulate locally; the first backward after it averages the sums.

With ``find_unused_parameters=True`` the forward walks the output's graph for the
parameters it reaches; the others count as ready with zero gradients (a parameter no
process used keeps its ``.grad``). Without it, a parameter that got no gradient leaves
the reduction unfinished and the next forward raises PyTorch's error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

import compat.torch as torch
import funcgrad.distributed as fd
from compat.torch.distributed._group import _call, _world
from compat.torch.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss."
)


def _leaves_reached(outputs: Any) -> set[int]:
    """``id``s of the leaf tensors the graph of ``outputs`` reaches."""
    found: set[int] = set()
    stack, seen = [], set()
    for t in _tensors(outputs):
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif t.requires_grad:
            found.add(id(t))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            found.add(id(var))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return found


def _tensors(x: Any) -> Iterator[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _tensors(v)
    elif isinstance(x, Mapping):
        for v in x.values():
            yield from _tensors(v)


class DistributedDataParallel(Module):
    """Data parallelism over the processes of a process group (see the module docstring).

    Args:
        module: the model (the same architecture in every process).
        device_ids: accepted as PyTorch's (compat places tensors itself).
        output_device: accepted as PyTorch's.
        dim: accepted as PyTorch's.
        broadcast_buffers: broadcast rank 0's buffers before each forward.
        process_group: the group to average over (the default group when ``None``).
        bucket_cap_mb: accepted; compat reduces all gradients of a dtype in one collective.
        find_unused_parameters: walk each forward's graph for the parameters it uses.

    Raises:
        ValueError: no default process group (PyTorch's message).
    """

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        **kwargs: Any,
    ) -> None:
        group = process_group if process_group is not None else _world()
        super().__init__()
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.process_group = group
        self.require_backward_grad_sync = True
        self._params = [p for p in module.parameters() if p.requires_grad]
        #: the buffers broadcast before each forward: listed once, as PyTorch's DDP does
        self._module_buffers = list(module.buffers())
        self._expected: set[int] = {id(p) for p in self._params}
        self._ready: set[int] = set()
        self._sync_now = True
        #: prepared averages, made at the first one: (find_unused, *dtypes) -> buckets
        self._buckets: dict[tuple, list] = {}
        self._sync_params_and_buffers()
        for p in self._params:
            p.register_post_accumulate_grad_hook(self._on_grad)

    # ------------------------------------------------------------------ collectives
    def _group(self) -> Any:
        return self.process_group._g

    def _sync_params_and_buffers(self) -> None:
        self._broadcast(list(self.module.parameters()) + self._module_buffers)

    def _broadcast(self, tensors: list) -> None:
        if not tensors or self._group().size == 1:
            return
        arrays = [t._st.array for t in tensors]
        out = _call(self._group().broadcast_many, arrays, 0)
        with torch.no_grad():
            for t, a in zip(tensors, out):
                t._set_data_inplace(a)

    def _on_grad(self, p: torch.Tensor) -> None:
        if not self._sync_now:
            return
        self._ready.add(id(p))
        if self._expected <= self._ready:
            self._reduce()

    def _reduce(self) -> None:
        """Average the gradients of every parameter over the group: one prepared
        collective per gradient dtype (a :class:`funcgrad.distributed.Bucket`)."""
        self._ready.clear()
        g = self._group()
        if g.size == 1:
            return
        params = self._params
        grads = [
            p.grad._st.array if p.grad is not None else np.zeros(p.shape, p._npdtype)
            for p in params
        ]
        unused = self.find_unused_parameters
        key = (unused, *(a.dtype for a in grads))
        buckets = self._buckets.get(key)
        if buckets is None:
            buckets = self._buckets[key] = _call(self._make_buckets, g, grads)
        out: list = [None] * len(params)
        flags = None
        for k, (idx, bucket) in enumerate(buckets):
            xs = [grads[i] for i in idx]
            if unused and k == 0:  # in the first bucket's dtype: no collective of its own
                xs.append(np.array([p.grad is not None for p in params], bucket.dtype))
            res = _call(bucket, xs)
            if unused and k == 0:
                flags = res.pop().tolist()
            for i, r in zip(idx, res):
                out[i] = r
        for i, p in enumerate(params):
            if p.grad is None:
                if flags is not None and flags[i] == 0.0:
                    continue  # no process used it: PyTorch leaves its grad alone
                p.grad = torch.Tensor._wrap_result(out[i])
            else:
                p.grad._set_data_inplace(out[i])

    def _make_buckets(self, g: Any, grads: list) -> list:
        """One bucket per gradient dtype (in order of first appearance), made at the
        first average: ``(parameter indices, Bucket)``; with ``find_unused_parameters``
        the first one also carries the flags of the parameters each process used."""
        by_dtype: dict[Any, list[int]] = {}
        for i, a in enumerate(grads):
            by_dtype.setdefault(a.dtype, []).append(i)
        buckets = []
        for k, (dtype, idx) in enumerate(by_dtype.items()):
            shapes = [tuple(grads[i].shape) for i in idx]
            if self.find_unused_parameters and k == 0:
                shapes.append((len(grads),))
            buckets.append((idx, fd.Bucket(g, shapes, dtype, "avg")))
        return buckets

    # ------------------------------------------------------------------ the module
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._ready and not self.find_unused_parameters:
            raise RuntimeError(_UNFINISHED)
        self._ready.clear()
        if self.broadcast_buffers and self._module_buffers:
            self._broadcast(self._module_buffers)
        # (a plain attribute: Module.__setattr__'s registry checks cost every step; and
        # the wrapped module read from its registry, not through Module.__getattr__)
        object.__setattr__(self, "_sync_now", self.require_backward_grad_sync)
        out = self._modules["module"](*inputs, **kwargs)
        if self.find_unused_parameters and torch.is_grad_enabled():
            reached = _leaves_reached(out)
            self._expected = {id(p) for p in self._params if id(p) in reached}
        return out

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward passes accumulate gradients locally without averaging them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> Any:
        """Load ``state_dict``; keys may carry PyTorch's ``module.`` prefix or not."""
        if state_dict and not all(k.startswith("module.") for k in state_dict):
            state_dict = {f"module.{k}": v for k, v in state_dict.items()}
        return super().load_state_dict(state_dict, strict=strict, assign=assign)
