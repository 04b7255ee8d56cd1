"""A variational autoencoder in plain PyTorch style, on compat.torch or real torch.

Encoder MLP to a Gaussian posterior (mean, log-variance), reparameterised sample, decoder
MLP to Bernoulli pixel probabilities; the loss is binary cross-entropy (summed) plus the
KL divergence to the standard normal prior, minimised with Adam on synthetic 8x8 binary
"images" (random bars). The reparameterisation noise is drawn with NumPy so that both
libraries see the same samples.

    python examples/torch_vae.py                  # compat.torch
    python examples/torch_vae.py --backend torch  # real PyTorch

``main(torch)`` returns the loss of every step; ``init`` (a dict of NumPy arrays, the
model's ``state_dict``) starts both libraries from the same weights.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

import numpy as np

PIXELS, HIDDEN, LATENT, BATCH = 64, 48, 4, 16


def build_model(torch: ModuleType):
    """The VAE, as a subclass of the given library's ``nn.Module``."""
    nn, F = torch.nn, torch.nn.functional

    class VAE(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(PIXELS, HIDDEN)
            self.fc21 = nn.Linear(HIDDEN, LATENT)
            self.fc22 = nn.Linear(HIDDEN, LATENT)
            self.fc3 = nn.Linear(LATENT, HIDDEN)
            self.fc4 = nn.Linear(HIDDEN, PIXELS)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps):
            std = torch.exp(0.5 * logvar)
            return mu + eps * std

        def decode(self, z):
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, PIXELS))
            return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar

    return VAE()


def loss_function(torch: ModuleType, recon_x, x, mu, logvar):
    """Reconstruction (summed BCE) plus KL(q(z|x) || N(0, I))."""
    bce = torch.nn.functional.binary_cross_entropy(recon_x, x.view(-1, PIXELS), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def synthetic_images(rng: np.random.Generator, n: int) -> np.ndarray:
    """Binary 8x8 images, each one random horizontal or vertical bar pair."""
    imgs = np.zeros((n, 1, 8, 8), dtype=np.float32)
    for i in range(n):
        a, b = rng.integers(0, 8, size=2)
        if rng.random() < 0.5:
            imgs[i, 0, a, :] = imgs[i, 0, b, :] = 1.0
        else:
            imgs[i, 0, :, a] = imgs[i, 0, :, b] = 1.0
    return imgs


def main(torch: ModuleType, steps: int = 6, init: dict | None = None, seed: int = 0) -> list[float]:
    """Train for ``steps`` batches; the per-step losses (per sample)."""
    rng = np.random.default_rng(seed)
    model = build_model(torch)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in init.items()})
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    losses = []
    for _ in range(steps):
        data = torch.from_numpy(synthetic_images(rng, BATCH))
        eps = torch.from_numpy(rng.standard_normal((BATCH, LATENT)).astype(np.float32))
        optimizer.zero_grad()
        recon, mu, logvar = model(data, eps)
        loss = loss_function(torch, recon, data, mu, logvar)
        loss.backward()
        optimizer.step()
        losses.append(loss.item() / BATCH)
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["compat", "torch"], default="compat")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    lib = importlib.import_module("compat.torch" if args.backend == "compat" else "torch")
    for n, value in enumerate(main(lib, steps=args.steps)):
        print(f"step {n:3d}  loss {value:.4f}")
