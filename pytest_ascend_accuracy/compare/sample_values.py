"""Each sample's two values of a tensor holding one value per sample along a known batch axis,
as the compare keeps them (``TensorMetrics.samples``, saved in compare.json) for judging each
sample as a check of it alone judges it (``compare.batch_samples``)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Tuple


@dataclass(frozen=True)
class BatchSamples:
    """Each sample's actual and golden value of a batched one-value-per-sample tensor, with the
    dtypes they were compared in and the batch axis's name (its ``dim_param``)."""

    axis: str
    actual: Tuple[float, ...]
    golden: Tuple[float, ...]
    dtype: str
    golden_dtype: str

    def __len__(self) -> int:
        return len(self.golden)

    def to_dict(self):
        return {"axis": self.axis, "dtype": self.dtype, "golden_dtype": self.golden_dtype,
                "actual": [_encode(v) for v in self.actual],
                "golden": [_encode(v) for v in self.golden]}

    @staticmethod
    def from_dict(d: Mapping[str, object]) -> "BatchSamples":
        return BatchSamples(str(d["axis"]), tuple(_decode(v) for v in d["actual"]),
                            tuple(_decode(v) for v in d["golden"]), str(d["dtype"]),
                            str(d["golden_dtype"]))


def _encode(v: float):
    """A value as strict JSON holds it (``metrics._encode``'s spelling)."""
    if math.isnan(v):
        return None
    return ("inf" if v > 0 else "-inf") if math.isinf(v) else v


def _decode(v) -> float:
    return math.nan if v is None else float(v)


__all__ = ["BatchSamples"]
