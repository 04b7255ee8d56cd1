"""A small convolutional network on scikit-learn's digits, written JAX-style with stax.

The model is built from ``funcgrad.example_libraries.stax`` layers (``Conv``,
``MaxPool``, ``AvgPool``, ``BatchNorm``, ``Dense``, ``Dropout``...) and trained with
``funcgrad.example_libraries.optimizers.adam``, exactly as one would with
``jax.example_libraries``: swap ``funcgrad`` for ``jax`` in the imports and the same
program runs on JAX.

    python examples/stax_cnn_digits.py               # ~0.97-0.99 test accuracy
    python examples/stax_cnn_digits.py --epochs 3 --batch-size 64

The digits (8x8 grey images, 10 classes) ship with scikit-learn. Prints
``test accuracy: 0.9xxx`` as its last line.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.example_libraries import optimizers, stax


def load_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Digits as NHWC float32 images in [0, 1] and one-hot labels (80/20 split)."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    labels = np.eye(10, dtype=np.float32)[digits.target]
    return tuple(
        train_test_split(images, labels, test_size=0.2, random_state=0, stratify=digits.target)
    )


def make_model(dropout_keep: float) -> tuple[Any, Any, Any]:
    """``(init_fun, train_apply, eval_apply)``: the same parameters, dropout on or off."""

    def net(mode: str) -> tuple[Any, Any]:
        return stax.serial(
            stax.Conv(16, (3, 3), padding="SAME"),
            stax.BatchNorm(),
            stax.Relu,
            stax.MaxPool((2, 2), strides=(2, 2)),  # 8x8 -> 4x4
            stax.Conv(32, (3, 3), padding="SAME"),
            stax.Relu,
            stax.AvgPool((2, 2), strides=(2, 2)),  # 4x4 -> 2x2
            stax.Flatten,
            stax.Dense(64),
            stax.Relu,
            stax.Dropout(dropout_keep, mode=mode),
            stax.Dense(10),
            stax.LogSoftmax,
        )

    init_fun, train_apply = net("train")
    _, eval_apply = net("test")
    return init_fun, train_apply, eval_apply


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=8, help="passes over the training set")
    parser.add_argument("--batch-size", type=int, default=32, help="minibatch size")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam step size")
    parser.add_argument("--seed", type=int, default=0, help="PRNG seed (init, dropout, order)")
    args = parser.parse_args(argv)

    x_train, x_test, y_train, y_test = load_data()
    init_fun, train_apply, eval_apply = make_model(dropout_keep=0.9)
    key = random.key(args.seed)
    key, init_key = random.split(key)
    _, params = init_fun(init_key, (-1, 8, 8, 1))

    opt_init, opt_update, get_params = optimizers.adam(
        optimizers.exponential_decay(args.lr, decay_steps=200, decay_rate=0.5)
    )

    def loss(params: Any, images: Any, labels: Any, rng: Any) -> Any:
        log_probs = train_apply(params, images, rng=rng)
        return -fnp.mean(fnp.sum(log_probs * labels, axis=1))

    @fg.jit
    def update(i: Any, opt_state: Any, images: Any, labels: Any, rng: Any) -> tuple[Any, Any]:
        value, grads = fg.value_and_grad(loss)(get_params(opt_state), images, labels, rng)
        return value, opt_update(i, grads, opt_state)

    @fg.jit
    def accuracy(params: Any, images: Any, labels: Any) -> Any:
        # stax's Dropout wants a key even when it is the identity (mode="test")
        predicted = fnp.argmax(eval_apply(params, images, rng=random.key(0)), axis=1)
        return fnp.mean(predicted == fnp.argmax(labels, axis=1))

    opt_state = opt_init(params)
    order_rng = np.random.RandomState(args.seed)
    n = x_train.shape[0]
    batches = n // args.batch_size
    step = 0
    for epoch in range(args.epochs):
        start = time.time()
        perm = order_rng.permutation(n)
        total = 0.0
        for b in range(batches):
            idx = perm[b * args.batch_size : (b + 1) * args.batch_size]
            key, sub = random.split(key)
            value, opt_state = update(step, opt_state, x_train[idx], y_train[idx], sub)
            total += float(value)
            step += 1
        acc = float(accuracy(get_params(opt_state), x_test, y_test))
        print(
            f"epoch {epoch}: loss {total / batches:.4f}, test accuracy {acc:.4f} "
            f"({time.time() - start:.2f} s)",
            file=sys.stderr,
        )
    acc = float(accuracy(get_params(opt_state), x_test, y_test))
    print(f"test accuracy: {acc:.4f}")
    return acc


if __name__ == "__main__":
    main()
