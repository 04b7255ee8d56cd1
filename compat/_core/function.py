"""``torch.autograd.Function``: user-written forward and backward in Python.

A call ``F.apply(*args)`` runs ``F.forward`` with grad mode off and, when grad mode
is on and a tensor argument requires grad, records one :class:`BackwardCFunction`
node (``F._backward_cls``, named ``FBackward``) in compat's graph. That node *is*
``ctx``: what ``forward``/``setup_context`` store on it (attributes,
``save_for_backward``, ``mark_dirty``, ...) is there when the engine reaches it.
The engine runs its backward as Python (:meth:`BackwardCFunction._run_backward`), in
the grad mode of the backward call, so a backward written with compat ops is
recorded under ``create_graph=True`` and differentiates again. Graphs holding such
a node run node by node, never as one assembled program.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

import funcgrad as fg
from compat._core import device as _device
from compat._core import dtypes as _dt
from compat._core import forward as _fw
from compat._core import grad_mode as _gm
from compat._core import graph as _graph
from compat._core import tensor as _tensor
from compat._core import views as _views
from compat._core.accumulate import flip
from compat._core.anomaly import STATE as _ANOMALY
from compat._core.anomaly import record_stack
from compat._core.creation_rows import zeros_like
from compat._core.graph import _FREED, AccumulateGrad, Node, check_versions, short_name
from compat._core.ops.array_rows import stack
from compat._core.saved import function_raw_saved
from compat._core.shape_ops import view
from compat._core.tensor import Tensor, _saved_entry, is_tracing
from compat._core.tensor_checks import INFERENCE_SAVED

_LEGACY = (
    "Legacy autograd function with non-static forward method is deprecated. Please use "
    "new-style autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
)
_FUNCTORCH = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
    "jacrev, ...), it must override the setup_context staticmethod. For more details, "
    "please see https://pytorch.org/docs/main/notes/extending.func.html"
)
_DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. "
    "The inputs that are modified inplace must all be outputs of the Function."
)
_LEAF_DIRTY = "a leaf Variable that requires grad has been used in an in-place operation."
_ONCE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _VmapState(threading.local):
    def __init__(self) -> None:
        self.depth = 0


_VMAP = _VmapState()


@contextlib.contextmanager
def vmapping() -> Iterator[None]:
    """Mark the tracing of a ``torch.func.vmap``-ed function: a ``Function`` applied
    inside must have a ``vmap`` rule or ``generate_vmap_rule=True`` (compat batches
    it by tracing either way, as funcgrad batches any program)."""
    _VMAP.depth += 1
    try:
        yield
    finally:
        _VMAP.depth -= 1


class FunctionCtx:
    """What ``forward``/``setup_context`` record for ``backward`` (the ``ctx`` argument)."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors (or ``None``) for ``backward``; read them back as ``saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``jvp`` (its ``ctx.saved_tensors``)."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Mark inputs that ``forward`` modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Mark outputs that get no gradient (``requires_grad=False``)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """With ``False``, ``backward`` gets ``None`` (not zeros) for outputs without a
        gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The ``grad_fn`` (and ``ctx``) of one ``Function.apply`` call."""

    _forward_cls: Any = None
    #: the name PyTorch gives this node when it is not ``<Function name>Backward``
    _node_name: str | None = None

    def __init__(self) -> None:
        Node.__init__(self, None, None, None, (), None)
        self.materialize_grads = True
        self.needs_input_grad: tuple = ()
        self.to_save: tuple | None = None
        self._saved_vars: list | None = None
        self._released = False
        self._n_out = 0
        self._out_meta: list = []
        self._in_meta: list = []
        #: outputs that got no gradient edge (``mark_non_differentiable``, integer dtypes)
        self._non_diff: set = set()
        #: while the user's ``jvp`` runs (``saved_tensors`` are ``save_for_forward``'s)
        self._in_jvp = False

    # ------------------------------------------------------------------ Node API
    def name(self) -> str:
        return self._node_name or type(self).__name__

    @property
    def next_functions(self) -> tuple:
        return tuple([e if type(e) is tuple else (e, 0) for e in self._edges])

    def __repr__(self) -> str:
        where = "" if self._node_name else type(self).__module__ + "."
        return f"<{where}{type(self).__qualname__} object at {hex(id(self))}>"

    def apply(self, *args: Any) -> Any:
        """Call the user's ``backward`` (or ``vjp``) with this ctx."""
        cls = self._forward_cls
        backward_fn, vjp_fn = cls.backward, cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not "
                "allowed. You should only implement one of them."
            )
        user_fn = vjp_fn if vjp_fn is not Function.vjp else backward_fn
        return user_fn(self, *args)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward`` (PyTorch's checks on unpacking)."""
        if self._in_jvp:  # inside ``jvp``: what ``save_for_forward`` kept
            return tuple(getattr(self, "saved_for_forward", None) or ())
        if self._released:
            raise RuntimeError(_FREED)
        if self._saved_vars is None:
            return ()
        # as PyTorch's message: a saved output names this node, a saved input the node
        # it has now (an in-place op may have rebound it)
        check_versions(
            [
                e if out else (*e[:4], t._grad_fn, t._output_nr)
                for t, e, out, _ in self._saved_vars
                if e is not None
            ]
        )
        return tuple(t if p is None else _graph.unpack(p) for t, _, _, p in self._saved_vars)

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The saved tensors as objects taking per-tensor hooks (``register_hooks``)."""
        return function_raw_saved(self)

    @property
    def saved_variables(self) -> tuple:
        """Deprecated name of :attr:`saved_tensors`."""
        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2
        )
        return self.saved_tensors

    def _release(self) -> None:
        self._saved_vars = None
        self._released = True

    # ------------------------------------------------------------------ engine entry
    def _run_backward(self, cts: list, create: bool, batch: int | None) -> list:
        """Gradients for the tensor inputs (``None`` where one gets none): arrays, or
        Tensors when ``create``; ``cts`` has one entry per output (``None``: none came)."""
        if batch is None:
            return self._backward_once(cts, create)
        rows = [
            self._backward_once([None if c is None else c[b] for c in cts], create)
            for b in range(batch)
        ]
        out = []
        metas = [m for m in self._in_meta if m is not None]
        for i, meta in enumerate(metas):
            got = [r[i] for r in rows]
            if all(g is None for g in got):
                out.append(None)
                continue
            got = [np.zeros(meta[0], meta[1]) if g is None else g for g in got]
            out.append(_stack(got, create))
        return out

    def _backward_once(self, cts: list, create: bool) -> list:
        """The user's ``backward`` on one set of funcgrad cotangents (it sees and returns
        PyTorch's gradients: :func:`~compat._core.accumulate.flip` both ways)."""
        grads = []
        skip = () if getattr(self, "_materialize_non_diff_grads", True) else self._non_diff
        for nr, (c, meta) in enumerate(zip(cts, self._out_meta)):
            if c is not None and meta is not None:
                c = flip(c)
                grads.append(c if isinstance(c, Tensor) else Tensor._wrap_result(c))
            elif meta is not None and self.materialize_grads and nr not in skip:
                zero = _device.place(np.zeros(meta[0], meta[1]), meta[2])
                grads.append(Tensor._wrap_result(zero))
            else:
                grads.append(None)
        result = self.apply(*grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_in = len(self._in_meta)
        if len(result) > n_in and all(r is None for r in result[n_in:]):
            result = result[:n_in]
        if len(result) != n_in:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {n_in}, got {len(result)})"
            )
        out: list = []
        edges = iter(self._edges)
        for i, (g, meta) in enumerate(zip(result, self._in_meta)):
            if meta is None:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            edge = next(edges)
            if g is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if edge is None:
                out.append(None)
                continue
            g = flip(self._validate(len(out), g, meta))
            if g.is_sparse:
                out.append(_sparse_gradient(g, edge, create))
                continue
            out.append(g if create else g._st.array)
        return out

    def _validate(self, i: int, g: Tensor, meta: tuple) -> Tensor:
        """PyTorch's ``validate_outputs``: reduce a broadcast gradient, cast its dtype."""
        shape, dtype, _ = meta
        if g.is_sparse and tuple(g.shape) != shape:
            raise RuntimeError(
                f"Function {self.name()} returned an invalid gradient at index {i} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}"
            )
        if tuple(g.shape) != shape:
            if not _expandable(shape, tuple(g.shape)):
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                )
            g = _sum_to(g, shape)
        if g._npdtype != dtype:
            g = g.to(_dt.from_np(dtype))
        return g


