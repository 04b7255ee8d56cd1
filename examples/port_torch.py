"""A plain PyTorch training script, ported to funcgrad by changing its imports.

An MLP (or, with ``--model cnn``, a small CNN: Conv2d, BatchNorm2d, MaxPool2d,
AdaptiveAvgPool2d) classifies scikit-learn's bundled 8x8 handwritten digits (no
download): ``nn.Module`` model, ``CrossEntropyLoss``, ``Adam`` with a cosine
learning-rate schedule, manual minibatching, ``loss.backward()`` /
``optimizer.step()`` / ``optimizer.zero_grad()``, a tqdm progress bar, and
loss/accuracy per epoch. Everything below the imports is ordinary PyTorch code.

    python examples/port_torch.py                    # on compat.torch (funcgrad)
    python examples/port_torch.py --backend torch    # the same code on real PyTorch
    python examples/port_torch.py --model cnn --epochs 5 --no-progress

The last line printed is ``test accuracy: 0.9xxx``.
"""

# ruff: noqa: I001  (the ported imports come first on purpose)

# --- the port: these imports are the only lines that differ from the PyTorch original -------
import compat.torch as torch
import compat.torch.nn as nn
import compat.torch.optim as optim

# On real PyTorch the same script runs with
#     import torch
#     import torch.nn as nn
#     import torch.optim as optim
# and nothing else changed; `--backend torch` makes exactly that swap (below, via importlib).
# ---------------------------------------------------------------------------------------------

import argparse
import importlib
import sys
import time
from collections.abc import Sequence

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm


def _backend_from_argv(argv: Sequence[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--backend" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--backend="):
            return arg.split("=", 1)[1]
    return "compat"


# The swap happens before the model class below is defined, so it subclasses the
# chosen backend's nn.Module.
BACKEND = _backend_from_argv(sys.argv[1:]) if __name__ == "__main__" else "compat"
if BACKEND == "torch":
    torch = importlib.import_module("torch")  # type: ignore[assignment]
    nn = importlib.import_module("torch.nn")  # type: ignore[assignment]
    optim = importlib.import_module("torch.optim")  # type: ignore[assignment]
elif BACKEND != "compat":
    raise SystemExit(f"unknown backend {BACKEND!r} (expected 'compat' or 'torch')")


def _backend_name() -> str:
    return "compat" if torch.__name__.startswith("compat") else "torch"


# ------------------------------------------------------------------------------- data


def load_data(seed: int = 0):
    """Digits as float32 features scaled to [0, 1] and int64 labels; 80/20 stratified split."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.2, random_state=seed, stratify=y)


# ------------------------------------------------------------------------------- model


class MLP(nn.Module):
    def __init__(self, n_in: int = 64, hidden: int = 128, n_classes: int = 10, p: float = 0.1):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_in, hidden),
            nn.ReLU(),
            nn.Dropout(p),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    def __init__(self, n_classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),
        )
        self.head = nn.Linear(32 * 2 * 2, n_classes)

    def forward(self, x):
        return self.head(self.features(x.view(-1, 1, 8, 8)))


# ------------------------------------------------------------------------------- training


def evaluate(model, loss_fn, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = loss_fn(logits, y).item()
        correct = (logits.argmax(dim=1) == y).sum().item()
    model.train()
    return loss, correct / len(y)


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["compat", "torch"], default="compat")
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    if args.backend != BACKEND:
        parser.error(
            f"this process imported the {BACKEND!r} backend; run the script with "
            f"--backend {args.backend}"
        )

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    x_train, x_test, y_train, y_test = load_data()
    xt_test, yt_test = torch.from_numpy(x_test), torch.from_numpy(y_test)
    xt_train, yt_train = torch.from_numpy(x_train), torch.from_numpy(y_train)

    model = MLP() if args.model == "mlp" else CNN()
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    print(
        f"backend: {_backend_name()} ({torch.__name__}); {args.model}, "
        f"{sum(p.numel() for p in model.parameters())} parameters; "
        f"{len(x_train)} train / {len(x_test)} test samples"
    )

    history = []
    n_batches = (len(x_train) + args.batch_size - 1) // args.batch_size
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        order = rng.permutation(len(x_train))
        running = 0.0
        bar = tqdm(
            range(n_batches), desc=f"epoch {epoch:2d}", leave=False, disable=args.no_progress
        )
        for b in bar:
            idx = order[b * args.batch_size : (b + 1) * args.batch_size]
            xb = torch.from_numpy(x_train[idx])
            yb = torch.from_numpy(y_train[idx])

            logits = model(xb)
            loss = loss_fn(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            running += loss.item() * len(idx)
            bar.set_postfix(loss=f"{loss.item():.4f}")
        scheduler.step()
        train_loss = running / len(x_train)
        _, train_acc = evaluate(model, loss_fn, xt_train, yt_train)
        test_loss, test_acc = evaluate(model, loss_fn, xt_test, yt_test)
        seconds = time.perf_counter() - start
        history.append(
            {
                "epoch": epoch,
                "train_loss": train_loss,
                "train_acc": train_acc,
                "test_loss": test_loss,
                "test_acc": test_acc,
                "seconds": seconds,
            }
        )
        print(
            f"epoch {epoch:2d}  train loss {train_loss:.4f}  train acc {train_acc:.4f}  "
            f"test loss {test_loss:.4f}  test acc {test_acc:.4f}  ({seconds:.2f}s)"
        )
    print(f"test accuracy: {history[-1]['test_acc']:.4f}")
    return {"backend": _backend_name(), "history": history, "test_acc": history[-1]["test_acc"]}


if __name__ == "__main__":
    main()
