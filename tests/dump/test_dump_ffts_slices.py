"""FFTS+ manual-split dumps (``<op>_lxsliceN`` files, CANN's naming; msaccucmp joins them along
the cut axis the dump records, ``dump_parse/ffts_parser.py``; so do we, tests/dump/
test_ffts_slices_join.py): slices that do not record their cut axis are refused as a
dump-format error naming the op, instead of failing a correct device op by op or calling the
model's own om json another model's (a trial against msaccucmp)."""
import numpy as np
import pytest

from pytest_ascend_accuracy.dump import AscendDumpWriter, write_om_json
from pytest_ascend_accuracy.dump.loader import load_dump
from pytest_ascend_accuracy.dump.om_json import OmOp
from pytest_ascend_accuracy.errors import DumpFormatError


def _sliced(tmp_path):
    a = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float16)
    leaf = tmp_path / "dump" / "20240101000000" / "0" / "m" / "1" / "0"
    w = AscendDumpWriter(leaf)
    w.write_op("Conv2D", "conv1_lxslice0", outputs=[a[:1]], output_origins=[("conv1", 0)])
    w.write_op("Conv2D", "conv1_lxslice1", outputs=[a[1:]], output_origins=[("conv1", 0)])
    w.write_op("Relu", "relu1", outputs=[a], output_origins=[("relu1", 0)])
    w.close()
    om = tmp_path / "m.json"
    write_om_json(om, "m", [OmOp("conv1", "Conv2D", 1, ("conv1",), (("conv1", 0),)),
                            OmOp("relu1", "Relu", 2, ("relu1",), (("relu1", 0),))])
    return leaf, om


@pytest.mark.parametrize("with_om_json", [False, True])
def test_slices_without_their_cut_axis_are_refused_naming_the_op(tmp_path, with_om_json):
    leaf, om = _sliced(tmp_path)
    with pytest.raises(DumpFormatError) as info:
        load_dump(tmp_path / "dump", om_json=om if with_om_json else None)
    text = str(info.value)
    assert "FFTS+ manual-split op 'conv1' (slice files Conv2D.conv1_lxslice0." in text
    assert "slice 0 carries no _sgt_json_info attribute" in text
    assert "another model" not in text


def test_one_name_ending_in_lxslice_is_an_ops_own(tmp_path):
    """A split has two parts at least: an op named ``feat_lxslice1`` alone is an ordinary op
    (a review: it was refused), and so is one slice file read on its own (msaccucmp takes a
    single file for the whole op)."""
    leaf, _ = _sliced(tmp_path)
    single = tmp_path / "single" / "20240101000000" / "0" / "m" / "1" / "0"
    w = AscendDumpWriter(single)
    w.write_op("Relu", "feat_lxslice1", outputs=[np.ones((2, 2), np.float16)])
    w.close()
    assert [op.name for op in load_dump(tmp_path / "single").ops] == ["feat_lxslice1"]
    assert [op.name for op in load_dump(next(leaf.glob("Conv2D.conv1_lxslice0.*"))).ops] == [
        "conv1_lxslice0"]


def test_a_single_json_file_is_not_read_as_a_dump(tmp_path):
    """A polygraphy --save-outputs JSON given as one file was parsed as a binary dump: "header
    length 7791825627654392443 runs past the end of the file" (a golden-formats trial)."""
    import json

    path = tmp_path / "poly.json"
    path.write_text(json.dumps({"lst": [["onnxrt-runner", [{"outputs": {}}]]]}))
    with pytest.raises(DumpFormatError, match=r"poly\.json: a JSON file \(e\.g\. polygraphy "
                                              r"--save-outputs\) is not a dump"):
        load_dump(path)
