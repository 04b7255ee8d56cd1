"""``Module.state_dict``/``load_state_dict`` against PyTorch 2.13: ``_metadata`` (each
module's version by prefix), the state-dict and load hooks (order, arguments, results),
extra state, ``BatchNorm``'s version-1 checkpoints, PyTorch's ``_load_from_state_dict``
signature in a user override, ``consume_prefix_in_state_dict_if_present``, and no
reference cycle left by loading."""

from __future__ import annotations

import copy
import gc
import pickle
from typing import Any

import numpy as np
import pytest

import compat.torch as ctorch

torch = pytest.importorskip("torch")

LIBS = [ctorch, torch]


def _net(lib: Any) -> Any:
    block = lib.nn.Module()
    block.conv = lib.nn.Conv2d(3, 3, 3, bias=False)
    net = lib.nn.Module()
    net.linear1 = lib.nn.Linear(5, 5)
    net.linear2 = net.linear1
    net.bn = lib.nn.BatchNorm2d(2)
    net.block = block
    net.add_module("empty", None)
    return net


def test_metadata_by_prefix() -> None:
    ours, theirs = _net(ctorch).state_dict(), _net(torch).state_dict()
    assert list(ours) == list(theirs)
    assert dict(ours._metadata) == dict(theirs._metadata)
    assert not hasattr(ctorch.nn.Linear(2, 2).state_dict(destination={}), "_metadata")
    dest = ctorch.nn.Linear(2, 2).state_dict(prefix="p.")
    assert list(dest._metadata) == ["p"]


def test_metadata_survives_deepcopy_and_pickle() -> None:
    sd = ctorch.nn.BatchNorm1d(3).state_dict()
    for other in (copy.deepcopy(sd), pickle.loads(pickle.dumps(sd))):
        assert dict(other._metadata) == {"": {"version": 2}}


def _record(lib: Any) -> list:
    """The calls of every kind of hook on a two-level model, in order."""
    calls: list = []
    model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.Linear(2, 1)))
    sub = model[1]

    def pre(module: Any, prefix: str, keep_vars: bool) -> None:
        calls.append(("pre", type(module).__name__, prefix, keep_vars))

    def post(module: Any, state_dict: Any, prefix: str, local_metadata: dict) -> None:
        calls.append(("post", prefix, sorted(state_dict), dict(local_metadata)))

    def load_pre(module: Any, sd: Any, prefix: str, meta: dict, strict: bool, *lists: Any) -> None:
        calls.append(("load_pre", prefix, sorted(sd), meta.get("version"), strict))

    def load_post(module: Any, keys: Any) -> None:
        calls.append(("load_post", type(module).__name__, list(keys.missing_keys)))

    for m in (model, sub):
        m.register_state_dict_pre_hook(pre)
        m.register_state_dict_post_hook(post)
        m.register_load_state_dict_pre_hook(load_pre)
        m.register_load_state_dict_post_hook(load_post)
    sd = model.state_dict(prefix="x.", keep_vars=True)
    calls.append(sorted(sd))
    sd = model.state_dict()
    del sd["0.bias"]
    model.load_state_dict(sd, strict=False)
    return calls


def test_hook_calls_match_pytorch() -> None:
    assert _record(ctorch) == _record(torch)


@pytest.mark.parametrize("lib", LIBS, ids=["compat", "torch"])
def test_post_hook_results(lib: Any) -> None:
    m = lib.nn.Linear(2, 2)
    m._register_state_dict_hook(lambda mod, sd, prefix, meta: {"replaced": 1})
    assert m.state_dict() == {"replaced": 1}
    m = lib.nn.Linear(2, 2)
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: {"replaced": 1})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m.state_dict()
    m = lib.nn.Linear(2, 2)
    m.register_load_state_dict_post_hook(lambda mod, keys: keys.unexpected_keys.clear())
    sd = m.state_dict()
    sd["extra"] = lib.ones(1)
    m.load_state_dict(sd)  # the hook cleared the unexpected key: strict passes


def test_private_load_pre_hook_without_module() -> None:
    seen = {}
    for lib in LIBS:
        m = lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.Linear(1, 1))
        m[1]._register_load_state_dict_pre_hook(
            lambda sd, prefix, *rest, lib=lib: seen.setdefault(lib.__name__, (prefix, sorted(sd)))
        )
        m.load_state_dict(m.state_dict())
    assert seen["compat.torch"] == seen["torch"] == ("1.", ["1.bias", "1.weight"])


