"""Regression tests for reader bugs the reliability fuzz suite (test_dump_fuzz.py) found."""
import struct

import pytest

from pytest_ascend_accuracy.dump.ascend_bin import read_dump_file
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.proto import encode_varint
from pytest_ascend_accuracy.errors import DumpFormatError

pytestmark = pytest.mark.reliability


def test_deeply_nested_groups_are_a_format_error_not_a_recursion_error(tmp_path):
    """Found by this suite: 1,000 nested start-group tags in the header used to raise
    RecursionError out of the protobuf skipper."""
    nested = encode_varint(20 << 3 | 3) * 1000
    p = tmp_path / "Relu.relu.1.0.1700000000000003"
    p.write_bytes(struct.pack("<Q", len(nested)) + nested)
    with pytest.raises(DumpFormatError, match="groups nested deeper than 100"):
        read_dump_file(p)
    closed = encode_varint(20 << 3 | 3) * 100 + encode_varint(20 << 3 | 4) * 100
    p.write_bytes(struct.pack("<Q", len(closed)) + closed)
    assert load_dump(p).names == ["relu"]  # 100 levels are skipped as unknown fields


@pytest.mark.parametrize("header", [
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,",  # truncated: tokenize error
    "{b'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",  # bytes key: TypeError
    "{'descr': '<f4', 'fortran_order': False, 'shape': (True,), }",  # bool dimension
])
def test_npy_header_errors_found_by_fuzzing(tmp_path, header):
    """Found by this suite: numpy's header parser raised TokenError / TypeError through
    ``load_dump`` for these headers."""
    raw = header.encode("latin1")
    raw += b" " * ((64 - (10 + len(raw) + 1) % 64) % 64) + b"\n"
    d = tmp_path / "g"
    d.mkdir()
    (d / "a.0.1700000000000000.npy").write_bytes(
        b"\x93NUMPY\x01\x00" + len(raw).to_bytes(2, "little") + raw + b"\0" * 24)
    with pytest.raises(DumpFormatError, match="not a valid .npy file") as info:
        load_dump(d)
    assert info.value.path.endswith("a.0.1700000000000000.npy")


@pytest.mark.parametrize("doc, problem", [
    ('{"graph": [{"op": [{"name": "a", "output_desc": [3]}]}]}',
     "graph[0].op[0]: malformed op entry (AttributeError"),
    ('{"graph": [{"op": [{"name": "a", "attr": 5}]}]}', "graph[0].op[0]: malformed op entry (TypeError"),
    ('{"graph": [{"op": [{"name": "a", "attr": [{"key": "_datadump_original_op_names", '
     '"value": {"s": 7}}]}]}]}', "graph[0].op[0]: malformed op entry (TypeError"),
    ('{"graph": [{"op": [{"name": "a", "id": Infinity}]}]}', "id inf is not an integer"),
    ('{"graph": [{"op": 3}]}', "graph[0].op must be a list, got int"),
    ('{"graph": [], "attr": 1.5}', "model attr: malformed (TypeError"),
    ("[" * 100000, "not valid JSON: nested too deeply"),
])
def test_om_json_entries_of_the_wrong_kind_found_by_fuzzing(tmp_path, doc, problem):
    """Found by this suite: wrong JSON kinds inside an om json leaked TypeError /
    AttributeError / OverflowError / RecursionError out of read_om_json."""
    from pytest_ascend_accuracy.dump.om_json import read_om_json

    p = tmp_path / "model.json"
    p.write_text(doc, encoding="utf-8")
    with pytest.raises(DumpFormatError) as info:
        read_om_json(p)
    assert info.value.path == str(p) and problem in info.value.problem
