"""compat.torch.utils.data against real PyTorch: datasets, samplers (``DistributedSampler``
too), collation, DataLoader.

Every scenario runs on both libraries (``lib``) and compares batch structure,
shapes, dtypes and values (orders are compared where they are deterministic;
random orders are compared as index sets and checked for reproducibility, since
compat's generator is not PyTorch's).
"""

from __future__ import annotations

import collections
import importlib
import itertools

import numpy as np
import pytest
from torch_oracle import import_real_torch

import compat.torch as ctorch

Point = collections.namedtuple("Point", ["x", "y"])


def _data(lib):
    return importlib.import_module(lib.__name__ + ".utils.data")


def describe(obj):
    """A library-independent picture of a batch: tensors become (dtype, shape, values)."""
    if hasattr(obj, "detach") and hasattr(obj, "dtype"):
        return ("T", str(obj.dtype), tuple(obj.shape), np.asarray(obj.detach().numpy()).tolist())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, *[describe(v) for v in obj])
    if isinstance(obj, dict):
        return {k: describe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [describe(v) for v in obj])
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), obj.tolist())
    return (type(obj).__name__, obj)


def both(fn):
    """``fn(lib)`` on compat and on real torch."""
    real = import_real_torch()
    return fn(ctorch), fn(real)


def _tensor_ds(lib, n=11):
    d = _data(lib)
    x = lib.arange(2.0 * n).reshape(n, 2)
    return d.TensorDataset(x, lib.arange(n), lib.arange(n) % 2 == 0)


# ----------------------------------------------------------------------------- loader basics


@pytest.mark.parametrize(
    "batch_size,drop_last,subset",
    [(4, False, False), (4, True, False), (1, False, False), (11, True, False), (3, False, True)],
)
def test_tensor_dataset_batches(batch_size, drop_last, subset):
    def run(lib):
        d = _data(lib)
        ds = _tensor_ds(lib)
        if subset:  # Subset of a Subset, negative keys
            ds = d.Subset(d.Subset(ds, [10, 2, 7, 3, 0, -1, 4]), [6, 0, -2, 1, 1])
        dl = d.DataLoader(ds, batch_size=batch_size, drop_last=drop_last)
        return len(dl), [describe(b) for b in dl]

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[0] == len(ours[1])


def test_dataset_classes(lib):
    d = _data(lib)
    ds = _tensor_ds(lib, 5)
    assert len(ds) == 5 and describe(ds[-1]) == describe(ds[4])
    cat = ds + d.TensorDataset(lib.ones(3, 2), lib.zeros(3, dtype=lib.int64), lib.ones(3) > 0)
    assert isinstance(cat, d.ConcatDataset) and len(cat) == 8 and cat.cumulative_sizes == [5, 8]
    assert describe(cat[6]) == describe((lib.ones(2), lib.tensor(0), lib.tensor(True)))
    assert describe(cat[-8]) == describe(ds[0])
    with pytest.raises(ValueError, match="should not exceed"):
        cat[-9]
    sub = d.Subset(ds, [4, 0, 2])
    assert len(sub) == 3 and describe(sub[0]) == describe(ds[4])
    assert describe(sub.__getitems__([1, 2])) == describe([ds[0], ds[2]])
    with pytest.raises(AssertionError):
        d.TensorDataset(lib.ones(3), lib.ones(4))
    with pytest.raises(AssertionError):
        d.ConcatDataset([])
    with pytest.raises(NotImplementedError):
        d.Dataset()[0]
    stacked = d.StackDataset(a=ds, b=d.Subset(ds, [4, 0, 2, 1, 3]))
    assert len(stacked) == 5 and describe(stacked[3]) == {
        "a": describe(ds[3]),
        "b": describe(ds[1]),
    }
    with pytest.raises(ValueError, match="Size mismatch"):
        d.StackDataset(ds, sub)
    xg = lib.ones(3, 2, requires_grad=True)  # rows of a tensor requiring grad keep the graph
    (row,) = d.TensorDataset(xg)[np.int64(-1)]
    assert row.requires_grad and row.grad_fn is not None and row.shape == (2,)
    (xb,) = next(iter(d.DataLoader(d.TensorDataset(xg), batch_size=2)))
    assert xb.grad_fn is not None and xb.shape == (2, 2)
    with pytest.raises(IndexError):
        ds[5]


