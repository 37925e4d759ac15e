"""Regenerate the example ONNX models in this directory.

    python example_project/models/make_models.py [OUTPUT_DIR]

The models are built in code by ``pytest_ascend_accuracy.testing.models`` (fixed seeds, so the
files are identical on every run); see that module for what each model demonstrates.
"""
import sys
from pathlib import Path

from pytest_ascend_accuracy.testing.models import save_models


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent
    for path in save_models(out):
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
