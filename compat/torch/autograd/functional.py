"""``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``.

Higher-level derivatives of a Python function of tensors, built on compat's own
``torch.autograd.grad`` as PyTorch builds them on its ``autograd.grad``:

* ``vjp``/``vhp``: one reverse pass (two for ``vhp``).
* ``jvp``/``hvp``: the double-backward trick (the reverse pass is linear in its
  cotangent, so differentiating it w.r.t. a zero cotangent gives ``J @ v``).
* ``jacobian``: one reverse pass per output element, or, with ``vectorize=True``, one
  batched reverse pass (``is_grads_batched=True``) over the identity basis;
  ``strategy="forward-mode"`` (``vectorize=True`` only) is ``torch.func.jacfwd``.
* ``hessian``: ``jacobian`` of the (differentiable) ``jacobian``.

Return structures, ``strict`` checks and error wording are PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat._core import grad_mode as _gm
from compat._core import namespace as _ns
from compat._core.autograd import grad as _grad
from compat._core.tensor import Tensor
from compat.torch import func as _func

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


# ---------------------------------------------------------------- argument handling
def _tupled(value: Any, what: str, fn: str) -> tuple[bool, tuple]:
    """``(was a tuple, tuple of tensors)``; TypeError on a non-Tensor entry."""
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if was_tuple else f"given {what}"
            raise TypeError(
                f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but "
                f"the {where} has type {type(el)}."
            )
    return was_tuple, items


def _fresh(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the inputs: differentiable views when the caller wants a
    graph back to them, detached copies otherwise (so tensors the function captured
    are told apart from the arguments)."""
    out = []
    for t in tensors:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _untuple(res: Any, was_tuple: bool | tuple[bool, bool]) -> Any:
    """Undo ``_tupled`` on a result (nested: ``(outer, inner)`` flags)."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            res = tuple(r[0] for r in res)
        return res if outer else res[0]
    return res if was_tuple else res[0]


def _finish(res: tuple, create_graph: bool) -> tuple:
    """Results keep their graph only under ``create_graph``."""
    if res and isinstance(res[0], Tensor):
        return res if create_graph else tuple(r.detach() for r in res)
    return tuple(_finish(r, create_graph) for r in res)


def _check_v(v: tuple, ref: tuple, ref_was_tuple: bool) -> None:
    if len(v) != len(ref):
        if ref_was_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(ref)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, ref)):
        if a.size() != b.size():
            where = f"Entry {i} in " if ref_was_tuple else ""
            raise RuntimeError(
                f"{where}v has invalid size: should be {b.size()} but got {a.size()}."
            )


def _vector(v: Any, ref: tuple, ref_was_tuple: bool, create_graph: bool, fn: str, of: str) -> Any:
    """``v`` as a checked tuple, or None when it may be implicit (one 1-element ``ref``)."""
    if v is not None:
        _, v = _tupled(v, "v", fn)
        v = _fresh(v, create_graph, need_graph=False)
        _check_v(v, ref, ref_was_tuple)
        return v
    if len(ref) != 1 or ref[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if {of} a single element.")
    return None


_V_OF_OUTPUT = "the user-provided function returns a single Tensor with"
_V_OF_INPUT = "the input to the user-provided function is a single Tensor with"


def _strict_outputs(outputs: tuple, strict: bool) -> None:
    if not strict:
        return
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."
            )


def _strict_grads(grads: tuple, kind: str, strict: bool) -> None:
    """Strict checks on intermediate gradients (``kind``: grad_inputs/jacobian/hessian)."""
    if not strict:
        return
    for i, g in enumerate(grads):
        if g is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode."
            )
        if g.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."
            )
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )
        raise RuntimeError(
            f"The gradient with respect to input {i} is independent of the inputs of the "
            "user-provided function. This is not allowed in strict mode."
        )


def _grad_of(
    outputs: tuple,
    inputs: tuple,
    cotangents: Any = None,
    *,
    create_graph: bool = False,
    retain_graph: bool | None = None,
    batched: bool = False,
) -> tuple:
    """``autograd.grad`` over the outputs that need a gradient; ``None`` where unused."""
    cots = (None,) * len(outputs) if cotangents is None else cotangents
    pairs = [(o, c) for o, c in zip(outputs, cots) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad(
        tuple(o for o, _ in pairs),
        inputs,
        tuple(c for _, c in pairs),
        retain_graph=retain_graph,
        create_graph=create_graph,
        allow_unused=True,
        is_grads_batched=batched,
    )


_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
    "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
    "grad_outputs when using the double backward trick to compute forward mode gradients. "
    "This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
    "{i} in the grad_jacobian. This is not allowed in strict mode as it prevents from using "
    "the double backward trick to replace forward mode AD.",
}


def _zeros_for_none(
    grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str
) -> tuple:
    """Missing gradients become zeros (strict: an error naming the ``stage``)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = _ns.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _call(func: Callable, inputs: tuple, fn: str, strict: bool) -> tuple[bool, tuple]:
    was_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", fn)
    _strict_outputs(outputs, strict)
    return was_tuple, outputs


