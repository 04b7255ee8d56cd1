"""Data sets without downloads.

``MNIST`` and friends are 28x28 images made from scikit-learn's 8x8 handwritten digits
(read from its bundled CSV, without importing scikit-learn), in MNIST's layout
(``data`` uint8 (N, 28, 28), ``targets`` int64). Sizes come from the environment
(``TORCH_EXAMPLES_MNIST_TRAIN``, ``TORCH_EXAMPLES_MNIST_TEST``, ``TORCH_EXAMPLES_FAKE_SIZE``)
so a run takes seconds.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image

_DIGITS: tuple[np.ndarray, np.ndarray] | None = None


def _digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits as (N, 28, 28) uint8 images and int64 labels."""
    global _DIGITS
    if _DIGITS is None:
        spec = importlib.util.find_spec("sklearn")
        if spec is None or spec.origin is None:
            raise RuntimeError("the torchvision stand-in needs scikit-learn's digits.csv.gz")
        path = Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz"
        with gzip.open(path, "rt") as f:
            raw = np.loadtxt(f, delimiter=",", dtype=np.float32)
        small = raw[:, :64].reshape(-1, 8, 8) / 16.0
        big = np.kron(small, np.ones((1, 3, 3), np.float32))[:, :, :]  # 24x24
        imgs = np.zeros((len(big), 28, 28), np.uint8)
        imgs[:, 2:26, 2:26] = (np.clip(big, 0, 1) * 255).astype(np.uint8)
        _DIGITS = imgs, raw[:, 64].astype(np.int64)
    return _DIGITS


class MNIST:
    """MNIST-shaped digits; ``root``/``download`` are accepted and ignored."""

    def __init__(
        self,
        root: Any = None,
        train: bool = True,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        download: bool = False,
    ) -> None:
        imgs, labels = _digits()
        key = "TORCH_EXAMPLES_MNIST_TRAIN" if train else "TORCH_EXAMPLES_MNIST_TEST"
        n = int(os.environ.get(key, "1280" if train else "500"))
        rng = np.random.default_rng(0 if train else 1)
        idx = rng.integers(0, len(imgs), n)
        shifts = rng.integers(-2, 3, (n, 2))
        data = np.stack([np.roll(imgs[i], tuple(s), axis=(0, 1)) for i, s in zip(idx, shifts)])
        self.data = torch.from_numpy(data)
        self.targets = torch.from_numpy(labels[idx].copy())
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        self.classes = [f"{i} - digit" for i in range(10)]

    def __len__(self) -> int:
        return int(self.data.shape[0])

    def __getitem__(self, i: int) -> tuple[Any, Any]:
        img: Any = Image.fromarray(self.data[i].numpy(), mode="L")
        target: Any = int(self.targets[i])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class FashionMNIST(MNIST):
    """Same stand-in data as ``MNIST``."""


class KMNIST(MNIST):
    """Same stand-in data as ``MNIST``."""


class FakeData:
    """Random RGB images, deterministic per index (as torchvision's FakeData)."""

    def __init__(
        self,
        size: int | None = None,
        image_size: tuple[int, int, int] = (3, 224, 224),
        num_classes: int = 10,
        transform: Callable[[Any], Any] | None = None,
        target_transform: Callable[[Any], Any] | None = None,
        random_offset: int = 0,
    ) -> None:
        self.size = (
            int(os.environ.get("TORCH_EXAMPLES_FAKE_SIZE", "1000")) if size is None else size
        )
        self.image_size = image_size
        self.num_classes = num_classes
        self.transform = transform
        self.target_transform = target_transform
        self.random_offset = random_offset

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i: int) -> tuple[Any, Any]:
        rng = np.random.default_rng(i + self.random_offset)
        c, h, w = self.image_size
        arr = rng.integers(0, 256, (h, w, c), dtype=np.uint8)
        img: Any = Image.fromarray(arr[:, :, 0] if c == 1 else arr)
        target: Any = int(rng.integers(0, self.num_classes))
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class ImageFolder:
    """``root/<class>/<image>`` files, loaded as RGB PIL images."""

    def __init__(self, root: Any, transform: Callable[[Any], Any] | None = None) -> None:
        base = Path(root)
        self.classes = sorted(p.name for p in base.iterdir() if p.is_dir())
        self.samples = [
            (str(f), k)
            for k, c in enumerate(self.classes)
            for f in sorted((base / c).iterdir())
            if f.suffix.lower() in {".jpg", ".jpeg", ".png"}
        ]
        self.transform = transform

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int) -> tuple[Any, int]:
        path, target = self.samples[i]
        img: Any = Image.open(path).convert("RGB")
        if self.transform is not None:
            img = self.transform(img)
        return img, target
