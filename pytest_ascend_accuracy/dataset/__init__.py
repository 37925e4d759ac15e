"""Dataset-level accuracy: a dataset metric (Top-1/Top-5, agreement, mAP, a callable) on the
device against the reference network, traced to the first operator below the threshold.

Modules: ``samples`` (sample sources and labels), ``reference`` (onnxruntime fp32 outputs,
cached per sample), ``scoring`` and ``detection`` (the metrics), ``chance`` (a top-k reference
no device could fail against, refused), ``culprit`` (one lost or flipped sample dumped on both
sides and compared), ``result`` (figures, failure), ``check`` (the loop),
``device`` (a converted model bound to its backend; one per sample shape where a dimension
is left open), ``metrics`` (Top-k and
``assert_metric_close`` for figures computed by hand).

May import every layer up to ``triage``; never ``plugin`` or ``cli``.
"""
from .check import check_dataset, run_dataset_check
from .device import DeviceModel, PerShapeDeviceModel, load_device_model
from .result import Culprit, DatasetFailure, DatasetResult

__all__ = ["check_dataset", "run_dataset_check", "DeviceModel", "PerShapeDeviceModel",
           "load_device_model", "Culprit", "DatasetFailure", "DatasetResult"]
