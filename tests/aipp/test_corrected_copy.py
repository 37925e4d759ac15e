"""``aipp.corrected_copy``: the corrected AIPP file goes beside the file and never overwrites
the file itself or another copy with other content."""

from pytest_ascend_accuracy.aipp import check_preprocessing
from pytest_ascend_accuracy.aipp.corrected_copy import write_corrected_beside
from pytest_ascend_accuracy.aipp.samples import imagenet_aipp, imagenet_reference, random_rgb

GOOD = imagenet_aipp(src_hw=(16, 16))
BAD = GOOD.replace("var_reci_chn_0: 0.0171248", "var_reci_chn_0: 58.395")
IMAGES = random_rgb(1, 16, 16)


def _failed(path):
    path.write_text(BAD)
    result = check_preprocessing(path, IMAGES, imagenet_reference)
    assert not result.passed and result.fixes
    return result


def test_beside_the_file_and_found_again(tmp_path):
    result = _failed(tmp_path / "cam.cfg")
    first = write_corrected_beside(result)
    assert first.path == str(tmp_path / "cam.corrected.cfg") and not first.note
    assert write_corrected_beside(result) == first
    assert (tmp_path / "cam.cfg").read_text() == BAD


def test_a_copy_with_other_content_is_kept(tmp_path):
    (tmp_path / "cam.corrected.cfg").write_text("# mine\n")
    copy = write_corrected_beside(_failed(tmp_path / "cam.cfg"), show=lambda p: "X")
    assert copy.path == str(tmp_path / "cam.corrected-2.cfg")
    assert copy.note == "X holds other content and was kept"
    assert (tmp_path / "cam.corrected.cfg").read_text() == "# mine\n"


def test_a_corrected_file_that_is_still_wrong_is_not_overwritten(tmp_path):
    copy = write_corrected_beside(_failed(tmp_path / "cam.corrected.cfg"))
    assert copy.path == str(tmp_path / "cam.corrected-2.cfg")
    assert (tmp_path / "cam.corrected.cfg").read_text() == BAD


def test_a_folder_that_cannot_be_written_takes_the_fallback(tmp_path, monkeypatch):
    result = _failed(tmp_path / "cam.cfg")
    write = result.write_corrected

    def refuse_beside(path):
        if str(path).startswith(str(tmp_path / "cam.")):
            raise PermissionError(13, "Permission denied")
        return write(path)

    monkeypatch.setattr(result, "write_corrected", refuse_beside)
    (tmp_path / "out").mkdir()
    copy = write_corrected_beside(result, fallback_dir=lambda: tmp_path / "out")
    assert copy.path == str(tmp_path / "out" / "cam.corrected.cfg")
    assert copy.note.startswith(f"not written beside {tmp_path / 'cam.cfg'}: Permission denied")
    assert (tmp_path / "out" / "cam.corrected.cfg").read_text() == result.corrected_text()
