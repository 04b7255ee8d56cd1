"""``torch._VF._add_relu``/``_add_relu_`` against PyTorch 2.13 (test_nn.py's TestAddRelu):
``relu(input + alpha * other)`` with ``add``'s broadcasting and promotion."""

from __future__ import annotations

from torch_oracle import check, error_of


def test_add_relu_matches_pytorch():
    def scenario(torch, rec):
        a = torch.linspace(-5, 5, 77).view(7, 11)
        b = torch.linspace(2, -1, 77).view(7, 11)
        rec(torch._VF._add_relu(a, b), torch._VF._add_relu(a, b, alpha=2))
        rec(torch._VF._add_relu(a[:1], 1), torch._VF._add_relu(a[:1], torch.ones(1, 11)))
        rec(torch._VF._add_relu(torch.tensor([1, -5]), torch.tensor([2, 3])))
        c = a.clone()
        r = torch._VF._add_relu_(c, b)
        rec(r is c, c)
        kind, message = error_of(lambda: torch._VF._add_relu(a, torch.ones(3)))
        rec(kind, message.split("\n")[0])  # (compat appends the user's line)

    check(scenario)
