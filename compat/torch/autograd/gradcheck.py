"""``torch.autograd.gradcheck`` / ``gradgradcheck``: compare the gradients compat's
autograd computes with central finite differences, as PyTorch's do.

The numerical Jacobian perturbs each element of each input that requires grad in place
(through ``.data``, so a function closing over the input sees it), ``eps`` either way;
the analytical one is a row per output element, each from ``torch.autograd.grad`` with
a one-hot ``grad_outputs``. Both are compared with ``|a - n| <= atol + rtol * |n|``,
and the backward is run twice more to check that it is reentrant (deterministic within
``nondet_tol``). ``fast_mode`` runs the same full comparison (it only changes speed in
PyTorch). Complex inputs and outputs are split into real and imaginary parts as
PyTorch's slow mode does: an output's imaginary part is compared separately.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

import funcgrad
from compat._core import views as _views
from compat._core.autograd import grad as _grad
from compat._core.creation import tensor as _tensor
from compat._core.function import Function
from compat._core.tensor import Tensor
from compat.torch._vmap_internals import _vmap
from compat.torch.autograd import forward_ad as _fwad
from funcgrad import _compat_contract as _contract

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """A gradient check failed (PyTorch's ``torch.autograd.gradcheck.GradcheckError``)."""


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _is_float(t: Any) -> bool:
    return isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex())


def _diff_inputs(inputs: tuple) -> list[int]:
    return [i for i, t in enumerate(inputs) if _is_float(t) and t.requires_grad]


def _check_inputs(inputs: tuple, diff: list[int]) -> None:
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "them have requires_grad=True."
        )
    for i in diff:
        t = inputs[i]
        if t.dtype.__str__() not in ("torch.float64", "torch.complex128"):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point "
                "or complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ",
                UserWarning,
                stacklevel=3,
            )
        shape, strides, _ = _views.layout_of(t)
        if any(s == 0 and n > 1 for n, s in zip(shape, strides)):
            raise RuntimeError(
                f"The {i}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical "
                "gradients correctly. You should call .contiguous on the input before "
                "passing it to gradcheck."
            )


def _outputs(func: Callable, inputs: tuple) -> tuple:
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor))


def _parts(o: Tensor) -> list[np.ndarray]:
    """An output's values as real arrays: (real, imag) for complex outputs."""
    a = np.asarray(o.detach().numpy())
    if np.iscomplexobj(a):
        return [a.real.reshape(-1), a.imag.reshape(-1)]
    return [a.astype(np.float64).reshape(-1)]


def _same_as(ref: list, func: Callable, inputs: tuple, eps: float) -> tuple:
    """``func``'s outputs at perturbed inputs, which must keep their shapes and dtypes."""
    outs = _outputs(func, inputs)
    for (shape, dtype), o in zip(ref, outs):
        if tuple(o.shape) != shape:
            raise AssertionError(
                "Expected `func` to return outputs with the same shape when inputs are "
                f"perturbed by {eps}, but got: shapes {o.shape} and {shape}."
            )
        if o.dtype != dtype:
            raise AssertionError(
                "Expected `func` to return outputs with the same dtype when inputs are "
                f"perturbed by {eps}, but got: dtypes {o.dtype} and {dtype}."
            )
    return outs


def _numerical(func: Callable, inputs: tuple, diff: list[int], eps: float) -> list:
    """``num[j][k]``: the Jacobian (output part k's elements × input j's real parameters)."""
    result = []
    ref = [(tuple(o.shape), o.dtype) for o in _outputs(func, inputs)]
    for j in diff:
        x = inputs[j].data
        cplx = x.is_complex()
        cols: list = []
        for idx in np.ndindex(*tuple(x.shape)):
            for step in (1.0, 1j) if cplx else (1.0,):
                orig = x[idx].clone()
                x[idx] = orig + step * eps
                plus = [p for o in _same_as(ref, func, inputs, eps) for p in _parts(o)]
                x[idx] = orig - step * eps
                minus = [p for o in _same_as(ref, func, inputs, eps) for p in _parts(o)]
                x[idx] = orig
                cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
        nparts = len(cols[0]) if cols else 0
        result.append([np.stack([c[k] for c in cols], -1) for k in range(nparts)])
    return result


