"""The public names that funcgrad and compat each write by hand, and why no row joins them.

Issue 34 declares an operation once, as a row, for both libraries (``funcgrad.numpy``/
``lax`` and compat's ``torch.X``, ``Tensor.X``, ``X_``, ``out=``). A name both libraries
have that no row generates keeps a hand-written form in each; ``tools/op_audit.py`` lists
them. :data:`HAND_FORMS` says, for each such name, what PyTorch does that NumPy's or JAX's
form does not (or the reverse): a view sharing storage, another result, another argument
convention, another operation of the same name. The key is the funcgrad function (one per
name, whichever namespace has it), so the table spells no name: the audit's declaration
count is not raised by it. ``tests/test_op_audit.py`` fails when a hand pair has no entry
here, and when an entry names no hand pair (a converted op must leave the table).

Checked against PyTorch 2.13 and JAX 0.10.2 (issue 34's nineteenth round, helper-103).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import funcgrad.lax as lax
import funcgrad.numpy as np_
import funcgrad.scipy.special as special

_VIEW = (
    "a view in PyTorch (`_base` set; a write through it reaches the base, as compat's form "
    "does on its view steps), where a row's op computes a new tensor"
)
_SAME_DTYPE = "PyTorch refuses operands of two dtypes ({}), where NumPy's form promotes them"
_NOT_AN_OP = "not an op on tensors"
_HOST = (
    "its result's shape depends on the values (compat computes it on the host, with no "
    "node), where a row's op is a program of static shapes"
)

#: funcgrad function -> why its name keeps a hand-written form in both libraries
HAND_FORMS: dict[Callable[..., Any], str] = {
    # views: compat builds them on its view steps (docs/design.md, "Views on immutable arrays")
    np_.squeeze: f"{_VIEW}; PyTorch leaves a named dimension whose size is not 1, NumPy's "
    "and lax's forms refuse it",
    np_.transpose: f"{_VIEW}; PyTorch's `transpose(input, dim0, dim1)` swaps two dimensions, "
    "NumPy's `transpose(a, axes)` permutes all (PyTorch's `permute`)",
    np_.swapaxes: f"{_VIEW} (PyTorch's alias of `transpose`)",
    np_.moveaxis: _VIEW,
    np_.ravel: f"{_VIEW} of a contiguous input; NumPy's form takes `order=`",
    np_.reshape: f"{_VIEW} where the strides allow it; `Tensor.reshape(*shape)` takes "
    "varargs, NumPy's form `order=`, lax's `dimensions=`",
    np_.broadcast_to: f"{_VIEW} (`expand`: an in-place write to it is PyTorch's overlapping "
    "memory error)",
    np_.diagonal: _VIEW,
    lax.real: f"{_VIEW}; `real` of a real tensor is the tensor itself",
    np_.imag: f"{_VIEW}; PyTorch refuses a real input ('imag is not implemented for tensors "
    "with non-complex dtypes'), NumPy's form gives zeros",
    lax.conj: f"{_VIEW} (a lazily conjugated one, `is_conj()`)",
    np_.split: f"{_VIEW} per piece; PyTorch's `split(x, 2)` cuts pieces of size 2, NumPy's "
    "`split(x, 2)` 2 equal pieces (`split(arange(6), 2)`: three pieces against two)",
    np_.hsplit: f"{_VIEW} per piece",
    np_.vsplit: f"{_VIEW} per piece",
    np_.dsplit: f"{_VIEW} per piece",
    np_.atleast_1d: f"{_VIEW} (an input of enough dimensions is returned itself)",
    np_.atleast_2d: f"{_VIEW} (an input of enough dimensions is returned itself)",
    np_.atleast_3d: f"{_VIEW} (an input of enough dimensions is returned itself)",
    np_.meshgrid: f"{_VIEW} per grid (`expand`); PyTorch's default `indexing` is 'ij' with a "
    "warning, NumPy's 'xy'; NumPy's `copy=` and `sparse=`",
    # other operations of the same name
    np_.repeat: "another operation: `Tensor.repeat(*sizes)` tiles (NumPy's `tile`), NumPy's "
    "`repeat` repeats each element (PyTorch's `repeat_interleave`); no `torch.repeat`",
    np_.select: "another operation: `torch.select(input, dim, index)` takes one index along a "
    "dimension (a view), NumPy's `select(condlist, choicelist, default)` chooses among "
    "arrays by conditions and lax's `select(pred, on_true, on_false)` is `where`",
    lax.gather: "another operation: lax's `gather(operand, start_indices, dimension_numbers, "
    "slice_sizes)` is XLA's, PyTorch's `gather(input, dim, index)` indexes along one dimension",
    lax.scatter: "another operation: lax's is XLA's scatter with dimension numbers, PyTorch's "
    "`scatter(input, dim, index, src, reduce=)` writes along one dimension",
    lax.scatter_add: "another operation: lax's is XLA's scatter with dimension numbers, "
    "PyTorch's `scatter_add(input, dim, index, src)` adds along one dimension",
    lax.fft: "another kind of name: lax's `fft(x, fft_type, fft_lengths)` is a function, "
    "`torch.fft` a module of transforms (whose forms follow `numpy.fft`)",
    special.bernoulli: "another operation: `scipy.special.bernoulli(n)` gives the Bernoulli "
    "numbers B_0..B_n, `torch.bernoulli(input)` samples from Bernoulli distributions",
    special.kl_div: "another function: SciPy's `kl_div(p, q)` is `p log(p/q) - p + q` of "
    "probabilities, `torch.kl_div(input, target, reduction=)` `target (log target - input)` "
    "of log-probabilities, reduced",
    # contractions: PyTorch refuses mixed dtypes and restricts shapes
    np_.dot: _SAME_DTYPE.format("'expected both vectors to have same dtype'")
    + "; `torch.dot` takes 1-d tensors only, NumPy's `dot` any rank",
    np_.vdot: _SAME_DTYPE.format("as `dot`")
    + "; `torch.vdot` takes 1-d tensors only, NumPy's flattens any rank",
    np_.inner: _SAME_DTYPE.format("'both inputs should have same dtype'"),
    np_.matmul: _SAME_DTYPE.format("'expected m1 and m2 to have the same dtype'"),
    np_.tensordot: _SAME_DTYPE.format("'both inputs should have same dtype'")
    + "; PyTorch's `dims=`, NumPy's `axes=`",
    np_.einsum: _SAME_DTYPE.format("'expected scalar type Float but found Long'")
    + "; PyTorch takes the operands as one list too, and the sublist format",
    np_.cross: "PyTorch takes 3-vectors only, along `dim` (`torch.cross` without `dim`: the "
    "first dimension of size 3); NumPy's form also 2-vectors, with `axisa`, `axisb`, `axisc`",
    # sorting and searching
    lax.sort: "another result: `torch.sort` returns values and indices (`descending=`, "
    "`stable=`), NumPy's `sort` the values (`kind=`, `order=`), lax's sorts a tuple of "
    "operands by `num_keys`",
    np_.argsort: "PyTorch's default sort is unstable and orders ties otherwise than any "
    "stable one (`argsort(zeros(20))` begins 10, 19, 18 on CPU); NumPy's is stable",
    np_.msort: "PyTorch takes a 0-d tensor (and returns it), NumPy's form refuses one",
    np_.searchsorted: "PyTorch's sorted sequence may be N-d (one sequence per row, batched "
    "along the last dimension) and it takes `right=` and `out_int32=`; NumPy's `a` is 1-d",
    np_.unique: f"{_HOST}; PyTorch's `sorted=`, `dim=` and no `return_index`, NumPy's "
    "`return_index`, `equal_nan`, `size=`",
    np_.median: "another result: PyTorch's median is the lower middle value and, with a `dim`, "
    "returns values and indices; NumPy's averages the two middle values",
    np_.nanmedian: "another result, as `median` (the lower middle value; values and indices "
    "with a `dim`)",
    np_.quantile: "PyTorch refuses integer input ('quantile() input tensor must be either "
    "float or double dtype') and a `q` outside [0, 1], and says `interpolation=`; NumPy's "
    "form computes integers in floats and says `method=`",
    np_.nanquantile: "as `quantile` (integer input refused, `interpolation=`)",
    # indices and counts
    np_.nonzero: f"{_HOST}; PyTorch's is one (n, ndim) int64 tensor (NumPy's tuple only with "
    "`as_tuple=True`), NumPy's a tuple of arrays",
    np_.argwhere: f"{_HOST}; PyTorch's indices are int64, NumPy's form gives the default int",
    np_.bincount: f"{_HOST}; PyTorch's integer `weights` give float64, NumPy's form keeps "
    "their dtype",
    np_.tril_indices: "another result and argument order: PyTorch's `(row, col, offset=0)` "
    "gives one (2, n) int64 tensor, NumPy's `(n, k=0, m=None)` two arrays (the second "
    "positional argument is the column count in one, the diagonal in the other)",
    np_.triu_indices: "as `tril_indices` (one (2, n) tensor of `(row, col, offset)` against "
    "two arrays of `(n, k, m)`)",
    np_.unravel_index: "PyTorch wraps out-of-range and negative indices by floor division "
    "(`unravel_index(12, (3, 4))` is (0, 0)), NumPy's form clamps them ((2, 3)); PyTorch's "
    "indices are int64",
    np_.take: "PyTorch's `take(input, index)` indexes the flattened input and raises an "
    "IndexError out of range; NumPy's `take(a, indices, axis=None, mode=)` takes along an "
    "axis and fills out-of-range places (NaN)",
    np_.put: "PyTorch's `put(input, index, source, accumulate=False)` may accumulate and "
    "raises an IndexError out of range; NumPy's `put(a, ind, v, mode=, inplace=)` raises "
    "none (`inplace=False` required)",
    np_.gradient: "another result: `torch.gradient` returns a tuple for every input (one "
    "tensor per dimension), with `spacing=` and `dim=`; NumPy's an array for a 1-d input, "
    "with the spacings as varargs and `axis=`",
    # statistics
    np_.cov: "PyTorch's `cov(input, *, correction, fweights, aweights)` checks its weights' "
    "dtype, sign and size with its own errors; NumPy's takes a second variable set `y`, "
    "`rowvar=`, `bias=`, `ddof=`",
    np_.corrcoef: "a composite in PyTorch whose last node depends on the case (`DivBackward0` "
    "for one variable, `ComplexBackward0` for complex input, else `ClampBackward1`), after "
    "`cov`'s checks; NumPy's `y=` and `rowvar=` have no PyTorch counterpart",
    np_.histogram: "another result: PyTorch's is a named tuple of counts and edges (`bins=100`, "
    "`weight=`, floats only, no derivative), computed on the host; NumPy's `weights=`, "
    "`bins=10`",
    # elementwise functions with another convention
    np_.ldexp: "PyTorch's `ldexp(input, other)` is `input * 2**other` and takes a float "
    "exponent (`ldexp(x, 0.5)` is x times the square root of 2); NumPy's form refuses a "
    "non-integer exponent",
    np_.angle: "PyTorch's gradient is 0 at 0 and for real inputs (its function stops it), "
    "NumPy's form's is `arctan2`'s; NumPy's takes `deg=`",
    special.logit: "PyTorch's `logit(input, eps=None)` clamps the input to [eps, 1 - eps] "
    "first (finite results, a zero gradient outside); SciPy's has no `eps`",
    special.polygamma: "PyTorch's order `n` is a Python int (`Tensor.polygamma(n)` after "
    "the tensor, `polygamma_` its own node), SciPy's and lax's broadcast an array order",
    # creation from data
    np_.asarray: "PyTorch returns the tensor itself (or refuses with `copy=False`), with "
    "`requires_grad=`; NumPy's form makes a new immutable array from any data, with `order=`",
    # queries and settings: no tensor computed
    np_.ndim: f"{_NOT_AN_OP}: PyTorch has `Tensor.ndim`, a property, and no `torch.ndim`",
    np_.shape: f"{_NOT_AN_OP}: PyTorch has `Tensor.shape`, a property (a `torch.Size`)",
    np_.size: f"{_NOT_AN_OP}: PyTorch's `Tensor.size(dim=None)` is a `torch.Size` or an int, "
    "NumPy's `size(a, axis=None)` a count of elements",
    np_.broadcast_shapes: f"{_NOT_AN_OP}: a shape from shapes (PyTorch's a `torch.Size`)",
    np_.can_cast: f"{_NOT_AN_OP}: PyTorch's rule is same-kind (`can_cast(int64, int8)` is "
    "True), NumPy's safe (False)",
    np_.promote_types: f"{_NOT_AN_OP}: PyTorch's table refuses uint16/32/64 beside another "
    "integer ('Promotion for uint16, uint32, uint64 types is not supported'), JAX's lattice "
    "promotes every pair",
    np_.result_type: f"{_NOT_AN_OP}: PyTorch ranks dimensioned tensors above 0-d ones of one "
    "category (int8 and a 0-d int64: int8), JAX's lattice does not (the 0-d int64 wins)",
    np_.get_printoptions: f"{_NOT_AN_OP}: printing settings (PyTorch has `set_printoptions` "
    "only; NumPy's are NumPy's own functions)",
    np_.set_printoptions: f"{_NOT_AN_OP}: printing settings, PyTorch's `precision`, "
    "`threshold`, `profile`, `sci_mode` against NumPy's",
    np_.load: f"{_NOT_AN_OP}: `torch.load` unpickles any object from a zip archive "
    "(`weights_only=`), NumPy's reads one `.npy` array",
    np_.save: f"{_NOT_AN_OP}: `torch.save` pickles any object into a zip archive, NumPy's "
    "writes one `.npy` array",
    np_.frexp: "PyTorch refuses integer inputs ('only supports floating-point dtypes') where "
    "NumPy's form computes in float, and returns the named tuple `torch.return_types.frexp` "
    "(`mantissa`, `exponent`) with its own `out=` dtype errors",
    np_.from_dlpack: f"{_NOT_AN_OP}: an import of another library's buffer; PyTorch's takes "
    "any DLPack producer or capsule and shares its memory (compat's copies: its arrays are "
    "immutable), NumPy's takes `device=` and `copy=`",
}


def reasons() -> dict[str, str]:
    """Public name -> why it stays hand-written in both libraries, sorted by name."""
    found: dict[str, str] = {}
    for fn, why in HAND_FORMS.items():
        name = fn.__name__
        if name in found:
            raise ValueError(f"hand form {name!r} declared twice")
        found[name] = why
    return dict(sorted(found.items()))
