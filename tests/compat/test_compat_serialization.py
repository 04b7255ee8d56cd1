"""``torch.save`` / ``torch.load``: files written by real PyTorch load in compat and
compat's files load in real PyTorch (values, dtypes, shapes, ``requires_grad``,
Parameters, containers, plain objects), ``weights_only`` and ``map_location``."""

from __future__ import annotations

import io
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import compat.torch as ctorch
from compat._core import device as _dev


class Point:
    """A plain user class (not allow-listed for ``weights_only`` loads)."""

    def __init__(self, x: int) -> None:
        self.x = x


_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _payload(T):
    """The same nested object built with either library."""
    tensors = {
        name: T.tensor(np.arange(6).reshape(2, 3) % 2 if name == "bool" else np.arange(6) - 2)
        .reshape(2, 3)
        .to(getattr(T, name))
        for name in _DTYPES
    }
    tensors["complex64"] = T.tensor([1 + 2j, -0.5j])
    return {
        "tensors": tensors,
        "scalar": T.tensor(2.5),
        "empty": T.zeros(0, 3),
        "grad": T.tensor([1.0, 2.0], requires_grad=True),
        "param": T.nn.Parameter(T.ones(2, 2)),
        "frozen": T.nn.Parameter(T.zeros(3), requires_grad=False),
        "meta": [T.Size([2, 3]), T.float64, T.device("cpu"), (1, "a", None, 2.5), {3, 4}],
        "plain": {"epoch": 7, "name": "run", "hist": [0.5, 0.25]},
    }


def _same(ours, theirs):
    """Recursively compare a compat object with a PyTorch one."""
    if hasattr(theirs, "numpy") and hasattr(theirs, "requires_grad"):
        assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
        assert str(ours.dtype) == str(theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert ours.requires_grad == theirs.requires_grad
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs)
        for k in theirs:
            _same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)) and type(theirs).__name__ != "Size":
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    elif type(theirs).__name__ in ("Size", "dtype", "device"):
        assert type(ours).__name__ == type(theirs).__name__ and repr(ours) == repr(theirs)
    else:
        assert ours == theirs


def test_pytorch_file_loads_in_compat(tmp_path, real_torch):
    obj = _payload(real_torch)
    real_torch.save(obj, tmp_path / "t.pt")
    _same(ctorch.load(tmp_path / "t.pt"), obj)


def test_compat_file_loads_in_pytorch(tmp_path, real_torch):
    obj = _payload(ctorch)
    ctorch.save(obj, tmp_path / "c.pt")
    _same(obj, real_torch.load(tmp_path / "c.pt"))
    _same(ctorch.load(tmp_path / "c.pt"), _payload(real_torch))


def test_views_and_shared_storage_from_pytorch(tmp_path, real_torch):
    base = real_torch.arange(24.0).reshape(4, 6)
    obj = {"base": base, "t": base.t(), "step": base[1::2, ::3], "row": base[2], "same": base}
    real_torch.save(obj, tmp_path / "v.pt")
    out = ctorch.load(tmp_path / "v.pt")
    _same(out, obj)
    out["row"].add_(1)  # storages are not shared in compat (documented)
    assert out["base"][2, 0].item() == 12.0


