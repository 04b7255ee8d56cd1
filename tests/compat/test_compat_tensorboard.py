"""``compat.torch.utils.tensorboard.SummaryWriter`` against real PyTorch's: the same calls
write into two directories, and the event files read back must hold the same events
(wall times aside), run directories, tags, steps, values, histogram buckets, text, PNG
images and hparams records; bad input raises PyTorch's exception types."""

from __future__ import annotations

import importlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tensorboard.backend.event_processing import event_accumulator, event_file_loader
from torch_oracle import import_real_torch

import compat.torch as ctorch
from compat.torch.utils.tensorboard import FileWriter, RecordWriter, SummaryWriter

ROOT = Path(__file__).resolve().parents[2]


def _events(logdir: Path) -> dict[str, list]:
    """Every event file under ``logdir``, by directory relative to it: its events in
    order with the wall time zeroed (the one field two runs cannot share)."""
    runs: dict[str, list] = {}
    for path in sorted(logdir.rglob("events.out.tfevents.*")):
        rel = path.parent.relative_to(logdir).as_posix().removeprefix(".")
        assert rel not in runs, f"two event files in {rel}"
        events = []
        for ev in event_file_loader.LegacyEventFileLoader(str(path)).Load():
            ev.wall_time = 0.0
            events.append(ev)
        runs[rel] = events
    return runs


def _both(real_torch, tmp_path: Path, scenario) -> tuple[dict, dict]:
    """Run ``scenario(torch_module, SummaryWriter, logdir)`` with compat and with PyTorch;
    their events by run directory, checked equal."""
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    out = {}
    for name, mod, cls in (("compat", ctorch, SummaryWriter), ("torch", real_torch, TorchWriter)):
        logdir = tmp_path / name
        scenario(mod, cls, logdir)
        out[name] = _events(logdir)
    assert sorted(out["compat"]) == sorted(out["torch"])
    for run in out["torch"]:
        assert out["compat"][run] == out["torch"][run], run
    return out["compat"], out["torch"]


def _values(events: list) -> list[tuple[int, str, object]]:
    """(step, tag, summary value) of the summary events."""
    return [
        (ev.step, v.tag, v) for ev in events if ev.HasField("summary") for v in ev.summary.value
    ]


def test_scalars_match_pytorch(real_torch, tmp_path):
    def scenario(T, W, logdir):
        with W(logdir) as w:
            w.add_scalar("py/float", 0.1, 0)
            w.add_scalar("py/int", 3, 1)
            w.add_scalar("np/float32", np.float32(1.5), np.int64(2))
            w.add_scalar("np/0d", np.array(2.25), 3)
            w.add_scalar("t/0d", T.tensor(0.3), 4)
            w.add_scalar("t/1x1", T.tensor([[7.0]], dtype=T.float64), 5)
            w.add_scalar("t/int", T.tensor(9), 6)
            w.add_scalar("t/bf16", T.tensor(1.0078125, dtype=T.bfloat16), 7)
            w.add_scalar("new", T.tensor(0.1), 8, new_style=True)
            w.add_scalar("new64", 0.1, 9, new_style=True, double_precision=True)
            w.add_scalar("wall", 1.0, 10, walltime=123.5)
            w.add_scalar("nostep", 2.0)

    ours, _ = _both(real_torch, tmp_path, scenario)
    values = _values(ours[""])
    assert [(s, t) for s, t, _ in values][:3] == [(0, "py/float"), (1, "py/int"), (2, "np/float32")]
    assert values[0][2].simple_value == np.float32(0.1)
    assert values[8][2].tensor.float_val == [np.float32(0.1)]
    assert values[9][2].tensor.double_val == [0.1]


def test_grad_tensors_and_accumulator_view(real_torch, tmp_path):
    """Tensors requiring grad are detached; TensorBoard's own reader sees PyTorch's data."""
    rng = np.random.default_rng(0)
    # quarters: the loss below is exact in float32 whatever order either library sums in
    data = (rng.integers(-8, 8, size=(4, 5)) / 4).astype(np.float32)

    def scenario(T, W, logdir):
        x = T.tensor(data, requires_grad=True)
        with W(logdir) as w:
            for step in range(3):
                y = x * (step + 1)
                w.add_scalar("loss", (y**2).mean(), step)
                w.add_histogram("y", y, step)

    _both(real_torch, tmp_path, scenario)
    accs = []
    for name in ("compat", "torch"):
        acc = event_accumulator.EventAccumulator(
            str(tmp_path / name), size_guidance={"scalars": 0, "histograms": 0}
        )
        acc.Reload()
        accs.append(acc)
    ours, theirs = accs
    assert ours.Tags()["scalars"] == theirs.Tags()["scalars"] == ["loss"]
    assert ours.Tags()["histograms"] == ["y"]
    assert [(e.step, e.value) for e in ours.Scalars("loss")] == [
        (e.step, e.value) for e in theirs.Scalars("loss")
    ]
    assert ours.Scalars("loss")[2].value == np.float32(((data * 3) ** 2).mean())
    h_ours, h_theirs = (
        ours.Histograms("y")[1].histogram_value,
        theirs.Histograms("y")[1].histogram_value,
    )
    assert h_ours == h_theirs
    assert (h_ours.min, h_ours.max, h_ours.num) == (
        float((data * 2).min()),
        float((data * 2).max()),
        20,
    )