def _single_output(outputs: tuple, was_tuple: bool, fn: str) -> None:
    if was_tuple:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn} should contain a single element"
        )


# ---------------------------------------------------------------- public API


def _product(
    outputs: tuple,
    out_tuple: bool,
    in_tuple: bool,
    of: tuple,
    wrt: tuple,
    v: tuple,
    check: tuple,
    strict: bool,
    create_graph: bool,
    stage: str,
) -> tuple[Any, Any]:
    """The vector product ``grad(of, wrt, v)`` (unused inputs as zeros, or ``strict``'s error
    naming ``stage``), returned with ``func``'s outputs in the caller's tuple structure."""
    with _gm.set_grad_enabled(create_graph or _gm.is_grad_enabled()):
        res = _grad_of(of, wrt, v, create_graph=create_graph)
        res = _zeros_for_none(res, check, strict, create_graph, stage)
    return (
        _untuple(_finish(outputs, create_graph), out_tuple),
        _untuple(_finish(res, create_graph), in_tuple),
    )


def vjp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``(func(*inputs), v @ J)``: the vector-Jacobian product at ``inputs``."""
    with _gm.enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "vjp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _vector(v, outputs, out_tuple, create_graph, "vjp", _V_OF_OUTPUT)
    return _product(
        outputs, out_tuple, in_tuple, outputs, inputs, v, inputs, strict, create_graph, "back"
    )


def jvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``(func(*inputs), J @ v)`` by the double-backward trick."""
    with _gm.enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "jvp")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        v = _vector(v, inputs, in_tuple, create_graph, "jvp", _V_OF_INPUT)
        out_tuple, outputs = _call(func, inputs, "jvp", strict)
        dummies = tuple(_ns.zeros_like(o, requires_grad=True) for o in outputs)
        back = _grad_of(outputs, inputs, dummies, create_graph=True)
        _strict_grads(back, "grad_inputs", strict)
    # J v has the outputs' structure
    return _product(
        outputs, out_tuple, out_tuple, back, dummies, v, outputs, strict, create_graph, "back_trick"
    )


def _basis(tensors: tuple) -> tuple:
    """One row block per tensor of the identity over all their elements together."""
    numels = [t.numel() for t in tensors]
    total = sum(numels)
    blocks, start = [], 0
    for t, n in zip(tensors, numels):
        block = t.new_zeros(total, n)
        block.diagonal(-start).fill_(1)
        blocks.append(block)
        start += n
    return tuple(blocks)


def _jacobian_forward(func: Callable, inputs: Any, strict: bool, vectorize: bool) -> Any:
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`strict=False` or `strategy="reverse-mode"`.'
        )
    in_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`."
        )
    seen: list[bool] = []

    def tupled_func(*xs: Tensor) -> tuple:
        out = func(*xs)
        seen.append(isinstance(out, tuple))
        return out if isinstance(out, tuple) else (out,)

    jac = _func.jacfwd(tupled_func, argnums=tuple(range(len(inputs))))(*inputs)
    # PyTorch's forward-mode path returns lists where the reverse path returns tuples
    return _untuple([list(row) for row in jac], (seen[-1], in_tuple))


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``jac[i][j]`` has shape
    ``outputs[i].shape + inputs[j].shape`` (tuple levels dropped as PyTorch does)."""
    if strategy not in _STRATEGIES:
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _jacobian_forward(func, inputs, strict, vectorize)
    with _gm.enable_grad():
        in_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
        inputs = _fresh(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`."
                )
            jac = _jacobian_batched(outputs, inputs, create_graph)
        else:
            jac = _jacobian_rows(outputs, inputs, create_graph, strict)
    return _untuple(_finish(jac, create_graph), (out_tuple, in_tuple))


