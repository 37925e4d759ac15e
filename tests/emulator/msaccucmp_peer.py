"""Run msaccucmp (PyPI ``mindstudio-probe``, ``msprobe/msaccucmp``) in-process on our dumps.

msaccucmp reads a binary dump's header through ``ParseDumpProtoToJson`` in CANN's
``libascend_dump_parser.so`` (``dump_parse/big_dump_data.py``), which is not on PyPI. The
stand-in here decodes the header with ``google.protobuf`` from the schema of docs/formats.md §2.1
(a decoder independent of ours) into the same field names; everything after the header --
reading tensor bytes at their offsets, NC1HWC0/FRACTAL_Z/FRACTAL_NZ -> NCHW/ND conversion,
cropping to ``original_shape``, matching with the om json, the metrics -- is msaccucmp's own
code. Skips (with the reason) when msprobe or protobuf is not importable.
"""
import os
import struct
import sys

import pytest

_PKG = "h1c.dumpdata"


def _dump_data_class():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    fp = descriptor_pb2.FileDescriptorProto(name="msaccucmp_peer_dump_data.proto", package=_PKG,
                                            syntax="proto3")
    O, R = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    I32, U32, U64, STR, BYT, MSG = (F.TYPE_INT32, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_STRING,
                                    F.TYPE_BYTES, F.TYPE_MESSAGE)
    schema = {  # docs/formats.md §2.1 (toolkit.dumpdata); enums read as int32
        "Shape": [("dim", 1, U64, R, None)],
        "OriginalOp": [("name", 1, STR, O, None), ("output_index", 2, U32, O, None),
                       ("data_type", 3, I32, O, None), ("format", 4, I32, O, None)],
        "OpOutput": [("data_type", 1, I32, O, None), ("format", 2, I32, O, None),
                     ("shape", 3, MSG, O, "Shape"), ("original_op", 4, MSG, O, "OriginalOp"),
                     ("data", 5, BYT, O, None), ("size", 6, U64, O, None),
                     ("original_shape", 7, MSG, O, "Shape"), ("sub_format", 8, I32, O, None)],
        "OpInput": [("data_type", 1, I32, O, None), ("format", 2, I32, O, None),
                    ("shape", 3, MSG, O, "Shape"), ("data", 4, BYT, O, None),
                    ("size", 5, U64, O, None), ("original_shape", 6, MSG, O, "Shape"),
                    ("sub_format", 7, I32, O, None)],
        "OpBuffer": [("buffer_type", 1, I32, O, None), ("data", 2, BYT, O, None),
                     ("size", 3, U64, O, None)],
        "Workspace": [("type", 1, I32, O, None), ("data", 2, BYT, O, None), ("size", 3, U64, O, None)],
        "DumpData": [("version", 1, STR, O, None), ("dump_time", 2, U64, O, None),
                     ("output", 3, MSG, R, "OpOutput"), ("input", 4, MSG, R, "OpInput"),
                     ("buffer", 5, MSG, R, "OpBuffer"), ("op_name", 6, STR, O, None),
                     ("space", 7, MSG, R, "Workspace")],
    }
    for name, fields in schema.items():
        m = fp.message_type.add(name=name)
        for fname, num, ftype, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=ftype, label=label)
            if tname:
                f.type_name = f".{_PKG}.{tname}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PKG}.DumpData"))


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