def _analytical(func: Callable, inputs: tuple, diff: list[int]) -> tuple[list, list]:
    """The Jacobians from backward, twice (the second run checks reentrancy)."""
    outs = _outputs(func, inputs)
    xs = [inputs[j] for j in diff]
    runs = []
    for _ in range(2):
        per_input: list = [[] for _ in diff]
        for o in outs:
            parts = (1.0, 1j) if o.is_complex() else (1.0,)
            for unit in parts:
                rows: list = [[] for _ in diff]
                for k in range(o.numel()):
                    go = np.zeros(o.numel(), np.asarray(o.detach().numpy()).dtype)
                    go[k] = unit
                    if o.requires_grad:
                        gs = _grad(
                            o,
                            xs,
                            _tensor(go.reshape(tuple(o.shape))),
                            retain_graph=True,
                            allow_unused=True,
                        )
                    else:
                        gs = [None] * len(xs)
                    for r, (g, x) in enumerate(zip(gs, xs)):
                        a = np.zeros(tuple(x.shape), np.asarray(x.detach().numpy()).dtype)
                        if g is not None:
                            a = np.asarray(g.detach().numpy()).reshape(a.shape)
                        a = a.reshape(-1)
                        if np.iscomplexobj(a):  # d/d(re), d/d(im) as PyTorch's convention
                            a = np.stack([a.real, a.imag], -1).reshape(-1)
                        rows[r].append(a)
                for r in range(len(diff)):
                    per_input[r].append(
                        np.stack(rows[r]) if rows[r] else np.zeros((0, inputs[diff[r]].numel()))
                    )
        runs.append(per_input)
    return runs[0], runs[1]


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _one_tier(check: Callable[..., bool]) -> Callable[..., bool]:
    """``check`` run with every eager op on one execution tier: the host tier, unless the
    thread is in the compiled mode. compat's tiers move an op between NumPy and a compiled
    program by timings, and the two may round the same op differently in the last bit
    (docs/design.md, *the same op on both tiers*), which the checks' reentrancy test (two
    identical backward calls must agree to ``nondet_tol``) would report as a
    nondeterministic backward."""

    @functools.wraps(check)
    def checked(*args: Any, **kwargs: Any) -> bool:
        mode = "compiled" if _contract.tier_mode() == "compiled" else "host"
        with funcgrad.eager_tier(mode):
            return check(*args, **kwargs)

    return checked


@_one_tier
def gradcheck(
    func: Callable,
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Whether the gradients of ``func`` at ``inputs`` match finite differences."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True"
        )
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    _check_inputs(inputs, diff)
    num = _numerical(func, inputs, diff, eps)
    if check_backward_ad:
        msg = _check_backward(func, inputs, diff, num, rtol, atol, nondet_tol)
        if msg is not None:
            return _fail(msg, raise_exception)
    if check_forward_ad:
        fwd = _forward(func, inputs, diff)
        outs = _outputs(func, inputs)
        for r, j, i, _o, _part, k in _columns(diff, outs):
            if k >= len(num[r]) or k >= len(fwd[r]):
                continue  # an input without elements
            n, a = num[r][k], fwd[r][k]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(
                    f"Jacobian computed with forward mode mismatch for output {i} with "
                    f"respect to input {j},\nnumerical:{n}\nanalytical:{a}\n",
                    raise_exception,
                )
    if check_forward_ad and check_batched_forward_grad:
        msg = _check_batched_forward(func, inputs, diff, rtol, atol)
        if msg is not None:
            return _fail(msg, raise_exception)
    if check_forward_ad and check_undefined_grad:
        msg = _check_undefined_tangents(func, inputs, diff)
        if msg is not None:
            return _fail(msg, raise_exception)
    if check_backward_ad and check_undefined_grad:
        msg = _check_undefined_grads(func, inputs, diff)
        if msg is not None:
            return _fail(msg, raise_exception)
    return True


