"""Train an MLP on scikit-learn's digits with several processes: compat's DDP.

A PyTorch DistributedDataParallel script with one changed import: each process
reads its share of every epoch through ``DistributedSampler``, gradients are
averaged across the processes after each ``backward``, and rank 0 evaluates.

    python -m compat.torch.distributed.run --nproc-per-node 2 examples/ddp_digits.py
    python -m compat.torch.distributed.run --nproc-per-node 2 examples/ddp_digits.py --epochs 5

The same file runs under real PyTorch with ``--torch`` (and ``torchrun``). Rank 0
prints ``test accuracy: 0.9xxx`` as its last line.
"""

from __future__ import annotations

import argparse
import importlib
import sys

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def load_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Digits (8x8 images, 10 classes), standardised with the training set's statistics."""
    digits = load_digits()
    x, y = digits.data.astype(np.float32), digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.2, random_state=0, stratify=y)
    mean, std = x_tr.mean(0), x_tr.std(0)
    std = np.where(std > 1e-6, std, 1.0)
    return (x_tr - mean) / std, y_tr, (x_te - mean) / std, y_te


def main(argv: list[str]) -> None:
    """Train with every process the launcher started; rank 0 reports."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32, help="per process")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--torch", action="store_true", help="run on real PyTorch instead")
    a = p.parse_args(argv)
    torch = importlib.import_module("torch" if a.torch else "compat.torch")
    dist = torch.distributed
    data = importlib.import_module(torch.__name__ + ".utils.data")
    sampler_mod = importlib.import_module(torch.__name__ + ".utils.data.distributed")
    DDP = importlib.import_module(torch.__name__ + ".nn.parallel").DistributedDataParallel

    dist.init_process_group("gloo")  # env:// — the launcher set RANK, WORLD_SIZE, MASTER_*
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    x_tr, y_tr, x_te, y_te = load_data()
    train = data.TensorDataset(torch.from_numpy(x_tr), torch.from_numpy(y_tr))
    sampler = sampler_mod.DistributedSampler(train, shuffle=True, seed=0)
    loader = data.DataLoader(train, batch_size=a.batch_size, sampler=sampler)

    nn = torch.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    ddp = DDP(model)  # rank 0's initial parameters everywhere
    opt = torch.optim.Adam(ddp.parameters(), lr=a.lr)
    for epoch in range(a.epochs):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every process
        total = torch.zeros(2)
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(ddp(x), y)
            loss.backward()  # averages the gradients over the processes
            opt.step()
            total += torch.stack([loss.detach() * len(y), torch.tensor(float(len(y)))])
        dist.all_reduce(total)  # the epoch's mean loss over every process's samples
        if rank == 0:
            print(f"epoch {epoch + 1}: train loss {float(total[0] / total[1]):.4f}", flush=True)
    if rank == 0:
        with torch.no_grad():
            pred = model(torch.from_numpy(x_te)).argmax(1).numpy()
        print(f"processes: {world}")
        print(f"test accuracy: {float((pred == y_te).mean()):.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
