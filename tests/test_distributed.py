"""``funcgrad.distributed``: several processes on localhost as one run.

Each test starts its processes with :func:`tests.multiprocess.run_workers` (one CPU
device each, collectives through gloo) and compares what they report with a
single-device computation or with NumPy on the inputs every process knows.
"""

from __future__ import annotations

import textwrap

import jax
import numpy as np
import pytest

import funcgrad as fg
from funcgrad.distributed import _runtime
from tests.multiprocess import run_workers

# The watchdog of the failure tests: it covers starting the interpreters and importing
# JAX, which take tens of seconds on a loaded 2-core machine (CI ran out of 60 s at
# load 20). The bounds under test (an error within seconds of the mismatch, the
# survivor's end within the heartbeat timeout of the peer's death) are asserted on
# the processes' own timings, not on this.
HANG_GUARD_S = 180

pytestmark = pytest.mark.xdist_group("multiprocess")

DATA_PARALLEL = textwrap.dedent(
    """
    import json
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import funcgrad as fg
    import funcgrad.numpy as fnp
    import funcgrad.distributed as fd

    fd.initialize()  # from RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    me, n = fd.process_index(), fd.process_count()
    rng = np.random.default_rng(0)
    f32 = lambda a: np.asarray(a, np.float32)
    params = {"w": f32(rng.normal(size=(4, 8)) * 0.5), "b": f32(np.zeros(8)),
              "v": f32(rng.normal(size=(8,)) * 0.5)}
    X = f32(rng.normal(size=(6 * n, 4)))
    Y = f32(np.sin(X.sum(1)))

    def loss(p, x, y):
        return fnp.mean((fnp.tanh(x @ p["w"] + p["b"]) @ p["v"] - y) ** 2)

    def step(p, x, y):
        l, g = fg.value_and_grad(loss)(p, x, y)
        return {k: p[k] - 0.5 * g[k] for k in p}, l

    mesh = fd.global_mesh("data")
    repl, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    mine = slice(6 * me, 6 * (me + 1))
    xs = fd.make_array_from_process_local_data(data, X[mine])
    ys = fd.make_array_from_process_local_data(data, Y[mine])
    ps = {k: fd.make_array_from_process_local_data(repl, v) for k, v in params.items()}
    sharded = fg.jit(step, in_shardings=(repl, data, data), out_shardings=(repl, repl))
    new, l = sharded(ps, xs, ys)
    new, l = sharded(new, xs, ys)  # two steps: the second starts from global outputs

    # the oracle: the same two steps on one device over the whole batch
    ref, rl = fg.jit(step)(params, X, Y)
    ref, rl = fg.jit(step)(ref, X, Y)
    errs = {k: float(np.max(np.abs(fd.local_shards(new[k])[0] - np.asarray(ref[k]))))
            for k in params}
    print("RESULT", json.dumps({"errs": errs, "loss": float(fd.local_shards(l)[0]),
                                "ref_loss": float(rl), "global": list(xs.shape),
                                "local": list(fd.local_shards(xs)[0].shape)}))
    """
)


def test_data_parallel_step_equals_single_device_step(tmp_path):
    workers = run_workers(DATA_PARALLEL, 2, tmp_path, timeout=90)
    for w in workers:
        assert w.returncode == 0, w.describe()
        r = w.result
        assert r["global"] == [12, 4] and r["local"] == [6, 4]
        assert max(r["errs"].values()) < 1e-5, r
        assert r["loss"] == pytest.approx(r["ref_loss"], rel=1e-5)


