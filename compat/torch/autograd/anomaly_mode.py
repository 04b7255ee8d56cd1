"""``torch.autograd.anomaly_mode``: ``detect_anomaly`` and ``set_detect_anomaly``."""

from __future__ import annotations

from compat._core.anomaly import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