def _sparse_gradient(g: Tensor, edge: Any, create: bool) -> Any:
    """A sparse gradient a backward returned: kept sparse for a leaf (its ``.grad`` and
    ``autograd.grad``'s result are sparse, as PyTorch's); densified for any other node,
    whose backward is a dense program (PyTorch hands it the sparse tensor)."""
    if isinstance(edge, AccumulateGrad):
        return g
    dense = g.to_dense()
    return dense if create else dense._st.array


def _expandable(shape: tuple, to: tuple) -> bool:
    if len(shape) > len(to):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(to)))


def _sum_to(g: Tensor, shape: tuple) -> Tensor:
    lead = g.ndim - len(shape)
    dims = list(range(lead)) + [
        lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1
    ]
    return g.sum(dim=tuple(dims), keepdim=True).reshape(shape) if dims else g


def _stack(vals: list, create: bool) -> Any:
    r = stack([v if isinstance(v, Tensor) else Tensor._wrap_result(v) for v in vals])
    return r if create else r._st.array


# --------------------------------------------------------------------------- Function


class FunctionMeta(type):
    """Gives every ``Function`` subclass its node class ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        cls._backward_cls = type(
            name + "Backward",
            (BackwardCFunction,),
            {"_forward_cls": cls, "__module__": "torch.autograd.function"},
        )
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom differentiable operations (see the module docstring)::

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    y = Square.apply(x)
    """

    #: PyTorch's switch for generated ``vmap`` rules (accepted, not used)
    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an "
            "autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(_LEGACY)

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """``forward(ctx, *args)``, or ``forward(*args)`` with ``setup_context``."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        """``setup_context(ctx, inputs, output)``: fill ``ctx`` after a ctx-less forward."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """One gradient per forward input (``None`` for non-tensors)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """Batching rule for ``torch.func.vmap`` (not used by compat)."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap "
            "staticmethod or set generate_vmap_rule=True."
        )

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Forward-mode rule: one tangent per output from one (or ``None``) per input."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it "
            "with forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and record the node that runs ``backward``."""
        has_setup = cls.setup_context is not Function.setup_context
        if has_setup or kwargs:
            args = _bind(cls.forward, args, kwargs, has_setup)
        if is_tracing():  # under a torch.func transform: funcgrad's custom_vjp
            if not has_setup:
                raise RuntimeError(_FUNCTORCH)
            if _VMAP.depth and not cls.generate_vmap_rule and cls.vmap is Function.vmap:
                raise RuntimeError(
                    f"You tried to vmap over {cls.__name__}, but it does not have vmap support. "
                    "Please override and implement the vmap staticmethod or set "
                    "generate_vmap_rule=True. For more details, please see "
                    "https://pytorch.org/docs/main/notes/extending.func.html"
                )
            return _apply_traced(cls, args)
        return _apply(cls, args, has_setup)


