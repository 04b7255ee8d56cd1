"""compat.torch.nn: ParameterList, ParameterDict, Buffer, the in-place functional aliases
(``F.relu_``, ...) and ``F.gumbel_softmax``, each against real PyTorch.

Most tests run one scenario on both libraries (``lib`` is ``compat.torch`` or
``torch``) and compare what it returns: reprs, names, keys, error types and
messages, values and gradients as NumPy arrays.
"""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import import_real_torch, npv

import compat.torch as torch


def _both(real_torch, scenario):
    """``scenario(lib)`` for compat and real torch."""
    return scenario(torch), scenario(real_torch)


def _error(fn) -> tuple[str, str]:
    try:
        fn()
    except Exception as exc:  # the type and message are what is compared
        return type(exc).__name__, str(exc)
    return ("no error", "")


def _assert_same(ours, theirs) -> None:
    assert type(ours) is type(theirs) or isinstance(ours, np.ndarray)
    if isinstance(ours, np.ndarray):
        assert ours.dtype == np.asarray(theirs).dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    elif isinstance(ours, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            _assert_same(a, b)
    else:
        assert ours == theirs


# ---------------------------------------------------------------------------- ParameterList
def _mixed_list(lib):
    nn = lib.nn
    return nn.ParameterList(
        [
            lib.zeros(2, 3),
            nn.Parameter(lib.ones(4)),
            3,
            "a",
            nn.Linear(2, 2),
            lib.zeros(2, dtype=lib.float64),
            None,
        ]
    )


def test_parameter_list_registration_and_repr(real_torch):
    def scenario(lib):
        pl = _mixed_list(lib)
        plain = lib.zeros(3)
        pl.append(plain)
        return [
            repr(pl),
            [name for name, _ in pl.named_parameters()],
            list(pl.state_dict()),
            [type(p).__name__ for p in pl],
            len(pl),
            pl[-1] is plain,  # wrapped in a new Parameter
            pl[-1].requires_grad,
            pl[-2] is None,
            repr(pl[1:4]),
            type(pl[::2]).__name__,
            len(pl[::-3]),
            pl[1:3][0] is pl[1],  # slices share the entries
            repr(lib.nn.ParameterList()),
            repr(lib.nn.ParameterList([lib.zeros(())])),
            "0" in dir(pl),
            [hasattr(pl, a) for a in ("insert", "pop", "__delitem__", "__contains__")],
        ]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


def test_parameter_list_assignment_and_growth(real_torch):
    def scenario(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.zeros(1)])
        pl[0] = lib.ones(2)
        pl[-1] = lib.full((3,), 2.0)
        first = pl[0]
        pl += [lib.ones(1), nn.Parameter(lib.ones(5), requires_grad=False)]
        pl.extend((lib.zeros(2, 2),)).append(7)
        x = lib.ones(2, requires_grad=True)
        pl.append(x * 2)  # a non-leaf: detached into a leaf Parameter
        pl.weird = 3  # a plain attribute, not an entry
        pl.extra = nn.Parameter(lib.ones(1))  # registered, but not an entry
        return [
            repr(pl),
            len(pl),
            [n for n, _ in pl.named_parameters()],
            npv(first),
            [p.requires_grad for p in pl if isinstance(p, lib.Tensor)],
            pl[5].is_leaf,
            pl[5].grad_fn is None,
            pl[0] in pl,  # identity
            _error(lambda: pl.__setitem__(0, 3)),
        ]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


def test_parameter_list_errors(real_torch):
    def scenario(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.zeros(1)])
        return [
            _error(lambda: nn.ParameterList().extend(lib.zeros(2))),
            _error(lambda: nn.ParameterList().extend(3)),
            _error(lambda: nn.ParameterList(5)),
            _error(lambda: pl[1]),
            _error(lambda: pl[-2]),
            _error(lambda: pl["a"]),
            _error(lambda: pl.__setitem__(3, lib.zeros(1))),
            _error(lambda: pl(lib.zeros(1))),
            _error(lambda: nn.ParameterList([lib.arange(3)]))[0],
            len(pl),
        ]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


# ---------------------------------------------------------------------------- ParameterDict
def test_parameter_dict_order_and_repr(real_torch):
    def scenario(lib):
        nn = lib.nn
        pd = nn.ParameterDict({"b": lib.zeros(2), "a": nn.Parameter(lib.ones(3, 1)), "c": 5})
        od = nn.ParameterDict(OrderedDict([("b", lib.zeros(2)), ("a", lib.ones(1))]))
        pairs = nn.ParameterDict([("z", lib.zeros(2)), ("y", lib.ones(1, dtype=lib.float64))])
        return [
            repr(pd),
            list(pd),
            list(pd.keys()),
            [n for n, _ in pd.named_parameters()],
            list(pd.state_dict()),
            list(od),
            list(pairs),
            repr(pairs),
            list(nn.ParameterDict(od)),
            list(nn.ParameterDict(pd)),
            list(nn.ParameterDict("ab" for _ in range(1))),
            repr(nn.ParameterDict()),
            type(pd.keys()).__name__,
        ]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