def _mixed_sample(lib, i):
    return {
        "t": lib.full((2,), float(i)),
        "ti": lib.tensor([i, -i], dtype=lib.int32),
        "a": np.full((3,), i, dtype=np.float64),
        "f": i / 2,
        "n": i,
        "b": i % 2 == 0,
        "s": f"s{i}",
        "np32": np.float32(i),
        "npi": np.int16(i),
        "tup": (i, float(i)),
        "lst": [lib.tensor(float(i)), [i, i + 1]],
        "pt": Point(lib.tensor([i]), i * 1.5),
    }


@pytest.mark.parametrize("batch_size", [2, None])
def test_default_collate_and_convert(batch_size):
    def run(lib):
        d = _data(lib)

        class DS(d.Dataset):
            def __len__(self):
                return 5

            def __getitem__(self, i):
                return _mixed_sample(lib, i)

        return [describe(b) for b in d.DataLoader(DS(), batch_size=batch_size)]

    ours, theirs = both(run)
    assert ours == theirs
    if batch_size:
        assert ours[0]["f"][1] == "torch.float64" and ours[0]["s"] == (
            "list",
            [("str", "s0"), ("str", "s1")],
        )
    else:
        assert ours[0]["f"] == ("float", 0.0) and ours[0]["np32"][1] == "torch.float32"


def test_collate_direct_and_errors(lib):
    d = _data(lib)
    batch = [(lib.ones(2), 1), (lib.zeros(2), 2)]
    assert describe(d.default_collate(batch)) == (
        "list",
        [
            ("T", "torch.float32", (2, 2), [[1.0, 1.0], [0.0, 0.0]]),
            ("T", "torch.int64", (2,), [1, 2]),
        ],
    )
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        d.default_collate([object(), object()])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        d.default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="equal size"):
        d.default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        d.default_collate([lib.ones(2), lib.ones(3)])
    w = lib.ones(2, requires_grad=True)
    out = d.default_collate([w * 2, w * 3])  # stacking keeps the graph
    out.sum().backward()
    assert w.grad.tolist() == [5.0, 5.0]


