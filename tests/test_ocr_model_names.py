"""``testing.ocr_models.ocr_model_path`` knows the three models the ``ocr`` extra ships: ``rec``
raised a bare KeyError (a dynamic-shape trial), and a misspelled name names the closest."""
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing.ocr_models import OCR_MODEL_FILES, ocr_model_path


def test_every_shipped_model_is_known_and_a_misspelling_names_the_closest():
    assert set(OCR_MODEL_FILES) == {"det", "cls", "rec"}
    for short in OCR_MODEL_FILES:
        path = ocr_model_path(short)  # None without the extra installed
        assert path is None or path.endswith(OCR_MODEL_FILES[short])
    with pytest.raises(ConfigError, match="no model 'recc'; closest: 'rec'"):
        ocr_model_path("recc")
