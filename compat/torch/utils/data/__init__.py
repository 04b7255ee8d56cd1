"""``torch.utils.data``: datasets, samplers, collation and ``DataLoader`` for compat tensors.

Everything runs on compat tensors; random orders come from compat's generators
(reproducible under ``torch.manual_seed`` / ``torch.Generator().manual_seed``, but
not PyTorch's sequences). ``num_workers > 0`` uses worker processes (``spawn`` by
default, see ``_multiprocessing``).
"""

from __future__ import annotations

from compat.torch.utils.data.collate import default_collate, default_convert
from compat.torch.utils.data.dataloader import DataLoader
from compat.torch.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from compat.torch.utils.data.distributed import DistributedSampler
from compat.torch.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from compat.torch.utils.data.worker import get_worker_info

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]