class InplaceFunction(Function):
    """A ``Function`` with an ``inplace`` flag (PyTorch's base of in-place functions)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def _bind(forward: Callable, args: tuple, kwargs: dict, defaults: bool) -> tuple:
    """Keyword arguments bound to positions (with ``setup_context``: defaults too). As in
    PyTorch 2.13, what binds only as a keyword (keyword-only parameters, ``**kwargs``)
    reaches ``forward`` as a keyword, which PyTorch's ``apply`` rejects: ``TypeError``
    (with ``setup_context`` even a keyword-only default that was not passed)."""
    sig = inspect.signature(forward)
    if defaults:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        extra = list(bound.kwargs)
    else:
        bound = sig.bind(None, *args, **kwargs)
        extra = [k for k in bound.kwargs if k in kwargs]  # (``**kwargs`` entries included)
    if extra:
        raise TypeError(f"forward() got an unexpected keyword argument '{extra[0]}'")
    return bound.args if defaults else bound.args[1:]


def _apply(cls: type, args: tuple, has_setup: bool) -> Any:
    needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    executable = _gm._state.record and any(needs) and not is_tracing()
    ctx = cls._backward_cls()
    if _ANOMALY[0]:
        record_stack(ctx)
    ctx.needs_input_grad = needs
    # (forward runs without pushing forward-AD tangents: ``jvp`` gives the outputs' own)
    with _gm.no_grad(), _fw.suspended():
        if has_setup:
            output = cls.forward(*args)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args)
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    if executable:
        ctx._edges = tuple(
            (a._edge_key() if a._requires_grad else None) for a in args if isinstance(a, Tensor)
        )
        ctx._in_meta = [_meta(a) for a in args]
        ctx._out_meta = [_meta(o) for o in outs]
        ctx._n_out = len(outs)
    result = _wrap_outputs(ctx, args, outs, executable)
    if executable and ctx.to_save is not None:
        ctx._saved_vars = _save(ctx, ctx.to_save)
    ctx.to_save = None
    if _tensor.FORWARD is not None:
        _forward_tangents(cls, ctx, args, outs, result)
    return tuple(result) if is_tuple else result[0]


_JVP_VIEW = (
    "A custom Function's forward is returning a view (or an input as-is) but the jvp is "
    "not returning a view"
)
_JVP_INPLACE = (
    "An inplace custom Function is not modifying the forward mode gradients inplace. If the "
    "forward is modifying an input inplace, then the jvp function must modify the "
    "corresponding gradient inplace."
)


def _float_t(t: Tensor) -> bool:
    return _dt.kind(t._npdtype) in "fc"


def _forward_tangents(cls: type, ctx: BackwardCFunction, args: tuple, outs: tuple, result: list):
    """Inside a dual level: the user's ``jvp`` on the inputs' tangents (``None`` for
    inputs without one) gives the outputs' tangents."""
    tans = [_fw.tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tans) or not _fw.STATE.enabled:
        return
    # tensor inputs without a tangent get zeros (PyTorch materializes them), others None
    with _fw.suspended(), _gm.no_grad():
        tans = [
            zeros_like(a) if t is None and isinstance(a, Tensor) and _float_t(a) else t
            for a, t in zip(args, tans)
        ]
    if cls.jvp is Function.jvp:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it "
            "with forward mode AD."
        )
    versions = [None if t is None else t._version for t in tans]
    ctx._in_jvp = True
    try:
        with _fw.suspended():
            got = cls.jvp(ctx, *tans)
    finally:
        ctx._in_jvp = False
    got = got if isinstance(got, tuple) else (got,)
    if len(got) != len(outs):
        raise RuntimeError(
            f"function {cls.__name__}Backward returned an incorrect number of tangents "
            f"(expected {len(outs)}, got {len(got)})"
        )
    dirty = {id(t) for t in getattr(ctx, "dirty_tensors", ())}
    non_diff = {id(t) for t in getattr(ctx, "non_differentiable", ())}
    for i, (raw, o, t) in enumerate(zip(outs, result, got)):
        if t is None or not isinstance(o, Tensor):
            continue
        if id(raw) in non_diff or not _float_t(o):
            raise RuntimeError(
                f"The jvp of {cls.__name__} returned a tangent for output {i}, which is not "
                "differentiable (marked non-differentiable, or not of a floating dtype). You "
                "should return None at that position instead."
            )
        k = _input_of(raw, args)
        if id(raw) in dirty:
            if k is None or t is not tans[k] or t._version == versions[k]:
                raise RuntimeError(_JVP_INPLACE)
        elif k is not None:
            _check_view_tangent(t, tans[k])
        if id(raw) in dirty and _fw.tangent_of(o) is t:
            continue  # the input's own tangent, modified in place
        _fw.set_tangent(o, t)