def test_custom_collate_sampler_and_getitems(lib):
    d = _data(lib)
    calls = []

    class Batched(d.Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            raise AssertionError("__getitems__ is preferred")

        def __getitems__(self, idx):
            calls.append(list(idx))
            return [lib.tensor([float(i)]) for i in idx]

    dl = d.DataLoader(Batched(), batch_size=4, sampler=[5, 3, 1, 0, 2, 4], collate_fn=lambda b: b)
    got = [[t.item() for t in b] for b in dl]
    assert got == [[5.0, 3.0, 1.0, 0.0], [2.0, 4.0]] and calls == [[5, 3, 1, 0], [2, 4]]
    dl = d.DataLoader(Batched(), batch_sampler=[[1, 2], [0]])
    assert [b.shape[0] for b in dl] == [2, 1] and len(dl) == 2


def _stream(lib, n):
    d = _data(lib)

    class S(d.IterableDataset):
        def __iter__(self):
            return iter(lib.tensor([float(i), -float(i)]) for i in range(n))

        def __len__(self):
            return n

    return S()


@pytest.mark.parametrize("drop_last", [False, True])
def test_iterable_dataset(drop_last):
    def run(lib):
        dl = _data(lib).DataLoader(_stream(lib, 7), batch_size=3, drop_last=drop_last)
        return (
            len(dl),
            [describe(b) for b in dl],
            [describe(b) for b in _data(lib).DataLoader(_stream(lib, 2), batch_size=None)],
        )

    ours, theirs = both(run)
    assert ours == theirs


# ----------------------------------------------------------------------------- errors


def _loader_errors(lib):
    d = _data(lib)
    ds = _tensor_ds(lib, 4)
    seq = d.SequentialSampler(ds)
    bs = d.BatchSampler(seq, 2, False)
    bad = [
        dict(batch_sampler=bs, batch_size=2),
        dict(batch_sampler=bs, shuffle=True),
        dict(batch_sampler=bs, sampler=seq),
        dict(batch_sampler=bs, drop_last=True),
        dict(sampler=seq, shuffle=True),
        dict(batch_size=None, drop_last=True),
        dict(num_workers=-1),
        dict(timeout=-1),
        dict(prefetch_factor=2),
        dict(persistent_workers=True),
        dict(multiprocessing_context="spawn"),
        dict(num_workers=1, multiprocessing_context="no-such-method"),
    ]
    return ds, bad


@pytest.mark.parametrize("case", range(12))
def test_loader_argument_errors(lib, case):
    ds, bad = _loader_errors(lib)
    with pytest.raises(ValueError) as info:
        _data(lib).DataLoader(ds, **bad[case])
    assert str(info.value) == str(_ref_error(case))


def _ref_error(case):
    real = import_real_torch()
    ds, bad = _loader_errors(real)
    try:
        _data(real).DataLoader(ds, **bad[case])
    except ValueError as e:
        return e
    raise AssertionError("PyTorch accepted it")


def test_loader_state_errors(lib):
    d = _data(lib)
    for kw in [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])]:
        with pytest.raises(
            ValueError, match="DataLoader with IterableDataset: expected unspecified"
        ):
            d.DataLoader(_stream(lib, 3), **kw)
    dl = d.DataLoader(_tensor_ds(lib, 4), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader"):
        dl.batch_size = 3
    dl.num_workers = 0  # not frozen

    class NoLen(d.IterableDataset):
        def __iter__(self):
            return iter([lib.ones(1)])

    with pytest.raises(TypeError):
        len(d.DataLoader(NoLen(), batch_size=2))


# ----------------------------------------------------------------------------- samplers


def test_sampler_lengths_and_sets(lib):
    d = _data(lib)
    src = range(10)
    assert list(d.SequentialSampler(src)) == list(range(10))
    r = d.RandomSampler(src)
    assert len(r) == 10 and sorted(r) == list(range(10))
    r = d.RandomSampler(src, num_samples=25)
    got = list(r)  # two permutations, then 5 distinct indices
    assert len(r) == 25 == len(got) and sorted(got[:10]) == sorted(got[10:20]) == list(range(10))
    assert len(set(got[20:])) == 5
    r = d.RandomSampler(src, replacement=True, num_samples=70)
    got = list(r)
    assert len(got) == 70 and set(got) <= set(range(10))
    s = d.SubsetRandomSampler([3, 7, 9])
    assert len(s) == 3 and sorted(s) == [3, 7, 9]
    w = d.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 40)
    got = list(w)
    assert len(w) == 40 == len(got) and set(got) <= {1, 3}
    w = d.WeightedRandomSampler([0.5, 1.0, 0.0, 2.0], 3, replacement=False)
    assert sorted(w) == [0, 1, 3]
    w = d.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 4, replacement=False)
    got = list(w)  # zero weights only once the others are used up
    assert sorted(got[:2]) == [1, 3] and sorted(got) == [0, 1, 2, 3]
    assert str(w.weights.dtype) == "torch.float64"
    b = d.BatchSampler(d.SequentialSampler(range(7)), 3, False)
    assert list(b) == [[0, 1, 2], [3, 4, 5], [6]] and len(b) == 3
    b = d.BatchSampler(range(7), 3, True)
    assert list(b) == [[0, 1, 2], [3, 4, 5]] and len(b) == 2


def test_sampler_errors(lib):
    d = _data(lib)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        d.RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        d.RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        d.WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean"):
        d.WeightedRandomSampler([1.0], 1, replacement=None)
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        d.WeightedRandomSampler([[1.0]], 1)
    for weights, n in [([1.0, 0.0], 3), ([-1.0, 2.0], 1), ([0.0, 0.0], 1)]:
        with pytest.raises(RuntimeError):
            list(d.WeightedRandomSampler(weights, n, replacement=n == 1))
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        d.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        d.BatchSampler(range(3), 2, 0)


def test_generator_and_shuffle_reproducible(lib):
    d = _data(lib)
    g = lib.Generator()
    assert g.initial_seed() == 67280421310721
    assert g.manual_seed(-1) is g and g.initial_seed() == 2**64 - 1
    perm = lambda seed: lib.randperm(12, generator=lib.Generator().manual_seed(seed)).tolist()
    assert perm(5) == perm(5) and sorted(perm(5)) == list(range(12))
    ds = _tensor_ds(lib, 11)

    def epoch(**kw):
        return [b[1].tolist() for b in d.DataLoader(ds, batch_size=4, shuffle=True, **kw)]

    lib.manual_seed(0)
    first = epoch()
    lib.manual_seed(0)
    assert epoch() == first and sorted(itertools.chain(*first)) == list(range(11))
    assert [len(b) for b in first] == [4, 4, 3]
    with_g = epoch(generator=lib.Generator().manual_seed(1))
    assert with_g == epoch(generator=lib.Generator().manual_seed(1))
    a = d.RandomSampler(range(9), generator=lib.Generator().manual_seed(2))
    b = d.RandomSampler(range(9), generator=lib.Generator().manual_seed(2))
    assert list(a) == list(b)