def _jacobian_batched(outputs: tuple, inputs: tuple, create_graph: bool) -> tuple:
    numels = [o.numel() for o in outputs]
    flat = tuple(o.reshape(-1) for o in outputs)
    rows = _grad_of(flat, inputs, _basis(outputs), create_graph=create_graph, batched=True)
    per_input = []
    for r, x in zip(rows, inputs):
        if r is None:
            r = _ns.zeros_like(x).expand((sum(numels), *x.shape))
        per_input.append(
            [b.view(*o.shape, *x.shape) for b, o in zip(r.split(numels, dim=0), outputs)]
        )
    return tuple(zip(*per_input))


def _jacobian_rows(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    jac = []
    for i, out in enumerate(outputs):
        rows: list[list] = [[] for _ in inputs]
        for k in range(out.nelement()):
            grads = _grad_of(
                (out.reshape(-1)[k],), inputs, retain_graph=True, create_graph=create_graph
            )
            for j, (g, x) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of "
                            f"input {j}. This is not allowed in strict mode."
                        )
                    g = _ns.zeros_like(x)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of input "
                        f"{i}. This is not allowed in strict mode when create_graph=True."
                    )
                rows[j].append(g)
        jac.append(
            tuple(_ns.stack(r, dim=0).view(*out.shape, *x.shape) for r, x in zip(rows, inputs))
        )
    return tuple(jac)


def hessian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar ``func`` at ``inputs`` (``hess[i][j]``: inputs ``i``, ``j``)."""
    in_tuple, inputs = _tupled(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode" and vectorize and not strict and not create_graph:
        raise NotImplementedError(
            "compat: hessian(outer_jacobian_strategy='forward-mode') (forward-over-reverse) is "
            "not supported; use the default 'reverse-mode' or torch.func.hessian"
        )

    def scalar_func(*xs: Tensor) -> Tensor:
        out = func(*xs)
        was_tuple, outs = _tupled(out, "outputs of the user-provided function", "hessian")
        _strict_outputs(outs, strict)
        _single_output(outs, was_tuple, "hessian")
        return out.squeeze()

    def jac_func(*xs: Tensor) -> tuple:
        jac = jacobian(scalar_func, xs, create_graph=True)
        _strict_grads(jac, "jacobian", strict)
        return jac

    res = jacobian(
        jac_func,
        inputs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _untuple(res, (in_tuple, in_tuple))


def _scalar_grad(
    func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool, fn: str
) -> tuple:
    """Shared front of ``vhp``/``hvp``: inputs, ``v``, outputs and the differentiable
    gradient of the scalar output."""
    in_tuple, inputs = _tupled(inputs, "inputs", fn)
    inputs = _fresh(inputs, create_graph, need_graph=True)
    v = _vector(v, inputs, in_tuple, create_graph, fn, _V_OF_INPUT)
    out_tuple, outputs = _call(func, inputs, fn, strict)
    _single_output(outputs, out_tuple, fn)
    jac = _grad_of(outputs, inputs, create_graph=True)
    _strict_grads(jac, "jacobian", strict)
    return in_tuple, inputs, v, out_tuple, outputs, jac


def vhp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``(func(*inputs), v @ H)`` for a scalar ``func``."""
    with _gm.enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _scalar_grad(
            func, inputs, v, create_graph, strict, "vhp"
        )
    return _product(
        outputs, out_tuple, in_tuple, jac, inputs, v, inputs, strict, create_graph, "double_back"
    )


def hvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
) -> tuple[Any, Any]:
    """``(func(*inputs), H @ v)`` for a scalar ``func`` (double-backward trick)."""
    with _gm.enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _scalar_grad(
            func, inputs, v, create_graph, strict, "hvp"
        )
        dummies = tuple(_ns.zeros_like(x, requires_grad=True) for x in inputs)
        back = _grad_of(jac, inputs, dummies, create_graph=True)
        _strict_grads(jac, "hessian", strict)
    return _product(
        outputs,
        out_tuple,
        in_tuple,
        back,
        dummies,
        v,
        inputs,
        strict,
        create_graph,
        "double_back_trick",
    )
