"""Small PyTorch-style training setups, written once for any ``torch``-like module.

Each builder takes the module (``compat.torch`` or real ``torch``) and returns
``(model, optimizer, batches)``: the same code on both backends, so benchmarks and
tests compare like with like. Sizes follow issue 17's benchmark set.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["MODELS", "build", "train_step"]


def _mlp(torch: ModuleType, small: bool) -> tuple[Any, Any, Callable]:
    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    batch = 16 if small else 64

    def data(rng: np.random.Generator) -> tuple:
        return rng.standard_normal((batch, 784)).astype(np.float32), rng.integers(0, 10, batch)

    return model, torch.optim.Adam(model.parameters(), lr=1e-3), data


def _cnn(torch: ModuleType, small: bool) -> tuple[Any, Any, Callable]:
    """The convolutional net of PyTorch's mnist example (without dropout)."""
    nn = torch.nn
    side, c1, c2 = (12, 8, 16) if small else (28, 32, 64)
    flat = c2 * ((side - 4) // 2) ** 2
    model = nn.Sequential(
        nn.Conv2d(1, c1, 3),
        nn.ReLU(),
        nn.Conv2d(c1, c2, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(flat, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )
    batch = 8 if small else 64

    def data(rng: np.random.Generator) -> tuple:
        x = rng.standard_normal((batch, 1, side, side)).astype(np.float32)
        return x, rng.integers(0, 10, batch)

    return model, torch.optim.Adadelta(model.parameters(), lr=1.0), data


def _gpt_class(torch: ModuleType) -> type:
    nn, F = torch.nn, torch.nn.functional

    class TinyGPT(nn.Module):
        """Pre-norm causal transformer with a weight-tied head."""

        def __init__(self, vocab: int, width: int, heads: int, layers: int, block: int):
            super().__init__()
            self.tok = nn.Embedding(vocab, width)
            self.pos = nn.Embedding(block, width)
            self.blocks = nn.ModuleList(
                nn.ModuleDict(
                    {
                        "ln1": nn.LayerNorm(width),
                        "qkv": nn.Linear(width, 3 * width),
                        "proj": nn.Linear(width, width),
                        "ln2": nn.LayerNorm(width),
                        "fc": nn.Linear(width, 4 * width),
                        "out": nn.Linear(4 * width, width),
                    }
                )
                for _ in range(layers)
            )
            self.ln = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab, bias=False)
            self.head.weight = self.tok.weight
            self.heads = heads

        def forward(self, idx: Any) -> Any:
            b, t = idx.shape
            x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
            for blk in self.blocks:
                q, k, v = blk["qkv"](blk["ln1"](x)).split(x.shape[-1], dim=2)
                q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + blk["proj"](y.transpose(1, 2).contiguous().view(b, t, -1))
                x = x + blk["out"](F.gelu(blk["fc"](blk["ln2"](x))))
            return self.head(self.ln(x))

    return TinyGPT


def _gpt(torch: ModuleType, small: bool) -> tuple[Any, Any, Callable]:
    """2 layers, 64 wide, 4 heads, 32 tokens, batch 8, AdamW (16 tokens, batch 4 small)."""
    vocab, tokens, batch = (50, 16, 4) if small else (65, 32, 8)
    model = _gpt_class(torch)(vocab, 64, 4, 2, 32)

    def data(rng: np.random.Generator) -> tuple:
        return rng.integers(0, vocab, (batch, tokens)), rng.integers(0, vocab, (batch, tokens))

    return model, torch.optim.AdamW(model.parameters(), lr=1e-3), data


def _lstm_class(torch: ModuleType) -> type:
    nn = torch.nn

    class LSTMLM(nn.Module):
        """Embedding, a 2-layer LSTM and a decoder (PyTorch's word_language_model)."""

        def __init__(self, vocab: int, width: int):
            super().__init__()
            self.emb = nn.Embedding(vocab, width)
            self.rnn = nn.LSTM(width, width, num_layers=2, batch_first=True)
            self.out = nn.Linear(width, vocab)

        def forward(self, idx: Any) -> Any:
            h, _ = self.rnn(self.emb(idx))
            return self.out(h)

    return LSTMLM


def _lstm(torch: ModuleType, small: bool) -> tuple[Any, Any, Callable]:
    vocab, width, tokens, batch = (40, 32, 12, 4) if small else (100, 64, 32, 8)
    model = _lstm_class(torch)(vocab, width)

    def data(rng: np.random.Generator) -> tuple:
        return rng.integers(0, vocab, (batch, tokens)), rng.integers(0, vocab, (batch, tokens))

    return model, torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9), data


MODELS: dict[str, Callable] = {"mlp": _mlp, "cnn": _cnn, "gpt": _gpt, "lstm": _lstm}


def build(torch: ModuleType, kind: str, *, small: bool = False, seed: int = 0) -> tuple:
    """``(model, optimizer, data)`` for ``kind``; ``data(rng)`` returns one NumPy batch."""
    torch.manual_seed(seed)
    return MODELS[kind](torch, small)


def train_step(torch: ModuleType, model: Any, opt: Any, x: Any, y: Any) -> Any:
    """``zero_grad``, forward, cross-entropy, ``backward``, ``step``; returns the loss."""
    opt.zero_grad()
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    loss.backward()
    opt.step()
    return loss
