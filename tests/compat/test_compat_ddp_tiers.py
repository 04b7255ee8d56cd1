"""compat's ``DistributedDataParallel`` when the processes' execution tiers disagree.

Each process's tiers decide by its own timings whether a program runs on the host tier
(gradients reach DDP as NumPy arrays) or compiled (device arrays), so two processes of
one run may hand DDP different kinds. The worker forces what timings could produce:
rank 0 compiled, rank 1 on the host tier, then both compiled. Training must equal
single-process training on the full batch, and every average must run the same program
in both processes (the bucket's program is chosen by the processes' vote, not by each
one's kind).
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import compat.torch as ctorch
from tests.multiprocess import run_workers

pytestmark = pytest.mark.xdist_group("multiprocess")

STEPS = 4

WORKER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import funcgrad
    import compat.torch as torch
    from compat.torch.nn.parallel import DistributedDataParallel as DDP

    torch.distributed.init_process_group("gloo")
    rank = torch.distributed.get_rank()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 6)).astype(np.float32)
    Y = rng.integers(0, 3, size=16).astype(np.int64)
    out = {}
    for phase, tiers in (("differ", ("compiled", "host")), ("agree", ("compiled", "compiled"))):
        funcgrad.config.update("funcgrad_eager_tier", tiers[rank])
        model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
        init = np.random.default_rng(10 + rank)  # differs per rank: DDP broadcasts rank 0's
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.from_numpy((init.normal(size=tuple(p.shape)) * 0.3).astype(np.float32)))
        ddp = DDP(model)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
        steps, programs, kinds = [], [], []
        for s in range(STEPS):
            rows = slice(4 * (2 * s + rank), 4 * (2 * s + rank + 1))
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(
                ddp(torch.from_numpy(X[rows])), torch.from_numpy(Y[rows]))
            before = [dict(b.calls) for bs in ddp._buckets.values() for _, b in bs]
            loss.backward()
            ((_, bucket),) = [ib for bs in ddp._buckets.values() for ib in bs]
            prev = before[0] if before else {"joined": 0, "one_program": 0}
            programs.append([k for k in bucket.calls if bucket.calls[k] != prev[k]])
            kinds.append("host" if type(model[0].weight.grad._st.array) is np.ndarray else "device")
            opt.step()
            steps.append([p.detach().numpy().tolist() for p in model.parameters()])
        out[phase] = {"steps": steps, "programs": programs, "kinds": kinds}
    torch.distributed.destroy_process_group()
    print("RESULT", json.dumps(out))
    """
).replace("STEPS", str(STEPS))


def _full_batch() -> list[list[np.ndarray]]:
    """Single-process training on both ranks' rows of every step (rank 0's parameters)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 6)).astype(np.float32)
    Y = rng.integers(0, 3, size=16).astype(np.int64)
    nn = ctorch.nn
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    init = np.random.default_rng(10)
    with ctorch.no_grad():
        for p in model.parameters():
            p.copy_(ctorch.from_numpy((init.normal(size=tuple(p.shape)) * 0.3).astype(np.float32)))
    opt = ctorch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    steps = []
    for s in range(STEPS):
        rows = slice(8 * s, 8 * (s + 1))
        opt.zero_grad()
        loss = ctorch.nn.functional.cross_entropy(
            model(ctorch.from_numpy(X[rows])), ctorch.from_numpy(Y[rows])
        )
        loss.backward()
        opt.step()
        steps.append([p.detach().numpy() for p in model.parameters()])
    return steps


def test_ddp_ranks_run_one_program_when_their_tiers_differ(tmp_path):
    workers = run_workers(WORKER, 2, tmp_path, timeout=180)
    for w in workers:
        assert w.returncode == 0, w.describe()
    r0, r1 = (w.result for w in workers)
    # what each process's tiers handed DDP: different kinds, then the same
    assert r0["differ"]["kinds"] == ["device"] * STEPS
    assert r1["differ"]["kinds"] == ["host"] * STEPS
    assert r0["agree"]["kinds"] == r1["agree"]["kinds"] == ["device"] * STEPS
    # every average ran the same program in both processes
    assert r0["differ"]["programs"] == r1["differ"]["programs"] == [["joined"]] * STEPS
    one = [["joined"]] + [["one_program"]] * (STEPS - 1)
    assert r0["agree"]["programs"] == r1["agree"]["programs"] == one
    expected = _full_batch()
    for r in (r0, r1):
        for phase in ("differ", "agree"):
            for step, (got, exp) in enumerate(zip(r[phase]["steps"], expected, strict=True)):
                for a, b in zip(got, exp, strict=True):
                    np.testing.assert_allclose(
                        a, b, rtol=2e-5, atol=2e-6, err_msg=f"{phase} {step}"
                    )
