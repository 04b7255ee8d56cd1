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
import enum
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from compat._core import aten as _aten
from compat._core import dispatch_mode as _dm
from compat._core import grad_mode as _gm
from compat._core import hooks as _hooks
from compat._core.autograd import backward as _backward
from compat._core.creation import get_rng_state, set_rng_state
from compat._core.function import Function
from compat._core.tensor import Tensor
from compat.torch.autograd.graph import saved_tensors_hooks
from compat.torch.random import fork_rng
from compat.torch.utils._python_dispatch import TorchDispatchMode

__all__ = [
    "CheckpointError",
    "CheckpointFunction",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "check_backward_validity",
    "checkpoint",
    "checkpoint_sequential",
    "create_selective_checkpoint_contexts",
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


def _detach(t: Tensor) -> Tensor:
    return t.detach()


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
        #: the recomputed tensors by position, for the backward call that recomputed them
        self.recomputed: dict[int, Tensor] = {}
        self.task = None

    def pack(self, t: Tensor) -> int:
        self.meta.append(_meta(t))
        return len(self.meta) - 1

    def unpack(self, idx: int) -> Tensor:
        task = _hooks.current_task_id()
        if task != self.task or (task == -1 and idx not in self.recomputed):
            self.task = task
            saved: list[Tensor] = []

            def keep(t: Tensor) -> None:
                if len(saved) == len(self.meta):  # only without early stop
                    raise CheckpointError(
                        "torch.utils.checkpoint: trying to save more tensors during "
                        "recomputation than during the original forward pass.\n" + _DEBUG_TIP
                    )
                # (a tensor not requiring grad is kept as it is, so its identity holds;
                # PyTorch's unpack runs above the dispatch modes: they see the detach)
                if t.requires_grad:
                    t = _dm.call_from_autograd(_aten.ATEN.detach.default, (t,), _detach)
                saved.append(t)
                if self.early_stop and len(saved) == len(self.meta):
                    raise _StopRecomputation

            try:
                with saved_tensors_hooks(keep, lambda _: None), _gm.enable_grad():
                    self.recompute()
            except _StopRecomputation:
                pass
            self._check(saved)
            self.recomputed = dict(enumerate(saved))
        if idx not in self.recomputed:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already "
                "unpacked once. If you are calling ctx.saved_tensors in backward, make sure to do "
                "so only once. Otherwise please open an issue with details on your use case."
            )
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


# --------------------------------------------------------------------------- selective


class CheckpointPolicy(enum.Enum):
    """Whether an op's output is kept from the forward (``*_SAVE``) or recomputed."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy is told besides the op and its arguments."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


_SAVED = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_RECOMPUTE = object()
_CONSUMED = object()
_MISMATCH = (
    "This can happen if the operations in the checkpointed region are nondeterministic or "
    "depend on global state that changed between forward and backward."
)


def _ignored(func: Any) -> bool:
    return func is _aten.ATEN.detach.default


class _Kept:
    """An op output kept by the forward (detached, sharing its version counter)."""

    def __init__(self, val: Any) -> None:
        self.val = val
        self.version = val._version if isinstance(val, Tensor) else None

    def check(self, allow_mutation: bool) -> None:
        if self.version is not None and not allow_mutation and self.val._version != self.version:
            raise RuntimeError(
                "Tensor cached during selective activation checkpoint has been mutated"
            )


def _detached(out: Any) -> Any:
    if isinstance(out, tuple):
        return tuple(_detached(o) for o in out)
    return _Kept(out.detach() if isinstance(out, Tensor) else out)


def _check_all(kept: Any, allow_mutation: bool) -> None:
    for k in kept if isinstance(kept, tuple) else (kept,):
        k.check(allow_mutation)


class _CachingTorchDispatchMode(TorchDispatchMode):
    """The forward's mode: asks the policy about each op and keeps what it says to save."""

    def __init__(self, policy_fn: Callable, storage: dict) -> None:
        self.policy_fn = policy_fn
        self.storage = storage
        self.func_counter: dict[Any, int] = defaultdict(int)

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        if _ignored(func):
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        ctx = SelectiveCheckpointContext(is_recompute=False, op_output=out)
        policy = self.policy_fn(ctx, func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        self.storage[func][idx] = _detached(out) if policy in _SAVED else _RECOMPUTE
        return out


class _CachedTorchDispatchMode(TorchDispatchMode):
    """The recomputation's mode: each op the forward kept is taken (once) from the cache.

    compat still runs the op, so that its node and residuals exist for the backward
    (compat's residuals are what the op's VJP computes); the kept output is checked for
    in-place changes and spent, as PyTorch's is."""

    def __init__(
        self, policy_fn: Any, storage: dict, allow_cache_entry_mutation: bool = False
    ) -> None:
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter: dict[Any, int] = defaultdict(int)

    def __enter__(self) -> _CachedTorchDispatchMode:
        self.func_counter.clear()
        return super().__enter__()  # type: ignore[return-value]

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        if _ignored(func):
            return func(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        entries = self.storage.get(func)
        if entries is None:
            raise RuntimeError(
                f"{func} encountered during backward but not found in storage. {_MISMATCH}"
            )
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(
                f"{func} invocation index {idx} encountered during backward but not found in "
                f"storage. {_MISMATCH}"
            )
        if entry is _CONSUMED:
            raise RuntimeError(
                "Trying to backward an extra time. You are only allowed to backward once on any "
                "region computed under selective activation checkpoint."
            )
        if entry is not _RECOMPUTE:
            _check_all(entry, self.allow_cache_entry_mutation)
            entries[idx] = _CONSUMED
        return func(*args, **kwargs)


def create_selective_checkpoint_contexts(
    policy_fn_or_list: Any, allow_cache_entry_mutation: bool = False
) -> tuple[TorchDispatchMode, TorchDispatchMode]:
    """The ``context_fn`` pair of selective activation checkpointing: ``policy_fn(ctx, op,
    *args, **kwargs)`` (or a list of ``torch.ops.aten`` overloads to save) says which ops'
    outputs the forward keeps instead of recomputing them."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, _aten.OpOverload):
                extra = (
                    "Please update the OpOverloadPacket to a specific OpOverload.For example, "
                    "if you have `torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                    if isinstance(op, _aten.OpOverloadPacket)
                    else ""
                )
                raise ValueError(
                    f"Expected op in `op_list` to be an OpOverload but got: {op} of type "
                    f"{type(op)}. {extra}"
                )
        ops = list(policy_fn_or_list)

        def policy_fn(ctx: Any, op: Any, *args: Any, **kwargs: Any) -> CheckpointPolicy:
            return CheckpointPolicy.MUST_SAVE if op in ops else CheckpointPolicy.PREFER_RECOMPUTE

    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict[Any, dict[int, Any]] = defaultdict(dict)
    return (
        _CachingTorchDispatchMode(policy_fn, storage),
        _CachedTorchDispatchMode(None, storage, allow_cache_entry_mutation),
    )
