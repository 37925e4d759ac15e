"""The session registries keep a test id or path from an undecodable file name as it was: a
golden such a test wrote was written with ``surrogatepass`` and read with ``surrogateescape``,
so the session never found it in its own registry (H102, carried to this session)."""
import os

from pytest_ascend_accuracy.plugin.registry_text import registry_bytes, registry_text
from pytest_ascend_accuracy.plugin.session import AccuracyState, Settings


def test_a_written_golden_of_an_undecodable_name_is_found_again(tmp_path):
    name = os.fsdecode(b"golden/caf\xe9")  # a Latin-1 file name on a UTF-8 system
    nodeid = os.fsdecode(b"tests/test_caf\xe9.py::test_it")
    writer = AccuracyState(Settings(cache_dir=tmp_path), session_key="k")
    writer.note_written(str(tmp_path / name), nodeid)
    reader = AccuracyState(Settings(cache_dir=tmp_path), session_key="k")  # another worker
    assert reader.written_by(str(tmp_path / name)) == nodeid


def test_any_other_lone_surrogate_is_written_rather_than_crash():
    assert registry_text(registry_bytes("a\udcffb")) == "a\udcffb"
    assert registry_bytes("a\ud800b")  # not U+DC80..U+DCFF: written (surrogatepass), no error