def test_parameter_dict_dict_api(real_torch):
    def scenario(lib):
        nn = lib.nn
        pd = nn.ParameterDict({"b": lib.zeros(2), "a": nn.Parameter(lib.ones(3, 1)), "c": 5})
        out = [pd.popitem(), list(pd)]
        out[0] = (out[0][0], out[0][1])
        out += [pd.get("zz"), pd.get("zz", 3), pd.get("a") is pd["a"]]
        out += [type(pd.setdefault("n", lib.ones(2))).__name__, pd.setdefault("m"), list(pd)]
        fk = pd.fromkeys(["x", "y"], lib.zeros(2))
        out += [
            type(fk).__name__,
            list(fk),
            fk["x"] is fk["y"],
            [n for n, _ in fk.named_parameters()],
        ]
        out += [list(pd.fromkeys(["x"])), pd.fromkeys(["x"])["x"]]
        cp = pd.copy()
        out += [type(cp).__name__, list(cp), cp["a"] is pd["a"], list(reversed(pd))]
        out += ["a" in pd, "zz" in pd, 3 in pd, len(pd)]
        out += [sorted(type(v).__name__ for v in pd.values())]
        out += [[(k, type(v).__name__) for k, v in pd.items()]]
        a = pd.pop("a")
        out += [type(a).__name__, list(pd), [n for n, _ in pd.named_parameters()]]
        del pd["n"]
        out += [list(pd), [n for n, _ in pd.named_parameters()]]
        pd["n"] = lib.ones(1)
        out += [list(pd)]  # a re-added key goes last
        pd.clear()
        out += [len(pd), list(pd.named_parameters()), list(pd.state_dict())]
        return out

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


def test_parameter_dict_union_and_update(real_torch):
    def scenario(lib):
        nn = lib.nn
        left = nn.ParameterDict(OrderedDict([("b", lib.zeros(2)), ("a", lib.ones(1))]))
        right = nn.ParameterDict([("z", lib.zeros(2)), ("b", lib.ones(3))])
        both = left | right
        with_dict = left | {"q": lib.zeros(1), "p": lib.zeros(1)}
        dict_first = {"q": lib.zeros(1)} | left
        left |= {"x": lib.zeros(1), "w": lib.zeros(1)}
        left.update([("k", 1.5)])
        left.update(OrderedDict([("j", lib.zeros(1)), ("i", lib.zeros(1))]))
        return [
            type(both).__name__,
            list(both),
            list(both["b"].shape),
            list(with_dict),
            type(dict_first).__name__,
            list(dict_first),
            list(left),
            left["k"],
            [n for n, _ in left.named_parameters()],
        ]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


def test_parameter_dict_errors(real_torch):
    def scenario(lib):
        nn = lib.nn
        pd = nn.ParameterDict({"a": lib.zeros(1)})
        return [
            _error(lambda: nn.ParameterDict(1)),
            _error(lambda: nn.ParameterDict([1])),
            _error(lambda: nn.ParameterDict([(1, 2, 3)])),
            _error(lambda: nn.ParameterDict(["abc"])),
            _error(lambda: pd[1]),
            _error(lambda: pd.__setitem__(1, lib.zeros(1))),
            _error(lambda: pd["zz"]),
            _error(lambda: pd.pop("zz")),
            _error(lambda: pd.__delitem__("zz")),
            _error(lambda: pd.__setitem__("a.b", lib.zeros(1))),
            _error(lambda: pd.__setitem__("", lib.zeros(1))),
            _error(lambda: pd.__setitem__("a", 3)),
            _error(lambda: pd(lib.zeros(1))),
            _error(lambda: nn.ParameterDict().popitem()),
            _error(lambda: pd.fromkeys(["x"], lib.arange(2)))[0],
        ]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


# ---------------------------------------------------------------------------- with modules
def _holder(lib):
    nn = lib.nn

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.pl = nn.ParameterList([lib.zeros(2, 3), lib.zeros(3)])
            self.pd = nn.ParameterDict({"scale": lib.ones(3), "bias": lib.zeros(3)})

        def forward(self, x):
            for p in self.pl:
                x = x @ p if p.dim() == 2 else x + p
            return x * self.pd["scale"] + self.pd["bias"]

    return Holder()


