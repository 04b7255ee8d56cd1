"""A small GPT (decoder-only transformer) in plain PyTorch style, on compat.torch or real torch.

Token and learned position embeddings, pre-norm blocks of causal self-attention
(``F.scaled_dot_product_attention(..., is_causal=True)``) and a GELU MLP, a final
LayerNorm and a weight-tied head; AdamW with decoupled weight decay on the matrices only
and gradient clipping, trained on synthetic sequences (next token = previous + 1 mod V).

    python examples/torch_small_gpt.py                  # compat.torch
    python examples/torch_small_gpt.py --backend torch  # real PyTorch

``main(torch)`` returns the loss of every step; ``init`` (a dict of NumPy arrays, the
model's ``state_dict``) starts both libraries from the same weights.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

import numpy as np

VOCAB, BLOCK, EMBD, HEADS, LAYERS, BATCH = 32, 16, 32, 4, 2, 8


def build_model(torch: ModuleType):
    """The GPT, as a subclass of the given library's ``nn.Module``."""
    nn, F = torch.nn, torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(EMBD, 3 * EMBD)
            self.c_proj = nn.Linear(EMBD, EMBD)

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.c_attn(x).split(EMBD, dim=2)
            q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
            k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
            v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(EMBD)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(EMBD)
            self.mlp = nn.Sequential(
                nn.Linear(EMBD, 4 * EMBD), nn.GELU(approximate="tanh"), nn.Linear(4 * EMBD, EMBD)
            )

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(VOCAB, EMBD)
            self.wpe = nn.Embedding(BLOCK, EMBD)
            self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f = nn.LayerNorm(EMBD)
            self.lm_head = nn.Linear(EMBD, VOCAB, bias=False)
            self.lm_head.weight = self.wte.weight
            self.apply(self._init_weights)

        def _init_weights(self, module) -> None:
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if getattr(module, "bias", None) is not None:
                    nn.init.zeros_(module.bias)

        def forward(self, idx, targets=None):
            pos = torch.arange(0, idx.size(1), dtype=torch.long, device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
            return logits, loss

    return GPT()


def configure_optimizer(torch: ModuleType, model, lr: float = 3e-3, weight_decay: float = 0.1):
    """AdamW with weight decay on the 2-D parameters only (nanoGPT's grouping)."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def main(torch: ModuleType, steps: int = 6, init: dict | None = None, seed: int = 0) -> list[float]:
    """Train for ``steps`` batches; the per-step training losses."""
    rng = np.random.default_rng(seed)
    model = build_model(torch)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in init.items()})
    optimizer = configure_optimizer(torch, model)
    model.train()
    losses = []
    for _ in range(steps):
        start = rng.integers(0, VOCAB, size=(BATCH, 1))
        seq = (start + np.arange(BLOCK + 1)) % VOCAB
        x = torch.from_numpy(seq[:, :-1].astype(np.int64))
        y = torch.from_numpy(seq[:, 1:].astype(np.int64))
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["compat", "torch"], default="compat")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    lib = importlib.import_module("compat.torch" if args.backend == "compat" else "torch")
    for n, value in enumerate(main(lib, steps=args.steps)):
        print(f"step {n:3d}  loss {value:.4f}")