COLLECTIVES = textwrap.dedent(
    """
    import json
    import numpy as np
    import funcgrad.distributed as fd

    fd.initialize()
    me, n = fd.process_index(), fd.process_count()
    g = fd.world()
    rows = lambda dtype: [np.arange(3, dtype=dtype) * (r + 1) + r for r in range(n)]
    out = {}
    for op in fd.REDUCE_OPS:
        dtype = np.int32 if op in ("band", "bor", "bxor") else np.float32
        out[op] = np.asarray(g.all_reduce(rows(dtype)[me], op)).tolist()
    out["all_gather"] = np.asarray(g.all_gather(rows(np.float32)[me])).tolist()
    out["broadcast"] = np.asarray(g.broadcast(rows(np.float32)[me], n - 1)).tolist()
    chunks = np.stack(rows(np.float32)) * (me + 1)  # (n, 3): row i goes to process i
    out["reduce_scatter"] = np.asarray(g.reduce_scatter(chunks)).tolist()
    if me < 2:  # a pair: only the two take part
        got = np.asarray(g.send_recv(rows(np.float32)[me], 1, 0))
    out["recv"] = got.tolist() if me == 0 else None
    sub = fd.ProcessGroup([0, n - 1])  # every process makes it, members or not
    out["sub_rank"] = sub.rank
    if sub.rank >= 0:
        out["sub_sum"] = np.asarray(sub.all_reduce(rows(np.float32)[me])).tolist()
    out["allgather_tiled"] = fd.process_allgather(rows(np.float32)[me], tiled=True).tolist()
    import funcgrad.numpy as fnp  # eager values live on this process's own device
    vals = [fnp.sin(np.ones(3, np.float32)), fnp.asarray(np.ones(3)) + 1, fnp.zeros(2)]
    out["own_device"] = all(d.process_index == me for v in vals for d in v.devices())
    # a prepared bucket: device arrays, host values, both mixed, called twice
    import jax
    parts = [np.arange(6, dtype=np.float32).reshape(2, 3) * (me + 1),
             np.full(3, me, np.float32), np.array([me + 0.5], np.float32)]
    shapes = [p.shape for p in parts]
    avg, mx = fd.Bucket(g, shapes, np.float32, "avg"), fd.Bucket(g, shapes, "float32", "max")
    on_dev = [jax.device_put(p, g.device) for p in parts]
    res = avg(on_dev)
    out["bucket_avg"] = [np.asarray(a).tolist() for a in res]
    out["bucket_on_device"] = all(isinstance(a, jax.Array) for a in res)
    res = mx(parts)  # host values: cut by NumPy from the one result, no device arrays
    out["bucket_max"] = [np.asarray(a).tolist() for a in res]
    out["bucket_host"] = all(type(a) is np.ndarray for a in res)
    # called again with other values: the device array kept over the join buffer (a CPU
    # device shares its memory) reads the new ones, the first call's results unchanged
    again = mx([p * 2 for p in parts])
    out["bucket_max_again"] = [np.asarray(a).tolist() for a in again]
    out["bucket_max_first_kept"] = [np.asarray(a).tolist() for a in res]
    out["bucket_shares_buffer"] = mx._flat_dev is not None
    out["bucket_mixed"] = [np.asarray(a).tolist() for a in avg([on_dev[0], *parts[1:]])]
    try:
        avg([parts[0].T, *parts[1:]])
        out["bucket_bad"] = None
    except ValueError as e:
        out["bucket_bad"] = str(e)
    # a 0-d array among others
    sc = fd.Bucket(g, [(), (2,)], np.float32, "sum")
    res = sc([np.float32(me), np.ones(2, np.float32)])
    out["bucket_scalar"] = [np.asarray(a).tolist() for a in res]
    # the collective runs through JAX's runtime executable (no global arrays)
    out["bucket_direct"] = [avg._direct, sc._direct]
    g.barrier()
    print("RESULT", json.dumps(out))
    """
)