def test_random_split(lib):
    d = _data(lib)
    ds = _tensor_ds(lib, 10)
    for lengths in ([3, 7], [0.3, 0.3, 0.4], [0.33, 0.33, 0.34], [0.5, 0.5]):
        parts = d.random_split(ds, lengths, generator=lib.Generator().manual_seed(0))
        again = d.random_split(ds, lengths, generator=lib.Generator().manual_seed(0))
        assert [p.indices for p in parts] == [p.indices for p in again]
        assert sorted(itertools.chain(*(p.indices for p in parts))) == list(range(10))
        assert all(isinstance(p, d.Subset) for p in parts)
        yield_sizes = [len(p) for p in parts]
        assert yield_sizes == _split_sizes(lengths)
    lib.manual_seed(3)
    a = d.random_split(range(6), [2, 4])
    lib.manual_seed(3)
    assert [x.indices for x in a] == [x.indices for x in d.random_split(range(6), [2, 4])]
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        d.random_split(ds, [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        d.random_split(ds, [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = d.random_split(range(2), [0.5, 0.0, 0.5])
    assert [len(p) for p in parts] == [1, 0, 1]


def _split_sizes(lengths):
    real = import_real_torch()
    parts = _data(real).random_split(range(10), lengths, generator=real.Generator().manual_seed(0))
    return [len(p) for p in parts]


def test_torch_utils_attribute():
    import compat.torch.utils.data as cdata

    assert ctorch.utils.data is cdata and ctorch.utils.data.DataLoader is cdata.DataLoader
    real = import_real_torch()
    missing = [n for n in cdata.__all__ if not hasattr(real.utils.data, n)]
    assert missing == []


def test_pin_memory_accepted(lib):
    d = _data(lib)
    ds = _tensor_ds(lib, 3)
    with pytest.warns(UserWarning, match="pin"):
        got = [describe(b) for b in d.DataLoader(ds, batch_size=2, pin_memory=True)]
    assert got == [describe(b) for b in d.DataLoader(ds, batch_size=2)]


# ----------------------------------------------------------------------------- DistributedSampler
def _indices(lib, n, epoch=0, **kwargs):
    s = lib.utils.data.distributed.DistributedSampler(list(range(n)), **kwargs)
    s.set_epoch(epoch)
    return list(s), len(s), s.num_samples, s.total_size


SAMPLER_CASES = [
    (n, replicas, rank, drop_last)
    for n in (0, 1, 3, 10, 11)
    for replicas in (1, 3, 4)
    for rank in sorted({0, replicas - 1})
    for drop_last in (False, True)
]


@pytest.mark.parametrize("n, replicas, rank, drop_last", SAMPLER_CASES)
def test_distributed_sampler_unshuffled_matches_torch(real_torch, n, replicas, rank, drop_last):
    kw = dict(num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
    assert _indices(ctorch, n, **kw) == _indices(real_torch, n, **kw)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (11, 4, True), (7, 2, False)])
@pytest.mark.parametrize("epoch", (0, 1, 5))
@pytest.mark.parametrize("seed", (0, 3))
def test_distributed_sampler_shuffled_matches_torch(
    real_torch, n, replicas, drop_last, epoch, seed
):
    """Shuffled shares equal PyTorch's index for index: compat's ``randperm`` under a
    Generator seeded with ``seed + epoch`` draws PyTorch's mt19937 stream."""
    kw = dict(num_replicas=replicas, drop_last=drop_last, seed=seed)
    for rank in range(replicas):
        assert _indices(ctorch, n, epoch, rank=rank, **kw) == _indices(
            real_torch, n, epoch, rank=rank, **kw
        )


def test_distributed_sampler_pads_short_dataset_by_cycling(real_torch):
    kw = dict(num_replicas=7, shuffle=False)
    for rank in range(7):
        assert _indices(ctorch, 2, rank=rank, **kw) == _indices(real_torch, 2, rank=rank, **kw)


@pytest.mark.parametrize(
    "kwargs",
    [dict(num_replicas=3, rank=3), dict(num_replicas=3, rank=-1), dict(), dict(num_replicas=2)],
)
def test_distributed_sampler_errors(real_torch, kwargs):
    errs = []
    for lib in (ctorch, real_torch):
        with pytest.raises(Exception) as info:
            lib.utils.data.distributed.DistributedSampler(list(range(5)), **kwargs)
        errs.append(info.value)
    assert type(errs[0]) is type(errs[1]) is ValueError
    assert str(errs[0]) == str(errs[1])


def test_distributed_sampler_in_dataloader(real_torch):
    out = []
    for lib in (ctorch, real_torch):
        ds = lib.utils.data.TensorDataset(lib.arange(10))
        s = lib.utils.data.DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)
        dl = lib.utils.data.DataLoader(ds, batch_size=3, sampler=s)
        out.append([b[0].tolist() for b in dl])
    assert out[0] == out[1] == [[1, 3, 5], [7, 9]]


# ----------------------------------------------------------------------------- worker processes


def record_init(worker_id):
    """``worker_init_fn``: leaves a mark the dataset reports (module level: picklable)."""
    WorkerProbe.init_marks.append(worker_id * 10)


class WorkerProbe:
    """Reports which worker produced a sample and whether ``worker_init_fn`` ran there."""

    init_marks: list = []
    lib_name = "compat.torch"

    def __init__(self, lib_name):
        self.lib_name = lib_name

    def __len__(self):
        return 6

    def __getitem__(self, i):
        lib = importlib.import_module(self.lib_name)
        info = _data(lib).get_worker_info()
        if i == 5:
            raise ValueError("sample 5 is broken")
        return {
            "x": lib.full((2,), float(i)),
            "worker": info.id,
            "n": info.num_workers,
            "init": WorkerProbe.init_marks[-1],
            "own_copy": info.dataset is self,
        }


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
def test_worker_processes():
    def run(lib):
        d = _data(lib)
        dl = d.DataLoader(
            WorkerProbe(lib.__name__),
            batch_sampler=[[0, 1], [2, 3], [4], [5]],
            num_workers=2,
            worker_init_fn=record_init,
            persistent_workers=True,
        )
        epochs = []
        for _ in range(2):  # the same workers serve both epochs
            it = iter(dl)
            got = [describe(next(it)) for _ in range(3)]
            with pytest.raises(
                ValueError, match="Caught ValueError in DataLoader worker process 1"
            ):
                next(it)
            epochs.append(got)
        assert d.get_worker_info() is None
        return epochs

    ours, theirs = both(run)
    assert ours == theirs
    assert [b["worker"][3] for b in ours[0]] == [[0, 0], [1, 1], [0]]
    assert [b["init"][3] for b in ours[1]] == [[0, 0], [10, 10], [0]]


class ShardedStream:
    """An iterable dataset that splits ``range(n)`` between workers with ``get_worker_info``
    (built as a subclass of either library's ``IterableDataset`` by ``_sharded``)."""

    def __init__(self, lib_name, n):
        self.lib_name, self.n = lib_name, n

    def __iter__(self):
        lib = importlib.import_module(self.lib_name)
        info = _data(lib).get_worker_info()
        lo, hi = (0, self.n) if info is None else (info.id * 3, min(self.n, info.id * 3 + 3))
        return iter(lib.tensor([i, info.id if info else -1]) for i in range(lo, hi))


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
def test_worker_processes_iterable():
    def run(lib):
        # compat's workers are spawned (the class must be importable); PyTorch's are forked
        kind = (
            CompatSharded
            if lib is ctorch
            else type("S", (ShardedStream, _data(lib).IterableDataset), {})
        )
        dl = _data(lib).DataLoader(
            kind(lib.__name__, 5), batch_size=2, num_workers=2, persistent_workers=True
        )
        return [[describe(b) for b in dl] for _ in range(2)]

    ours, theirs = both(run)
    assert ours == theirs
    assert [b[3] for b in ours[1]] == [[[0, 0], [1, 0]], [[3, 1], [4, 1]], [[2, 0]]]


class CompatSharded(ShardedStream, _data(ctorch).IterableDataset):
    pass
