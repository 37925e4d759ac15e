"""The PP-OCR models the check benchmarks run (they ship in the ``ocr`` extra,
``rapidocr-onnxruntime``: found by path, never imported), their inputs, and what a step wrote.
Shared by ``bench_check``, ``bench_check_suite``, ``bench_dump_mode`` and ``bench_golden_entry``."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

MODELS = {"det": ("ch_PP-OCRv4_det_infer.onnx", "x:1,3,{size},{size}"),
          "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", "x:1,3,48,192")}


def ocr_model(short: str) -> Path:
    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("these benchmarks need the 'ocr' extra: pip install rapidocr-onnxruntime")
    path = Path(list(spec.submodule_search_locations)[0]) / "models" / MODELS[short][0]
    if not path.is_file():
        sys.exit(f"{path} not found in rapidocr-onnxruntime")
    return path


def random_inputs(model: str, shape: str):
    """Seed 0's inputs of ``model`` at ``shape`` (ATC's ``--input_shape`` text), as the plugin
    draws them (``graph.onnx_graph.make_inputs``): a float input as msit's ``np.random.random``
    (the same arrays the det and cls figures were measured on), integers as the graph bounds
    them, so ``bench_check.py --model-file`` takes a model of any inputs."""
    from pytest_ascend_accuracy.graph.onnx_graph import make_inputs

    return make_inputs(str(model), seed=0, input_shape=shape)


def files_and_bytes(path: Path) -> list:
    """[file count, total bytes] under ``path``."""
    files = [p for p in Path(path).rglob("*") if p.is_file()]
    return [len(files), sum(p.stat().st_size for p in files)]


def mb(b) -> str:
    return f"{b / 1e6:.0f} MB"


__all__ = ["MODELS", "files_and_bytes", "mb", "ocr_model", "random_inputs"]
