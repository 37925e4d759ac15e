"""``DumpData`` field 7 is an attribute (name, value) in CANN's current dump_task.proto and a
workspace in the older one: an older header's workspace that holds only its data bytes (proto3
leaves type LOG = 0 and size 0 out) read as an attribute, and bytes that are not UTF-8 refused
the whole dump (a review); an empty one became an attribute ('', '')."""
import pytest

from pytest_ascend_accuracy.dump.proto import DumpData, OpAttr, Workspace, encode_varint


def _len_field(number, payload):
    return encode_varint((number << 3) | 2) + encode_varint(len(payload)) + payload


def _header(field7):
    return _len_field(1, b"2.0") + _len_field(6, b"conv1") + _len_field(7, field7)


@pytest.mark.parametrize("field7", [_len_field(2, b"\xff\x00\x13\x88"), b"",
                                    _len_field(2, b"ab")],
                         ids=["data-not-utf8", "empty", "data-only"])
def test_an_older_workspace_without_type_or_size_stays_a_workspace(field7):
    d = DumpData.decode(_header(field7))
    assert d.attr == () and len(d.space) == 1 and isinstance(d.space[0], Workspace)


def test_a_current_attribute_is_read_as_one():
    d = DumpData.decode(_header(_len_field(1, b"_sgt_json_info") + _len_field(2, b"{}")))
    assert d.attr == (OpAttr("_sgt_json_info", "{}"),) and d.space == ()
