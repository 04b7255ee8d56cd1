"""An LSTM language model in plain PyTorch style, runnable on compat.torch or real torch.

Embedding -> 2-layer LSTM -> Linear decoder with tied weights, trained with truncated
backpropagation through time on a synthetic token stream: the hidden state is carried
across batches and detached, gradients are clipped with ``clip_grad_norm_`` and SGD
takes the step, as in a classic word-level language model.

    python examples/torch_lstm_lm.py                  # compat.torch
    python examples/torch_lstm_lm.py --backend torch  # real PyTorch

``main(torch)`` returns the loss of every step; ``init`` (a dict of NumPy arrays, the
model's ``state_dict``) starts both libraries from the same weights.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

import numpy as np

VOCAB, EMB, HIDDEN, LAYERS, BATCH, BPTT = 40, 24, 24, 2, 4, 8


def build_model(torch: ModuleType):
    """The language model, as a subclass of the given library's ``nn.Module``."""
    nn = torch.nn

    class RNNModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = nn.Embedding(VOCAB, EMB)
            self.rnn = nn.LSTM(EMB, HIDDEN, LAYERS, dropout=0.0)
            self.decoder = nn.Linear(HIDDEN, VOCAB)
            self.decoder.weight = self.encoder.weight  # weight tying (EMB == HIDDEN)

        def forward(self, tokens, hidden):
            emb = self.encoder(tokens)
            output, hidden = self.rnn(emb, hidden)
            return self.decoder(output).view(-1, VOCAB), hidden

        def init_hidden(self, bsz: int):
            weight = next(self.parameters())
            return (
                weight.new_zeros(LAYERS, bsz, HIDDEN),
                weight.new_zeros(LAYERS, bsz, HIDDEN),
            )

    return RNNModel()


def batchify(torch: ModuleType, stream: np.ndarray, bsz: int):
    """Cut the stream into ``bsz`` columns (time along dim 0)."""
    n = len(stream) // bsz
    return torch.from_numpy(stream[: n * bsz].reshape(bsz, n)).t().contiguous()


def main(torch: ModuleType, steps: int = 6, init: dict | None = None, seed: int = 0) -> list[float]:
    """Train for ``steps`` BPTT windows; the per-step training losses."""
    rng = np.random.default_rng(seed)
    # A stream with structure to learn: each token mostly follows from the previous one.
    stream = np.empty(BATCH * (steps * BPTT + 1), dtype=np.int64)
    stream[0] = 0
    for i in range(1, len(stream)):
        stream[i] = (3 * stream[i - 1] + 1) % VOCAB if rng.random() < 0.8 else rng.integers(VOCAB)
    data = batchify(torch, stream, BATCH)

    model = build_model(torch)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in init.items()})
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
    model.train()
    hidden = model.init_hidden(BATCH)
    losses = []
    for step in range(steps):
        i = step * BPTT
        inputs, targets = data[i : i + BPTT], data[i + 1 : i + 1 + BPTT].reshape(-1)
        hidden = tuple(h.detach() for h in hidden)  # truncated BPTT
        optimizer.zero_grad()
        output, hidden = model(inputs, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        losses.append(loss.item())
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["compat", "torch"], default="compat")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    lib = importlib.import_module("compat.torch" if args.backend == "compat" else "torch")
    for n, value in enumerate(main(lib, steps=args.steps)):
        print(f"step {n:3d}  loss {value:.4f}")
