"""An AIPP file saved as 'UTF-8 with BOM' (Windows editors) starts with an invisible U+FEFF.
protobuf's TextFormat, which ATC reads the file with, takes tokens with ``Tokenizer::Next``,
which skips no BOM (only ``NextWithComments``, the .proto compiler's, does: protobuf
``src/google/protobuf/io/tokenizer.cc``), so ATC refuses the file. The refusal said
"unexpected character '\\ufeff'" (an AIPP trial), a character the user cannot see in the file;
it now says what it is and how to save the file."""
import pytest

from pytest_ascend_accuracy.aipp import read_aipp_config
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp
from pytest_ascend_accuracy.errors import ConfigError


def test_a_bom_is_named_with_how_to_save_the_file(tmp_path):
    path = tmp_path / "cam.cfg"
    path.write_bytes(b"\xef\xbb\xbf" + imagenet_aipp(src_hw=(16, 16)).encode())
    with pytest.raises(ConfigError) as err:
        read_aipp_config(path)
    assert err.value.where.endswith("cam.cfg:1"), err.value.where
    assert err.value.problem == (
        "the file starts with a UTF-8 byte-order mark (BOM, the bytes EF BB BF that an editor's "
        "'UTF-8 with BOM' encoding writes, invisible in the editor), which protobuf text "
        "format, as ATC reads the file, refuses: save the file as UTF-8 without BOM")
    path.write_bytes(path.read_bytes()[3:])  # saved without it: read
    assert read_aipp_config(path).ops[0].input_format == "RGB888_U8"


def test_the_same_character_further_on_is_an_unexpected_character(tmp_path):
    path = tmp_path / "cam.cfg"
    path.write_text("aipp_op {\n\ufeff aipp_mode: static\n}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_aipp_config(path)
    assert err.value.problem == "unexpected character '\\ufeff'", err.value.problem
