"""compat's ``torch.distributed``, ``DistributedDataParallel`` and launcher, with several
processes on localhost.

One worker script runs under real PyTorch (gloo) and under compat, importing one or
the other: collectives, a DDP training loop (an MLP and a small CNN, with
``DistributedSampler`` and ``DataLoader``) and ``no_sync`` must give the same numbers;
the DDP loop must also equal single-process training on the full batches.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import compat.torch as ctorch
from compat.torch.utils.data.distributed import DistributedSampler
from tests.multiprocess import REPO, free_port, run_workers, worker_env

pytestmark = pytest.mark.xdist_group("multiprocess")

WORKER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    if sys.argv[1] == "torch":
        import torch
    else:
        import compat.torch as torch
    dist = torch.distributed
    import importlib
    DDP = importlib.import_module(torch.__name__ + ".nn.parallel").DistributedDataParallel
    data = importlib.import_module(torch.__name__ + ".utils.data")
    DistributedSampler = importlib.import_module(
        torch.__name__ + ".utils.data.distributed").DistributedSampler
    F = torch.nn.functional

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    out = {"rank": rank, "world": world, "backend": str(dist.get_backend()),
           "init": dist.is_initialized()}
    try:
        dist.init_process_group("gloo")
        out["twice"] = None
    except ValueError as e:
        out["twice"] = str(e)

    def base(dtype):
        return torch.arange(4, dtype=dtype) * (rank + 1) + rank

    for name in ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR"]:
        dtype = torch.int32 if name in ("BAND", "BOR", "BXOR") else torch.float32
        t = base(dtype)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, name))
        out["all_reduce_" + name] = t.tolist()
    t = base(torch.float64) / 3  # (float64 stays float64: it came back float32)
    dist.all_reduce(t)
    out["all_reduce_float64"] = [str(t.dtype), t.tolist()]
    t = base(torch.float32)
    dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
    out["reduce"] = t.tolist() if rank == 1 else None  # elsewhere unspecified (gloo: scratch)
    t = base(torch.float32)
    work = dist.broadcast(t, src=1, async_op=True)
    out["work"] = bool(work.wait())
    out["broadcast"] = t.tolist()
    lst = [torch.zeros(4) for _ in range(world)]
    dist.all_gather(lst, base(torch.float32))
    out["all_gather"] = [x.tolist() for x in lst]
    cat = torch.zeros(4 * world)
    dist.all_gather_into_tensor(cat, base(torch.float32))
    try:
        dist.all_gather_into_tensor(torch.zeros(world, 4), base(torch.float32))
        stacked = None
    except RuntimeError as e:
        stacked = type(e).__name__
    out["all_gather_into_tensor"] = [cat.tolist(), stacked]
    rs = torch.zeros(2)
    dist.reduce_scatter_tensor(rs, torch.arange(2.0 * world) * (rank + 1))
    out["reduce_scatter_tensor"] = rs.tolist()
    t = base(torch.float32) * 10
    if rank == 0:
        dist.send(t, dst=1)
    elif rank == 1:
        dist.recv(t, src=0)
    out["send_recv"] = t.tolist()
    g = dist.new_group([0, 1])
    t = base(torch.float32)
    dist.all_reduce(t, group=g)
    out["group"] = [dist.get_rank(g), dist.get_world_size(g), t.tolist()]
    dist.barrier()

    # ---------------------------------------------------------------- more collectives
    t = torch.zeros(3)
    dist.scatter(t, [torch.arange(3.0) + 10 * i for i in range(world)] if rank == 0 else None,
                 src=0)
    out["scatter"] = t.tolist()
    inp = torch.arange(2.0 * world) + 100 * rank
    res = torch.zeros(2 * world)
    dist.all_to_all_single(res, inp)
    out["all_to_all_single"] = res.tolist()
    rs = torch.zeros(2)
    dist.reduce_scatter(rs, [torch.ones(2) * (i + 1) * (rank + 1) for i in range(world)])
    out["reduce_scatter"] = rs.tolist()
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "s": "x" * (rank * 70)})
    out["all_gather_object"] = objs
    lst = [rank, "a"] if rank == 1 else [None, None]
    dist.broadcast_object_list(lst, src=1)
    out["broadcast_object_list"] = lst
    got = [None]
    dist.scatter_object_list(got, [f"to{i}" for i in range(world)] if rank == 0 else None, src=0)
    out["scatter_object_list"] = got
    gl = [None] * world if rank == 0 else None
    dist.gather_object(("g", rank), gl, dst=0)
    out["gather_object"] = gl
    out["ranks"] = [dist.get_process_group_ranks(g), dist.get_global_rank(g, 1),
                    dist.get_group_rank(g, 0)]
    # a ring: every process sends first, then receives (isend/irecv and the batch form)
    right, left = (rank + 1) % world, (rank - 1) % world
    mine = torch.arange(3.0) + 10 * rank
    got = torch.zeros(3)
    works = [dist.isend(mine, right), dist.irecv(got, left)]
    for w in works:
        w.wait()
    out["ring"] = got.tolist()
    got2 = torch.zeros(2, dtype=torch.int64)
    ops = [dist.P2POp(dist.isend, torch.tensor([rank, 7 * rank]), right),
           dist.P2POp(dist.irecv, got2, left)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    out["batch_p2p"] = got2.tolist()
    dist.barrier()

    # ---------------------------------------------------------------- DDP training
    def init_params(model, seed):
        rng = np.random.default_rng(seed)
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(torch.from_numpy((rng.normal(size=tuple(p.shape)) * 0.3).astype(np.float32)))

    def train(model, X, Y, epochs, batch):
        init_params(model, 100 + rank)  # differs per rank: DDP broadcasts rank 0's
        ddp = DDP(model, device_ids=None)
        ds = data.TensorDataset(torch.from_numpy(X), torch.from_numpy(Y))
        sampler = DistributedSampler(ds, shuffle=True, seed=3)
        loader = data.DataLoader(ds, batch_size=batch, sampler=sampler)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.2, momentum=0.9)
        steps = []
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for x, y in loader:
                opt.zero_grad()
                F.cross_entropy(ddp(x), y).backward()
                opt.step()
                steps.append([p.detach().numpy().tolist() for p in model.parameters()])
        return ddp, steps

    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 6)).astype(np.float32)
    Y = rng.integers(0, 3, size=24).astype(np.int64)
    mlp = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    ddp, out["mlp"] = train(mlp, X, Y, 2, 4)
    out["keys"] = list(ddp.state_dict().keys())
    Xi = rng.normal(size=(16, 1, 6, 6)).astype(np.float32)
    Yi = rng.integers(0, 2, size=16).astype(np.int64)
    cnn = torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(48, 2))
    _, out["cnn"] = train(cnn, Xi, Yi, 1, 4)

    # ---------------------------------------------------------------- no_sync
    lin = torch.nn.Linear(4, 2)
    init_params(lin, 200 + rank)
    ddp = DDP(lin)
    Xn = torch.from_numpy(rng.normal(size=(4 * world, 4)).astype(np.float32))
    mine = Xn[4 * rank: 4 * rank + 4]
    with ddp.no_sync():
        (ddp(mine[:2]) ** 2).mean().backward()
    out["no_sync_local"] = lin.weight.grad.tolist()
    (ddp(mine[2:]) ** 2).mean().backward()
    out["no_sync_synced"] = lin.weight.grad.tolist()
    dist.barrier()

    # ---------------------------------------------------------------- unused parameters
    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)

        def forward(self, x):
            return self.a(x)  # b is never used

    two = Two()
    init_params(two, 300 + rank)
    ddp = DDP(two, find_unused_parameters=True)
    ddp(torch.ones(2, 3) * (rank + 1)).sum().backward()
    out["unused"] = [two.a.weight.grad.tolist(), two.b.weight.grad is None]
    class Mixed(torch.nn.Module):  # two gradient dtypes: one average per dtype
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(3, 2), torch.nn.Linear(2, 1).double()

        def forward(self, x):
            return self.b(self.a(x).double())

    mixed = Mixed()
    init_params(mixed, 400 + rank)
    ddp = DDP(mixed)
    for _ in range(2):  # the second average reuses what the first prepared
        ddp(torch.ones(2, 3) * (rank + 1)).sum().backward()
    out["mixed"] = [[str(p.grad.dtype).split(".")[-1], p.grad.tolist()] for p in mixed.parameters()]
    ddp = DDP(Two())
    ddp(torch.ones(2, 3)).sum().backward()
    try:
        ddp(torch.ones(2, 3))
        out["unfinished"] = None
    except RuntimeError as e:
        out["unfinished"] = str(e).split(". ")[0]
    dist.barrier()

    if sys.argv[1] == "compat":  # gloo itself crashes or hangs here; compat says why
        try:
            dist.all_reduce(torch.ones(2, 2 + rank))
            out["mismatch"] = None
        except dist.DistBackendError as e:
            out["mismatch"] = str(e)
    dist.destroy_process_group()
    out["after_destroy"] = dist.is_initialized()
    print("RESULT", json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The worker's reports under compat and under real PyTorch, two processes each."""
    got = {}
    for lib in ("compat", "torch"):
        ws = run_workers(WORKER, 2, tmp_path_factory.mktemp(lib), timeout=120, args=(lib,))
        for w in ws:
            assert w.returncode == 0, w.describe()
        got[lib] = [w.result for w in ws]
    return got


