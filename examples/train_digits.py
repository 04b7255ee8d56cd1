"""Train an MLP on scikit-learn's handwritten digits with funcgrad.

The whole pipeline runs on funcgrad: parameters are initialised and dropout
masks drawn with ``funcgrad.random``; the loss is differentiated with
``fg.value_and_grad``; ``funcgrad.optim.adam`` updates the parameters; and a
whole epoch (shuffle, minibatches, forward, backward, update) is one
``fg.jit``-compiled ``fg.scan`` over the minibatches.

    python examples/train_digits.py                  # ~0.97-0.98 test accuracy
    python examples/train_digits.py --epochs 5 --out-dir /tmp/digits

The data set ships with scikit-learn (no download). Writes ``training.png``
(loss and accuracy curves) and ``metrics.json`` into ``--out-dir`` and prints
``test accuracy: 0.9xxx`` as its last line.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import nn, optim, random

Params = list[dict[str, Any]]
SPLIT_SEED = 0  # the train/test split is fixed; --seed varies initialisation, shuffling, dropout


# --------------------------------------------------------------------------- data


def load_data(test_size: float = 0.2) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Digits (8x8 images, 10 classes), standardised with the training set's statistics."""
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int32)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=test_size, random_state=SPLIT_SEED, stratify=y
    )
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    std = np.where(std > 1e-6, std, 1.0)  # a few border pixels are always 0
    return (x_train - mean) / std, y_train, (x_test - mean) / std, y_test


# --------------------------------------------------------------------------- model


def init_params(key: Any, sizes: Sequence[int]) -> Params:
    """He-initialised dense layers ``sizes[0] -> ... -> sizes[-1]``."""
    keys = random.split(key, len(sizes) - 1)
    params = []
    for k, n_in, n_out in zip(keys, sizes[:-1], sizes[1:]):
        w = random.normal(k, (n_in, n_out), dtype=fnp.float32) * np.float32(np.sqrt(2.0 / n_in))
        params.append({"w": w, "b": fnp.zeros((n_out,), fnp.float32)})
    return params


def forward(params: Params, x: Any, key: Any = None, dropout: float = 0.0) -> Any:
    """Logits of the MLP; with a ``key``, inverted dropout after every hidden layer."""
    keys = random.split(key, len(params) - 1) if key is not None and dropout > 0 else None
    h = x
    for i, layer in enumerate(params[:-1]):
        h = nn.relu(h @ layer["w"] + layer["b"])
        if keys is not None:
            keep = random.bernoulli(keys[i], 1.0 - dropout, h.shape)
            h = fnp.where(keep, h / (1.0 - dropout), 0.0)
    return h @ params[-1]["w"] + params[-1]["b"]


def cross_entropy(logits: Any, labels: Any) -> Any:
    """Mean softmax cross-entropy against integer labels."""
    logp = nn.log_softmax(logits)
    return -fnp.mean(
        fnp.sum(logp * nn.one_hot(labels, logits.shape[-1], dtype=logp.dtype), axis=-1)
    )


# --------------------------------------------------------------------------- training


def make_train_epoch(
    opt: optim.GradientTransformation, n_train: int, batch_size: int, dropout: float
) -> Callable:
    """A jitted ``epoch(params, opt_state, key, x, y) -> (params, opt_state, batch_losses)``.

    Shuffles with ``random.permutation``, then runs one ``fg.scan`` over the
    minibatches (the last partial batch is dropped, as in most loaders).
    """
    n_batches = n_train // batch_size

    def loss_fn(params: Params, xb: Any, yb: Any, key: Any) -> Any:
        return cross_entropy(forward(params, xb, key, dropout), yb)

    @fg.jit
    def epoch(params: Params, opt_state: Any, key: Any, x: Any, y: Any) -> tuple:
        k_perm, k_drop = random.split(key)
        order = random.permutation(k_perm, n_train)[: n_batches * batch_size]
        batches = fnp.reshape(order, (n_batches, batch_size))
        keys = random.split(k_drop, n_batches)

        def step(carry: tuple, batch: tuple) -> tuple:
            params, opt_state = carry
            idx, k = batch
            loss, grads = fg.value_and_grad(loss_fn)(params, x[idx], y[idx], k)
            updates, opt_state = opt.update(grads, opt_state, params)
            return (optim.apply_updates(params, updates), opt_state), loss

        (params, opt_state), losses = fg.scan(step, (params, opt_state), (batches, keys))
        return params, opt_state, losses

    return epoch