class _UndefinedGrad(Function):
    """The identity, whose backward gives its input an undefined (``None``) gradient
    (PyTorch's ``torch._C._functions.UndefinedGrad``)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> None:
        return None


_UNDEFINED_BC = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, "
    'you can call this function with "check_undefined_grad=False" to disable the feature'
)
_UNDEFINED_NOTES = (
    'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
)


def _check_undefined_grads(func: Callable, inputs: tuple, diff: list[int]) -> str | None:
    """PyTorch's check that backward copes with undefined output gradients: all of them
    undefined, then (with several outputs) one at a time; the inputs' gradients must then
    be undefined or zero. The failure's message (after PyTorch's warning), or ``None``."""
    xs = [inputs[j] for j in diff]

    def differentiable() -> list[Tensor]:
        outs = _outputs(func, inputs)
        return [o for o in outs if isinstance(o, Tensor) and o.requires_grad]

    cases = [[_UndefinedGrad.apply(o) for o in differentiable()]]
    if len(cases[0]) > 1:
        for k in range(len(cases[0])):
            cases.append(
                [_UndefinedGrad.apply(o) if i == k else o for i, o in enumerate(differentiable())]
            )
    for outs in cases:
        zeros = [
            _tensor(np.zeros(tuple(o.shape), np.asarray(o.detach().numpy()).dtype)) for o in outs
        ]
        try:
            gs = _grad(outs, xs, zeros, allow_unused=True)
        except RuntimeError:
            warnings.warn(_UNDEFINED_BC, UserWarning, stacklevel=3)
            return (
                f"Expected backward function to handle undefined output grads. {_UNDEFINED_NOTES}"
            )
        for g in gs:
            if g is not None and np.any(np.asarray(g.detach().numpy()) != 0):
                warnings.warn(_UNDEFINED_BC, UserWarning, stacklevel=3)
                return (
                    "Expected all input grads to be undefined or zero when all output grads "
                    f"are undefined or zero. {_UNDEFINED_NOTES}"
                )
    return None


def _check_batched_forward(
    func: Callable, inputs: tuple, diff: list[int], rtol: float, atol: float
) -> str | None:
    """PyTorch's batched forward-grad check: for each differentiable input, the output
    tangents of a batch of two tangents under ``_vmap`` equal those of each tangent."""
    rng = np.random.default_rng(0)
    for j in diff:
        x = inputs[j]
        dt = np.asarray(x.detach().numpy()).dtype
        batch = _tensor(rng.standard_normal((2, *tuple(x.shape))).astype(dt))

        def jvp(t: Tensor, j: int = j) -> tuple:
            with _fwad.dual_level():
                full = [a.detach() if isinstance(a, Tensor) else a for a in inputs]
                full[j] = _fwad.make_dual(inputs[j].detach(), t)
                outs = _outputs(func, tuple(full))
                tans = [_fwad.unpack_dual(o).tangent for o in outs]
                return tuple(o.detach() * 0 if t is None else t for o, t in zip(outs, tans))

        got = _vmap(jvp)(batch)
        for b in range(2):
            for i, (g, w) in enumerate(zip(got, jvp(batch[b]))):
                if not np.allclose(g[b].numpy(), w.numpy(), rtol=rtol, atol=atol):
                    return (
                        f"While computing batched gradients, got: {g[b]}\n"
                        f"Expected: {w}\n(output {i}, input {j}, forward mode)"
                    )
    return None


def _forward(func: Callable, inputs: tuple, diff: list[int]) -> list:
    """``fwd[j][k]``, laid out as :func:`_numerical`'s: each column the output tangents
    (forward mode) for a one-hot tangent of one real parameter of input ``j``; every
    differentiable input is a dual tensor (zero tangents but for that one), as in PyTorch."""
    result = []
    with _fwad.dual_level():
        full = list(inputs)
        tangents = []
        for j in diff:
            x = inputs[j]
            t = _tensor(np.zeros(tuple(x.shape), np.asarray(x.detach().numpy()).dtype))
            full[j] = _fwad.make_dual(x.detach(), t)
            tangents.append(t)
        for t in tangents:
            cols: list = []
            for idx in np.ndindex(*tuple(t.shape)):
                for step in (1.0, 1j) if t.is_complex() else (1.0,):
                    t[idx] = step
                    col = []
                    for o in _outputs(func, tuple(full)):
                        ot = _fwad.unpack_dual(o).tangent
                        col.extend(_parts(o.detach() * 0 if ot is None else ot))
                    cols.append(col)
                    t[idx] = 0.0
            nparts = len(cols[0]) if cols else 0
            result.append([np.stack([c[k] for c in cols], -1) for k in range(nparts)])
    return result


def _check_undefined_tangents(func: Callable, inputs: tuple, diff: list[int]) -> str | None:
    """Forward mode with one input's tangent absent must give the outputs the tangents a
    zero tangent gives (the other inputs' tangents random): the failure's message, or
    ``None``."""
    rng = np.random.default_rng(0)
    with _fwad.dual_level():
        full = list(inputs)
        for j in diff:
            x = inputs[j]
            t = rng.uniform(-1, 1, tuple(x.shape)).astype(np.asarray(x.detach().numpy()).dtype)
            full[j] = _fwad.make_dual(x.detach(), _tensor(t))
        for j in diff:
            kept = full[j]
            x = inputs[j].detach()
            full[j] = _fwad.make_dual(x, _tensor(np.zeros_like(np.asarray(x.numpy()))))
            zero = [_fwad.unpack_dual(o).tangent for o in _outputs(func, tuple(full))]
            full[j] = x
            absent = [_fwad.unpack_dual(o).tangent for o in _outputs(func, tuple(full))]
            full[j] = kept
            for i, (a, b) in enumerate(zip(zero, absent)):
                if a is None or b is None:
                    continue
                if not np.allclose(np.asarray(a.detach().numpy()), np.asarray(b.detach().numpy())):
                    return (
                        f"Mismatch in tangent values for output with index: {i} when input: "
                        f"{inputs[j]} has an undefined tangent value. Got: {b} but expected: {a}"
                    )
    return None


def _check_backward(
    func: Callable, inputs: tuple, diff: list[int], num: list, rtol: float, atol: float,
    nondet_tol: float,
) -> str | None:  # fmt: skip
    """Compare the backward Jacobians with ``num``: the failure's message, or ``None``."""
    ana, again = _analytical(func, inputs, diff)
    outs = _outputs(func, inputs)
    for r, j, i, o, part, k in _columns(diff, outs):
        n = num[r][k] if k < len(num[r]) else np.zeros_like(ana[r][k])
        a = ana[r][k]
        if not o.requires_grad:
            if np.any(n != 0):
                return "Numerical gradient for function expected to be zero"
        elif not np.allclose(a, n, rtol=rtol, atol=atol):
            head = (
                "While considering the imaginary part of complex outputs only, "
                if part == 1
                else ""
            )
            return (
                f"{head}Jacobian mismatch for output {i} with respect to input {j},\n"
                f"numerical:{n}\nanalytical:{a}\n"
            )
        if np.abs(again[r][k] - ana[r][k]).max(initial=0.0) > nondet_tol:
            return (
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient.The tolerance for nondeterminism "
                f"was {nondet_tol}."
            )
    return None


def _columns(diff: list[int], outs: Sequence[Tensor]) -> Iterator[tuple]:
    """``(r, j, i, output, part, k)`` for each differentiable input ``j`` (its row ``r``)
    and each real part of each output ``i`` (column ``k`` of the Jacobian layout; complex
    outputs: the imaginary part first, as PyTorch checks it)."""
    for r, j in enumerate(diff):
        base = 0
        for i, o in enumerate(outs):
            for part in (1, 0) if o.is_complex() else (0,):
                yield r, j, i, o, part, base + part
            base += 2 if o.is_complex() else 1


@_one_tier
def gradgradcheck(
    func: Callable,
    inputs: Any,
    grad_outputs: Sequence[Tensor] | Tensor | None = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """``gradcheck`` of ``func``'s vector-Jacobian product (with random ``grad_outputs``
    that require grad unless given), so second derivatives are checked."""
    inputs = _as_tuple(inputs)
    diff = _diff_inputs(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            _tensor(
                rng.uniform(-1, 1, tuple(o.shape)).astype(np.asarray(o.detach().numpy()).dtype),
                requires_grad=True,
            )
            for o in _outputs(func, inputs)
            if _is_float(o) and o.requires_grad
        )
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def vjp(*args: Any) -> tuple:
        outs = [o for o in _outputs(func, args[:n_in]) if _is_float(o) and o.requires_grad]
        xs = [args[j] for j in diff]
        gs = _grad(outs, xs, list(args[n_in:]), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(
        vjp,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_backward_ad=check_rev_over_rev,
        fast_mode=fast_mode,
    )