_COLLECTIVES = [
    *(f"all_reduce_{op}" for op in ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR"]),
    "all_reduce_float64",
    "reduce",
    "broadcast",
    "work",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "send_recv",
    "group",
    "scatter",
    "all_to_all_single",
    "reduce_scatter",
    "all_gather_object",
    "broadcast_object_list",
    "scatter_object_list",
    "gather_object",
    "ranks",
    "ring",
    "batch_p2p",
]


def test_collectives_equal_pytorch_gloo(runs):
    for ours, theirs in zip(runs["compat"], runs["torch"]):
        for k in _COLLECTIVES:
            assert ours[k] == theirs[k], (k, ours["rank"], ours[k], theirs[k])
        for k in ("rank", "world", "backend", "init", "twice", "after_destroy"):
            assert ours[k] == theirs[k], (k, ours[k], theirs[k])
    assert runs["compat"][0]["twice"] == "trying to initialize the default process group twice!"


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_ddp_training_equals_pytorch_ddp(runs, model):
    for ours, theirs in zip(runs["compat"], runs["torch"]):
        for step, (a, b) in enumerate(zip(ours[model], theirs[model], strict=True)):
            for pa, pb in zip(a, b, strict=True):
                np.testing.assert_allclose(pa, pb, rtol=2e-5, atol=2e-6, err_msg=f"step {step}")
    assert runs["compat"][0]["keys"] == runs["torch"][0]["keys"]


def _full_batch_training(model, X, Y, epochs, batch, world=2):
    """Single-process training on the union of the ranks' batches of every step."""
    rng = np.random.default_rng(100)  # rank 0's parameters, which DDP broadcast
    with ctorch.no_grad():
        for p in model.parameters():
            p.copy_(ctorch.from_numpy((rng.normal(size=tuple(p.shape)) * 0.3).astype(np.float32)))
    samplers = [
        DistributedSampler(range(len(X)), world, r, shuffle=True, seed=3) for r in range(world)
    ]
    opt = ctorch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    steps = []
    for epoch in range(epochs):
        for s in samplers:
            s.set_epoch(epoch)
        orders = [list(s) for s in samplers]
        for i in range(0, len(orders[0]), batch):
            idx = np.concatenate([o[i : i + batch] for o in orders])
            opt.zero_grad()
            loss = ctorch.nn.functional.cross_entropy(
                model(ctorch.from_numpy(X[idx])), ctorch.from_numpy(Y[idx])
            )
            loss.backward()
            opt.step()
            steps.append([p.detach().numpy() for p in model.parameters()])
    return steps


def test_ddp_training_equals_single_process_full_batch(runs):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 6)).astype(np.float32)
    Y = rng.integers(0, 3, size=24).astype(np.int64)
    Xi = rng.normal(size=(16, 1, 6, 6)).astype(np.float32)
    Yi = rng.integers(0, 2, size=16).astype(np.int64)
    nn = ctorch.nn
    mlp = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    cnn = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(48, 2))
    expected = {
        "mlp": _full_batch_training(mlp, X, Y, 2, 4),
        "cnn": _full_batch_training(cnn, Xi, Yi, 1, 4),
    }
    for r in runs["compat"]:
        for model, steps in expected.items():
            assert len(r[model]) == len(steps)
            for step, (a, b) in enumerate(zip(r[model], steps)):
                for pa, pb in zip(a, b, strict=True):
                    np.testing.assert_allclose(pa, pb, rtol=2e-5, atol=2e-6, err_msg=f"{step}")