def _expected(n: int, me: int) -> dict:
    f = [np.arange(3, dtype=np.float32) * (r + 1) + r for r in range(n)]
    i = [a.astype(np.int32) for a in f]
    band, bor, bxor = i[0], i[0], i[0]
    for a in i[1:]:
        band, bor, bxor = band & a, bor | a, bxor ^ a
    s = np.sum(f, 0)
    chunks = [np.stack(f) * (r + 1) for r in range(n)]
    exp = {
        "sum": s,
        "avg": s / n,
        "product": np.prod(f, 0),
        "min": np.min(f, 0),
        "max": np.max(f, 0),
        "band": band,
        "bor": bor,
        "bxor": bxor,
        "all_gather": np.stack(f),
        "broadcast": f[n - 1],
        "reduce_scatter": np.sum(chunks, 0)[me],
        "recv": f[1] if me == 0 else None,
        "sub_rank": {0: 0, n - 1: 1}.get(me, -1),
        "allgather_tiled": np.concatenate(f),
        "own_device": True,
    }
    if me in (0, n - 1):
        exp["sub_sum"] = f[0] + f[n - 1]
    parts = [
        [np.arange(6.0).reshape(2, 3) * (r + 1), np.full(3, float(r)), np.array([r + 0.5])]
        for r in range(n)
    ]
    exp["bucket_avg"] = exp["bucket_mixed"] = [np.mean(p, 0) for p in zip(*parts)]
    exp["bucket_max"] = exp["bucket_max_first_kept"] = [np.max(p, 0) for p in zip(*parts)]
    exp["bucket_max_again"] = [np.max(p, 0) * 2 for p in zip(*parts)]
    exp["bucket_shares_buffer"] = True
    exp["bucket_on_device"] = exp["bucket_host"] = True
    exp["bucket_scalar"] = [np.array(n * (n - 1) / 2), np.full(2, float(n))]
    exp["bucket_direct"] = [True, True]
    exp["bucket_bad"] = (
        "all_reduce: the bucket holds arrays of shapes [(2, 3), (3,), (1,)] and dtype float32, "
        "got [((3, 2), 'float32'), ((3,), 'float32'), ((1,), 'float32')]"
    )
    return {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in exp.items()}


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_values(tmp_path, n):
    workers = run_workers(COLLECTIVES, n, tmp_path, timeout=120)
    for w in workers:
        assert w.returncode == 0, w.describe()
        got, exp = w.result, _expected(n, w.rank)
        assert got.keys() == exp.keys()
        for k in exp:
            if exp[k] is None or isinstance(exp[k], (bool, int, str)):
                assert got[k] == exp[k], (k, w.rank)
            elif k.startswith("bucket_"):  # a list of arrays of several shapes
                for a, b in zip(got[k], exp[k], strict=True):
                    np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"{k} {w.rank}")
            else:
                np.testing.assert_allclose(got[k], exp[k], rtol=1e-6, err_msg=f"{k} {w.rank}")


#: each call's kind of arrays per process in BUCKET_VOTES (as the processes' tiers might
#: hand them, by timings: they differ in calls 1 and 3; "mixed": one device array among
#: host values, as DDP's zero gradient or used-flags among device gradients)
_VOTE_KINDS = [
    ("device", "host"),
    ("device", "device"),
    ("device", "host"),
    ("host", "host"),
    ("device", "device"),
    ("device", "device"),
    ("mixed", "device"),
]
BUCKET_VOTES = textwrap.dedent(
    """
    import json
    import jax
    import numpy as np
    import funcgrad.distributed as fd

    fd.initialize()
    me = fd.process_index()
    g = fd.world()
    parts = [np.arange(6, dtype=np.float32).reshape(2, 3) * (me + 1),
             np.full(3, me, np.float32), np.float32(me + 0.5)]
    b = fd.Bucket(g, [(2, 3), (3,), ()], np.float32, "avg")
    kinds = KINDS
    out = {"programs": [], "values": [], "kinds_out": []}
    for call, pair in enumerate(kinds):
        xs = [p * (call + 1) for p in parts]
        if pair[me] == "device":
            xs = [jax.device_put(x, g.device) for x in xs]
        elif pair[me] == "mixed":  # a device array among host values: a device call
            xs[0] = jax.device_put(xs[0], g.device)
        before = dict(b.calls)
        res = b(xs)
        out["programs"].append([k for k in b.calls if b.calls[k] != before[k]])
        out["values"].append([np.asarray(r).tolist() for r in res])
        out["kinds_out"].append(["device" if isinstance(r, jax.Array) else "host" for r in res])
    # a bucket whose reduction cannot carry the vote keeps the joined program
    p = fd.Bucket(g, [(3,)], np.float32, "product")
    dev = jax.device_put(np.full(3, me + 2.0, np.float32), g.device)
    out["product"] = [np.asarray(p([dev])[0]).tolist() for _ in range(3)]
    out["product_calls"] = p.calls
    print("RESULT", json.dumps(out))
    """
)


