"""CANN's ``dump_task.proto`` (``hicann/ge`` ``graph_metadef/proto/dump_task.proto``: attr = 7,
space = 8; docs/formats.md §2.1) built with ``google.protobuf`` in code: a header decoder
independent of ``dump.proto``, for running msaccucmp's own code on our dumps where it would call
CANN's ``libascend_dump_parser.so`` (not on PyPI). Enums are read as int32."""
from __future__ import annotations


def dump_data_class(package: str):
    """The ``DumpData`` message class of the schema, in its own descriptor pool under
    ``package`` (one pool per caller: two callers never clash)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    fp = descriptor_pb2.FileDescriptorProto(name=f"{package.replace('.', '_')}_dump_task.proto",
                                            package=package, syntax="proto3")
    O, R = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    I32, U32, U64, STR, BYT, MSG = (F.TYPE_INT32, F.TYPE_UINT32, F.TYPE_UINT64, F.TYPE_STRING,
                                    F.TYPE_BYTES, F.TYPE_MESSAGE)
    schema = {
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
        "OpAttr": [("name", 1, STR, O, None), ("value", 2, STR, O, None)],
        "Workspace": [("type", 1, I32, O, None), ("data", 2, BYT, O, None),
                      ("size", 3, U64, O, None)],
        "DumpData": [("version", 1, STR, O, None), ("dump_time", 2, U64, O, None),
                     ("output", 3, MSG, R, "OpOutput"), ("input", 4, MSG, R, "OpInput"),
                     ("buffer", 5, MSG, R, "OpBuffer"), ("op_name", 6, STR, O, None),
                     ("attr", 7, MSG, R, "OpAttr"), ("space", 8, MSG, R, "Workspace")],
    }
    for name, fields in schema.items():
        m = fp.message_type.add(name=name)
        for fname, num, ftype, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=ftype, label=label)
            if tname:
                f.type_name = f".{package}.{tname}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.DumpData"))


def _repeated(field) -> bool:
    rep = getattr(field, "is_repeated", None)
    return rep if rep is not None else field.label == field.LABEL_REPEATED


def as_dict(message) -> dict:
    """A decoded header as the dict msaccucmp's ``BigDumpDataParser`` expects from CANN's
    parser: field names as keys, tensor bytes left out (a version 2.0 header carries none;
    msaccucmp slices the bytes itself)."""
    out = {}
    for field, value in message.ListFields():
        if field.type == field.TYPE_BYTES:
            continue
        if field.type == field.TYPE_MESSAGE:
            out[field.name] = ([as_dict(v) for v in value] if _repeated(field)
                               else as_dict(value))
        else:
            out[field.name] = list(value) if _repeated(field) else value
    return out


def header_parser(package: str):
    """A replacement for msaccucmp's ``BigDumpDataParser._parse_dump_to_json`` (which calls
    CANN's ``libascend_dump_parser.so``): reads the header length and decodes the header with
    this schema into ``self.dump_json_data``."""
    import struct

    dump_data = dump_data_class(package)

    def parse_dump_to_json(self):
        with open(self.dump_file_path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            self.dump_json_data = as_dict(dump_data.FromString(f.read(n)))

    return parse_dump_to_json