def test_no_sync_accumulates_locally_then_averages(runs):
    ours, theirs = runs["compat"], runs["torch"]
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o["no_sync_local"], t["no_sync_local"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(o["no_sync_synced"], t["no_sync_synced"], rtol=1e-5, atol=1e-6)
    # inside no_sync each rank kept its own gradient; the next backward averaged the sums
    assert not np.allclose(ours[0]["no_sync_local"], ours[1]["no_sync_local"])
    np.testing.assert_allclose(ours[0]["no_sync_synced"], ours[1]["no_sync_synced"], rtol=1e-6)


def test_unused_parameters_as_pytorch(runs):
    for ours, theirs in zip(runs["compat"], runs["torch"]):
        np.testing.assert_allclose(ours["unused"][0], theirs["unused"][0], rtol=1e-6)
        assert ours["unused"][1] is theirs["unused"][1] is True
        assert ours["unfinished"] == theirs["unfinished"]
        assert ours["unfinished"].startswith("Expected to have finished reduction")


def test_ddp_averages_each_gradient_dtype(runs):
    for ours, theirs in zip(runs["compat"], runs["torch"]):
        assert [d for d, _ in ours["mixed"]] == [d for d, _ in theirs["mixed"]]
        assert [d for d, _ in ours["mixed"]] == ["float32"] * 2 + ["float64"] * 2
        for (_, a), (_, b) in zip(ours["mixed"], theirs["mixed"]):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_mismatched_shapes_are_a_backend_error_naming_both(runs):
    for r in runs["compat"]:
        msg = r["mismatch"]
        assert msg is not None and "all_reduce" in msg, msg
        assert "(2, 2)" in msg and "(2, 3)" in msg, msg


LAUNCHED = textwrap.dedent(
    """
    import json, os, sys, time
    keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"]
    env = json.dumps({k: os.environ.get(k) for k in keys} | {"args": sys.argv[1:]})
    os.write(1, f"ENV {env}\\n".encode())  # one write: lines of the ranks do not interleave
    open(f"ready{os.environ['RANK']}", "w").close()  # exit once every rank has reported
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not all(
            os.path.exists(f"ready{r}") for r in range(int(os.environ["WORLD_SIZE"]))):
        time.sleep(0.02)
    sys.exit(int(os.environ["RANK"]) * int(sys.argv[1]))
    """
)


RING = textwrap.dedent(
    """
    import json
    import compat.torch as torch
    dist = torch.distributed
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    right, left = (rank + 1) % world, (rank - 1) % world
    # every process sends before it receives: blocking sends would wait on each other
    got = torch.zeros(2)
    works = [dist.isend(torch.tensor([1.0, rank]), right), dist.irecv(got, left)]
    [w.wait() for w in works]
    # the other way round, and a message two hops away, all in one batch
    back, far = torch.zeros(2), torch.zeros(1, dtype=torch.int32)
    ops = [dist.P2POp(dist.irecv, back, right), dist.P2POp(dist.isend, got * 2, left),
           dist.P2POp(dist.isend, torch.tensor([rank], dtype=torch.int32), (rank + 2) % world),
           dist.P2POp(dist.irecv, far, (rank - 2) % world)]
    [w.wait() for w in dist.batch_isend_irecv(ops)]
    try:
        dist.send(torch.zeros(1), dst=rank)
        err = None
    except ValueError as e:
        err = str(e)
    print("RESULT", json.dumps({"got": got.tolist(), "back": back.tolist(),
                                "far": far.tolist(), "self": err}))
    dist.destroy_process_group()
    """
)


def test_point_to_point_ring_of_three_processes(tmp_path):
    """isend/irecv in a ring where each process sends first, and a batch mixing
    directions and distances, end with each message where it was sent."""
    ws = run_workers(RING, 3, tmp_path, timeout=120)
    for w in ws:
        assert w.returncode == 0, w.describe()
    for r, w in enumerate(ws):
        res = w.result
        assert res["got"] == [1.0, float((r - 1) % 3)]
        assert res["back"] == [2.0, 2.0 * r]  # right neighbour's got, doubled
        assert res["far"] == [(r - 2) % 3]
        assert "should not be the same" in res["self"]


def test_launcher_sets_torchrun_variables_and_returns_worst_exit_code(tmp_path):
    script = tmp_path / "launched.py"
    script.write_text(LAUNCHED)
    port = free_port()
    cmd = [sys.executable, "-m", "compat.torch.distributed.run", "--nproc-per-node", "3"]
    cmd += ["--master-port", str(port), str(script), "2"]
    env = worker_env(0, 1, port)
    p = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    lines = [json.loads(line[4:]) for line in p.stdout.splitlines() if line[:4] == "ENV "]
    envs = sorted(lines, key=lambda e: e["RANK"])
    assert [e["RANK"] for e in envs] == ["0", "1", "2"], (p.stdout, p.stderr)
    assert p.returncode == 4, (p.returncode, p.stderr)  # ranks exit 0, 2, 4: the worst is 4
    for e in envs:
        assert e["LOCAL_RANK"] == e["RANK"] and e["WORLD_SIZE"] == "3"
        assert e["LOCAL_WORLD_SIZE"] == "3" and e["MASTER_PORT"] == str(port)
        assert e["args"] == ["2"]


KILLED = textwrap.dedent(
    """
    import os, time
    import compat.torch as torch
    import compat.torch.distributed as dist
    dist.init_process_group("gloo")
    dist.all_reduce(torch.ones(3))
    if dist.get_rank() == 1:
        with open("died_at", "w") as f:  # (the bound runs from the death, not the start)
            f.write(repr(time.time()))
        os._exit(3)
    t = time.monotonic()
    try:
        dist.all_reduce(torch.ones(3))
    except dist.DistBackendError as e:
        print("ERROR", round(time.monotonic() - t, 1), e, flush=True)
        raise
    """
)


def test_launcher_ends_the_run_when_a_worker_dies(tmp_path):
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    cmd = [sys.executable, "-m", "compat.torch.distributed.run", "--nproc-per-node", "2"]
    cmd += ["--standalone", "--stop-timeout", "2", str(script)]
    p = subprocess.run(  # (the generous limit covers start-up on a loaded machine)
        cmd, env=worker_env(0, 1, 0), cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    ended = time.time()
    died = float((tmp_path / "died_at").read_text())
    assert ended - died < 60, (ended - died, p.stderr[-2000:])
    assert "local rank 1 (rank 1) failed with exit code 3" in p.stderr, p.stderr[-3000:]
    # rank 0 either failed by itself (the collective's error) or was stopped by the launcher;
    # the launcher returns the worst exit code of those that failed by themselves
    own = [int(m) for m in re.findall(r"failed with exit code (-?\d+)", p.stderr)]
    assert p.returncode == max(128 - c if c < 0 else c for c in own), (p.returncode, own)
    if "local rank 0 (rank 0) failed" in p.stderr:
        assert "ERROR" in p.stdout and "all_reduce" in p.stdout, p.stdout


def test_ddp_digits_example_through_the_launcher(tmp_path):
    pytest.importorskip("sklearn")
    cmd = [sys.executable, "-m", "compat.torch.distributed.run", "--nproc-per-node", "2"]
    cmd += ["--standalone", str(REPO / "examples" / "ddp_digits.py"), "--epochs", "3"]
    p = subprocess.run(
        cmd, env=worker_env(0, 1, 0), cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr[-3000:]
    lines = p.stdout.strip().splitlines()
    assert "processes: 2" in lines
    losses = [float(line.split()[-1]) for line in lines if line.startswith("epoch ")]
    assert len(losses) == 3 and losses[-1] < losses[0]
    m = re.fullmatch(r"test accuracy: (\d\.\d{4})", lines[-1])
    assert m and float(m.group(1)) >= 0.8, p.stdout


SPAWNED = textwrap.dedent(
    """
    import os, sys, time
    import compat.torch.multiprocessing as mp

    def work(i, port, fail):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(i),
                          WORLD_SIZE="2")
        import compat.torch as torch
        import compat.torch.distributed as dist
        dist.init_process_group("gloo")
        t = torch.tensor([float(i + 1)])
        dist.all_reduce(t)
        if fail and i == 1:
            raise ValueError(f"rank {i} saw {t.item()}")
        sys.stdout.write(f"SUM {i} {t.item()}\\n")  # one write: both workers share the pipe
        sys.stdout.flush()

    if __name__ == "__main__":
        mp.spawn(work, args=(int(sys.argv[1]), False), nprocs=2)
        print("OK", flush=True)
        try:
            mp.spawn(work, args=(int(sys.argv[2]), True), nprocs=2)
        except mp.ProcessRaisedException as e:
            print("RAISED", e.error_index, repr(e.msg[-200:]))
    """
)


def test_multiprocessing_spawn_runs_workers_and_raises_their_errors(tmp_path):
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    p = subprocess.run(
        [sys.executable, str(script), str(free_port()), str(free_port())],
        env=worker_env(0, 1, 0),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    ours = ("SUM", "OK", "RAISED")  # gloo prints its own lines too
    lines = [line for line in p.stdout.strip().splitlines() if line.startswith(ours)]
    ok = lines.index("OK")
    assert sorted(lines[:ok]) == ["SUM 0 3.0", "SUM 1 3.0"], p.stdout
    # the failing run: rank 0 finished, rank 1's exception with its traceback in the parent
    assert lines[ok + 1 :][-1].startswith("RAISED 1 "), p.stdout
    assert "ValueError: rank 1 saw 3.0" in lines[-1], p.stdout
