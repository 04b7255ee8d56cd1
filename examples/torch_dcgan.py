"""A DCGAN-style generator/discriminator pair in plain PyTorch style, on compat.torch or torch.

Generator: ConvTranspose2d + BatchNorm2d + ReLU up to a 1x16x16 Tanh image from a latent
vector; discriminator: strided Conv2d + BatchNorm2d + LeakyReLU down to a Sigmoid score.
DCGAN's weight init (``apply(weights_init)``), BCELoss, two Adam optimizers with
betas (0.5, 0.999), and the alternating update: D on real and ``fake.detach()``, then G
through D with "real" labels. Real images are synthetic blobs; latent noise is drawn with
NumPy so both libraries see the same samples.

    python examples/torch_dcgan.py                  # compat.torch
    python examples/torch_dcgan.py --backend torch  # real PyTorch

``main(torch)`` returns ``(loss_D, loss_G)`` per step; ``init`` (``{"G": ..., "D": ...}``,
state_dicts as NumPy arrays) starts both libraries from the same weights.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

import numpy as np

NZ, NGF, NDF, NC, BATCH = 8, 8, 8, 1, 8


def build_models(torch: ModuleType):
    """The generator and discriminator, as subclasses of the given library's ``nn.Module``."""
    nn = torch.nn

    class Generator(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(NZ, NGF * 2, 4, 1, 0, bias=False),  # 4x4
                nn.BatchNorm2d(NGF * 2),
                nn.ReLU(True),
                nn.ConvTranspose2d(NGF * 2, NGF, 4, 2, 1, bias=False),  # 8x8
                nn.BatchNorm2d(NGF),
                nn.ReLU(True),
                nn.ConvTranspose2d(NGF, NC, 4, 2, 1, bias=False),  # 16x16
                nn.Tanh(),
            )

        def forward(self, z):
            return self.main(z)

    class Discriminator(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(NC, NDF, 4, 2, 1, bias=False),  # 8x8
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),  # 4x4
                nn.BatchNorm2d(NDF * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False),  # 1x1
                nn.Sigmoid(),
            )

        def forward(self, x):
            return self.main(x).view(-1, 1).squeeze(1)

    def weights_init(m):
        name = m.__class__.__name__
        if name.find("Conv") != -1:
            nn.init.normal_(m.weight, 0.0, 0.02)
        elif name.find("BatchNorm") != -1:
            nn.init.normal_(m.weight, 1.0, 0.02)
            nn.init.zeros_(m.bias)

    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    return netG, netD


def real_images(rng: np.random.Generator, n: int) -> np.ndarray:
    """1x16x16 images in [-1, 1]: a bright Gaussian blob at a random place."""
    yy, xx = np.mgrid[0:16, 0:16]
    cy, cx = rng.uniform(4, 12, size=(2, n, 1, 1))
    blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8.0)
    return (2.0 * blob - 1.0)[:, None].astype(np.float32)


def main(
    torch: ModuleType, steps: int = 5, init: dict | None = None, seed: int = 0
) -> list[tuple[float, float]]:
    """Alternate D and G updates for ``steps`` batches; ``(loss_D, loss_G)`` per step."""
    rng = np.random.default_rng(seed)
    netG, netD = build_models(torch)
    if init is not None:
        for net, key in ((netG, "G"), (netD, "D")):
            net.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in init[key].items()})
    criterion = torch.nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
    real_label, fake_label = 1.0, 0.0
    losses = []
    for _ in range(steps):
        # (1) update D: maximise log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real = torch.from_numpy(real_images(rng, BATCH))
        label = torch.full((BATCH,), real_label, dtype=real.dtype)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        noise = torch.from_numpy(rng.standard_normal((BATCH, NZ, 1, 1)).astype(np.float32))
        fake = netG(noise)
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optimizerD.step()
        # (2) update G: maximise log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake), label)
        errG.backward()
        optimizerG.step()
        losses.append(((errD_real + errD_fake).item(), errG.item()))
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["compat", "torch"], default="compat")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    lib = importlib.import_module("compat.torch" if args.backend == "compat" else "torch")
    for n, (d, g) in enumerate(main(lib, steps=args.steps)):
        print(f"step {n:3d}  loss_D {d:.4f}  loss_G {g:.4f}")
