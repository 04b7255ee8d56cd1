"""``SummaryWriter`` and ``FileWriter``: PyTorch's TensorBoard logging API over
TensorBoard's own ``EventFileWriter``, for compat tensors, NumPy arrays and numbers."""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from compat.torch.utils.tensorboard import _summary
from compat.torch.utils.tensorboard._convert import figure_to_chw

__all__ = ["FileWriter", "SummaryWriter"]

#: SummaryWriter methods of PyTorch that compat leaves out (rarely used by scripts)
_LEFT_OUT = (
    "add_audio",
    "add_custom_scalars",
    "add_custom_scalars_marginchart",
    "add_custom_scalars_multilinechart",
    "add_embedding",
    "add_image_with_boxes",
    "add_mesh",
    "add_onnx_graph",
    "add_pr_curve",
    "add_pr_curve_raw",
    "add_tensor",
    "add_video",
)


class FileWriter:
    """One event file in ``log_dir``: wraps protos in ``Event``s with step and wall time
    and hands them to TensorBoard's asynchronous ``EventFileWriter``."""

    def __init__(
        self,
        log_dir: str | os.PathLike[str],
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        """The directory the event file is written in."""
        return self.event_writer.get_logdir()

    def add_event(
        self, event: Event, step: int | None = None, walltime: float | None = None
    ) -> None:
        """Stamp ``event`` with ``walltime`` (default now) and ``step`` and queue it."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)  # NumPy or tensor steps: protobuf wants an int
        self.event_writer.add_event(event)

    def add_summary(
        self, summary: Summary, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        """Queue ``summary`` as one event."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        """Write the queued events to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self) -> None:
        """After ``close()``, continue in a new event file of the same directory."""
        self.event_writer.reopen()


class SummaryWriter:
    """PyTorch's ``torch.utils.tensorboard.SummaryWriter``: logs scalars, histograms,
    text, images, figures and hparams to event files under ``log_dir`` (default
    ``runs/<Mon><DD>_<HH-MM-SS>_<hostname><comment>``) for TensorBoard to read.

    Writers are created on first use and again after ``close()``, as in PyTorch."""

    def __init__(
        self,
        log_dir: str | os.PathLike[str] | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        self.default_bins = _summary.default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The main writer, (re)created if closed; a pending ``purge_step`` is written
        first (a file-version event and a session START at that step, which tells
        TensorBoard to hide the older events from that step on)."""
        if self.all_writers is None or self.file_writer is None:
            fw = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.file_writer = fw
            self.all_writers = {fw.get_logdir(): fw}
            if self.purge_step is not None:
                step = self.purge_step
                fw.add_event(Event(step=step, file_version="brain.Event:2"))
                fw.add_event(Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str | os.PathLike[str]:
        """The directory given (or chosen) at construction."""
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one number (a one-element tensor or array, or a Python/NumPy scalar)."""
        summary = _summary.scalar(tag, scalar_value, new_style, double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several numbers on one chart: each key goes to its own run directory
        ``<log_dir>/<main_tag with / as _>_<key>`` under the tag ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for key, value in tag_scalar_dict.items():
            run_dir = logdir + "/" + main_tag.replace("/", "_") + "_" + key
            fw = self.all_writers.get(run_dir)
            if fw is None:
                fw = FileWriter(run_dir, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[run_dir] = fw
            fw.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Log the distribution of ``values``; ``bins`` is ``'tensorflow'`` (TensorBoard's
        exponential edges), a NumPy bin rule (``'auto'``, ``'fd'``, …), a count or edges."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        summary = _summary.histogram(tag, values, bins, max_bins)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_histogram_raw(
        self,
        tag: str,
        min: float,
        max: float,
        num: int,
        sum: float,
        sum_squares: float,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a histogram already reduced to statistics and right bucket edges."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = _summary.histogram_raw(
            tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts
        )
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Log one image (floats in [0, 1] or uint8), PNG-encoded (needs PIL)."""
        summary = _summary.image(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """Log a batch of images tiled into one grid image (8 per row)."""
        summary = _summary.image(tag, img_tensor, dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """Log a matplotlib figure (or a list of them, as a grid) rendered to RGB."""
        if isinstance(figure, list):
            batch = np.stack([figure_to_chw(f, close) for f in figure])
            self.add_image(tag, batch, global_step, walltime, dataformats="NCHW")
        else:
            chw = figure_to_chw(figure, close)
            self.add_image(tag, chw, global_step, walltime, dataformats="CHW")

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a (Markdown) string for TensorBoard's text tab."""
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict[str, Any],
        metric_dict: dict[str, Any],
        hparam_domain_discrete: dict[str, list[Any]] | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Log one hyperparameter set with its metrics for the HParams tab, in the run
        ``<log_dir>/<run_name>`` (default: the current time): the plugin's three
        summaries, then each metric as a scalar."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as run:
            fw = run._get_file_writer()
            for summary in summaries:
                fw.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """Not supported: PyTorch builds the graph with ``torch.jit.trace``, which compat
        does not have."""
        raise NotImplementedError(
            "SummaryWriter.add_graph: compat.torch cannot trace a module graph for "
            "TensorBoard (PyTorch uses torch.jit.trace); log scalars, histograms, images "
            "and text instead"
        )

    def flush(self) -> None:
        """Write every writer's queued events to disk."""
        for fw in (self.all_writers or {}).values():
            fw.flush()

    def close(self) -> None:
        """Flush and close every writer; a later ``add_*`` call opens new event files."""
        if self.all_writers is None:
            return
        for fw in self.all_writers.values():
            fw.flush()
            fw.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _left_out(name: str) -> Any:
    """A method that says clearly that compat has no ``SummaryWriter.<name>``."""

    def method(self: SummaryWriter, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"SummaryWriter.{name} is not supported by compat.torch.utils.tensorboard "
            "(supported: add_scalar(s), add_histogram(_raw), add_text, add_image(s), "
            "add_figure, add_hparams)"
        )

    method.__name__ = method.__qualname__ = name
    method.__doc__ = "Not supported by compat: raises ``NotImplementedError``."
    return method


for _name in _LEFT_OUT:
    setattr(SummaryWriter, _name, _left_out(_name))
del _name
