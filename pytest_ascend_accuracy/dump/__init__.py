"""Dump model, readers and writers (Ascend binary format, npy directories).

Layer above ``core``: may import ``core`` and ``errors`` only.
"""
from .model import DumpSet, OpRecord, TensorRef  # noqa: F401
from .layout import AscendDumpWriter, run_dir, sanitize  # noqa: F401
from .npy_writer import NpyDumpWriter  # noqa: F401
from .om_json import OmGraph, OmOp, read_om_json, write_om_json  # noqa: F401
from .loader import load_dump  # noqa: F401