def test_model_and_optimizer_state_dicts_both_ways(tmp_path, real_torch):
    def build(T):
        T.manual_seed(0)
        m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Linear(4, 2))
        opt = T.optim.Adam(m.parameters(), lr=0.01)
        m(T.ones(5, 3)).sum().backward()
        opt.step()
        return m, opt

    tm, topt = build(real_torch)
    real_torch.save({"model": tm.state_dict(), "opt": topt.state_dict()}, tmp_path / "t.pt")
    ck = ctorch.load(tmp_path / "t.pt")
    _same(ck, {"model": tm.state_dict(), "opt": topt.state_dict()})
    cm, copt = build(ctorch)
    cm.load_state_dict(ck["model"])
    copt.load_state_dict(ck["opt"])
    x = np.linspace(-1, 1, 15).reshape(5, 3).astype(np.float32)
    cm.eval(), tm.eval()
    np.testing.assert_allclose(
        cm(ctorch.tensor(x)).detach().numpy(),
        tm(real_torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-6,
    )
    # and back: compat's state dicts load into PyTorch's model and optimizer
    ctorch.save({"model": cm.state_dict(), "opt": copt.state_dict()}, tmp_path / "c.pt")
    back = real_torch.load(tmp_path / "c.pt")
    tm2, topt2 = build(real_torch)
    tm2.load_state_dict(back["model"])
    topt2.load_state_dict(back["opt"])
    for k, v in tm.state_dict().items():
        assert real_torch.equal(v, tm2.state_dict()[k])


@pytest.mark.parametrize("direction", ["torch->compat", "compat->torch"])
def test_file_objects_and_bytesio(tmp_path, real_torch, direction):
    saver, loader = (real_torch, ctorch) if direction == "torch->compat" else (ctorch, real_torch)
    x = saver.arange(5, dtype=saver.float64)
    buf = io.BytesIO()
    saver.save({"x": x}, buf)
    buf.seek(0)
    np.testing.assert_array_equal(loader.load(buf)["x"].numpy(), x.numpy())
    with open(tmp_path / "f.pt", "wb") as f:
        saver.save([x, 3], f)
    with open(tmp_path / "f.pt", "rb") as f:
        got = loader.load(f)
    assert got[1] == 3 and str(got[0].dtype) == "torch.float64"


@pytest.mark.parametrize("saver_name", ["torch", "compat"])
def test_weights_only(tmp_path, real_torch, saver_name):
    saver = real_torch if saver_name == "torch" else ctorch
    saver.save({"p": Point(3), "w": saver.ones(2)}, tmp_path / "p.pt")
    for loader in (ctorch, real_torch):
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            loader.load(tmp_path / "p.pt")
        assert loader.load(tmp_path / "p.pt", weights_only=False)["p"].x == 3
        with loader.serialization.safe_globals([Point]):
            assert loader.load(tmp_path / "p.pt")["p"].x == 3
        with pytest.raises(pickle.UnpicklingError):
            loader.load(tmp_path / "p.pt")


def test_add_safe_globals(tmp_path):
    ctorch.save(Point(5), tmp_path / "p.pt")
    before = ctorch.serialization.get_safe_globals()
    try:
        ctorch.serialization.add_safe_globals([Point])
        assert ctorch.load(tmp_path / "p.pt").x == 5
    finally:
        ctorch.serialization.clear_safe_globals()
        ctorch.serialization.add_safe_globals(before)


@pytest.mark.parametrize(
    "map_location",
    ["cpu", "device", {"cpu": "cpu"}, "callable", "callable_none"],
)
def test_map_location(tmp_path, lib, map_location):
    lib.save({"w": lib.arange(3.0)}, tmp_path / "m.pt")
    loc = (
        {
            "device": lib.device("cpu"),
            "callable": lambda storage, location: storage,
            "callable_none": lambda storage, location: None,
        }.get(map_location, map_location)
        if isinstance(map_location, str)
        else map_location
    )
    out = lib.load(tmp_path / "m.pt", map_location=loc)
    assert out["w"].tolist() == [0.0, 1.0, 2.0] and str(out["w"].device) == "cpu"


@pytest.mark.skipif(bool(_dev.gpus()), reason="checks the CPU-only error")
def test_map_location_cuda_without_gpu(tmp_path, lib):
    lib.save(lib.ones(2), tmp_path / "m.pt")
    with pytest.raises(RuntimeError, match=r"deserialize object on a CUDA device"):
        lib.load(tmp_path / "m.pt", map_location="cuda")


def test_pytorch_parameter_subclass_state_and_pickle_module(tmp_path, real_torch):
    p = real_torch.nn.Parameter(real_torch.ones(2))
    p.tag = "w"  # a Parameter with state pickles through _rebuild_parameter_with_state
    real_torch.save(OrderedDict(p=p), tmp_path / "s.pt")
    out = ctorch.load(tmp_path / "s.pt")
    assert isinstance(out["p"], ctorch.nn.Parameter) and out["p"].tag == "w"
    assert ctorch.load(tmp_path / "s.pt", pickle_module=pickle)["p"].requires_grad
    with pytest.raises(RuntimeError):
        ctorch.load(tmp_path / "s.pt", pickle_module=pickle, weights_only=True)
    with pytest.raises(RuntimeError):
        real_torch.load(tmp_path / "s.pt", pickle_module=pickle, weights_only=True)


def test_unsupported_arguments_raise(tmp_path):
    with pytest.raises(NotImplementedError, match="_use_new_zipfile_serialization"):
        ctorch.save(ctorch.ones(1), tmp_path / "x.pt", _use_new_zipfile_serialization=False)
    ctorch.save(ctorch.ones(1), tmp_path / "x.pt")
    with pytest.raises(NotImplementedError, match="mmap"):
        ctorch.load(tmp_path / "x.pt", mmap=True)
    (tmp_path / "legacy.pt").write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(NotImplementedError, match="zip format"):
        ctorch.load(tmp_path / "legacy.pt")


def test_whole_module_with_weights_only_false(tmp_path, real_torch):
    tm = real_torch.nn.Linear(2, 3)
    real_torch.save(tm, tmp_path / "m.pt")
    cm = ctorch.load(tmp_path / "m.pt", weights_only=False)  # torch classes -> compat's
    assert isinstance(cm, ctorch.nn.Linear)
    x = np.array([[0.5, -1.0]], np.float32)
    np.testing.assert_allclose(
        cm(ctorch.tensor(x)).detach().numpy(),
        tm(real_torch.tensor(x)).detach().numpy(),
        rtol=1e-6,
    )
    with pytest.raises(pickle.UnpicklingError):
        ctorch.load(tmp_path / "m.pt")
