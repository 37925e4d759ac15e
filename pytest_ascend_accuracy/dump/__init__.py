"""Dump model, readers and writers (Ascend binary format, npy directories).

The names below are imported from their modules on first use (``core.lazy_exports``).

Layer above ``core``: may import ``core`` and ``errors`` only.
"""
from ..core.lazy_exports import lazy_exports

_EXPORTS = {
    ".model": ["DumpSet", "OpRecord", "TensorRef"],
    ".layout": ["AscendDumpWriter", "run_dir", "sanitize"],
    ".npy_writer": ["NpyDumpWriter"],
    ".om_json": ["OmGraph", "OmOp", "read_om_json", "write_om_json"],
    ".loader": ["load_dump"],
}
lazy_exports(__name__, _EXPORTS)