def _input_of(raw: Any, args: tuple) -> int | None:
    """The position of the input that the output ``raw`` is, or is a view of."""
    base = raw._base if isinstance(raw, Tensor) else None
    for k, a in enumerate(args):
        if isinstance(a, Tensor) and (raw is a or (base is not None and base is _base_of(a))):
            return k
    return None


def _base_of(a: Tensor) -> Tensor:
    b = a._base
    return a if b is None else b


def _check_view_tangent(t: Tensor, given: Tensor | None) -> None:
    """An output that is a view of an input needs a tangent that is a view of the same
    base as that input's tangent (PyTorch's checks)."""
    if t._view is None:
        raise RuntimeError(_JVP_VIEW + ".")
    if given is None:
        return
    if given._view is None:
        if t._base is not given:
            raise RuntimeError(_JVP_VIEW + " of the given tangent of the input.")
    elif t._base is not given._base:
        raise RuntimeError(_JVP_VIEW + " of the same base as the given tangent of the input.")


def _save(ctx: BackwardCFunction, tensors: tuple) -> list:
    """``(tensor, saved entry, is an output of ctx, (unpack, packed))`` per tensor given
    to ``save_for_backward``. Under ``saved_tensors_hooks`` only what ``pack`` returned
    is kept (no tensor, no version check), as in PyTorch."""
    hooks = bool(_graph.SAVED_HOOKS)
    saved = []
    for i, t in enumerate(tensors):
        if t is None:
            saved.append((None, None, False, None))
        elif not isinstance(t, Tensor):
            raise TypeError(
                "save_for_backward can only save variables, but argument "
                f"{i} is of type {type(t).__name__}"
            )
        elif t._inference:
            raise RuntimeError(INFERENCE_SAVED)
        elif hooks:
            saved.append((None, None, False, _graph.pack_all([t])[0]))
        else:
            saved.append((t, _saved_entry(t), t._grad_fn is ctx, None))
    return saved


