"""A mode's printed name (a test id's ``[keep_dtype(norm)]``, a summary grid's column header
``buffer_off+rules_off(UBFusion:TbeCommonRules0FusionPass)``) copied into a YAML suite's
``modes:``, an ``@accuracy(modes=[...])`` string or ``ascend_model(m, mode=...)`` was refused as
"unknown mode 'keep_dtype(p2o.BatchNormalization.1)'; known: default, high_precision,
buffer_off, fusion_off": nothing said how to write it (``ascend-accuracy diagnose --mode`` takes
it). The error now gives the YAML mapping and the Python expression, each of which, pasted,
converts as the printed name says (the same ``Mode`` as ``diagnose --mode`` reads from it)."""
import re

import pytest
import yaml

import pytest_ascend_accuracy as paa
from pytest_ascend_accuracy.cli.mode_arg import mode_arg
from pytest_ascend_accuracy.core.modes import mode_from_spec, resolve_mode
from pytest_ascend_accuracy.errors import ConfigError
from pytest_ascend_accuracy.testing import models


@pytest.mark.parametrize("printed", [
    "keep_dtype(norm)",
    "buffer_off+keep_dtype(norm)",
    "rules_off(GraphFusion:ConvBatchnormFusionPass)+keep_dtype(norm,fc2/MatMul)",
    "buffer_off+rules_off(UBFusion:TbeCommonRules0FusionPass)",
    "high_precision+fusion_off+keep_dtype(norm)",
])
def test_a_printed_mode_name_is_refused_with_its_spellings_that_work(printed, tmp_path):
    model = tmp_path / "overflow.onnx"
    model.write_bytes(models.overflow_model().SerializeToString())
    meant = mode_arg(printed, str(model))       # what diagnose --mode reads it as
    with pytest.raises(ConfigError) as err:
        resolve_mode(printed, "models[0].modes[0]")
    text = str(err.value)
    assert text.startswith("models[0].modes[0]: unknown mode"), text
    as_yaml = re.search(r"in a YAML suite: (\{.*?\}|\S+);", text)
    as_python = re.search(r"mode=\): (.*) \(from pytest_ascend_accuracy import", text)
    assert as_yaml and as_python, text
    assert mode_from_spec(yaml.safe_load(as_yaml.group(1))).key() == meant.key()
    names = {n: getattr(paa, n) for n in paa.__all__}
    assert eval(as_python.group(1), names).key() == meant.key()  # noqa: S307


def test_other_unknown_modes_are_refused_as_before():
    with pytest.raises(ConfigError, match=r"unknown mode 'fusion_of'; closest: fusion_off"):
        resolve_mode("fusion_of", "modes")
    with pytest.raises(ConfigError, match=r"unknown mode 'keep_dtype\(\)'"):
        resolve_mode("keep_dtype()", "modes")
