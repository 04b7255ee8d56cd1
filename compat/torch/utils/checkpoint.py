"""``torch.utils.checkpoint``: ``checkpoint`` and ``checkpoint_sequential``.

Both of PyTorch's variants, with PyTorch's observable behaviour:

* ``use_reentrant=True`` (still the default when ``use_reentrant`` is not passed, with
  PyTorch's warning): an ``autograd.Function`` (``CheckpointFunctionBackward``) whose
  forward runs the function under ``no_grad`` and whose backward re-runs it with grad
  enabled and calls ``autograd.backward`` inside the running backward, so parameters the
  function reads get their ``.grad``; incompatible with ``autograd.grad`` and
  ``backward(inputs=...)``, as PyTorch.
* ``use_reentrant=False``: the function runs once with grad enabled under
  ``saved_tensors_hooks`` that keep a handle instead of each saved tensor; the first
  backward that needs one re-runs the function and hands the recomputed tensors to the
  backward (PyTorch's design), so ``autograd.grad``, keyword arguments and inputs that do
  not require grad work; ``determinism_check`` compares the number, shapes, dtypes and
  devices of the saved tensors.

With ``preserve_rng_state`` the recomputation starts from the forward's RNG state, so
dropout draws the same mask. compat keeps the residual arrays an op's VJP needs besides
its saved tensors, so checkpointing saves less memory than in PyTorch.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from compat._core import grad_mode as _gm
from compat._core import hooks as _hooks
from compat._core.autograd import backward as _backward
from compat._core.creation import get_rng_state, set_rng_state
from compat._core.function import Function
from compat._core.tensor import Tensor
from compat.torch.autograd.graph import saved_tensors_hooks
from compat.torch.random import fork_rng

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_early_stop",
]

_DETERMINISM_CHECKS = ("default", "none")
_DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint\u2011debug mode globally.\n"
)


class CheckpointError(RuntimeError):
    """The recomputation did not save the same tensors as the original forward."""


class _StopRecomputation(Exception):
    """Raised out of the recomputation once every saved tensor is back (early stop)."""


_EARLY_STOP: list[bool | None] = [None]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Override ``early_stop`` of the non-reentrant checkpoints started in the block."""
    prev = _EARLY_STOP[0]
    _EARLY_STOP[0] = enable
    try:
        yield
    finally:
        _EARLY_STOP[0] = prev


def noop_context_fn() -> tuple[
    contextlib.AbstractContextManager, contextlib.AbstractContextManager
]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Detached copies of the tensors in ``inputs`` keeping their ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(
            "Only tuple of tensors is supported. Got Unsupported input type: "
            f"{type(inputs).__name__}"
        )
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            x = d
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """Warn (as PyTorch) when no tensor input requires grad."""
    if not any(x.requires_grad for x in inputs if isinstance(x, Tensor)):
        warnings.warn(
            "None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2
        )


def _checkpoint_valid() -> bool:
    """Whether the running backward is a plain ``backward()`` (no ``inputs``, not ``grad``)."""
    stack = _hooks.RUNS.stack
    return bool(stack) and stack[-1][2] and stack[-1][1].runs is None


class CheckpointFunction(Function):
    """The reentrant variant: forward without a graph, backward recomputes and backprops."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with _gm.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        if not _checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument."
            )
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached = detach_variable(tuple(inputs))
            with _gm.enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [
            (o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad
        ]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in detached)


def _meta(t: Tensor) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Frame:
    """One non-reentrant checkpoint call: the forward's saved-tensor metadata and, once a
    backward needed them, the recomputed tensors by position."""

    def __init__(self, recompute: Callable[[], None], check: bool, early_stop: bool) -> None:
        self.recompute = recompute
        self.check = check
        self.early_stop = early_stop
        self.meta: list[dict] = []
        self.recomputed: dict[int, Tensor] = {}

    def pack(self, t: Tensor) -> int:
        self.meta.append(_meta(t))
        return len(self.meta) - 1

    def unpack(self, idx: int) -> Tensor:
        if idx not in self.recomputed:
            saved: list[Tensor] = []

            def keep(t: Tensor) -> None:
                if len(saved) == len(self.meta):  # only without early stop
                    raise CheckpointError(
                        "torch.utils.checkpoint: trying to save more tensors during "
                        "recomputation than during the original forward pass.\n" + _DEBUG_TIP
                    )
                saved.append(t.detach())
                if self.early_stop and len(saved) == len(self.meta):
                    raise _StopRecomputation

            try:
                with saved_tensors_hooks(keep, lambda _: None), _gm.enable_grad():
                    self.recompute()
            except _StopRecomputation:
                pass
            self._check(saved)
            self.recomputed = dict(enumerate(saved))
        return self.recomputed.pop(idx)

    def _check(self, saved: list[Tensor]) -> None:
        if not self.check:
            return
        if len(saved) != len(self.meta):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.meta)}\n"
                f"Number of tensors saved during recomputation: {len(saved)}.\n" + _DEBUG_TIP
            )
        bad = [(i, m, _meta(t)) for i, (m, t) in enumerate(zip(self.meta, saved)) if m != _meta(t)]
        if bad:
            listed = "".join(
                f"tensor at position {i}:\nsaved metadata: {m}\nrecomputed metadata: {r}\n"
                for i, m, r in bad
            )
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{listed}.\n" + _DEBUG_TIP
            )


def _non_reentrant(
    function: Callable,
    preserve: bool,
    context_fn: Callable,
    determinism_check: str,
    early_stop: bool,
    args: tuple,
    kwargs: dict,
) -> Any:
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got "
            f"{determinism_check}"
        )
    forward_ctx, recompute_ctx = context_fn()
    state = get_rng_state() if preserve else None

    def recompute() -> None:
        with fork_rng(enabled=preserve):
            if state is not None:
                set_rng_state(state)
            with recompute_ctx:
                function(*args, **kwargs)

    if _EARLY_STOP[0] is not None:
        early_stop = _EARLY_STOP[0]
    frame = _Frame(recompute, determinism_check == "default", early_stop)
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_ctx:
        return function(*args, **kwargs)


def checkpoint(
    function: Callable,
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    **kwargs: Any,
) -> Any:
    """``function(*args, **kwargs)`` whose intermediate tensors are recomputed in backward."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        return CheckpointFunction.apply(function, preserve, *args)
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    return _non_reentrant(
        function, preserve, context_fn, determinism_check, early_stop, args, kwargs
    )


def checkpoint_sequential(
    functions: Any, segments: int, input: Any, use_reentrant: bool | None = None, **kwargs: Any
) -> Any:
    """Run a sequence of modules/functions in ``segments`` chunks, checkpointing all but
    the last chunk."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())

    def run(start: int, end: int) -> Callable:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(
            run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run(end + 1, len(functions) - 1)(input)
