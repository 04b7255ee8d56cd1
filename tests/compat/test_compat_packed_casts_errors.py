"""``PackedSequence``'s dtype casts (``short``, ``char``, ``byte`` beside the others) and
``pack_padded_sequence``'s refusal of an empty input, against real PyTorch 2.13."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import compat.torch as torch

CASTS = ("double", "float", "half", "long", "int", "short", "char", "byte")


@pytest.mark.parametrize("cast", CASTS)
def test_packed_sequence_casts_as_pytorch(real_torch, cast):
    def run(lib):
        rnn = importlib.import_module(lib.__name__ + ".nn.utils.rnn")
        padded = lib.tensor(np.arange(12.0).reshape(4, 3) * 3.7)
        packed = rnn.pack_padded_sequence(padded, [4, 2, 1], enforce_sorted=True)
        out, lengths = rnn.pad_packed_sequence(getattr(packed, cast)())
        return out.type(), out.tolist(), lengths.tolist()

    assert run(torch) == run(real_torch)


@pytest.mark.parametrize(
    ("shape", "lengths", "enforce_sorted"),
    [((0, 0), [], True), ((0, 1, 10), [11, 14, 14, 2], True), ((0, 2), [], False)],
)
def test_pack_padded_sequence_of_an_empty_input(real_torch, shape, lengths, enforce_sorted):
    def run(lib):
        rnn = importlib.import_module(lib.__name__ + ".nn.utils.rnn")
        with pytest.raises(RuntimeError) as err:
            rnn.pack_padded_sequence(lib.zeros(shape), lengths, True, enforce_sorted)
        return str(err.value)

    assert run(torch) == run(real_torch) == "Cannot pack empty tensors."