def test_bucket_program_is_agreed_by_vote_whatever_each_process_hands_it(tmp_path):
    """The processes' arrays differ in kind (host values in one, device arrays in the other,
    as their tiers may decide by timings), yet every call runs the same program in both:
    the one program only after a call in which no process had host values."""
    script = BUCKET_VOTES.replace("KINDS", repr(_VOTE_KINDS))
    workers = run_workers(script, 2, tmp_path, timeout=120)
    for w in workers:
        assert w.returncode == 0, w.describe()
    a, b = (w.result for w in workers)
    j, o = ["joined"], ["one_program"]
    assert a["programs"] == b["programs"] == [j, j, o, j, j, o, o]
    for me, r in enumerate((a, b)):
        for call, (vals, kinds) in enumerate(zip(r["values"], r["kinds_out"])):
            want = [
                np.mean([np.arange(6.0).reshape(2, 3) * (k + 1) for k in (0, 1)], 0),
                np.full(3, 0.5),
                np.array(1.0),
            ]
            for got, exp in zip(vals, want, strict=True):
                np.testing.assert_allclose(got, exp * (call + 1), rtol=1e-6, err_msg=f"{call}")
            # host values in, host values out; device arrays in, device arrays out
            assert set(kinds) == {_VOTE_KINDS[call][me].replace("mixed", "device")}, (me, call)
        assert r["product"] == [[6.0] * 3] * 3
        assert r["product_calls"] == {"joined": 3, "one_program": 0}


MISMATCH = textwrap.dedent(
    """
    import json, time
    import numpy as np
    import funcgrad.distributed as fd

    fd.initialize(heartbeat_timeout_seconds=5)
    me = fd.process_index()
    t = time.monotonic()
    try:
        fd.world().all_reduce(np.ones((2, 3 + me), np.float32))
        msg = None
    except fd.CollectiveError as e:
        msg = str(e)
    print("RESULT", json.dumps({"msg": msg, "seconds": time.monotonic() - t}))
    """
)


def test_mismatched_shapes_are_an_error_naming_both(tmp_path):
    workers = run_workers(MISMATCH, 2, tmp_path, timeout=HANG_GUARD_S)
    for w in workers:
        assert w.returncode == 0, w.describe()
        r = w.result
        assert r["msg"] is not None and "all_reduce" in r["msg"], r
        assert "(2, 3)" in r["msg"] and "(2, 4)" in r["msg"], r
        assert r["seconds"] < 10


DEAD_PEER = textwrap.dedent(
    """
    import json, os, sys, time
    import numpy as np
    import funcgrad.distributed as fd

    fd.initialize(heartbeat_timeout_seconds=4)
    me = fd.process_index()
    g = fd.world()
    g.all_reduce(np.ones(4, np.float32))  # everybody is there once
    if me == 1:
        os._exit(7)  # dies without a word
    t = time.monotonic()
    if sys.argv[1] == "collective":
        try:
            g.all_reduce(np.ones(4, np.float32))
            msg = None
        except fd.CollectiveError as e:
            msg = str(e)
        print("RESULT", json.dumps({"msg": msg, "seconds": time.monotonic() - t}), flush=True)
        os._exit(0)
    time.sleep(60)  # not in a collective: the runtime's heartbeat check ends this process
    print("RESULT", json.dumps({"msg": "still alive"}), flush=True)
    """
)


