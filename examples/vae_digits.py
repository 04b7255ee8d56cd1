"""A variational autoencoder on scikit-learn's digits, written JAX-style with stax.

The encoder maps a 64-pixel image to the mean and variance of a diagonal Gaussian over a
small latent code (``FanOut`` into ``parallel`` ``Dense`` heads, ``Softplus`` for the
variance), the decoder maps a code back to Bernoulli logits, and the negative evidence
lower bound (with the reparameterisation trick, images binarised afresh each step by
``random.bernoulli``) is minimised by ``optimizers.adam``. One epoch is one jitted
``fg.scan`` over the minibatches.

    python examples/vae_digits.py                    # test ELBO around -24 nats per image
    python examples/vae_digits.py --epochs 5 --latent 4

Prints ``test ELBO: -xx.xx`` (nats per image, higher is better) as its last line.
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


def gaussian_kl(mu: Any, sigmasq: Any) -> Any:
    """KL divergence of ``N(mu, diag(sigmasq))`` from ``N(0, I)``, summed."""
    return -0.5 * fnp.sum(1.0 + fnp.log(sigmasq) - mu**2 - sigmasq)


def bernoulli_logpdf(logits: Any, x: Any) -> Any:
    """Log-probability of binary ``x`` under independent Bernoullis with ``logits``."""
    return -fnp.sum(fnp.logaddexp(0.0, fnp.where(x, -1.0, 1.0) * logits))


def make_vae(latent: int, hidden: int) -> tuple[Any, Any, Any, Any]:
    encoder_init, encode = stax.serial(
        stax.Dense(hidden),
        stax.Relu,
        stax.FanOut(2),
        stax.parallel(stax.Dense(latent), stax.serial(stax.Dense(latent), stax.Softplus)),
    )
    decoder_init, decode = stax.serial(stax.Dense(hidden), stax.Relu, stax.Dense(64))
    return encoder_init, encode, decoder_init, decode


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=30, help="passes over the training set")
    parser.add_argument("--batch-size", type=int, default=32, help="minibatch size")
    parser.add_argument("--latent", type=int, default=8, help="latent dimension")
    parser.add_argument("--hidden", type=int, default=128, help="hidden units")
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam step size")
    parser.add_argument("--seed", type=int, default=0, help="PRNG seed")
    args = parser.parse_args(argv)

    images = (load_digits().data / 16.0).astype(np.float32)
    train, test = train_test_split(images, test_size=0.2, random_state=0)
    encoder_init, encode, decoder_init, decode = make_vae(args.latent, args.hidden)

    def neg_elbo(rng: Any, params: Any, batch: Any) -> Any:
        """Monte Carlo estimate of the negative ELBO per image (one sample per image)."""
        enc_params, dec_params = params
        mu, sigmasq = encode(enc_params, batch)
        z = mu + fnp.sqrt(sigmasq) * random.normal(rng, mu.shape)
        logits = decode(dec_params, z)
        return -(bernoulli_logpdf(logits, batch) - gaussian_kl(mu, sigmasq)) / batch.shape[0]

    key = random.key(args.seed)
    key, k_enc, k_dec = random.split(key, 3)
    _, enc_params = encoder_init(k_enc, (-1, 64))
    _, dec_params = decoder_init(k_dec, (-1, args.latent))
    opt_init, opt_update, get_params = optimizers.adam(args.lr)

    @fg.jit
    def run_epoch(rng: Any, first_step: Any, opt_state: Any, batches: Any) -> tuple[Any, Any]:
        def body(carry: Any, batch: Any) -> tuple[Any, Any]:
            i, opt_state = carry
            elbo_rng, data_rng = random.split(random.fold_in(rng, i))
            binary = random.bernoulli(data_rng, batch)
            loss, grads = fg.value_and_grad(lambda p: neg_elbo(elbo_rng, p, binary))(
                get_params(opt_state)
            )
            return (i + 1, opt_update(i, grads, opt_state)), loss

        (_, opt_state), losses = fg.scan(body, (first_step, opt_state), batches)
        return opt_state, fnp.mean(losses)

    @fg.jit
    def test_elbo(rng: Any, params: Any) -> Any:
        data_rng, elbo_rng = random.split(rng)
        return -neg_elbo(elbo_rng, params, random.bernoulli(data_rng, test))

    opt_state = opt_init((enc_params, dec_params))
    per_epoch = train.shape[0] // args.batch_size
    order = np.random.RandomState(args.seed)
    for epoch in range(args.epochs):
        start = time.time()
        batches = train[order.permutation(train.shape[0])[: per_epoch * args.batch_size]]
        batches = batches.reshape(per_epoch, args.batch_size, 64)
        key, sub = random.split(key)
        opt_state, loss = run_epoch(sub, epoch * per_epoch, opt_state, batches)
        print(
            f"epoch {epoch}: train -ELBO {float(loss):.3f} ({time.time() - start:.2f} s)",
            file=sys.stderr,
        )
    elbo = float(test_elbo(random.key(12345), get_params(opt_state)))
    print(f"test ELBO: {elbo:.2f}")
    return elbo


if __name__ == "__main__":
    main()
