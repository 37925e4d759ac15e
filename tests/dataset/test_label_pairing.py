"""Labels in sample order pair with a directory's samples by position, in file-name order: with
names numbered without zero-padding that order is img0, img1, img10, img11, img2, ..., and a
list of labels written in numeric order was paired with other samples silently (a user's Top-1
read 0.25 where it was 1.0). Refused now, naming the pair; a mapping pairs by id."""
import numpy as np
import pytest

from pytest_ascend_accuracy.dataset.samples import Labels, SampleSource
from pytest_ascend_accuracy.errors import ConfigError


def _samples(folder, names):
    folder.mkdir()
    for name in names:
        np.savez(folder / f"{name}.npz", x=np.zeros((1, 4), np.float32))
    return SampleSource(folder)


def test_labels_in_order_with_unpadded_numbered_files_are_refused(tmp_path):
    source = _samples(tmp_path / "val", [f"img{k}" for k in range(12)])
    with pytest.raises(ConfigError) as err:
        Labels(list(range(12))).check_pairing(source)
    text = str(err.value)
    assert "'img11' comes before 'img2'" in text, text
    assert 'JSON {"img2": ...}' in text and "zero-pad the file names" in text
    Labels({f"img{k}": k for k in range(12)}).check_pairing(source)  # by id: fine


def test_padded_or_unnumbered_files_and_sample_lists_pair_by_position(tmp_path):
    Labels(list(range(12))).check_pairing(_samples(tmp_path / "a", [f"img{k:02d}" for k in range(12)]))
    Labels([0, 1, 2]).check_pairing(_samples(tmp_path / "b", ["cat", "dog", "eel"]))
    Labels([0, 1]).check_pairing(SampleSource([{"x": np.zeros(1)}, {"x": np.zeros(1)}]))


def test_names_that_are_not_one_numbered_stem_keep_their_file_name_order(tmp_path):
    """Hash or UUID sample names hold digit runs but no numbering: they were refused with
    'zero-pad the file names' (review)."""
    names = ["3f2a9c1e-7b4d", "3f10b2aa-91c0", "a7c4e2f0-0d1b"]
    Labels([0, 1, 2]).check_pairing(_samples(tmp_path / "uuid", names))
    Labels([0, 1, 2]).check_pairing(_samples(tmp_path / "mixed", ["cat1", "dog10", "dog2"]))
