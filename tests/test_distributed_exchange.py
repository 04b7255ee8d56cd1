"""A group of two's all-reduce as an exchange: the same bits on both members.

Two members all-reduce by sending each other their arrays (one collective permute) and
reducing the pair themselves (``funcgrad/distributed/_groups.py``, ``_exchange``). Each
member computes ``mine op theirs``, so the members' operand orders differ: the test
checks every reduction gives both members the same bits, and NumPy's pairwise result,
on values chosen where order could show (signed zeros, infinities, NaN, overflow).
(Subnormals are left out: XLA's CPU programs flush them to zero, as every compiled
funcgrad program on a CPU does, whichever collective carries them.)
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.multiprocess import run_workers

pytestmark = pytest.mark.xdist_group("multiprocess")

EXCHANGE = textwrap.dedent(
    """
    import json
    import jax
    import numpy as np
    import funcgrad.distributed as fd
    from tests.test_distributed_exchange import operands

    fd.initialize()
    me = fd.process_index()
    g = fd.world()
    f, i = operands(me)
    out = {}
    for op in ("sum", "avg", "product", "min", "max"):
        out["all_reduce_" + op] = np.asarray(g.all_reduce(f, op)).view(np.uint32).tolist()
        b = fd.Bucket(g, [f.shape, (2,)], np.float32, op)
        res = b([f, f[:2]])
        out["bucket_" + op] = [np.asarray(r).view(np.uint32).tolist() for r in res]
    for op in ("sum", "band", "bor", "bxor", "max"):
        out["int_" + op] = np.asarray(g.all_reduce(i, op)).tolist()
    # device arrays: the first call's vote moves the bucket to its one program
    dev = fd.Bucket(g, [f.shape, ()], np.float32, "sum")
    xs = [jax.device_put(f, g.device), jax.device_put(f[4], g.device)]
    out["device"] = []
    for _ in range(2):
        res = dev(xs)
        out["device"].append([np.asarray(r).view(np.uint32).tolist() for r in res])
        out["device"][-1].append([type(r).__name__ for r in res])
    out["device_calls"] = dev.calls
    many = g.all_reduce_many([f, f[:3] * 2], "sum")
    out["many"] = [np.asarray(r).view(np.uint32).tolist() for r in many]
    print("RESULT", json.dumps(out))
    """
)


def operands(rank: int) -> tuple[np.ndarray, np.ndarray]:
    """Rank ``rank``'s float32 and int32 operands: random values, then pairs where the
    order of the two operands could show."""
    rng = np.random.default_rng(rank)
    f = rng.standard_normal(64).astype(np.float32)
    special = [
        (-0.0, -0.0),
        (-0.0, 0.0),
        (0.0, -0.0),
        (np.inf, -np.inf),
        (np.nan, 1.0),
        (1.0, np.nan),
        (3e38, 3e38),
        (1e-30, -1e-30),
        (-np.inf, 2.0),
        (1.5, 1.5),
    ]
    f[: len(special)] = [pair[rank] for pair in special]
    i = rng.integers(-(2**31), 2**31 - 1, 16, dtype=np.int64).astype(np.int32)
    return f, i


def _pairwise(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return {
            "sum": lambda: a + b,
            "avg": lambda: (a + b) / a.dtype.type(2),
            "product": lambda: a * b,
            "min": lambda: np.minimum(a, b),
            "max": lambda: np.maximum(a, b),
            "band": lambda: a & b,
            "bor": lambda: a | b,
            "bxor": lambda: a ^ b,
        }[op]()


def _floats(bits: list) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)


def test_two_members_get_the_same_bits_and_numpys_pairwise_values(tmp_path):
    workers = run_workers(EXCHANGE, 2, tmp_path, timeout=120)
    for w in workers:
        assert w.returncode == 0, w.describe()
    r0, r1 = (w.result for w in workers)
    assert r0 == r1  # the same bits on both members, every reduction
    (f0, i0), (f1, i1) = operands(0), operands(1)
    for op in ("sum", "avg", "product", "min", "max"):
        exp = _pairwise(op, f0, f1)
        np.testing.assert_array_equal(_floats(r0["all_reduce_" + op]), exp, err_msg=op)
        got = [_floats(b) for b in r0["bucket_" + op]]
        np.testing.assert_array_equal(got[0], exp, err_msg=op)
        np.testing.assert_array_equal(got[1], _pairwise(op, f0[:2], f1[:2]), err_msg=op)
    # the signed zeros of a sum, bit for bit (array_equal takes -0.0 == 0.0)
    np.testing.assert_array_equal(
        np.signbit(_floats(r0["all_reduce_sum"])[:3]), np.signbit(_pairwise("sum", f0, f1)[:3])
    )
    for op in ("sum", "band", "bor", "bxor", "max"):
        np.testing.assert_array_equal(r0["int_" + op], _pairwise(op, i0, i1), err_msg=op)
    assert r0["device_calls"] == {"joined": 1, "one_program": 1}
    for call in r0["device"]:  # each call: the vector, the 0-d value, the result types
        np.testing.assert_array_equal(_floats(call[0]), _pairwise("sum", f0, f1))
        assert np.shape(call[1]) == ()
        np.testing.assert_array_equal(_floats(call[1]), _pairwise("sum", f0[4], f1[4]))
        assert call[2] == ["ArrayImpl", "ArrayImpl"]
    np.testing.assert_array_equal(_floats(r0["many"][0]), _pairwise("sum", f0, f1))
    np.testing.assert_array_equal(_floats(r0["many"][1]), _pairwise("sum", f0[:3], f1[:3]) * 2)
