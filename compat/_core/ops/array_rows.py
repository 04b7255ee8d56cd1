"""The ops of the array rows (``funcgrad.core.array_row``: ``tril``, ``triu``, ``flip``,
``roll``): ``torch.X``, ``Tensor.X``, ``Tensor.X_`` and ``out=``, generated from each row's
``TorchArrayForm``. Each op binds PyTorch's parameters, checks and converts them by their
kind, and computes the row's ``funcgrad.numpy`` function with the numpy parameters they
pass; the node is the row's."""

from __future__ import annotations

import inspect
import operator
from typing import Any

from compat._core.optable import Sample, defop
from compat._core.tensor import Tensor, _wrap_dim, apply
from funcgrad._compat_contract import array_rows

#: op -> the row's funcgrad.numpy function
_FN = {r.name: r.function for r in array_rows()}


def _array_f(x: Any, *, op: str, kwargs: tuple | None) -> Any:
    """The row ``op``'s function of ``x``; ``x`` itself for no arguments (``None``: an empty
    input PyTorch copies unchecked)."""
    return x if kwargs is None else _FN[op](x, **dict(kwargs))


def _dims(value: Any, ndim: int, unique: bool) -> tuple[int, ...] | None:
    if value is None:
        return None
    dims = tuple(value) if isinstance(value, (list, tuple)) else (operator.index(value),)
    if ndim == 0 and not unique and dims:  # (roll: a 0-d tensor has no dimension to name)
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    out = tuple(_wrap_dim(operator.index(d), ndim) for d in dims)
    if unique and len(set(out)) != len(out):
        d = next(d for i, d in enumerate(out) if d in out[:i])
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return () if ndim == 0 else out  # (flip: a 0-d tensor's dim 0 or -1 names no axis)


def _convert(name: str, pos: int, param: str, kind: str, value: Any, input: Tensor) -> Any:
    """A PyTorch argument of ``kind`` (``TorchParam.kind``) as the numpy form takes it."""
    if kind == "int":
        return operator.index(value)
    if kind == "shifts":
        seq = value if isinstance(value, (list, tuple)) else (value,)
        try:
            return tuple(operator.index(v) for v in seq)
        except TypeError:
            raise TypeError(
                f"{name}(): argument '{param}' (position {pos}) must be tuple of ints, not "
                f"{type(value).__name__}"
            ) from None
    if kind == "unique_dims" and not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{name}(): argument '{param}' (position {pos}) must be tuple of ints, not "
            f"{type(value).__name__}"
        )
    return _dims(value, input.ndim, kind == "unique_dims")


def _count(value: Any) -> int | None:
    """How many entries an int-or-sequence argument has (0 for ``None``; ``None`` for a
    value of another type, which its conversion refuses)."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        return len(value)
    return 1 if isinstance(value, int) else None


def _array_op(row: Any) -> Any:
    t = row.torch
    name, node = row.name, t.grad_fn
    params = [inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for p in t.params:
        default = inspect.Parameter.empty if p.required else p.default
        params.append(
            inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
        )
    sig = inspect.Signature(params)
    conv = [(p.name, p.numpy, p.kind, i + 2) for i, p in enumerate(t.params)]
    numpy_of = {p.name: p.numpy for p in t.params}

    def f(*args: Any, **kwargs: Any) -> Tensor:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        input = given["input"]
        if t.aligned is not None:  # (roll: one shift per dim, one shift for none; before
            # the dims are checked, as PyTorch)
            n_a, n_b = (_count(given[x]) for x in t.aligned)
            if n_a != max(n_b, 1) and n_a is not None and n_b is not None:
                raise RuntimeError(
                    f"{t.aligned[0]} and dimensions must align. {t.aligned[0]}: {n_a}, "
                    f"{t.aligned[1]}:{n_b}"
                )
        if t.empty_unchecked and isinstance(input, Tensor) and input.numel() == 0:
            return apply(_array_f, node, (input,), (("op", name), ("kwargs", None)))
        kw = {n: _convert(name, i, p, kind, given[p], input) for p, n, kind, i in conv}
        if t.aligned is not None and kw[numpy_of[t.aligned[1]]] is None:
            shifts = numpy_of[t.aligned[0]]
            kw[shifts] = kw[shifts][0]  # (the flattened tensor's one shift)
        if t.min_ndim is not None and input.ndim < t.min_ndim[0]:
            raise RuntimeError(t.min_ndim[1])
        return apply(_array_f, node, (input,), (("op", name), ("kwargs", tuple(kw.items()))))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{row.function.__doc__.splitlines()[0]} (PyTorch's arguments; the row's form)."
    f.__signature__ = sig  # type: ignore[attr-defined]
    samples = tuple(Sample((shape,), args=args) for shape, args in t.samples)
    method: Any = True
    if t.method_varargs is not None:  # (``x.flip(0, 1)`` as ``x.flip((0, 1))``)
        param = t.method_varargs

        def method(self: Tensor, *values: Any, **kwargs: Any) -> Tensor:
            if values:
                one = len(values) == 1 and isinstance(values[0], (list, tuple))
                kwargs[param] = values[0] if one else values
            return f(self, **kwargs)

        method.__name__ = method.__qualname__ = name
        method.__doc__ = f.__doc__
    return defop(name, method=method, inplace=t.inplace, samples=samples)(f)


for _row in array_rows():
    globals()[_row.name] = _array_op(_row)
del _row
