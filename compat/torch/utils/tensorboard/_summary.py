"""TensorBoard ``Summary`` protos for compat's ``SummaryWriter``: scalars, histograms,
text, images and hparams, laid out as PyTorch writes them so TensorBoard (and any reader
of PyTorch's event files) sees the same records."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from compat._core.tensor import Tensor
from compat.torch.utils.tensorboard._convert import make_np, to_hwc


def default_bins() -> list[float]:
    """TensorBoard's default histogram edges: ±1e-12 growing by 10% up to 1e20, and 0
    (built by repeated multiplication, so the edges equal PyTorch's bit for bit)."""
    positive: list[float] = []
    edge = 1e-12
    while edge < 1e20:
        positive.append(edge)
        edge *= 1.1
    return [-e for e in reversed(positive)] + [0] + positive


def scalar(
    tag: str, value: Any, new_style: bool = False, double_precision: bool = False
) -> Summary:
    """A one-value summary: ``simple_value`` (float32), or with ``new_style`` a
    ``scalars``-plugin tensor (float, or double with ``double_precision``)."""
    array = make_np(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(
            "Tensor should contain one element (0 dimensions). "
            f"Was given size: {array.size} and {array.ndim} dimensions."
        )
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    if double_precision:
        tensor = TensorProto(double_val=[number], dtype="DT_DOUBLE")
    else:
        tensor = TensorProto(float_val=[number], dtype="DT_FLOAT")
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=meta)])


def _support(counts: np.ndarray) -> tuple[int, int]:
    """(first, one past last) bucket index with a nonzero count; for no such bucket the
    same degenerate (len, 1) PyTorch's search gives."""
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        return len(counts), 1
    return int(nonzero[0]), int(nonzero[-1]) + 1


def _merge_buckets(
    counts: np.ndarray, limits: np.ndarray, max_bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sum groups of ``len(counts) // max_bins`` neighbouring buckets (the last group
    padded with empty buckets) so at most about ``max_bins`` remain."""
    group = len(counts) // max_bins
    short = len(counts) % group
    if short:
        counts = np.concatenate([counts, np.zeros(group - short, counts.dtype)])
    counts = counts.reshape(-1, group).sum(axis=-1)
    merged = np.empty(counts.size + 1, limits.dtype)
    merged[:-1] = limits[:-1:group]
    merged[-1] = limits[-1]
    return counts, merged


def histogram_proto(values: np.ndarray, bins: Any, max_bins: int | None = None) -> HistogramProto:
    """The histogram of float64 ``values`` over ``bins`` (as ``np.histogram`` takes
    them), cut to the nonzero buckets plus one empty bucket on the left, since
    TensorBoard stores only right edges."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, limits = _merge_buckets(counts, limits, max_bins)
    start, end = _support(counts)
    if start > 0:
        counts = counts[start - 1 : end]
    else:
        counts = np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(
        min=values.min(),
        max=values.max(),
        num=len(values),
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )


def histogram(tag: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    """A histogram summary of ``values`` (any shape, read as float64)."""
    proto = histogram_proto(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def histogram_raw(
    tag: str,
    min: float,
    max: float,
    num: int,
    sum: float,
    sum_squares: float,
    bucket_limits: Sequence[float],
    bucket_counts: Sequence[float],
) -> Summary:
    """A histogram summary from already computed statistics and buckets."""
    proto = HistogramProto(
        min=min,
        max=max,
        num=num,
        sum=sum,
        sum_squares=sum_squares,
        bucket_limit=bucket_limits,
        bucket=bucket_counts,
    )
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def text(tag: str, text_string: str) -> Summary:
    """A text-plugin summary (tag ``<tag>/text_summary``, one UTF-8 string)."""
    meta = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()
        )
    )
    tensor = TensorProto(
        dtype="DT_STRING",
        string_val=[text_string.encode("utf_8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)])


def _png(hwc: np.ndarray) -> Summary.Image:
    """A ``uint8`` HWC image PNG-encoded with PIL (needed, as for PyTorch)."""
    from PIL import Image

    height, width, channels = hwc.shape
    buffer = io.BytesIO()
    Image.fromarray(hwc).save(buffer, format="PNG")
    return Summary.Image(
        height=height,
        width=width,
        colorspace=channels,
        encoded_image_string=buffer.getvalue(),
    )


def image(tag: str, img: Any, dataformats: str) -> Summary:
    """An image summary: floats are read in [0, 1] and uint8 in [0, 255], both clipped to
    bytes; a batch (``N`` in ``dataformats``) is tiled into one grid image."""
    hwc = to_hwc(make_np(img), dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    pixels = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=_png(pixels))])


def _plugin_summary(tag: str, **data: Any) -> Summary:
    """One hparams-plugin summary value carrying ``HParamsPluginData(**data)``."""
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    content = HParamsPluginData(version=PLUGIN_DATA_VERSION, **data).SerializeToString()
    meta = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME, content=content)
    )
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def _check_hparam_args(hparams: Any, metrics: Any, discrete: Any) -> dict[str, Any]:
    """PyTorch's argument checks of ``add_hparams``; returns the discrete domains."""
    if not isinstance(hparams, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metrics, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    discrete = discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in discrete.items():
        if (
            k not in hparams
            or not isinstance(v, list)
            or not all(isinstance(d, type(hparams[k])) for d in v)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                f"hparam_dict[{k}]."
            )
    return discrete


def hparams(
    hparam_dict: dict[str, Any],
    metric_dict: dict[str, Any],
    hparam_domain_discrete: dict[str, list[Any]] | None = None,
) -> tuple[Summary, Summary, Summary]:
    """The experiment, session-start and session-end summaries of the hparams plugin.

    As in PyTorch, ``bool`` values are ``int``s here and so are logged as numbers,
    ``None`` values are skipped, and a tensor contributes its first element."""
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.metadata import (
        EXPERIMENT_TAG,
        SESSION_END_INFO_TAG,
        SESSION_START_INFO_TAG,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    discrete = _check_hparam_args(hparam_dict, metric_dict, hparam_domain_discrete)
    infos = []
    start = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        domain = None
        if isinstance(v, (int, float)):  # bools land here too, as in PyTorch
            start.hparams[k].number_value = v
            kind, field = "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            kind, field = "DATA_TYPE_STRING", "string_value"
        elif isinstance(v, Tensor):
            start.hparams[k].number_value = make_np(v)[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        if k in discrete:
            domain = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in discrete[k]]
            )
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))
    metrics = [MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    experiment = _plugin_summary(
        EXPERIMENT_TAG, experiment=Experiment(hparam_infos=infos, metric_infos=metrics)
    )
    session_start = _plugin_summary(SESSION_START_INFO_TAG, session_start_info=start)
    end = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    session_end = _plugin_summary(SESSION_END_INFO_TAG, session_end_info=end)
    return experiment, session_start, session_end