@fg.jit
def evaluate(params: Params, x: Any, y: Any) -> tuple[Any, Any]:
    """(mean loss, accuracy) without dropout."""
    logits = forward(params, x)
    acc = fnp.mean(fnp.asarray(fnp.argmax(logits, axis=-1) == y, fnp.float32))
    return cross_entropy(logits, y), acc


def plot_history(history: dict[str, list[float]], path: pathlib.Path) -> None:
    """Loss (train/test) and test accuracy per epoch, side by side."""
    matplotlib.use("Agg")  # headless: write files, never open windows
    import matplotlib.pyplot as plt

    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, history["train_loss"], label="train (with dropout)")
    ax_loss.plot(epochs, history["test_loss"], label="test")
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy", title="loss", yscale="log")
    ax_loss.legend()
    ax_acc.plot(epochs, history["train_acc"], label="train")
    ax_acc.plot(epochs, history["test_acc"], label="test")
    ax_acc.set(
        xlabel="epoch",
        ylabel="accuracy",
        title="accuracy",
        ylim=(min(0.8, *history["test_acc"]), 1.0),
    )
    ax_acc.legend(loc="lower right")
    fig.suptitle("funcgrad MLP on sklearn digits")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=5e-3, help="peak learning rate (cosine decay)")
    p.add_argument("--hidden", type=int, default=128, help="width of the two hidden layers")
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out-dir", type=pathlib.Path, default=pathlib.Path("runs/digits"))
    p.add_argument("--no-progress", action="store_true", help="disable the progress bar")
    args = p.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1 or not 0.0 <= args.dropout < 1.0:
        p.error("need --epochs >= 1, --batch-size >= 1 and 0 <= --dropout < 1")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train, evaluate every epoch, write the plot and metrics; returns the metrics."""
    args = parse_args(argv)
    start = time.perf_counter()
    x_train, y_train, x_test, y_test = load_data()
    n_train = len(x_train)
    if args.batch_size > n_train:
        raise SystemExit(f"--batch-size {args.batch_size} exceeds the {n_train} training examples")
    steps = args.epochs * (n_train // args.batch_size)

    key = random.key(args.seed)
    key, k_init = random.split(key)
    sizes = (x_train.shape[1], args.hidden, args.hidden, 10)
    params = fg.jit(init_params, static_argnums=1)(k_init, sizes)  # one compile, not one per op
    opt = optim.adam(optim.cosine_decay_schedule(args.lr, max(steps, 1), alpha=0.05))
    opt_state = opt.init(params)
    train_epoch = make_train_epoch(opt, n_train, args.batch_size, args.dropout)

    history: dict[str, list[float]] = {
        k: [] for k in ("train_loss", "test_loss", "train_acc", "test_acc")
    }
    bar = tqdm(range(args.epochs), desc="train", unit="epoch", disable=args.no_progress)
    for _ in bar:
        key, k_epoch = random.split(key)
        params, opt_state, losses = train_epoch(params, opt_state, k_epoch, x_train, y_train)
        test_loss, test_acc = evaluate(params, x_test, y_test)
        _, train_acc = evaluate(params, x_train, y_train)
        history["train_loss"].append(float(fnp.mean(losses)))
        history["test_loss"].append(float(test_loss))
        history["train_acc"].append(float(train_acc))
        history["test_acc"].append(float(test_acc))
        bar.set_postfix(loss=f"{history['train_loss'][-1]:.4f}", test_acc=f"{float(test_acc):.4f}")
    bar.close()

    args.out_dir.mkdir(parents=True, exist_ok=True)
    plot_path = args.out_dir / "training.png"
    plot_history(history, plot_path)
    seconds = time.perf_counter() - start
    metrics = {
        "test_accuracy": history["test_acc"][-1],
        "seconds": seconds,
        "epochs": args.epochs,
        "history": history,
        "plot": str(plot_path),
    }
    (args.out_dir / "metrics.json").write_text(json.dumps(metrics, indent=1))
    print(f"trained {args.epochs} epochs in {seconds:.1f} s; plot: {plot_path}", file=sys.stderr)
    print(f"test accuracy: {metrics['test_accuracy']:.4f}")
    return metrics


if __name__ == "__main__":
    main()
