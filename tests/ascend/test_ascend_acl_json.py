"""acl.json content: exactly msit's shape by default."""
import json

import pytest

from pytest_ascend_accuracy.backends.ascend.acl_json import dump_config, read_acl_json, write_acl_json
from pytest_ascend_accuracy.errors import ConfigError, DumpFormatError


def test_written_exactly_as_msit_writes_it(tmp_path):
    path = write_acl_json(tmp_path / "acl.json", tmp_path / "dump", ["tiny", "tiny_sub_0"])
    assert json.loads(path.read_text()) == {"dump": {
        "dump_list": [{"model_name": "tiny"}, {"model_name": "tiny_sub_0"}],
        "dump_path": str((tmp_path / "dump").resolve()), "dump_mode": "all", "dump_op_switch": "off"}}
    assert (tmp_path / "dump").is_dir()
    assert read_acl_json(path)["dump"]["dump_mode"] == "all"


def test_optional_keys_only_when_asked():
    cfg = dump_config("/d", ["m", "m"], dump_mode="output", layers={"m": ["conv1"]},
                      dump_data="stats", dump_level="op")
    assert cfg == {"dump": {"dump_list": [{"model_name": "m", "layer": ["conv1"]}], "dump_path": "/d",
                            "dump_mode": "output", "dump_op_switch": "off", "dump_data": "stats",
                            "dump_level": "op"}}


@pytest.mark.parametrize("kw", [dict(dump_mode="both"), dict(dump_data="npy"), dict(dump_level="x")])
def test_bad_values(kw):
    with pytest.raises(ConfigError):
        dump_config("/d", ["m"], **kw)


def test_no_model_names():
    with pytest.raises(ConfigError, match="at least one"):
        dump_config("/d", [])


def test_read_rejects_bad_files(tmp_path):
    bad = tmp_path / "acl.json"
    bad.write_text("{not json")
    with pytest.raises(DumpFormatError, match="not valid JSON"):
        read_acl_json(bad)
    bad.write_text('{"dump": {"dump_path": "/x"}}')
    with pytest.raises(DumpFormatError, match="dump_list"):
        read_acl_json(bad)