def _apply_traced(cls: type, args: tuple) -> Any:
    """``cls.apply`` while a funcgrad transform traces (``torch.func``): one
    ``funcgrad.custom_vjp`` call whose rule runs ``forward``/``setup_context`` and the
    user's ``backward`` on tensors wrapping the rule's traced arrays. Only tensors given
    to ``save_for_backward`` reach ``backward`` as values of its own trace."""
    pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    seen: dict = {}

    def inputs(arrays: Sequence) -> tuple:
        full = list(args)
        for i, x in zip(pos, arrays):
            full[i] = Tensor._wrap_result(x)
        return tuple(full)

    def outputs(out: Any) -> list:
        outs = out if isinstance(out, tuple) else (out,)
        seen["out"] = out
        return [o._st.array for o in outs if isinstance(o, Tensor)]

    def fun(*arrays: Any) -> list:
        return outputs(cls.forward(*inputs(arrays)))

    def fwd(*arrays: Any) -> tuple:
        full = inputs(arrays)
        out = cls.forward(*full)
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) for a in full)
        cls.setup_context(ctx, full, out)
        saved = [None if t is None else t._st.array for t in ctx.to_save or ()]
        ctx.to_save = None
        outs = out if isinstance(out, tuple) else (out,)
        ctx._out_meta = [_meta(o) for o in outs]
        ctx._in_meta = [_meta(a) for a in full]
        # residuals are arrays only (transforms batch and stage them); ctx's Python
        # attributes do not depend on traced values, so any trace's ctx serves ``bwd``
        seen["ctx"] = ctx
        return outputs(out), saved

    def bwd(saved: list, cts: list) -> tuple:
        ctx = seen["ctx"]
        ctx._saved_vars = [
            (None if a is None else Tensor._wrap_result(a), None, False, None) for a in saved
        ]
        ctx._edges = tuple(() for m in ctx._in_meta if m is not None)  # every input wants one
        it = iter(cts)
        full = [None if m is None else next(it) for m in ctx._out_meta]
        return tuple(ctx._backward_once(full, create=False))

    f = fg.custom_vjp(fun)
    f.defvjp(fwd, bwd)
    got = iter(f(*[args[i]._st.array for i in pos]))
    out = seen["out"]
    outs = [Tensor._wrap_result(next(got)) if isinstance(o, Tensor) else o for o in _tuple(out)]
    return tuple(outs) if isinstance(out, tuple) else outs[0]


def _tuple(out: Any) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def _meta(a: Any) -> tuple | None:
    if not isinstance(a, Tensor):
        return None
    arr = a._st.array
    return tuple(arr.shape), arr.dtype, _device.of_array(arr)