def test_histograms_match_pytorch(real_torch, tmp_path):
    rng = np.random.default_rng(1)
    normal = rng.normal(size=1000)
    ints = rng.integers(-5, 5, size=(10, 10))

    def scenario(T, W, logdir):
        with W(logdir) as w:
            w.add_histogram("tf", T.tensor(normal, dtype=T.float32), 0)
            w.add_histogram("tf_maxbins", normal, 1, max_bins=7)
            w.add_histogram("auto", T.tensor(normal), 2, bins="auto")
            w.add_histogram("fd", normal, 3, bins="fd")
            w.add_histogram("count", T.tensor(ints), 4, bins=10)
            w.add_histogram("count_maxbins", ints, 5, bins=30, max_bins=4)
            w.add_histogram("edges", normal, 6, bins=[-1.0, 0.0, 0.5, 3.0])
            w.add_histogram("const", T.ones(3, 3), 7)
            w.add_histogram("scalar", 2.5, 8)
            w.add_histogram("bf16", T.tensor([0.5, 1.0, -2.0], dtype=T.bfloat16), 9)
            w.add_histogram_raw("raw", -1.0, 2.0, 3, 1.0, 5.0, [0.0, 1.0, 2.0], [1, 1, 1], 10)

    ours, _ = _both(real_torch, tmp_path, scenario)
    hist = _values(ours[""])[0][2].histo
    assert hist.num == 1000 and hist.sum_squares == pytest.approx(
        float(normal.astype(np.float32).astype(float) @ normal.astype(np.float32).astype(float))
    )
    assert hist.bucket[0] == 0 and len(hist.bucket) == len(hist.bucket_limit)


@settings(max_examples=10, deadline=None)
@given(
    values=hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=1, max_dims=2, max_side=6),
        elements=st.floats(-1e6, 1e6, width=32),
    ),
    bins=st.sampled_from(["tensorflow", "auto", 5]),
)
def test_hypothesis_values_match_pytorch(values, bins):
    real = import_real_torch()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    with tempfile.TemporaryDirectory() as tmp:
        for name, T, W in (("compat", ctorch, SummaryWriter), ("torch", real, TorchWriter)):
            with W(os.path.join(tmp, name)) as w:
                w.add_scalar("first", T.tensor(values.reshape(-1)[:1]), 0)
                w.add_histogram("h", T.tensor(values), 0, bins=bins)
        ours, theirs = _events(Path(tmp, "compat")), _events(Path(tmp, "torch"))
    assert ours == theirs
    assert _values(ours[""])[0][2].simple_value == values.reshape(-1)[0]


