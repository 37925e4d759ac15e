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
