"""Run msaccucmp (PyPI ``mindstudio-probe``, ``msprobe/msaccucmp``) in-process on our dumps.

msaccucmp reads a binary dump's header through ``ParseDumpProtoToJson`` in CANN's
``libascend_dump_parser.so`` (``dump_parse/big_dump_data.py``), which is not on PyPI. The
stand-in here decodes the header with ``google.protobuf`` from CANN's current
``dump_task.proto`` (``testing.dump_task_schema``: a decoder independent of ours) into the same
field names; everything after the header -- reading tensor bytes at their offsets,
NC1HWC0/FRACTAL_Z/FRACTAL_NZ -> NCHW/ND conversion, cropping to ``original_shape``, matching
with the om json, the metrics -- is msaccucmp's own code. Skips (with the reason) when msprobe
or protobuf is not importable.
"""
import os
import struct
import sys

import pytest

_PKG = "h1c.dumpdata"


def _dump_data_class():
    from pytest_ascend_accuracy.testing.dump_task_schema import dump_data_class

    return dump_data_class(_PKG)


def _repeated(field) -> bool:
    rep = getattr(field, "is_repeated", None)
    return rep if rep is not None else field.label == field.LABEL_REPEATED


def _as_dict(message) -> dict:
    out = {}
    for field, value in message.ListFields():
        if field.type == field.TYPE_BYTES:
            continue  # version 2.0 headers carry no data; msaccucmp slices the bytes itself
        if field.type == field.TYPE_MESSAGE:
            out[field.name] = ([_as_dict(v) for v in value] if _repeated(field)
                               else _as_dict(value))
        else:
            out[field.name] = list(value) if _repeated(field) else value
    return out


def msaccucmp(monkeypatch):
    """A callable running ``msaccucmp <argv>`` in this process (returns its exit code)."""
    try:
        import msprobe
        import google.protobuf  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"msaccucmp peer check needs mindstudio-probe and protobuf "
                    f"(pip install mindstudio-probe): {exc}")
    root = os.path.join(os.path.dirname(msprobe.__file__), "msaccucmp")
    if not os.path.isfile(os.path.join(root, "dump_parse", "big_dump_data.py")):
        pytest.skip(f"msaccucmp's dump parser not found under {root}")
    monkeypatch.syspath_prepend(root)  # its modules import each other as top-level packages
    from dump_parse import big_dump_data

    dump_data = _dump_data_class()

    def parse_dump_to_json(self):
        with open(self.dump_file_path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            self.dump_json_data = _as_dict(dump_data.FromString(f.read(n)))

    monkeypatch.setattr(big_dump_data.BigDumpDataParser, "_parse_dump_to_json", parse_dump_to_json)
    import msaccucmp as tool

    def run(*argv) -> int:
        monkeypatch.setattr(sys, "argv", ["msaccucmp", *map(str, argv)])
        return tool._do_cmd()
    return run
