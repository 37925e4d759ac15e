"""The real PP-OCR models ``rapidocr-onnxruntime`` ships (the ``ocr`` test extra), found by path,
never imported: tests that run a real model skip where the package is not installed."""
from __future__ import annotations

import importlib.util
import os
from typing import Optional

#: the files of the models the tests use, by short name
OCR_MODEL_FILES = {"det": "ch_PP-OCRv4_det_infer.onnx",
                   "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
                   "rec": "ch_PP-OCRv4_rec_infer.onnx"}
#: the reason a test skips without them
MISSING = "rapidocr-onnxruntime (test extra 'ocr') is not installed"


def ocr_model_path(short: str) -> Optional[str]:
    """The path of the ``short`` model's file (a key of ``OCR_MODEL_FILES``), or None where
    the package or the file is not there."""
    if short not in OCR_MODEL_FILES:
        from ..errors import ConfigError, closest_text

        raise ConfigError("ocr model", f"no model {short!r}{closest_text(short, OCR_MODEL_FILES)}; "
                                       f"known: {', '.join(OCR_MODEL_FILES)}")
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "models",
                        OCR_MODEL_FILES[short])
    return path if os.path.isfile(path) else None