def test_text_images_figures_match_pytorch(real_torch, tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    rng = np.random.default_rng(2)
    chw = rng.random((3, 6, 5), dtype=np.float32)
    hwc8 = rng.integers(0, 256, (4, 7, 3), dtype=np.uint8)
    gray = rng.random((5, 4)) * 2 - 0.5  # out of [0, 1]: clipped
    batch = rng.random((5, 1, 4, 3), dtype=np.float32)
    rgba = rng.random((4, 3, 2), dtype=np.float32)

    def scenario(T, W, logdir):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        def figure(k):
            fig = plt.figure(figsize=(1.0, 0.8), dpi=20)
            plt.plot([0, 1, 2], [0, k, 1])
            return fig

        with W(logdir) as w:
            w.add_text("note", "hello **markdown** ü", 0)
            w.add_image("chw", T.tensor(chw, requires_grad=True), 1)
            w.add_image("hwc_uint8", T.tensor(hwc8), 2, dataformats="HWC")
            w.add_image("gray", gray, 3, dataformats="HW")
            w.add_image("rgba", T.tensor(rgba), 4)
            w.add_images("batch", T.tensor(batch), 5)
            w.add_images("batch_nhwc", batch.transpose(0, 2, 3, 1), 6, dataformats="NHWC")
            w.add_figure("fig", figure(1), 7)
            w.add_figure("figs", [figure(1), figure(2)], 8)

    ours, _ = _both(real_torch, tmp_path, scenario)
    values = {tag: v for _, tag, v in _values(ours[""])}
    assert values["note/text_summary"].tensor.string_val == ["hello **markdown** ü".encode()]

    def decoded(tag):
        img = values[tag].image
        arr = np.asarray(Image.open(io.BytesIO(img.encoded_image_string)))
        assert arr.shape == (img.height, img.width, img.colorspace)
        return arr

    np.testing.assert_array_equal(decoded("chw"), (chw.transpose(1, 2, 0) * 255).astype(np.uint8))
    np.testing.assert_array_equal(decoded("hwc_uint8"), hwc8)
    assert decoded("gray").shape == (5, 4, 3)
    assert decoded("rgba").shape == (3, 2, 4)
    assert decoded("batch").shape == (4, 15, 3)  # one row of five 4x3 tiles
    assert decoded("figs").shape[1] == 2 * decoded("fig").shape[1]


def test_hparams_match_pytorch(real_torch, tmp_path):
    def scenario(T, W, logdir):
        with W(logdir) as w:
            w.add_hparams(
                {
                    "lr": 0.1,
                    "bs": 32,
                    "opt": "adam",
                    "flag": True,
                    "skip": None,
                    "t": T.tensor([0.5]),
                },
                {"hparam/acc": 0.9, "hparam/loss": T.tensor(0.25)},
                hparam_domain_discrete={"opt": ["adam", "sgd"], "bs": [16, 32]},
                run_name="run0",
                global_step=3,
            )
            w.add_hparams({"lr": 0.2}, {"hparam/acc": 0.8}, run_name="run1")

    ours, _ = _both(real_torch, tmp_path, scenario)
    assert sorted(ours) == ["", "run0", "run1"]
    tags = [t for _, t, _ in _values(ours["run0"])]
    assert tags == [
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
        "hparam/acc",
        "hparam/loss",
    ]
    from tensorboard.plugins.hparams import plugin_data_pb2

    start = plugin_data_pb2.HParamsPluginData.FromString(
        _values(ours["run0"])[1][2].metadata.plugin_data.content
    )
    hp = start.session_start_info.hparams
    assert hp["flag"].number_value == 1.0  # a bool is logged as a number, as PyTorch does
    assert hp["opt"].string_value == "adam" and "skip" not in hp


def test_add_scalars_purge_reopen_match_pytorch(real_torch, tmp_path):
    def scenario(T, W, logdir):
        w = W(logdir, purge_step=5, filename_suffix=".x")
        assert w.get_logdir() == logdir
        for step in range(3):
            w.add_scalars(
                "loss/parts", {"train": T.tensor(1.0 / (step + 1)), "val": step * 0.5}, step
            )
        w.add_scalars("loss/parts", {"test": 2.0}, 9, walltime=5.0)
        w.flush()
        w.close()
        w.close()  # a second close does nothing

    ours, _ = _both(real_torch, tmp_path, scenario)
    assert sorted(ours) == ["", "loss_parts_test", "loss_parts_train", "loss_parts_val"]
    assert [e.step for e in ours[""]] == [0, 5, 5]  # file version, purge marker, session START
    assert [(s, t) for s, t, _ in _values(ours["loss_parts_val"])] == [
        (0, "loss/parts"),
        (1, "loss/parts"),
        (2, "loss/parts"),
    ]
    assert all(p.name.endswith(".x") for p in (tmp_path / "compat").rglob("events.*"))


def test_writer_reopens_after_close(tmp_path):
    w = SummaryWriter(str(tmp_path))
    w.add_scalar("a", 1.0, 0)
    w.close()
    w.add_scalar("a", 2.0, 1)  # a new event file, as PyTorch
    w.close()
    files = sorted(tmp_path.glob("events.*"))
    assert len(files) == 2
    fw = FileWriter(tmp_path / "fw")
    assert fw.get_logdir() == str(tmp_path / "fw")
    fw.close()
    assert RecordWriter.__module__.startswith("tensorboard")


def test_default_logdir_like_pytorch(real_torch, tmp_path, monkeypatch):
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    monkeypatch.chdir(tmp_path)
    names = []
    for cls in (SummaryWriter, TorchWriter):
        with cls(comment="_lr0.1") as w:
            names.append(w.get_logdir())
    pattern = r"runs[/\\][A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_.+_lr0\.1"
    assert all(re.fullmatch(pattern, n) for n in names), names
    assert names[0].split("_", 1)[1][9:] == names[1].split("_", 1)[1][9:]  # hostname + comment
    assert Path(names[0]).is_dir()


def _raises_like_torch(real_torch, tmp_path, call):
    """``call(T, writer)`` raises the same exception type and message with both."""
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    errors = []
    for name, T, W in (("compat", ctorch, SummaryWriter), ("torch", real_torch, TorchWriter)):
        with W(tmp_path / name) as w, pytest.raises(Exception) as info:
            call(T, w)
        errors.append(info.value)
    ours, theirs = errors
    assert type(ours) is type(theirs), (ours, theirs)
    assert " ".join(str(ours).split()) == " ".join(str(theirs).split())


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda T, w: w.add_scalar("x", T.ones(3)), id="scalar-not-one-element"),
        pytest.param(lambda T, w: w.add_scalar("x", [1.0]), id="scalar-list"),
        pytest.param(lambda T, w: w.add_scalar("x", "abc"), id="scalar-string"),
        pytest.param(lambda T, w: w.add_histogram("h", np.zeros(0)), id="histogram-empty"),
        pytest.param(
            lambda T, w: w.add_histogram_raw("h", 0, 1, 1, 1, 1, [1.0], [1, 2]),
            id="histogram-raw-lengths",
        ),
        pytest.param(lambda T, w: w.add_image("i", T.zeros(3, 4)), id="image-format-rank"),
        pytest.param(
            lambda T, w: w.add_image("i", T.zeros(3, 4, 4), dataformats="CCW"),
            id="image-format-repeat",
        ),
        pytest.param(lambda T, w: w.add_images("i", T.zeros(2, 4, 3, 3)), id="images-rgba-grid"),
        pytest.param(lambda T, w: w.add_hparams([("lr", 0.1)], {}), id="hparams-not-dict"),
        pytest.param(
            lambda T, w: w.add_hparams({"lr": np.float32(0.1)}, {}), id="hparams-value-type"
        ),
        pytest.param(
            lambda T, w: w.add_hparams({"o": "a"}, {}, hparam_domain_discrete={"o": [1]}),
            id="hparams-domain-type",
        ),
        pytest.param(
            lambda T, w: w.add_hparams({"o": "a"}, {}, hparam_domain_discrete={"p": ["a"]}),
            id="hparams-domain-key",
        ),
        pytest.param(
            lambda T, w: w.add_hparams({"t": T.tensor(0.5)}, {}, run_name="r"),
            id="hparams-0d-tensor",
        ),
    ],
)
def test_bad_input_raises_like_pytorch(real_torch, tmp_path, call):
    _raises_like_torch(real_torch, tmp_path, call)