def test_containers_in_a_model_train_like_pytorch(real_torch):
    ours, theirs = _holder(torch), _holder(real_torch)
    assert (
        list(ours.state_dict())
        == list(theirs.state_dict())
        == [
            "pl.0",
            "pl.1",
            "pd.bias",
            "pd.scale",
        ]
    )
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(0)
    init = {
        k: rng.standard_normal(v.shape).astype(np.float32) for k, v in ours.state_dict().items()
    }
    ours.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    theirs.load_state_dict({k: real_torch.tensor(v) for k, v in init.items()})
    x = rng.standard_normal((4, 2)).astype(np.float32)
    opts = [
        torch.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9),
        real_torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9),
    ]
    for _ in range(2):
        for lib, model, opt in ((torch, ours, opts[0]), (real_torch, theirs, opts[1])):
            opt.zero_grad()
            (model(lib.tensor(x)) ** 2).sum().backward()
            opt.step()
    for (k, a), (k2, b) in zip(ours.state_dict().items(), theirs.state_dict().items(), strict=True):
        assert k == k2
        np.testing.assert_allclose(npv(a), b.numpy(), rtol=1e-5, atol=1e-6)
    ours.zero_grad()
    assert all(p.grad is None for p in ours.parameters())
    ours.to(torch.float64)
    assert [p.dtype for p in ours.pl] + [p.dtype for p in ours.pd.values()] == [torch.float64] * 4
    assert all(isinstance(p, torch.nn.Parameter) for p in ours.pl)


def test_containers_copy_and_pickle():
    nn = torch.nn
    model = nn.ModuleDict(
        {
            "pl": nn.ParameterList([torch.zeros(2, 3), torch.zeros(3)]),
            "pd": nn.ParameterDict({"scale": torch.ones(3), "bias": torch.zeros(3)}),
        }
    )
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert list(clone.state_dict()) == list(model.state_dict())
        assert len(clone["pl"]) == 2 and list(clone["pd"]) == ["bias", "scale"]
        assert clone["pl"][0] is not model["pl"][0]
        assert isinstance(clone["pl"][1], nn.Parameter)
        np.testing.assert_array_equal(npv(clone["pd"]["scale"]), npv(model["pd"]["scale"]))


# ---------------------------------------------------------------------------- Buffer
def test_buffer_registers_itself(real_torch):
    def scenario(lib):
        nn = lib.nn
        m = nn.Module()
        b = nn.Buffer(lib.ones(2), persistent=False)
        out = [type(b).__name__, b.persistent, isinstance(b, nn.Buffer)]
        out += [
            isinstance(lib.ones(1), nn.Buffer),
            isinstance(nn.Parameter(lib.ones(1)), nn.Buffer),
        ]
        m.a = nn.Buffer(lib.zeros(3))
        m.b = b
        out += [list(m.state_dict()), [n for n, _ in m.named_buffers()], m.b is b]
        out += [sorted(m._non_persistent_buffers_set), list(m.parameters())]
        m.b = nn.Buffer(lib.ones(2))  # persistent now
        out += [list(m.state_dict())]
        m.c = nn.Buffer(lib.ones(2), persistent=False)
        m.c = lib.zeros(1)  # a plain tensor keeps the buffer's persistence
        out += [sorted(m._non_persistent_buffers_set), npv(m.c)]
        m.x = 3
        m.p = nn.Parameter(lib.ones(1))
        m.lin = nn.Linear(1, 1)
        out += [_error(lambda: setattr(m, "x", nn.Buffer(lib.ones(1))))]
        out += [_error(lambda: setattr(m, "p", nn.Buffer(lib.ones(1))))[0]]
        out += [_error(lambda: setattr(m, "lin", nn.Buffer(lib.ones(1))))[0]]
        out += [_error(lambda: nn.Buffer(lib.ones(1), False))[0]]
        out += [_error(lambda: nn.Buffer([1.0]))]
        out += [list(nn.Buffer().shape), nn.Buffer(lib.ones(1, requires_grad=True)).requires_grad]
        t = lib.ones(2)
        out += [nn.Buffer(t) is t]
        m.to(lib.float64)
        out += [m.a.dtype == lib.float64, repr(nn.Buffer(lib.ones(2)))]
        return out

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


def test_buffer_before_init_and_sharing():
    class Early(torch.nn.Module):
        def __init__(self):
            self.buf = torch.nn.Buffer(torch.zeros(1))

    with pytest.raises(AttributeError, match=r"before Module\.__init__"):
        Early()
    t = torch.arange(3.0)
    buf = torch.nn.Buffer(t)
    with torch.no_grad():
        buf.add_(1.0)
    np.testing.assert_array_equal(npv(t), [1.0, 2.0, 3.0])  # an alias of ``data``


# ---------------------------------------------------------------------------- in-place aliases
_ALIASES = [
    ("relu_", (), {}),
    ("elu_", (0.7,), {}),
    ("elu_", (), {"alpha": 0.5}),
    ("celu_", (1.3,), {}),
    ("selu_", (), {}),
    ("leaky_relu_", (), {"negative_slope": 0.2}),
    ("hardtanh_", (-0.5,), {"max_val": 0.25}),
    ("rrelu_", (0.1, 0.3), {}),
    ("threshold_", (0.1,), {"value": 2.0}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), _ALIASES)
