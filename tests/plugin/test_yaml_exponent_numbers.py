"""YAML 1.1 (PyYAML) reads ``1e-4`` and ``2.5e6`` (no dot, or an unsigned exponent) as text:
``threshold: 1e-4`` or a per_op ``{max_abs: 1e-4}`` was refused "must be a number, got '1e-4'"
with nothing saying why (a review; small max_abs bounds are written so). The error now says
what to write, and that, written, loads."""
import numpy as np
import pytest

from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.plugin.yaml_suite import load_suite

ENTRY = "models: [{{model: models/mlp.onnx, metric: max_abs, threshold: {value}}}]\n"


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "mlp.onnx").write_bytes(b"not parsed at collection")
    np.save(tmp_path / "x.npy", np.zeros((1, 16), np.float32))
    return tmp_path / "accuracy_suite.yaml"


@pytest.mark.parametrize("given, fixed",
                         [("1e-4", "1.0e-4"), ("2E5", "2.0e+5"), ("2.5e6", "2.5e+6")])
def test_an_exponent_without_a_dot_says_what_to_write_and_that_loads(suite, given, fixed):
    suite.write_text(ENTRY.format(value=given))
    with pytest.raises(ConfigError) as info:
        load_suite(suite)
    assert str(info.value).endswith(
        f": models[0].threshold: threshold must be a number, got '{given}' (text, not a number: "
        f"YAML reads a number with an exponent as one only with a dot and a signed exponent; "
        f"write {fixed})"), str(info.value)
    suite.write_text(ENTRY.format(value=fixed))
    load_suite(suite)  # pasted: loads


def test_other_text_gets_no_such_note(suite):
    suite.write_text(ENTRY.format(value="small"))
    with pytest.raises(ConfigError, match=r"must be a number, got 'small'$"):
        load_suite(suite)