def test_left_out_methods_say_so(tmp_path):
    model = ctorch.nn.Linear(2, 2)
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(NotImplementedError, match="cannot trace a module graph"):
            w.add_graph(model, ctorch.zeros(1, 2))
        for name in ("add_embedding", "add_pr_curve", "add_video", "add_audio", "add_mesh"):
            with pytest.raises(NotImplementedError, match=f"SummaryWriter.{name} is not supported"):
                getattr(w, name)("tag", ctorch.zeros(2))


def test_missing_pil_raises_like_pytorch(real_torch, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    _raises_like_torch(real_torch, tmp_path, lambda T, w: w.add_image("i", T.zeros(3, 2, 2)))


def test_missing_tensorboard_fails_at_import(monkeypatch):
    names = [
        n
        for n in sys.modules
        if n == "compat.torch.utils.tensorboard" or n.startswith("compat.torch.utils.tensorboard.")
    ]
    saved = {n: sys.modules[n] for n in names}
    parent = sys.modules["compat.torch.utils"]
    try:
        for n in names:
            monkeypatch.delitem(sys.modules, n)
        monkeypatch.setitem(sys.modules, "tensorboard", None)
        with pytest.raises(ModuleNotFoundError) as info:
            importlib.import_module("compat.torch.utils.tensorboard")
        assert info.value.name == "tensorboard"
    finally:
        monkeypatch.undo()
        sys.modules.update(saved)
        parent.tensorboard = saved["compat.torch.utils.tensorboard"]
    assert importlib.import_module("compat.torch.utils.tensorboard").SummaryWriter is SummaryWriter


def test_old_tensorboard_rejected(monkeypatch):
    import tensorboard

    monkeypatch.setattr(tensorboard, "__version__", "1.14.0")
    spec = importlib.util.find_spec("compat.torch.utils.tensorboard")
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ImportError, match=r"requires TensorBoard version 1\.15 or above"):
        spec.loader.exec_module(module)


def test_importing_compat_torch_does_not_import_tensorboard():
    code = "import sys, compat.torch, compat.torch.utils; assert 'tensorboard' not in sys.modules"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
    import compat.torch.utils.tensorboard.writer as writer_module

    assert writer_module.SummaryWriter is SummaryWriter and writer_module.FileWriter is FileWriter