class _Extra:
    @staticmethod
    def make(lib: Any, get: bool, set_: bool, value: Any) -> Any:
        attrs: dict = {}
        if get:
            attrs["get_extra_state"] = lambda self: self.foo
        if set_:
            attrs["set_extra_state"] = lambda self, state: setattr(self, "foo", state)
        cls = type("WithExtra", (lib.nn.Module,), attrs)
        m = cls()
        m.foo = value
        m.lin = lib.nn.Linear(1, 1)
        return m


@pytest.mark.parametrize("get,set_", [(True, True), (True, False), (False, True)])
def test_extra_state(get: bool, set_: bool) -> None:
    results = []
    for lib in LIBS:
        src, dst = _Extra.make(lib, get, set_, {"a": 1}), _Extra.make(lib, get, set_, "other")
        sd = src.state_dict()
        try:
            dst.load_state_dict(sd)
            outcome = ("ok", dst.foo)
        except RuntimeError as e:
            outcome = ("error", str(e).split(":")[1].strip())
        results.append((sorted(sd), outcome))
    assert results[0] == results[1]


def test_batchnorm_version_1_checkpoint() -> None:
    for lib in LIBS:
        bn = lib.nn.BatchNorm2d(3)
        with lib.no_grad():
            bn.num_batches_tracked.fill_(5)
        sd = bn.state_dict()
        del sd["num_batches_tracked"]
        sd._metadata[""]["version"] = 1
        bn.load_state_dict(sd)  # version < 2: the key may be missing
        assert bn.num_batches_tracked.item() == 5
        sd._metadata[""]["version"] = 2
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches'):
            bn.load_state_dict(sd)
        del sd._metadata[""]["version"]
        lib.nn.BatchNorm2d(3).load_state_dict(sd)


def test_user_load_from_state_dict_override() -> None:
    """A module overriding ``_load_from_state_dict``/``_save_to_state_dict`` with
    PyTorch's signatures."""
    out = []
    for lib in LIBS:

        class Custom(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.param = lib.nn.Parameter(lib.ones(1))
                self.sub = lib.nn.Linear(2, 2)

            def _save_to_state_dict(self, destination: Any, prefix: str, keep_vars: bool) -> None:
                destination[prefix + "serialized"] = self.param.data + 1

            def _load_from_state_dict(
                self, sd: Any, prefix: str, meta: dict, strict: bool, *lists: Any
            ) -> None:
                self.param.data.copy_(sd[prefix + "serialized"] - 1)
                out.append((prefix, meta.get("version"), strict))

        m = lib.nn.Sequential(Custom())
        with lib.no_grad():
            m[0].param[0] = 10
        sd = m.state_dict()
        fresh = lib.nn.Sequential(Custom())
        fresh.load_state_dict(sd)
        out.append((sorted(sd), fresh[0].param.item()))
    assert out[:2] == out[2:]


def test_consume_prefix() -> None:
    dicts = []
    for lib in LIBS:
        model = lib.nn.Sequential(lib.nn.Linear(2, 2))
        wrapper = lib.nn.Module()
        wrapper.module = model
        sd = wrapper.state_dict()
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        model.load_state_dict(sd)
        dicts.append((list(sd), dict(sd._metadata)))
    assert dicts[0] == dicts[1]


def test_assign_keeps_the_loaded_parameters() -> None:
    m = ctorch.nn.Linear(3, 2)
    sd = {"weight": ctorch.nn.Parameter(ctorch.ones(2, 3)), "bias": ctorch.zeros(2)}
    m.load_state_dict(sd, assign=True)
    assert m.weight is sd["weight"]
    np.testing.assert_array_equal(m.bias.detach().numpy(), np.zeros(2))
    assert isinstance(m.bias, ctorch.nn.Parameter)


def test_unpickled_old_module_gets_hook_registries() -> None:
    m = ctorch.nn.Linear(1, 1)
    for name in ("_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks"):
        delattr(m, name)
    m = pickle.loads(pickle.dumps(m))
    called = []
    m.register_state_dict_pre_hook(lambda *a: called.append(1))
    m.state_dict()
    assert called == [1]


def test_loading_leaves_no_reference_cycle() -> None:
    m = ctorch.nn.LSTM(4, 4, bidirectional=True)
    sd = copy.deepcopy(m).state_dict()
    gc.collect()
    m.load_state_dict(sd)
    assert gc.collect() == 0
