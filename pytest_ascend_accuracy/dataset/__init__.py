"""Dataset-level accuracy: a dataset metric (Top-1/Top-5, agreement, mAP, a callable) on the
device against the reference network, traced to the first operator below the threshold.

Modules: ``samples`` (sample sources and labels), ``reference`` (onnxruntime fp32 outputs,
cached per sample), ``scoring``, ``detection`` and ``callable_metric`` (the metrics; a
user's callable, with the NaN/Inf and most-moved samples its figure cannot name), ``chance``
(a top-k reference no device could fail against, refused), ``culprit`` (one lost or
flipped sample dumped on both sides and compared), ``result`` (figures, failure), ``check``
(the loop), ``device`` (a converted model bound to its backend; one per sample shape where
a dimension is left open), ``metrics`` (Top-k and ``assert_metric_close`` for figures
computed by hand).

May import every layer up to ``triage``; never ``plugin`` or ``cli``. The names below are
imported from their modules on first use (``core.lazy_exports``).
"""
from ..core.lazy_exports import lazy_exports

lazy_exports(__name__, {
    ".check": ["check_dataset", "run_dataset_check"],
    ".device": ["DeviceModel", "PerShapeDeviceModel", "load_device_model"],
    ".result": ["Culprit", "DatasetFailure", "DatasetResult"],
})
