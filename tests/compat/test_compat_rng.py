"""compat's CPU generator reproduces PyTorch's random stream: the same seed gives PyTorch's
values for each draw function (real torch is the oracle), across sizes, dtypes, explicit
generators, interleaved calls and state round trips."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from torch_oracle import import_real_torch

import compat.torch as ct

real = import_real_torch()

SIZES = [1, 5, 15, 16, 17, 100, 1000]
FLOATS = ["float32", "float64"]
# float32 normals go through PyTorch's vectorised log/sin/cos: equal within about 1 ulp
F32_NORMAL = {"rtol": 3e-7, "atol": 3e-7}


def both(seed: int, fn):
    """``fn(lib)`` after ``manual_seed(seed)`` in each library, as NumPy arrays."""
    out = []
    for lib in (real, ct):
        lib.manual_seed(seed)
        r = fn(lib)
        out.append([np.asarray(t.detach().numpy()) for t in (r if isinstance(r, list) else [r])])
    return out


def assert_exact(seed: int, fn) -> None:
    got_real, got_compat = both(seed, fn)
    for a, b in zip(got_real, got_compat, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def assert_close(seed: int, fn, **tol) -> None:
    got_real, got_compat = both(seed, fn)
    for a, b in zip(got_real, got_compat, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **tol)


def same_state() -> bool:
    return bytes(real.get_rng_state().numpy()) == bytes(ct.get_rng_state().numpy())


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dt", [*FLOATS, "float16"])
def test_rand_and_uniform(n, dt):
    assert_exact(n, lambda t: t.rand(n, dtype=getattr(t, dt)))
    assert_exact(n, lambda t: t.empty(n, dtype=getattr(t, dt)).uniform_(-3.3, 7.1))
    assert same_state()


@pytest.mark.parametrize("n", SIZES)
def test_randn_float64_exact(n):
    assert_exact(n + 7, lambda t: t.randn(n, dtype=t.float64))
    assert_exact(n + 7, lambda t: t.empty(n, dtype=t.float64).normal_(2.0, 0.5))
    assert same_state()


@pytest.mark.parametrize("n", SIZES)
def test_randn_float32(n):
    assert_close(n, lambda t: t.randn(n), **({} if n < 16 else F32_NORMAL))
    assert_close(n, lambda t: t.randn(n, 3), **F32_NORMAL)
    if n < 16:  # the scalar path runs in double precision: exact
        assert_exact(n, lambda t: t.randn(n))
    assert same_state()


def test_randn_small_caches_second_sample():
    # the scalar path keeps its second sample in the generator: odd sizes interleave
    assert_exact(3, lambda t: [t.randn(3, dtype=t.float64) for _ in range(4)])
    assert_exact(3, lambda t: [t.randn(1, dtype=t.float64), t.rand(2), t.randn(1)])
    assert same_state()  # the cached sample is part of the state bytes


@pytest.mark.parametrize("n", [1, 5, 16, 100])
def test_normal_overloads(n):
    tol = F32_NORMAL
    assert_close(n, lambda t: t.normal(2.0, 3.0, (n,)), **tol)
    assert_close(n, lambda t: t.normal(t.arange(n) * 1.0, 3.0), **tol)
    # std scales the ulp-level difference of the standard normals
    assert_close(n, lambda t: t.normal(t.arange(n) * 1.0, t.arange(n) * 0.5 + 1), atol=5e-5)
    assert_exact(n, lambda t: t.normal(2.0, t.ones(n, dtype=t.float64) * 3.0))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dt", ["int64", "int32", "float32", "float64"])
def test_randint_and_random_(n, dt):
    assert_exact(n, lambda t: t.randint(-4, 9, (n,), dtype=getattr(t, dt)))
    assert_exact(n, lambda t: t.empty(n, dtype=getattr(t, dt)).random_(3, 1000))
    assert_exact(n, lambda t: t.empty(n, dtype=getattr(t, dt)).random_(77))
    assert_exact(n, lambda t: t.empty(n, dtype=getattr(t, dt)).random_())
    assert same_state()


def test_randint_wide_range_uses_64_bit_draws():
    assert_exact(0, lambda t: t.randint(-5, 2**40, (50,)))
    assert_exact(0, lambda t: t.randint(2**33, (7,)))
    assert same_state()


@pytest.mark.parametrize("n", [0, 1, 2, 5, 15, 16, 17, 100, 1000, 5000])
def test_randperm(n):
    assert_exact(n, lambda t: t.randperm(n))
    assert_exact(n, lambda t: t.randperm(n, dtype=t.int32))
    assert same_state()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dt", FLOATS)
def test_bernoulli(n, dt):
    assert_exact(n, lambda t: t.empty(n, dtype=getattr(t, dt)).bernoulli_(0.3))
    assert_exact(n, lambda t: t.bernoulli(t.linspace(0, 1, n, dtype=getattr(t, dt))))
    assert_exact(n, lambda t: t.zeros(n, dtype=getattr(t, dt)).bernoulli_(t.full((n,), 0.6)))
    assert same_state()


@pytest.mark.parametrize("n", [1, 17, 1000])
def test_other_inplace_draws(n):
    assert_exact(n, lambda t: t.empty(n, dtype=t.float64).exponential_(2.0))
    assert_exact(n, lambda t: t.empty(n, dtype=t.float64).cauchy_(1.0, 2.0))
    assert_exact(n, lambda t: t.empty(n, dtype=t.float64).geometric_(0.3))
    assert_exact(n, lambda t: t.empty(n, dtype=t.float64).log_normal_(1.0, 0.5))
    assert_close(n, lambda t: t.empty(n).exponential_(2.0), rtol=3e-7)
    assert_close(n, lambda t: t.empty(n).log_normal_(1.0, 0.5), rtol=3e-7)
    assert same_state()


@pytest.mark.parametrize("shape", [(7,), (4, 300), (2, 3, 5, 5)])
def test_dropout_masks(shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def run(t):
        xt = t.tensor(x)
        outs = [t.nn.functional.dropout(xt, 0.3), t.nn.Dropout(0.6)(xt)]
        if len(shape) == 4:
            outs.append(t.nn.functional.dropout2d(xt, 0.4))
        return outs

    assert_exact(5, run)
    assert same_state()


def test_rrelu_training_slopes():
    x = np.random.default_rng(1).standard_normal(500)
    assert_exact(2, lambda t: t.nn.functional.rrelu(t.tensor(x), training=True))
    assert same_state()


def test_generator_argument_and_interleaving():
    def run(t):
        g = t.Generator().manual_seed(11)
        return [
            t.rand(5, generator=g),
            t.randn(20, dtype=t.float64, generator=g),
            t.rand(3),  # the default generator, seeded by manual_seed
            t.randint(0, 10, (6,), generator=g),
            t.randperm(9, generator=g),
            t.empty(4, dtype=t.float64).uniform_(generator=g),
            t.randn(3, dtype=t.float64),
        ]

    assert_exact(4, run)
    assert same_state()


def test_new_generator_default_seed():
    assert ct.Generator().initial_seed() == real.Generator().initial_seed()
    a = real.rand(4, generator=real.Generator())
    b = ct.rand(4, generator=ct.Generator())
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("seed", [0, 1, 2**32 + 5, 2**63 - 1, -1])
def test_seeds_and_initial_seed(seed):
    assert_exact(0, lambda t: [t.manual_seed(seed) and t.rand(3), t.randn(3, dtype=t.float64)])
    real.manual_seed(seed)
    ct.manual_seed(seed)
    assert ct.initial_seed() == real.initial_seed()
    assert same_state()


def test_state_round_trip_and_exchange():
    for lib in (real, ct):
        lib.manual_seed(9)
        lib.randn(3, dtype=lib.float64)  # leaves a cached normal in the state
    assert same_state()
    st = ct.get_rng_state()
    assert st.dtype == ct.uint8 and tuple(st.shape) == (5056,)
    a = ct.randn(3, dtype=ct.float64)
    ct.set_rng_state(st)
    np.testing.assert_array_equal(ct.randn(3, dtype=ct.float64).numpy(), a.numpy())
    # PyTorch's state restores in compat and the reverse
    real.manual_seed(21)
    real.rand(700)
    ct.set_rng_state(ct.tensor(real.get_rng_state().numpy()))
    np.testing.assert_array_equal(real.rand(5).numpy(), ct.rand(5).numpy())
    real.set_rng_state(real.tensor(ct.get_rng_state().numpy()))
    np.testing.assert_array_equal(real.randperm(30).numpy(), ct.randperm(30).numpy())
    g, h = real.Generator(), ct.Generator()
    g.set_state(real.get_rng_state())
    h.set_state(ct.get_rng_state())
    np.testing.assert_array_equal(
        real.rand(5, generator=g).numpy(), ct.rand(5, generator=h).numpy()
    )


def test_state_read_between_draws_and_copies():
    # the bit generator keeps the state between draws; reading it (get_state), copying a
    # generator and setting a state in between must all see the stream where it is
    gens = {lib: lib.Generator().manual_seed(5) for lib in (real, ct)}
    states = {lib: [] for lib in gens}
    draws = {lib: [] for lib in gens}
    for lib, g in gens.items():
        for n in (3, 700, 1, 40, 624):
            draws[lib].append(lib.rand(n, generator=g).numpy())
            states[lib].append(bytes(g.get_state().numpy()))
        dup = copy.deepcopy(g)
        draws[lib].append(lib.randn(17, dtype=lib.float64, generator=dup).numpy())
        draws[lib].append(lib.randn(17, dtype=lib.float64, generator=g).numpy())
        g.set_state(lib.tensor(np.frombuffer(states[lib][1], np.uint8).copy()))
        draws[lib].append(lib.randint(0, 100, (50,), generator=g).numpy())
        states[lib].append(bytes(g.get_state().numpy()))
    assert states[real] == states[ct]
    for a, b in zip(draws[real], draws[ct], strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(draws[ct][-3], draws[ct][-2])  # the copy drew the same


def test_set_state_errors():
    for lib in (real, ct):
        with pytest.raises(RuntimeError, match="5056"):
            lib.set_rng_state(lib.zeros(10, dtype=lib.uint8))
        with pytest.raises(TypeError):
            lib.Generator().set_state(lib.zeros(5056))


@pytest.mark.parametrize(
    "make", ["Linear(7, 5)", "Linear(300, 200)", "Conv2d(3, 4, 3)", "Conv1d(2, 6, 5)"]
)
def test_module_default_init(make):
    assert_exact(1, lambda t: list(eval(f"t.nn.{make}").parameters()))


def test_embedding_and_init_functions():
    def run(t):
        w = t.empty(30, 20)
        return [
            t.nn.Embedding(10, 6).weight,
            t.nn.init.xavier_uniform_(w).clone(),
            t.nn.init.kaiming_uniform_(w, a=0.1).clone(),
            t.nn.init.uniform_(w, -2.0, 5.0).clone(),
        ]

    assert_close(3, run, **F32_NORMAL)

    def run_normal(t):
        w = t.empty(30, 20)
        return [
            t.nn.init.xavier_normal_(w).clone(),
            t.nn.init.kaiming_normal_(w).clone(),
            t.nn.init.normal_(w, 1.0, 0.1).clone(),
        ]

    assert_close(3, run_normal, **F32_NORMAL)
    assert same_state()


def test_samplers_and_shuffling_follow_pytorch():
    def run(t):
        data = t.utils.data
        ds = data.TensorDataset(t.arange(37))
        return [
            t.tensor(list(data.RandomSampler(ds))),
            t.tensor(list(data.RandomSampler(ds, replacement=True, num_samples=70))),
            t.tensor(list(data.RandomSampler(ds, num_samples=50))),
            t.tensor(list(data.SubsetRandomSampler(list(range(3, 20))))),
            t.cat([b[0] for b in data.DataLoader(ds, batch_size=8, shuffle=True)]),
            t.tensor(data.random_split(ds, [30, 7])[1].indices),
        ]

    assert_exact(6, run)
    assert same_state()


def test_distributions_drawing_pytorch_stream():
    def run(t):
        d = t.distributions
        loc, scale = t.tensor([0.0, 1.0, -0.5]), t.tensor([1.0, 0.5, 0.7])
        return [
            d.Uniform(loc - 1, loc + 2).sample((40,)),
            d.Exponential(scale).sample((40,)),
            d.Laplace(loc, scale).sample((2,)),
            d.Normal(loc, scale).sample((3,)),
        ]

    assert_close(8, run, rtol=1e-6, atol=1e-6)
    assert same_state()


def test_large_tensors_stay_within_an_ulp():
    n = 20000  # above the per-element libm threshold: NumPy's vectorised functions
    assert_close(1, lambda t: t.empty(n, dtype=t.float64).exponential_(), rtol=1e-15)
    assert_close(1, lambda t: t.randn(n, dtype=t.float64), rtol=1e-15, atol=1e-15)
    assert_close(1, lambda t: t.randn(n), **F32_NORMAL)
    assert_exact(1, lambda t: t.rand(n))
    assert_exact(1, lambda t: t.rand(n, dtype=t.float16))  # some draws round up to 1.0
    assert same_state()


@pytest.mark.parametrize(
    "shape, k, replacement",
    [
        ((5,), 1, False),
        ((5,), 3, False),
        ((2, 6), 4, False),
        ((3, 7), 20, True),
        ((7,), 1, True),
        ((4,), 4, False),
        ((100,), 50, False),
        ((2, 1000), 300, True),
    ],
)
@pytest.mark.parametrize("dt", FLOATS)
def test_multinomial(shape, k, replacement, dt):
    w = np.random.default_rng(len(shape) + k).random(shape) + 0.01  # positive: no ties
    assert_exact(k, lambda t: t.multinomial(t.tensor(w, dtype=getattr(t, dt)), k, replacement))
    assert same_state()


def test_weighted_random_sampler():
    w = [0.5, 1.0, 0.1, 2.0, 0.7]

    def run(t):
        data = t.utils.data
        return [
            t.tensor(list(data.WeightedRandomSampler(w, 12))),
            t.tensor(list(data.WeightedRandomSampler(w, 4, replacement=False))),
        ]

    assert_exact(0, run)
    assert same_state()


def test_multinomial_errors():
    for lib in (real, ct):
        with pytest.raises(RuntimeError, match="floating-point dtypes"):
            lib.multinomial(lib.tensor([1, 2]), 1)
        with pytest.raises(RuntimeError, match="without replacement"):
            lib.multinomial(lib.tensor([1.0, 2.0]), 3)


def test_torch_random_module_and_fork_rng():
    def run(t):
        out = [t.random.get_rng_state()[:8].long()]
        with t.random.fork_rng():
            out.append(t.randn(20, dtype=t.float64))
        out.append(t.rand(4, dtype=t.float64))  # as if the block had not drawn
        with t.random.fork_rng(enabled=False):
            out.append(t.rand(3, dtype=t.float64))
        out.append(t.rand(3, dtype=t.float64))
        t.random.manual_seed(5)
        out.append(t.randint(0, 100, (5,)))
        out.append(t.tensor([t.random.initial_seed()]))
        return out

    assert_exact(12, run)
    assert same_state()