def test_dead_peer_fails_a_waiting_collective(tmp_path):
    workers = run_workers(DEAD_PEER, 2, tmp_path, timeout=HANG_GUARD_S, args=("collective",))
    assert workers[1].returncode == 7
    r = workers[0].result
    assert r["msg"] is not None and "all_reduce" in r["msg"] and "peer" in r["msg"], r
    assert r["seconds"] < 10, r


def test_dead_peer_ends_an_idle_process_within_the_heartbeat_timeout(tmp_path):
    workers = run_workers(DEAD_PEER, 2, tmp_path, timeout=HANG_GUARD_S, args=("idle",))
    assert workers[1].returncode == 7
    survivor = workers[0]
    assert survivor.returncode != 0, survivor.describe()
    assert "RESULT" not in survivor.stdout
    assert "task died" in survivor.stderr or "heartbeat" in survivor.stderr, survivor.describe()
    assert survivor.seconds - workers[1].seconds < 4 + 15, (survivor.seconds, workers[1].seconds)


BAD_COORDINATOR = textwrap.dedent(
    """
    import json, socket, sys, time
    import funcgrad.distributed as fd

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    if sys.argv[1] == "unreachable":
        s.close()  # nobody serves the coordinator: process 1 waits for it, then gives up
    t = time.monotonic()
    try:
        fd.initialize(f"127.0.0.1:{port}", 2, 0 if sys.argv[1] == "busy" else 1,
                      initialization_timeout=3)
        msg = None
    except RuntimeError as e:
        msg = str(e)
    print("RESULT", json.dumps({"msg": msg, "seconds": time.monotonic() - t}))
    """
)


@pytest.mark.parametrize(
    "case, words", [("busy", "is the port in use"), ("unreachable", "did not answer within 3 s")]
)
def test_coordinator_port_in_use_or_unreachable_is_a_clear_error(tmp_path, case, words):
    (w,) = run_workers(BAD_COORDINATOR, 1, tmp_path, timeout=HANG_GUARD_S, args=(case,))
    assert w.returncode == 0, w.describe()
    r = w.result
    assert r["msg"] is not None and words in r["msg"], r
    assert r["seconds"] < 10


def test_host_to_device_takes_jax_transfer_and_matches_device_put():
    """``_runtime.host_to_device`` reaches JAX's C++ transfer (a JAX that moved it would
    silently fall back to ``jax.device_put``: this fails instead) and gives what
    ``jax.device_put`` gives: values, dtype (64-bit canonicalised as JAX does), device;
    an aliased buffer is read back unchanged."""
    assert _runtime._batched_device_put is not None
    dev = jax.devices()[0]
    for x in (
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.array([1, -2, 3], np.int32),
        np.linspace(0.0, 1.0, 5),  # float64: canonicalised outside JAX's 64-bit mode
        np.array(True),
    ):
        got, ref = _runtime.host_to_device(x, dev), jax.device_put(x, dev)
        assert isinstance(got, jax.Array)
        assert got.dtype == ref.dtype and got.shape == ref.shape
        assert got.devices() == {dev}
        np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    buf = np.zeros(64, np.float32) + np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(_runtime.host_to_device(buf, dev, alias=True)), buf)


def test_runtime_caches_are_registered():
    """The runtime's memos (block assemblers, device shardings, host avals, cutters) are kinds of
    the one cache store: cache_info counts them and clear_caches empties them."""
    dev = jax.devices()[0]
    _runtime.host_to_device(np.ones(3, np.float32), dev)
    kinds = fg.cache_info().kinds
    assert "distributed_block_assemblers" in kinds and "distributed_cutters" in kinds
    assert kinds["distributed_device_shardings"] >= 1 and kinds["distributed_host_avals"] >= 1
    fg.clear_caches()
    assert fg.cache_info().kinds["distributed_device_shardings"] == 0
    assert fg.cache_info().kinds["distributed_host_avals"] == 0
