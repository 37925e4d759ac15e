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
import sys

import pytest

from pytest_ascend_accuracy.testing.dump_task_schema import header_parser

_PKG = "h1c.dumpdata"


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

    monkeypatch.setattr(big_dump_data.BigDumpDataParser, "_parse_dump_to_json",
                        header_parser(_PKG))
    import msaccucmp as tool

    def run(*argv) -> int:
        monkeypatch.setattr(sys, "argv", ["msaccucmp", *map(str, argv)])
        return tool._do_cmd()
    return run