def test_inplace_aliases_match_pytorch(real_torch, name, args, kwargs):
    values = np.array([[-2.0, -0.5, 0.0], [0.05, 0.3, 1.7]], np.float32)

    def scenario(lib):
        x = lib.tensor(values, requires_grad=True)
        y = x * 1.5
        out = getattr(lib.nn.functional, name)(y, *args, **kwargs)
        (out * lib.arange(6.0).reshape(2, 3)).sum().backward()
        return [out is y, out.grad_fn.name(), npv(out), npv(x.grad), y._version]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


@pytest.mark.parametrize(("name", "args", "kwargs"), _ALIASES)
def test_inplace_aliases_errors(real_torch, name, args, kwargs):
    def scenario(lib):
        F = lib.nn.functional
        leaf = lib.ones(3, requires_grad=True)
        return [
            _error(lambda: getattr(F, name)(leaf, *args, **kwargs)),
            _error(lambda: getattr(F, name)(lib.ones(3), *args, inplace=True, **kwargs))[0],
            _error(lambda: getattr(F, name)([1.0], *args, **kwargs))[0],
        ]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)
    assert "a leaf Variable that requires grad" in ours[0][1]


def test_inplace_alias_dtypes(real_torch):
    def scenario(lib):
        F = lib.nn.functional
        ints = lib.arange(-2, 3)
        return [
            npv(F.relu_(ints.clone())),
            npv(F.hardtanh_(ints.clone())),
            npv(F.threshold_(ints.clone(), 0, 7)),
            _error(lambda: F.elu_(ints.clone()))[0],
            _error(lambda: F.leaky_relu_(ints.clone()))[0],
            npv(F.selu_(lib.tensor([-1.0, 2.0], dtype=lib.float64))),
        ]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


def test_rrelu_inplace_training_follows_the_seed(real_torch):
    values = np.linspace(-3.0, 2.0, 12).astype(np.float32).reshape(3, 4)

    def scenario(lib):
        lib.manual_seed(7)
        x = lib.tensor(values, requires_grad=True)
        y = x + 0.0
        out = lib.nn.functional.rrelu_(y, 0.1, 0.4, True)
        out.sum().backward()
        return [out.grad_fn.name(), npv(out), npv(x.grad)]

    ours, theirs = _both(real_torch, scenario)
    _assert_same(ours, theirs)


# ---------------------------------------------------------------------------- gumbel_softmax
def _gumbel(lib, logits, weights, seed, **kwargs):
    lib.manual_seed(seed)
    x = lib.tensor(logits, requires_grad=True)
    out = lib.nn.functional.gumbel_softmax(x, **kwargs)
    (out * lib.tensor(weights)).sum().backward()
    return [out.grad_fn.name(), npv(out), npv(x.grad)]


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize(("tau", "dim", "dtype"), [(1.0, -1, "float32"), (0.3, 0, "float64")])
def test_gumbel_softmax_matches_pytorch_for_a_seed(real_torch, hard, tau, dim, dtype):
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((4, 6)).astype(dtype)
    weights = rng.standard_normal((4, 6)).astype(dtype)
    kwargs = {"tau": tau, "hard": hard, "dim": dim}
    ours = _gumbel(torch, logits, weights, 11, **kwargs)
    theirs = _gumbel(real_torch, logits, weights, 11, **kwargs)
    _assert_same(ours, theirs)
    assert ours[0] == ("AddBackward0" if hard else "SoftmaxBackward0")
    if hard:  # a one-hot sample, exactly
        np.testing.assert_array_equal(ours[1], theirs[1])
        assert set(np.unique(ours[1])) <= {0.0, 1.0}
        np.testing.assert_array_equal(ours[1].sum(axis=dim), 1.0)


@settings(max_examples=8, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    seed=st.integers(0, 2**16),
    hard=st.booleans(),
)
def test_gumbel_softmax_shapes(shape, seed, hard):
    real_torch = import_real_torch()  # hypothesis tests cannot take the fixture

    rng = np.random.default_rng(seed)
    logits = rng.standard_normal(shape).astype(np.float32)
    weights = rng.standard_normal(shape).astype(np.float32)
    ours = _gumbel(torch, logits, weights, seed, hard=hard, dim=len(shape) - 1)
    theirs = _gumbel(real_torch, logits, weights, seed, hard=hard, dim=len(shape) - 1)
    _assert_same(ours, theirs)


def test_gumbel_softmax_eps_is_deprecated(real_torch):
    for lib in (torch, real_torch):
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
            lib.nn.functional.gumbel_softmax(lib.zeros(2, 3), eps=1e-5)
