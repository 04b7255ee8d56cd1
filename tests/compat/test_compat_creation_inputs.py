"""Inputs of the creation functions checked as PyTorch 2.13 checks them: ``meshgrid``'s
tensors, a tensor inside nested data (one number, as PyTorch: compat walked into it),
Python's sequence protocol beyond ``collections.abc.Sequence``, ``float()``/``int()`` of a
complex tensor, complex ends of ``linspace``/``logspace`` with a real dtype, ``randint``
and ``random_`` of complex tensors, ``asarray(..., copy=False)`` of what cannot be
aliased."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torch_oracle import import_real_torch, outcome

import compat.torch as ct

real = import_real_torch()


class _Items:
    """A class with ``__len__`` and ``__getitem__`` only (Python's sequence protocol)."""

    def __init__(self, items: list, broken: bool = False) -> None:
        self.items, self.broken = items, broken

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int):
        if self.broken:
            raise TypeError
        return self.items[i]


def self_referential(t, nested: bool = False):
    z: list = [0]
    z += [z]
    return t.tensor([[1, 2], z] if nested else z)


def cartesian(t):
    a, b, c = t.tensor([1]), t.tensor([1, 2, 3]), t.tensor([1, 2])
    return t.tensor(list(itertools.product([a], b, c)))


CALLS = {
    "meshgrid_empty": lambda t: t.meshgrid(indexing="ij"),
    "meshgrid_empty_list": lambda t: t.meshgrid([], indexing="ij"),
    "meshgrid_2d": lambda t: t.meshgrid(t.tensor([[1, 2], [3, 4]]), indexing="ij"),
    "meshgrid_dtypes": lambda t: t.meshgrid(
        t.tensor([1], dtype=t.int32), t.tensor([2.0]), indexing="ij"
    ),
    "meshgrid_dtype_before_indexing": lambda t: t.meshgrid(
        t.tensor([1]), t.tensor([2.0]), indexing="bad"
    ),
    "meshgrid_indexing": lambda t: t.meshgrid(t.tensor([1, 2]), indexing=""),
    "one_element_tensors_in_rows": cartesian,
    "one_element_tensor_first": lambda t: t.tensor([t.tensor([1]), t.tensor(2)]),
    "one_element_tensors_nested": lambda t: t.tensor([[t.tensor([1.5])], [t.tensor(2.0)]]),
    "many_element_tensor_in_list": lambda t: t.tensor([t.tensor([1.0, 2.0]), t.tensor(3.0)]),
    "sequence_protocol": lambda t: t.tensor(_Items([1.0, 2.0, 3.0])),
    "sequence_protocol_nested": lambda t: t.tensor([_Items([1, 2]), _Items([3, 4])]),
    "sequence_protocol_broken": lambda t: t.tensor(_Items([1.0, 2.0], broken=True)),
    "dict": lambda t: t.tensor({"a": 1}),
    "self_referential_list": self_referential,
    "self_referential_nested": lambda t: self_referential(t, nested=True),
    "same_list_twice": lambda t: t.tensor([[1, 2]] * 3),
    "float_of_complex": lambda t: t.tensor(float(t.tensor(1.5j))),
    "int_of_complex": lambda t: t.tensor(int(t.tensor(1.5j))),
    "float_of_real_complex": lambda t: t.tensor(float(t.tensor(2 + 0j))),
    "int_of_real_complex": lambda t: t.tensor(int(t.tensor(3 + 0j))),
    "linspace_complex_end_float": lambda t: t.linspace(0, 1j, 5, dtype=t.float32),
    "linspace_complex_start_long": lambda t: t.linspace(0j, 1, 5, dtype=t.int64),
    "logspace_complex_end_float": lambda t: t.logspace(0, 1j, 5, dtype=t.float32),
    "linspace_complex_ends": lambda t: t.linspace(0, 1j, 3, dtype=t.complex128),
    "linspace_real_ends_long": lambda t: t.linspace(0.0, 1.0, 3, dtype=t.int64),
    "randint_complex": lambda t: t.randint(6, (2,), dtype=t.complex64),
    "random_complex": lambda t: t.zeros(2, dtype=t.complex128).random_(),
    "random_from_to_complex": lambda t: t.zeros(2, dtype=t.complex128).random_(0, 5),
    "asarray_list_no_copy": lambda t: t.asarray([1, 2], copy=False),
    "asarray_tuple_no_copy": lambda t: t.asarray((1, 2), copy=False),
    "asarray_int_no_copy": lambda t: t.asarray(3, copy=False),
    "asarray_numpy_scalar_no_copy": lambda t: t.asarray(np.float64(0.5), copy=False),
    "asarray_numpy_scalar": lambda t: t.asarray(np.float64(0.5)),
    "asarray_zero_dim_array": lambda t: t.asarray(np.array(1.0), dtype=t.int32),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_creation_inputs(name: str) -> None:
    got, want = outcome(ct, CALLS[name]), outcome(real, CALLS[name])
    if isinstance(want[1], str):
        if name.startswith("meshgrid_2d"):  # (PyTorch prints the tensor in its message)
            assert got[0] == want[0] and got[1].split(":")[:2] == want[1].split(":")[:2]
            return
        assert got == want
        return
    assert got[:2] == want[:2] and got[3:] == want[3:]
    np.testing.assert_array_equal(got[2], want[2])


def test_asarray_of_an_array_without_copy_is_refused_clearly() -> None:
    """PyTorch aliases the array; compat's tensors hold immutable arrays, so it refuses
    (rather than copy where the caller asked for shared memory)."""
    with pytest.raises(ValueError, match="cannot be aliased"):
        ct.asarray(np.arange(3.0), copy=False)


OTHER_CHECKS = {
    "repeat_interleave_2d_repeats": lambda t: t.repeat_interleave(t.arange(4).reshape(2, 2)),
    "repeat_interleave_float_repeats": lambda t: t.repeat_interleave(t.arange(4.0)),
    "repeat_interleave_negative": lambda t: t.repeat_interleave(t.tensor([1, 2, -1, 3])),
    "repeat_interleave_counts": lambda t: t.repeat_interleave(t.tensor([0, 1, 2, 3])),
    "roll_no_shifts": lambda t: t.arange(4).roll(shifts=(), dims=()),
    "roll_no_shifts_one_dim": lambda t: t.arange(6).reshape(2, 3).roll(shifts=(), dims=1),
    "roll_empty_list": lambda t: t.roll(t.arange(4), [], 0),
}


@pytest.mark.parametrize("name", sorted(OTHER_CHECKS))
def test_other_argument_checks(name: str) -> None:
    """``repeat_interleave(repeats)`` and ``roll`` without shifts: PyTorch 2.13's errors
    (compat's came from NumPy, or named the shift count)."""
    got, want = outcome(ct, OTHER_CHECKS[name]), outcome(real, OTHER_CHECKS[name])
    if isinstance(want[1], str):
        assert got == want
        return
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