def _alias(t: Tensor) -> Tensor:
    """``t.view_as(t)`` made under ``no_grad``: a view sharing ``t``'s storage and
    version counter (PyTorch returns a returned input as such a view)."""
    with _gm.no_grad():
        return view(t, *t.shape)


def _set_history(t: Tensor, node: Node, nr: int, rebase: bool) -> None:
    if rebase:
        t._unregister_retain()
        t._hooks = None
    t._grad_fn, t._output_nr, t._requires_grad = node, nr, True
    if rebase and t._retains_grad:
        t._retains_grad = False
        t.retain_grad()


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, outs: tuple, executable: bool) -> list:
    """PyTorch's rules for a Function's outputs: returned inputs become aliases, dirty
    inputs take the new node, non-differentiable outputs do not require grad."""
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in getattr(ctx, "dirty_tensors", ())}
    if not dirty <= {id(o) for o in outs}:
        raise RuntimeError(_DIRTY_NOT_RETURNED)
    non_diff = {id(t) for t in getattr(ctx, "non_differentiable", ())}
    for t in {id(t): t for t in getattr(ctx, "dirty_tensors", ())}.values():
        t._vc.v += 1  # PyTorch counts the Function's in-place write once more
    result = []
    # a differentiable output that is a view: in-place on it is PyTorch's error
    meta = _views.MULTI if len(outs) > 1 else _views.CUSTOM
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            result.append(o)
            continue
        is_input, modified = id(o) in inputs, id(o) in dirty
        if not (executable and id(o) not in non_diff and _dt.kind(o._npdtype) in "fc"):
            ctx._non_diff.add(nr)
            if not o._requires_grad:
                if is_input and not modified:
                    o = _alias(o)
                elif o._view is not None and not is_input:  # in-place on it is an error
                    nograd = _views.MULTI_NO_GRAD if len(outs) > 1 else _views.CUSTOM_NO_GRAD
                    o._view.meta, o._view.multi = nograd, (short_name(ctx), nr)
            elif is_input:
                o = o.detach()
            elif o._view is not None and not executable:
                pass  # a view made under no_grad keeps its base's requires_grad, as PyTorch
            else:
                o.detach_()
        elif modified:
            if o._grad_fn is None and o._requires_grad:
                raise RuntimeError(_LEAF_DIRTY)
            if not is_input:
                warnings.warn(
                    "Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is "
                    "not an input, there is no need to pass it to mark_dirty().",
                    UserWarning,
                    stacklevel=4,
                )
            _set_history(o, ctx, nr, rebase=True)
            if o._view is not None:  # the view's root takes the write (CopySlices)
                _views.rebase_custom(o, len(outs))
        else:
            if is_input:
                o = _alias(o)
            _set_history(o, ctx, nr, rebase=False)
            if o._view is not None:
                o._view.meta, o._view.multi = meta, (short_name(ctx), nr)
                o._view.seen = o._vc.v
        result.append(o)
    return result


# --------------------------------------------------------------------------- once_differentiable


class _DelayedError(Function):
    """Aliases of its inputs whose backward raises (``once_differentiable``'s guard)."""

    @staticmethod
    def forward(ctx: Any, *xs: Tensor | None) -> tuple:
        return xs

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(_ONCE)


_DelayedError._backward_cls._node_name = "torch::autograd::Error"
_UNDEFINED = Tensor._wrap_result(np.zeros(0, np.float32))
_DelayedError._backward_cls.__name__ = _DelayedError._backward_cls.__qualname__ = "Error"


def once_differentiable(fn: Callable) -> Callable:
    """Decorate a ``backward`` that is not differentiable itself: it runs under
    ``no_grad``, and differentiating its results (``create_graph=True``) raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with _gm.no_grad():
            outputs = fn(ctx, *args)
        if not _gm.is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # a None output is an undefined tensor to PyTorch's C++ Error node: an edge of
        # its own (None); a placeholder that does not require grad gives compat's that
        fakes = [_UNDEFINED if o is None else o.detach().requires_grad_(True) for o in outs]
        r = tuple(None if o is None else x for o, x in zip(outs, _DelayedError.apply(*fakes)))
        return r[0] if single else r

    return wrapper


__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "FunctionMeta",
    "InplaceFunction",
    "once_differentiable",
]
