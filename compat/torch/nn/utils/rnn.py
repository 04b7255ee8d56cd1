"""``nn.utils.rnn``: packed and padded batches of variable-length sequences.

A ``PackedSequence`` holds the time steps of a batch sorted by decreasing length,
step by step: ``data`` stacks step 0 of every sequence, then step 1 of those still
running, and so on; ``batch_sizes[t]`` counts the sequences alive at step ``t``.
Converting between packed and padded layouts is one gather (an index op, so its
gradient flows back to the source), with the index maps computed in NumPy from
``batch_sizes`` (a CPU int64 tensor, as in PyTorch).

Example:
    >>> import compat.torch as torch
    >>> from compat.torch.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> packed = pack_sequence([torch.ones(3, 2), torch.ones(1, 2)])
    >>> packed.batch_sizes
    tensor([2, 1, 1])
    >>> pad_packed_sequence(packed)[0].shape
    torch.Size([3, 2, 2])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

import compat.torch as torch

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

Tensor = Any


class _PackedFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedFields):
    """The packed batch that ``nn.RNN``/``LSTM``/``GRU`` accept and return.

    Fields: ``data`` (``(sum(lengths), *)``), ``batch_sizes`` (int64, per step),
    ``sorted_indices`` (the batch order ``data`` uses, or ``None`` when the input was
    already sorted) and ``unsorted_indices`` (its inverse). Build one with
    ``pack_padded_sequence`` or ``pack_sequence``.
    """

    def __new__(
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _map_data(self, fn: Any) -> PackedSequence:
        return type(self)(
            fn(self.data), self.batch_sizes, self.sorted_indices, self.unsorted_indices
        )

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the index tensors stay as they are (CPU int64)."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._map_data(lambda _: data)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self

    def double(self) -> PackedSequence:
        return self.to(dtype=torch.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=torch.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=torch.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=torch.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=torch.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=torch.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=torch.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=torch.uint8)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a 1-D index permutation (``None`` stays ``None``)."""
    if permutation is None:
        return None
    perm = np.asarray(permutation.numpy())
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size, dtype=perm.dtype)
    return torch.from_numpy(inv)


def _int64(values: Any) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        return np.asarray(values.detach().numpy()).astype(np.int64).reshape(-1)
    return np.asarray(list(values), dtype=np.int64).reshape(-1)


def _lengths_from_batch_sizes(batch_sizes: np.ndarray) -> np.ndarray:
    """Per-sequence lengths (sorted order) from the per-step batch sizes."""
    b = int(batch_sizes[0]) if batch_sizes.size else 0
    return (batch_sizes[None, :] > np.arange(b)[:, None]).sum(axis=1).astype(np.int64)


def _packed_index(batch_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(step, batch)`` of each row of packed ``data``, in packed order."""
    steps = np.repeat(np.arange(batch_sizes.size), batch_sizes)
    starts = np.repeat(np.cumsum(batch_sizes) - batch_sizes, batch_sizes)
    return steps, np.arange(steps.size) - starts


def _packing(batch_sizes: np.ndarray) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """What the recurrent op needs to unpack and repack ``data`` in one program:
    ``(lengths, rows, steps, cols)`` as int64 tensors (``rows[t, b]`` is the ``data``
    row of step ``t`` of sequence ``b``, or ``len(data)`` past its end)."""
    n = int(batch_sizes.sum())
    rows = np.full((batch_sizes.size, int(batch_sizes[0])), n, dtype=np.int64)
    steps, cols = _packed_index(batch_sizes)
    rows[steps, cols] = np.arange(n)
    arrays = (_lengths_from_batch_sizes(batch_sizes), rows, steps, cols)
    return tuple(torch.from_numpy(a.astype(np.int64)) for a in arrays)


def _to_padded(data: Tensor, batch_sizes: np.ndarray, total: int, value: Any) -> Tensor:
    """Packed ``data`` -> time-major ``(total, B, *)`` with ``value`` in the padding."""
    b = int(batch_sizes[0])
    n = int(data.shape[0])
    rows = np.full((total, b), n, dtype=np.int64)
    steps, cols = _packed_index(batch_sizes)
    rows[steps, cols] = np.arange(n)
    pad = torch.full((1, *data.shape[1:]), value, dtype=data.dtype)
    return torch.cat([data, pad], 0)[torch.from_numpy(rows)]


def _to_packed(padded: Tensor, batch_sizes: np.ndarray) -> Tensor:
    """Time-major padded ``(T, B, *)`` -> packed ``data`` for ``batch_sizes``."""
    steps, cols = _packed_index(batch_sizes)
    return padded[torch.from_numpy(steps), torch.from_numpy(cols)]


def pack_padded_sequence(
    input: Tensor,
    lengths: Tensor | list[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded ``(T, B, *)`` (or ``(B, T, *)`` with ``batch_first``) batch.

    ``enforce_sorted=True`` requires ``lengths`` in decreasing order; ``False`` sorts
    the batch (stably, longest first) and records the permutation.
    """
    lens = _int64(lengths)
    if input.dim() < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = torch.from_numpy(order.astype(np.int64))
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = int(input.shape[0 if batch_first else 1])
    if lens.size != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
            f"(batch_size={batch})"
        )
    if lens.size and np.any(np.diff(lens) > 0):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX exportability."
        )
    if lens.size == 0 or lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0"
        )
    steps = int(input.shape[1 if batch_first else 0])
    if lens[0] > steps:
        raise RuntimeError(
            f"Expected lengths to be at most the sequence length {steps}, but got {int(lens[0])}"
        )
    batch_sizes = (lens[None, :] > np.arange(int(lens[0]))[:, None]).sum(axis=1)
    batch_sizes = batch_sizes.astype(np.int64)
    padded = input.transpose(0, 1) if batch_first else input
    data = _to_packed(padded, batch_sizes)
    return PackedSequence(data, torch.from_numpy(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Undo ``pack_padded_sequence``: ``(padded, lengths)`` in the original batch order.

    ``total_length`` pads the time axis to that length (``ValueError`` if shorter than
    the longest sequence).
    """
    batch_sizes = _int64(sequence.batch_sizes)
    steps = batch_sizes.size
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence "
                f"in input, but got total_length={total_length} and max sequence length "
                f"being {steps}"
            )
        steps = int(total_length)
    padded = _to_padded(sequence.data, batch_sizes, steps, padding_value)
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = _lengths_from_batch_sizes(batch_sizes)
    if sequence.unsorted_indices is not None:
        order = sequence.unsorted_indices
        padded = padded.index_select(0 if batch_first else 1, order)
        lengths = lengths[np.asarray(order.numpy())]
    return padded, torch.from_numpy(lengths)


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack ``(L_i, *)`` tensors into ``(T, B, *)`` (or ``(B, T, *)``), padding each to
    the longest with ``padding_value`` on ``padding_side`` (``'right'`` or ``'left'``)."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}"
        )
    seqs = list(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    longest = max(int(s.shape[0]) for s in seqs)
    rows = []
    for s in seqs:
        short = longest - int(s.shape[0])
        if short:
            pad = torch.full((short, *s.shape[1:]), padding_value, dtype=s.dtype)
            s = torch.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return torch.stack(rows, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """Split a padded batch back into its ``lengths[i]``-long sequences."""
    batch = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [batch[i, :n] for i, n in enumerate(_int64(lengths).tolist())]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """``pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=...)``."""
    lengths = [int(s.shape[0]) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
